package main

import (
	"bytes"
	"os"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// benchLine is a result line as go test prints one, which benchstat
// reads: name (with the -GOMAXPROCS suffix), iterations, value-unit pairs.
var benchLine = regexp.MustCompile(`^Benchmark(\S+)\t +1\t(\d+) ns/op((?:\t[0-9.]+ \S+)*)$`)

type result struct {
	name  string
	ns    float64
	extra map[string]float64
}

// runBench runs distpass-bench with args, wants exit 0, and returns its
// results in order, with the -GOMAXPROCS suffix taken off the names.
func runBench(t *testing.T, args ...string) ([]result, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if code := run(args, &stdout, &stderr); code != 0 {
		t.Fatalf("%v: exit %d: %s", args, code, stderr.String())
	}
	procs := ""
	if p := runtime.GOMAXPROCS(0); p > 1 {
		procs = "-" + strconv.Itoa(p)
	}
	var rs []result
	for _, line := range strings.Split(strings.TrimSuffix(stdout.String(), "\n"), "\n") {
		if k, _, ok := strings.Cut(line, ": "); ok && slices.Contains([]string{"goos", "goarch", "pkg", "cpu"}, k) {
			continue
		}
		m := benchLine.FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("%v: a line not in the benchmark format: %q", args, line)
		}
		name, ok := strings.CutSuffix(m[1], procs)
		if !ok {
			t.Fatalf("%v: %q does not end in %q", args, m[1], procs)
		}
		r := result{name: name, extra: map[string]float64{}}
		r.ns, _ = strconv.ParseFloat(m[2], 64)
		f := strings.Fields(m[3])
		for i := 0; i+1 < len(f); i += 2 {
			r.extra[f[i+1]], _ = strconv.ParseFloat(f[i], 64)
		}
		rs = append(rs, r)
	}
	return rs, stderr.String()
}

func mlirOptRequired() bool { return os.Getenv("DISTPASS_REQUIRE_MLIR_OPT") != "" }

// Every benchmark runs once a round, in the same order each round, and
// every line is one benchstat reads.
func TestRoundsInBenchmarkFormat(t *testing.T) {
	rs, stderr := runBench(t, "-ops", "300,600", "-twin-ops", "300", "-ranks", "4", "-count", "2")
	want := []string{
		"PartitionOverClone/ops=300",
		"PartitionOverClone/ops=600",
		"TwinParseVerifyPrint/ops=300/tool=distpass",
		"TwinParseVerifyPrint/ops=300/tool=mlir-opt",
		"PartitionAll/ops=300/ranks=1",
		"PartitionAll/ops=300/ranks=4",
		"PartitionAll/ops=600/ranks=1",
		"PartitionAll/ops=600/ranks=4",
	}
	if findMLIROpt() == "" {
		if mlirOptRequired() {
			t.Fatal("no mlir-opt-16 or mlir-opt on PATH, and DISTPASS_REQUIRE_MLIR_OPT is set")
		}
		want = slices.DeleteFunc(want, func(s string) bool { return strings.HasSuffix(s, "tool=mlir-opt") })
		if !strings.Contains(stderr, "BenchmarkTwinParseVerifyPrint/ops=300/tool=mlir-opt skipped: no mlir-opt-16") {
			t.Errorf("no mlir-opt, and stderr does not say it skipped: %q", stderr)
		}
	} else if stderr != "" {
		t.Errorf("stderr %q, want nothing", stderr)
	}
	var names []string
	for _, r := range rs {
		names = append(names, r.name)
		if r.ns <= 0 {
			t.Errorf("%s: %v ns/op", r.name, r.ns)
		}
		if strings.HasSuffix(r.name, "tool=mlir-opt") {
			continue // another process: its allocations are not counted
		}
		if r.extra["B/op"] <= 0 || r.extra["allocs/op"] <= 0 {
			t.Errorf("%s: %v B/op, %v allocs/op", r.name, r.extra["B/op"], r.extra["allocs/op"])
		}
	}
	if w := append(slices.Clone(want), want...); !slices.Equal(names, w) {
		t.Fatalf("benchmarks\n%s\nwant\n%s", strings.Join(names, "\n"), strings.Join(w, "\n"))
	}
}

