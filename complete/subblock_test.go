package complete_test

import (
	"context"
	"os"
	"testing"

	"github.com/distpass/distpass/check"
	"github.com/distpass/distpass/complete"
	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/models"
)

// TestWhileLoop: examples/while_loop.dpir on a 2-rank mesh with only its
// data x annotated (batch on dp) completes: every dense var of both
// blocks gets a dist, the loop-carried x (written in the body and by the
// while op) and x_next keep the batch split, the counters are
// replicated, and check-annotations accepts the module.
func TestWhileLoop(t *testing.T) {
	src, err := os.ReadFile("../examples/while_loop.dpir")
	if err != nil {
		t.Fatal(err)
	}
	m, err := ir.Parse("while_loop.dpir", src)
	if err != nil {
		t.Fatal(err)
	}
	strip(m, func(*ir.Var) bool { return false })
	pm := models.Mesh([]int{2}, []string{"dp"})
	m.Meshes = append(m.Meshes, pm)
	m.Main.Global().Var("x").Dist = &ir.TensorDist{Mesh: pm.Name, DimsMapping: []int{0, -1}}
	rep, err := complete.Complete(m, complete.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Main.Blocks) != 2 {
		t.Fatalf("%d blocks, want the loop's 2", len(m.Main.Blocks))
	}
	everythingHasADist(t, "while_loop", m)
	want := map[string]string{"x": "[0, -1]", "i": "[-1]", "n": "[-1]", "cond": "[-1]", "x_next": "[0, -1]"}
	for bi, b := range m.Main.Blocks {
		for _, v := range b.Vars() {
			if w, ok := want[v.Name()]; ok && v.Dist != nil && ir.FormatInts(v.Dist.DimsMapping) != w {
				t.Errorf("block %d var %s: %v, want %s", bi, v.Name(), v.Dist.DimsMapping, w)
			}
		}
	}
	// The while op and the body's ops read and write x as it is.
	for _, b := range m.Main.Blocks {
		for _, op := range b.Ops {
			for _, side := range [][]ir.ArgDist{op.Dist.Inputs, op.Dist.Outputs} {
				for _, a := range side {
					if w, ok := want[a.Name]; ok && ir.FormatInts(a.DimsMapping) != w {
						t.Errorf("%s: %s as %v, want %s", op, a.Name, a.DimsMapping, w)
					}
				}
			}
		}
	}
	if len(rep.Reshards) != 0 || len(rep.Barriers) != 0 || len(rep.RuleErrors) != 0 {
		t.Errorf("report: %s", reportText(t, rep))
	}
	if err := annotationsErr(m); err != nil {
		t.Fatal(err)
	}
	cr, err := check.Run(context.Background(), m, check.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := cr.Err(); err != nil {
		t.Fatal(err)
	}
}

// TestWhileLoopCarriedInferred: the loop-carried x is no annotated var
// but relu's output of the data d: its split flows into the body (x,
// x_next) and out of the loop (y, after the while op), and the module
// checks.
func TestWhileLoopCarriedInferred(t *testing.T) {
	m := parseModule(t, "while_carried.dpir", `module while_carried
mesh world shape [2] dims [dp] ranks [0, 1]
program main {
  block 0 {
    var d : f32[4, 8] @world[0, -1] {is_data, stop_gradient}
    var x : f32[4, 8]
    var i : i64[1]
    var n : i64[1]
    var cond : bool[1]
    var scopes : step_scopes
    var y : f32[4, 8]
    op 9 relu(X: d) -> (Out: x) role forward
    op 1 fill_constant() -> (Out: i) {dtype = 3, shape = [1], value = 0.0} role forward
    op 2 fill_constant() -> (Out: n) {dtype = 3, shape = [1], value = 10.0} role forward
    op 3 less_than(X: i, Y: n) -> (Out: cond) role forward
    op 4 while(X: [x, i, n], Condition: cond) -> (Out: [x, i], StepScopes: scopes)
         {is_test = false, sub_block = ^1} role forward
    op 10 relu(X: x) -> (Out: y) role forward
  }
  block 1 parent 0 {
    var x_next : f32[4, 8]
    op 5 scale(X: x) -> (Out: x_next) {bias = 0.0, bias_after_scale = true, scale = 0.5} role forward
    op 6 assign(X: x_next) -> (Out: x) role forward
    op 7 increment(X: i) -> (Out: i) {step = 1.0} role forward
    op 8 less_than(X: i, Y: n) -> (Out: cond) role forward
  }
}
`)
	rep, err := complete.Complete(m, complete.Options{})
	if err != nil {
		t.Fatal(err)
	}
	everythingHasADist(t, "while_carried", m)
	for bi, name := range map[int]string{0: "x", 1: "x_next"} {
		if v := m.Main.Blocks[bi].Var(name); v.Dist == nil || ir.FormatInts(v.Dist.DimsMapping) != "[0, -1]" {
			t.Errorf("block %d var %s: %+v, want [0, -1]", bi, name, v.Dist)
		}
	}
	if got := mappingOf(t, m, "y"); got != "@world[0, -1]" {
		t.Errorf("y: %s, want @world[0, -1]", got)
	}
	if len(rep.Reshards) != 0 {
		t.Errorf("report: %s", reportText(t, rep))
	}
	checks(t, "while_carried", m)
}
