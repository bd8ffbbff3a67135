package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/distpass/distpass/ir"
)

// bench -json at a small op count: every documented field is there, and
// every figure that must be positive is.
func TestBenchJSON(t *testing.T) {
	var stdout, stderr bytes.Buffer
	env := &Env{Stdout: &stdout, Stderr: &stderr}
	if code := Main([]string{"bench", "-ops", "2000", "-json", "-stages", strings.Join(benchStages, ",")}, env); code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	var doc map[string]any
	if err := json.Unmarshal(stdout.Bytes(), &doc); err != nil {
		t.Fatalf("%v:\n%s", err, stdout.String())
	}
	for _, f := range []string{"go_version", "goos", "goarch", "gomaxprocs", "num_cpu", "seed", "ranks", "mesh", "peak_heap_method", "load_average", "huge_pages", "modules", "stages"} {
		if _, ok := doc[f]; !ok {
			t.Errorf("no field %s", f)
		}
	}
	if doc["ranks"] != 8.0 || !slices.Equal(floats(doc["mesh"]), []float64{2, 4}) {
		t.Errorf("ranks %v mesh %v, want 8 and [2, 4]", doc["ranks"], doc["mesh"])
	}
	mods, _ := doc["modules"].([]any)
	if len(mods) != 1 {
		t.Fatalf("%d modules, want 1", len(mods))
	}
	mod := mods[0].(map[string]any)
	for _, f := range []string{"requested_ops", "ops", "text_bytes", "module_heap_bytes", "generate_ns"} {
		if x, _ := mod[f].(float64); x <= 0 {
			t.Errorf("module: %s = %v, want > 0", f, mod[f])
		}
	}
	if mod["requested_ops"] != 2000.0 || mod["ops"].(float64) < 2000 {
		t.Errorf("module: requested %v, ops %v", mod["requested_ops"], mod["ops"])
	}
	stages, _ := doc["stages"].([]any)
	var names []string
	for _, s := range stages {
		st := s.(map[string]any)
		name, _ := st["stage"].(string)
		names = append(names, name)
		positive := []string{"requested_ops", "ops", "wall_ns", "ns_per_op", "heap_base_bytes", "peak_heap_bytes"}
		if name != "verify" && name != "walk" && name != "chase" { // they may allocate nothing per op
			positive = append(positive, "allocs", "bytes", "allocs_per_op", "bytes_per_op")
		}
		for _, f := range positive {
			if x, _ := st[f].(float64); x <= 0 {
				t.Errorf("%s: %s = %v, want > 0", name, f, st[f])
			}
		}
		for _, f := range []string{"cpu_ns", "page_faults"} {
			if x, ok := st[f].(float64); !ok || x < 0 {
				t.Errorf("%s: %s = %v, want >= 0", name, f, st[f])
			}
		}
		if st["peak_heap_bytes"].(float64) < st["heap_base_bytes"].(float64) {
			t.Errorf("%s: peak heap below the base", name)
		}
		if strings.HasPrefix(name, "partition-") {
			if st["ranks"] != 8.0 {
				t.Errorf("%s: ranks %v", name, st["ranks"])
			}
		} else if _, ok := st["ranks"]; ok {
			t.Errorf("%s has ranks", name)
		}
		if name == "partition-classes" {
			if x, _ := st["classes"].(float64); x < 1 {
				t.Errorf("partition-classes: classes %v", st["classes"])
			}
		}
	}
	if !slices.Equal(names, benchStages) {
		t.Errorf("stages %v, want %v", names, benchStages)
	}
}

// benchJSON runs bench with args, which must include -json, and returns
// its report.
func benchJSON(t *testing.T, args ...string) benchReport {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if code := Main(args, &Env{Stdout: &stdout, Stderr: &stderr}); code != ExitOK {
		t.Fatalf("%v: exit %d: %s", args, code, stderr.String())
	}
	var rep benchReport
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("%v: %v:\n%s", args, err, stdout.String())
	}
	return rep
}

func floats(v any) []float64 {
	var out []float64
	xs, _ := v.([]any)
	for _, x := range xs {
		f, _ := x.(float64)
		out = append(out, f)
	}
	return out
}