// PartitionOverClone reports each run's partition over the clone it
// worked on, timed just before it.
func TestPartitionOverItsOwnClone(t *testing.T) {
	rs, _ := runBench(t, "-bench", "PartitionOverClone", "-ops", "300", "-count", "3")
	if len(rs) != 3 {
		t.Fatalf("%d results, want 3", len(rs))
	}
	for _, r := range rs {
		clone, ratio := r.extra["clone-ns/op"], r.extra["partition/clone"]
		if clone <= 0 {
			t.Fatalf("clone-ns/op %v", clone)
		}
		if want := r.ns / clone; ratio < want-0.001 || ratio > want+0.001 {
			t.Errorf("partition/clone %v, want %d/%v = %.3f", ratio, int64(r.ns), clone, want)
		}
	}
}

// -bench selects by name, as go test -bench does.
func TestBenchSelects(t *testing.T) {
	rs, _ := runBench(t, "-bench", "ranks=1$", "-ops", "300,600")
	var names []string
	for _, r := range rs {
		names = append(names, r.name)
	}
	if want := []string{"PartitionAll/ops=300/ranks=1", "PartitionAll/ops=600/ranks=1"}; !slices.Equal(names, want) {
		t.Errorf("benchmarks %q, want %q", names, want)
	}
}

// A failing mlir-opt fails the run, naming the benchmark and the tool.
func TestMLIROptFailureIsAnError(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := run([]string{"-bench", "tool=mlir-opt", "-twin-ops", "300", "-mlir-opt", "/bin/false"}, &stdout, &stderr)
	if want := "distpass-bench: BenchmarkTwinParseVerifyPrint/ops=300/tool=mlir-opt: /bin/false: exit status 1: \n"; code != 1 || stderr.String() != want {
		t.Errorf("exit %d, stderr %q; want 1 and %q", code, stderr.String(), want)
	}
}

func TestUsageErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-ops", "100,x"}, `distpass-bench: -ops: "x" is not a positive op count`},
		{[]string{"-ops", "0"}, `distpass-bench: -ops: "0" is not a positive op count`},
		{[]string{"-count", "0"}, "distpass-bench: -count: 0 is not a positive count"},
		{[]string{"-twin-ops", "-1"}, "distpass-bench: -twin-ops: -1 is not a positive op count"},
		{[]string{"-ranks", "0"}, "distpass-bench: -ranks: 0 is not a positive rank count"},
		{[]string{"-bench", "("}, "distpass-bench: -bench: error parsing regexp: missing closing ): `(`"},
		{[]string{"extra"}, `distpass-bench: unexpected argument "extra"`},
	} {
		var stdout, stderr bytes.Buffer
		if code := run(c.args, &stdout, &stderr); code != 2 || stderr.String() != c.want+"\n" || stdout.Len() != 0 {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want 2, nothing and %q", c.args, code, stdout.String(), stderr.String(), c.want)
		}
	}
}

// -h prints the usage and is no error; an unknown flag is one.
func TestHelpAndUnknownFlag(t *testing.T) {
	for _, c := range []struct {
		arg  string
		code int
	}{{"-h", 0}, {"-nosuch", 2}} {
		var stdout, stderr bytes.Buffer
		if code := run([]string{c.arg}, &stdout, &stderr); code != c.code || !strings.Contains(stderr.String(), "usage: distpass-bench [flags]") || !strings.Contains(stderr.String(), "-count N") {
			t.Errorf("%s: exit %d, stderr %q; want %d and the usage", c.arg, code, stderr.String(), c.code)
		}
	}
}

func TestMeshFor(t *testing.T) {
	for _, c := range []struct{ ranks, dp, mp int }{{1, 1, 1}, {2, 1, 2}, {4, 2, 2}, {8, 2, 4}, {12, 3, 4}, {64, 8, 8}, {7, 1, 7}} {
		if dp, mp := meshFor(c.ranks); dp != c.dp || mp != c.mp {
			t.Errorf("meshFor(%d) = %dx%d, want %dx%d", c.ranks, dp, mp, c.dp, c.mp)
		}
	}
}
