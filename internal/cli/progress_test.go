package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/lower"
	"github.com/distpass/distpass/ops"
	"github.com/distpass/distpass/passes"
)

// Long runs show progress on stderr when it is a terminal, and nothing
// when it is not.
func TestProgressOnlyOnATerminal(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "..", "examples", "mlp_dp_mp.dpir"))
	if err != nil {
		t.Fatal(err)
	}
	// -all: one class of 4 ranks, its first rank lowered (no impl reads
	// the rank: no check lowering), then 4 files written.
	// check -pipeline: the pipeline's 4 runs end in any order, counted.
	// In a step of the SPMD run the ranks end in any order, counted.
	spmdStep := func(step int) string {
		s := fmt.Sprintf(`\r\x1b\[Kcheck: spmd step %d/2: 4 ranks running`, step)
		for done := 1; done <= 4; done++ {
			s += fmt.Sprintf(`\r\x1b\[Kcheck: spmd step %d/2: %d/4 ranks done, last rank [0-3]`, step, done)
		}
		return s
	}
	// Then the summary, after the status line is cleared.
	d := `(?:\d+\.\d(?:ms|s)|\d+µs)`
	op := `[a-z0-9_]+ ` + d + ` \(\d+\)`
	summary := func(first string) string {
		return `check: ` + d + `: ` + first + ` ` + d + `, static proof ` + d + `, startup ` + d + `, spmd ` + d + `, serial ` + d + `, compare ` + d + `\n` +
			`check: slowest ops, serial and all ranks summed: ` + op + `(?:, ` + op + `){4}\n` +
			`check: collectives, waits included: ` + op + `(?:, ` + op + `){0,4}\n`
	}
	// The static proof, the startups, then step by step: serial, the
	// ranks, the comparison.
	steps := `\r\x1b\[Kcheck: static proof\r\x1b\[K\r\x1b\[Kcheck: startup\r\x1b\[Kcheck: spmd startup, 4 ranks` +
		`\r\x1b\[Kcheck: serial step 1/2` + spmdStep(1) + `\r\x1b\[Kcheck: compare after step 1/2` +
		`\r\x1b\[Kcheck: serial step 2/2` + spmdStep(2) + `\r\x1b\[Kcheck: compare after step 2/2\r\x1b\[K`
	cases := []struct {
		args []string
		want *regexp.Regexp
	}{
		{[]string{"partition", "-all", "-o", t.TempDir(), "-"}, regexp.MustCompile(`^\r\x1b\[Kpartition: lowered 1/1` +
			`\r\x1b\[Kpartition: wrote 1/4 files\r\x1b\[Kpartition: wrote 2/4 files\r\x1b\[Kpartition: wrote 3/4 files\r\x1b\[Kpartition: wrote 4/4 files\r\x1b\[K$`)},
		{[]string{"check", "-steps", "2", "-"}, regexp.MustCompile(`^\r\x1b\[Kcheck: partition: lowered 1/1` + steps + summary("partition") + `$`)},
		{[]string{"check", "-steps", "2", "-pipeline", "partition{rank=$RANK}", "-"}, regexp.MustCompile(`^\r\x1b\[Kcheck: pipeline 1/4\r\x1b\[Kcheck: pipeline 2/4\r\x1b\[Kcheck: pipeline 3/4\r\x1b\[Kcheck: pipeline 4/4` + steps + summary("pipeline") + `$`)},
	}
	stdouts := map[string]string{} // by args, not on a terminal
	for _, term := range []bool{false, true} {
		for _, c := range cases {
			args := c.args
			key := strings.Join(args[:len(args)-1], " ") // the temp dir of -all varies
			if args[0] == "partition" {
				key = "partition"
			}
			var stdout, stderr bytes.Buffer
			env := &Env{Stdin: bytes.NewReader(src), Stdout: &stdout, Stderr: &stderr,
				Terminal: func(io.Writer) bool { return term }}
			if code := Main(args, env); code != ExitOK {
				t.Fatalf("%v: exit %d: %s", args, code, stderr.String())
			}
			got := stderr.String()
			if !term {
				if got != "" {
					t.Errorf("%v, not a terminal: stderr %q, want nothing", args, got)
				}
				stdouts[key] = stdout.String()
				continue
			}
			if stdout.String() != stdouts[key] {
				t.Errorf("%v: stdout on a terminal %q, not on one %q: want the same", args, stdout.String(), stdouts[key])
			}
			if !c.want.MatchString(got) {
				t.Errorf("%v on a terminal: stderr %q, want %s", args, got, c.want)
				continue
			}
			if args[0] == "check" {
				checkProgressRanks(t, got)
				checkSummaryCounts(t, got, src)
			}
		}
	}
}

// checkProgressRanks asserts that each SPMD step's progress names each
// of the 4 ranks done once.
func checkProgressRanks(t *testing.T, stderr string) {
	t.Helper()
	for step := 1; step <= 2; step++ {
		re := regexp.MustCompile(fmt.Sprintf(`spmd step %d/2: \d/4 ranks done, last rank (\d)`, step))
		var ranks []string
		for _, m := range re.FindAllStringSubmatch(stderr, -1) {
			ranks = append(ranks, m[1])
		}
		slices.Sort(ranks)
		if !slices.Equal(ranks, []string{"0", "1", "2", "3"}) {
			t.Errorf("step %d: ranks done %v, want each of 0-3 once", step, ranks)
		}
	}
}

// checkSummaryCounts asserts that every op type the summary names ran
// as many times as the programs say: the serial startup once and main
// twice, and so every rank's programs.
func checkSummaryCounts(t *testing.T, stderr string, src []byte) {
	t.Helper()
	m, err := ir.Parse("mlp_dp_mp.dpir", src)
	if err != nil {
		t.Fatal(err)
	}
	mods, err := passes.PartitionAll(context.Background(), m, lower.DefaultRegistry())
	if err != nil {
		t.Fatal(err)
	}
	runs := map[string]int{}
	count := func(p *ir.Program, times int) {
		if p == nil {
			return
		}
		for _, b := range p.Blocks {
			for _, op := range b.Ops {
				runs[op.Type] += times
			}
		}
	}
	for _, pm := range append([]*ir.Module{m}, mods...) {
		count(pm.Startup, 1)
		count(pm.Main, 2)
	}
	kernels := regexp.MustCompile(`check: slowest ops, serial and all ranks summed: (.*)\n`).FindStringSubmatch(stderr)
	collectives := regexp.MustCompile(`check: collectives, waits included: (.*)\n`).FindStringSubmatch(stderr)
	for i, line := range []string{kernels[1], collectives[1]} {
		for _, item := range strings.Split(line, ", ") {
			var typ, d string
			var n int
			if _, err := fmt.Sscanf(item, "%s %s (%d)", &typ, &d, &n); err != nil {
				t.Fatalf("summary item %q: %v", item, err)
			}
			if n != runs[typ] {
				t.Errorf("summary: %s ran %d times, the programs run it %d times", typ, n, runs[typ])
			}
			if ops.IsCollective(typ) != (i == 1) {
				t.Errorf("summary: %s on the wrong line: %q", typ, line)
			}
		}
	}
}

func TestSeconds(t *testing.T) {
	for d, want := range map[time.Duration]string{
		1500 * time.Millisecond: "1.5s", 2500 * time.Microsecond: "2.5ms", 42 * time.Microsecond: "42µs", 0: "0µs",
	} {
		if got := seconds(d); got != want {
			t.Errorf("seconds(%v) = %q, want %q", d, got, want)
		}
	}
}