// -mem 0 streams partition-all; ranks other than 8 make another mesh.
func TestBenchStreamAndMesh(t *testing.T) {
	var stdout, stderr bytes.Buffer
	env := &Env{Stdout: &stdout, Stderr: &stderr}
	if code := Main([]string{"bench", "-ops", "500", "-ranks", "16", "-mem", "0", "-stages", "partition-all"}, env); code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	out := stdout.String()
	for _, want := range []string{"mesh 4x4 (16 ranks)", "partition-all*", "* streamed"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
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

// -repeat runs each stage that many times (partition on a new clone each
// time: a second Partition of the same module would fail) and reports
// the run of median wall time, listing every run's.
func TestBenchRepeat(t *testing.T) {
	rep := benchJSON(t, "bench", "-ops", "300", "-stages", "verify,partition", "-repeat", "3", "-json")
	if rep.Repeat != 3 || len(rep.Stages) != 2 {
		t.Fatalf("repeat %d, %d stages; want 3 and 2", rep.Repeat, len(rep.Stages))
	}
	for _, s := range rep.Stages {
		if len(s.RunsWallNs) != 3 {
			t.Fatalf("%s: runs_wall_ns %v, want 3 runs", s.Stage, s.RunsWallNs)
		}
		sorted := slices.Sorted(slices.Values(s.RunsWallNs))
		if s.WallNs != sorted[1] {
			t.Errorf("%s: wall_ns %d, want the median of %v", s.Stage, s.WallNs, s.RunsWallNs)
		}
		// Partition's runs each time the clone they work on.
		if s.Stage == "partition" {
			if len(s.RunsCloneNs) != 3 || slices.Min(s.RunsCloneNs) <= 0 || !slices.Contains(s.RunsCloneNs, s.CloneNs) {
				t.Errorf("partition: clone_ns %d, runs_clone_ns %v: want 3 positive, the median run's among them", s.CloneNs, s.RunsCloneNs)
			}
		} else if s.CloneNs != 0 || s.RunsCloneNs != nil {
			t.Errorf("%s has clone times", s.Stage)
		}
	}
	if len(rep.Ratios) != 1 || rep.Ratios[0].PartitionOverPairedClone <= 0 {
		t.Errorf("ratios %+v: want partition over its own clones", rep.Ratios)
	}
	var stdout, stderr bytes.Buffer
	if code := Main([]string{"bench", "-repeat", "0"}, &Env{Stdout: &stdout, Stderr: &stderr}); code != ExitUsage {
		t.Errorf("-repeat 0: exit %d, want %d", code, ExitUsage)
	}
}

func TestMedianRun(t *testing.T) {
	runs := func(walls ...int64) []benchStage {
		var rs []benchStage
		for i, w := range walls {
			rs = append(rs, benchStage{WallNs: w, Allocs: uint64(i)})
		}
		return rs
	}
	for _, c := range []struct {
		walls []int64
		want  uint64 // the index of the run reported
		iqr   int64
	}{
		{[]int64{5}, 0, 0},
		{[]int64{9, 1, 5}, 2, 8},
		{[]int64{4, 3, 2, 1}, 2, 1},                  // the lower middle: 2 ns, run 2; quartiles 2 and 3
		{[]int64{7, 7, 1}, 0, 6},                     // ties keep their order
		{[]int64{70, 10, 60, 20, 50, 30, 40}, 6, 40}, // quartiles 20 and 60
	} {
		r := medianRun(runs(c.walls...))
		if r.Allocs != c.want {
			t.Errorf("medianRun(%v) reported run %d, want %d", c.walls, r.Allocs, c.want)
		}
		if r.WallIQRNs != c.iqr {
			t.Errorf("medianRun(%v): IQR %d, want %d", c.walls, r.WallIQRNs, c.iqr)
		}
		if len(c.walls) > 1 && !slices.Equal(r.RunsWallNs, c.walls) {
			t.Errorf("medianRun(%v): runs_wall_ns %v", c.walls, r.RunsWallNs)
		}
	}
}

// The walk stage looks every arg up: one that names no var is an error
// naming the op and the name, not a silent zero.
func TestWalkModule(t *testing.T) {
	m, err := ir.ParseString("w.dpir", `program main {
  block 0 {
    var x : f32[4]
    var y : f32[4]
    op 1 relu(X: x) -> (Out: y)
    op 2 relu(X: y) -> (Out: nowhere)
  }
}`)
	if err != nil {
		t.Fatal(err)
	}
	err = walkModule(m)
	if err == nil || !strings.Contains(err.Error(), "op 2 relu: no var nowhere") {
		t.Fatalf("walk of a module with an undeclared output: %v", err)
	}
	m.Main.Blocks[0].Ops = m.Main.Blocks[0].Ops[:1]
	if err := walkModule(m); err != nil {
		t.Fatalf("walk of a well-formed module: %v", err)
	}
}

// With several sizes every module is alive through every stage; each
// row's heap figures are its own module's, the others' taken off.
func TestBenchHeapIsEachModules(t *testing.T) {
	rep := benchJSON(t, "bench", "-ops", "300,30000", "-stages", "walk,print,parse", "-json")
	if len(rep.Modules) != 2 || len(rep.Stages) != 6 {
		t.Fatalf("%d modules, %d stages; want 2 and 6", len(rep.Modules), len(rep.Stages))
	}
	big := rep.Modules[1].ModuleHeapBytes
	for _, s := range rep.Stages {
		if s.RequestedOps == 300 && s.PeakHeapBytes >= big/2 {
			t.Errorf("%s at 300 ops: peak heap %d, but the 30000-op module alone is %d", s.Stage, s.PeakHeapBytes, big)
		}
		if s.RequestedOps == 30000 && s.HeapBaseBytes < big/2 {
			t.Errorf("%s at 30000 ops: heap base %d below the module's %d", s.Stage, s.HeapBaseBytes, big)
		}
	}
}

// -mintime keeps a stage running on a module past -repeat runs until the
// time has passed.
func TestBenchMinTime(t *testing.T) {
	rep := benchJSON(t, "bench", "-ops", "300", "-stages", "verify", "-repeat", "2", "-mintime", "100ms", "-json")
	if rep.MinTimeNs != 100e6 || len(rep.Stages) != 1 {
		t.Fatalf("min_time_ns %d, %d stages; want 100ms and 1", rep.MinTimeNs, len(rep.Stages))
	}
	// Each run of verify on 300 ops, with its collection, takes about a
	// millisecond: 100ms takes many runs.
	runs := rep.Stages[0].RunsWallNs
	if len(runs) <= 2 {
		t.Errorf("%d runs, want more than -repeat's 2", len(runs))
	}
	if sorted := slices.Sorted(slices.Values(runs)); rep.Stages[0].WallNs != sorted[(len(sorted)-1)/2] {
		t.Errorf("wall_ns %d is not the median of %v", rep.Stages[0].WallNs, runs)
	}
	var stdout, stderr bytes.Buffer
	if code := Main([]string{"bench", "-ops", "300", "-stages", "verify", "-mintime", "-1s"}, &Env{Stdout: &stdout, Stderr: &stderr}); code != ExitUsage {
		t.Errorf("-mintime -1s: exit %d, want %d", code, ExitUsage)
	}
}

// With -repeat the table has each stage's run count and the spread of
// its runs; without, neither.
func TestBenchTableRuns(t *testing.T) {
	for _, c := range []struct {
		args []string
		runs bool
	}{
		{[]string{"bench", "-ops", "300", "-stages", "verify"}, false},
		{[]string{"bench", "-ops", "300", "-stages", "verify", "-repeat", "3"}, true},
	} {
		var stdout, stderr bytes.Buffer
		if code := Main(c.args, &Env{Stdout: &stdout, Stderr: &stderr}); code != ExitOK {
			t.Fatalf("%v: exit %d: %s", c.args, code, stderr.String())
		}
		var head, row []string
		for _, line := range strings.Split(stdout.String(), "\n") {
			f := strings.Fields(line)
			switch {
			case len(f) > 0 && f[0] == "stage":
				head = f
			case len(f) > 0 && f[0] == "verify":
				row = f
			}
		}
		if got := slices.Contains(head, "IQR"); got != c.runs || len(row) != len(head)-2 { // "peak heap MB" is three words
			t.Fatalf("%v: head %q, row %q", c.args, head, row)
		}
		if c.runs && (row[len(row)-2] != "3" || !strings.HasSuffix(row[len(row)-1], "%")) {
			t.Errorf("%v: runs and IQR %q, want 3 and a percentage", c.args, row[len(row)-2:])
		}
	}
}

// The stages' module is read back from its own text, as a command reads
// a file: it prints as that text, and its names are the text's bytes.
func TestBenchModuleIsReadBack(t *testing.T) {
	m, src, err := benchModuleOf(300, 1, 2, 4)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(ir.Print(m), src) {
		t.Fatal("the module read back does not print as its text")
	}
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(src)))
	hi := lo + uintptr(len(src))
	vars := m.Main.Blocks[0].Vars()
	if len(vars) == 0 {
		t.Fatal("no vars in main's block 0")
	}
	for _, v := range vars {
		if p := uintptr(unsafe.Pointer(unsafe.StringData(v.Name()))); p < lo || p >= hi {
			t.Fatalf("var %s: its name is not in the text", v.Name())
		}
	}
}

