package sim

import (
	"strings"
	"testing"
	"time"

	"github.com/distpass/distpass/ir"
)

func parseText(t *testing.T, src string) *ir.Module {
	t.Helper()
	m, err := ir.Parse("test", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestDeclaredShapeChecked: an op whose output tensor is not its var's
// declared type fails the run, naming op, slot, var and both types; a -1
// dim matches any size.
func TestDeclaredShapeChecked(t *testing.T) {
	for _, c := range []struct{ decl, want string }{
		{"f32[4, 9]", "op 2 relu: output Out (a1) is f32[4, 8], declared f32[4, 9]"},
		{"f64[4, 8]", "op 2 relu: output Out (a1) is f32[4, 8], declared f64[4, 8]"},
		{"f32[32]", "op 2 relu: output Out (a1) is f32[4, 8], declared f32[32]"},
		{"f32[-1, 8]", ""},
		{"f32[4, 8]", ""},
	} {
		m := parseText(t, "program main { block 0 {\n var x : f32[4, 8]\n var a1 : "+c.decl+
			"\n op 2 relu(X: x) -> (Out: a1)\n}}")
		_, err := Run(m, Scope{"x": Zeros(ir.F32, 4, 8)}, nil)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.decl, err)
		case c.want != "" && (err == nil || err.Error() != "main: "+c.want):
			t.Errorf("%s: err = %v, want main: %s", c.decl, err, c.want)
		}
	}
}

// TestDeclaredShapeCheckedInASubBlock: the var is looked up from the
// op's block, through its parents.
func TestDeclaredShapeCheckedInASubBlock(t *testing.T) {
	m := parseText(t, `program main {
  block 0 {
    var x : f32[4, 8]
    var c : bool[1]
    var a1 : f32[4, 9]
    op 1 fill_constant() -> (Out: c) {dtype = 0, shape = [1], value = 1.0}
    op 2 conditional_block(Cond: c, Input: x) -> (Out: a1) {sub_block = ^1}
  }
  block 1 parent 0 {
    op 3 relu(X: x) -> (Out: a1)
  }
}`)
	_, err := Run(m, Scope{"x": Zeros(ir.F32, 4, 8)}, nil)
	if err == nil || !strings.Contains(err.Error(), "op 3 relu: output Out (a1) is f32[4, 8], declared f32[4, 9]") {
		t.Fatalf("err = %v", err)
	}
}

// TestDeclaredShapeCheckedPerRank: in a rank's program the declared shape
// is the local one, and the SPMD run compares against it.
func TestDeclaredShapeCheckedPerRank(t *testing.T) {
	r := func(rank int, decl string) string {
		return head + "program main rank " + string(rune('0'+rank)) + " { block 0 {\n var a : f64[2]\n var s : " + decl +
			"\n op 1 c_allreduce_sum(X: a) -> (Out: s) {ring_id = 0}\n op 2 relu(X: s) -> (Out: s)\n}}"
	}
	mods := rankModules(t, r(0, "f64[2]"), r(1, "f64[4]"))
	_, err := (&SPMD{Deadline: 5 * time.Second}).RunProgram("main", []int{0, 1}, mods,
		[]Scope{{"a": Zeros(ir.F64, 2)}, {"a": Zeros(ir.F64, 2)}})
	if err == nil || err.Error() != "rank 1: op 1 c_allreduce_sum: output Out (s) is f64[2], declared f64[4]" {
		t.Fatalf("err = %v", err)
	}
}

// nestedLoops is two nested while loops of n iterations each.
const nestedLoops = `program main {
  block 0 {
    var i : i64[1]
    var j : i64[1]
    var n : i64[1]
    var ci : bool[1]
    var cj : bool[1]
    op 1 fill_constant() -> (Out: i) {dtype = 3, shape = [1], value = 0.0}
    op 2 fill_constant() -> (Out: n) {dtype = 3, shape = [1], value = N.0}
    op 3 less_than(X: i, Y: n) -> (Out: ci)
    op 4 while(X: [i, n], Condition: ci) -> (Out: [i]) {sub_block = ^1}
  }
  block 1 parent 0 {
    op 5 fill_constant() -> (Out: j) {dtype = 3, shape = [1], value = 0.0}
    op 6 less_than(X: j, Y: n) -> (Out: cj)
    op 7 while(X: [j, n], Condition: cj) -> (Out: [j]) {sub_block = ^2}
    op 8 increment(X: i) -> (Out: i) {step = 1.0}
    op 9 less_than(X: i, Y: n) -> (Out: ci)
  }
  block 2 parent 1 {
    op 10 increment(X: j) -> (Out: j) {step = 1.0}
    op 11 less_than(X: j, Y: n) -> (Out: cj)
  }
}`

// TestLoopCapIsPerRun: the cap bounds the work of all loops of a run
// together. Ten by ten nested iterations cost 10 (outer iterations) + 10*5
// (outer body ops) + 100*3 (inner iterations and body ops) = 360 units:
// each loop alone is far below a cap of 200, their product is not; the
// error names the inner loop, running when the cap is reached.
func TestLoopCapIsPerRun(t *testing.T) {
	m := parseText(t, strings.Replace(nestedLoops, "N.0", "10.0", 1))
	ip := NewInterp(nil)
	ip.MaxLoopOps = 360
	out, err := ip.RunModule(m, nil)
	if err != nil {
		t.Fatalf("at the cap: %v", err)
	}
	if out["i"].Data[0] != 10 || out["j"].Data[0] != 10 {
		t.Fatalf("i, j = %v, %v", out["i"], out["j"])
	}
	ip.MaxLoopOps = 359
	if _, err := ip.RunModule(m, nil); err == nil {
		t.Fatal("a run of 360 units passed a cap of 359")
	}
	ip.MaxLoopOps = 200
	_, err = ip.RunModule(m, nil)
	if err == nil || err.Error() != "main: op 7 while: loop work past the cap of 200 op executions per run (nested loops multiply)" {
		t.Fatalf("err = %v", err)
	}
	// Each run has its own budget: the first run does not use up the next's.
	ip.MaxLoopOps = 360
	for range 2 {
		if _, err := ip.RunModule(m, nil); err != nil {
			t.Fatal(err)
		}
	}
}

// TestLoopCapDefault: nested loops of 2^20 iterations each (2^40 in all,
// each loop within the old cap per loop) end at the default cap, fast.
func TestLoopCapDefault(t *testing.T) {
	m := parseText(t, strings.Replace(nestedLoops, "N.0", "1048576.0", 1))
	start := time.Now()
	_, err := Run(m, nil, nil)
	if err == nil || !strings.Contains(err.Error(), "op 7 while: loop work past the cap of 1048576 op executions per run") {
		t.Fatalf("err = %v", err)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("the capped run took %v", d)
	}
}

// TestLoopCapPerRank: SPMD.MaxLoopOps caps each rank's run.
func TestLoopCapPerRank(t *testing.T) {
	src := strings.Replace(nestedLoops, "N.0", "10.0", 1)
	var mods []*ir.Module
	for r := range 2 {
		mods = append(mods, parseText(t, strings.Replace(src, "program main {", "program main rank "+string(rune('0'+r))+" {", 1)))
	}
	_, err := (&SPMD{Deadline: 5 * time.Second, MaxLoopOps: 200}).RunProgram("main", []int{0, 1}, mods, []Scope{{}, {}})
	if err == nil || !strings.Contains(err.Error(), ": op 7 while: loop work past the cap of 200 op executions per run") {
		t.Fatalf("err = %v", err)
	}
}