// -dpir and -mlir write the largest module: its .dpir text, which reads
// back to a module that prints as that text, and its MLIR twin, one
// dist op a line for each op of main.
func TestBenchWritesTheLargestModule(t *testing.T) {
	dir := t.TempDir()
	dpir, twin := filepath.Join(dir, "m.dpir"), filepath.Join(dir, "m.mlir")
	var stdout, stderr bytes.Buffer
	env := &Env{Stdout: &stdout, Stderr: &stderr}
	if code := Main([]string{"bench", "-ops", "600,300", "-stages", "print", "-json", "-dpir", dpir, "-mlir", twin}, env); code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	var rep benchReport
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	largest := 0
	for _, mod := range rep.Modules {
		largest = max(largest, mod.Ops)
	}
	src, err := os.ReadFile(dpir)
	if err != nil {
		t.Fatal(err)
	}
	m, err := ir.Parse(dpir, src)
	if err != nil {
		t.Fatal(err)
	}
	if err := ir.Verify(m); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(ir.Print(m), src) {
		t.Error("the .dpir file does not print as itself")
	}
	ops := 0
	for _, p := range m.Programs() {
		ops += p.NumOps()
	}
	if ops != largest {
		t.Errorf("the .dpir file has %d ops, the largest module %d", ops, largest)
	}
	text, err := os.ReadFile(twin)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := bytes.Count(text, []byte(`"dist.`)), m.Main.NumOps(); got != want {
		t.Errorf("the MLIR twin has %d dist ops, main %d", got, want)
	}
}
