package complete_test

import (
	"slices"
	"testing"

	"github.com/distpass/distpass/complete"
	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/ops"
)

// TestReshardOpKept: a reshard op written without an op dist gets the
// one its vars say (Out's mesh, each var's mapping, impl reshard:0), so
// the completed module verifies, and completion lists no reshard for
// the reshard itself. Its free rule alone gave it X's mesh and both
// ends replicated, which verify refused.
func TestReshardOpKept(t *testing.T) {
	m := parseModule(t, "cross.dpir", `module cross
mesh a shape [2] dims [mp] ranks [0, 1]
mesh b shape [2] dims [dp] ranks [2, 3]
program main {
  block 0 {
    var x : f32[4, 8] @a[0, -1] {is_data, stop_gradient}
    var y : f32[4, 8] @a[0, -1]
    var y.b : f32[4, 8] @b[-1, 0]
    var z : f32[4, 8]
    op 1 relu(X: x) -> (Out: y) role forward
    op 2 reshard(X: y) -> (Out: y.b) role forward
    op 3 relu(X: y.b) -> (Out: z) role forward
  }
}
`)
	rep, err := complete.Complete(m, complete.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Reshards) != 0 {
		t.Errorf("%d reshards needed, want none:\n%s", len(rep.Reshards), reportText(t, rep))
	}
	op := m.Main.Global().Ops[1]
	if got, want := ir.PrintOp(op), "op 2 reshard(X: y) -> (Out: y.b) role forward dist @b impl reshard:0 [y: [0, -1] -> y.b: [-1, 0]]"; got != want {
		t.Errorf("completed reshard:\n%s\nwant:\n%s", got, want)
	}
	if _, err := ops.Verify(m, ops.Options{}); err != nil {
		t.Errorf("the completed module does not verify: %v", err)
	}
	if d := m.Main.Global().Var("z").Dist; d == nil || d.Mesh != "b" || !slices.Equal(d.DimsMapping, []int{-1, 0}) {
		t.Errorf("z completed as %+v, want y.b's @b[-1, 0]", d)
	}
}

// TestReshardOpFewerMeshDims: a reshard onto a mesh of fewer dims than
// X's: X's mapping cannot be written under Out's mesh, so the op dist
// lists Out alone (X's var dist says its end), and the module verifies.
func TestReshardOpFewerMeshDims(t *testing.T) {
	m := parseModule(t, "xm.dpir", `module xm
mesh a shape [2, 2] dims [p, q] ranks [0, 1, 2, 3]
mesh b shape [4] dims [r] ranks [0, 1, 2, 3]
program main {
  block 0 {
    var y : f32[4, 8] @a[0, 1] {is_data}
    var z : f32[4, 8] @b[0, -1]
    op 2 reshard(X: y) -> (Out: z) role forward
  }
}
`)
	if _, err := complete.Complete(m, complete.Options{}); err != nil {
		t.Fatal(err)
	}
	if got, want := ir.PrintOp(m.Main.Global().Ops[0]), "op 2 reshard(X: y) -> (Out: z) role forward dist @b impl reshard:0 [-> z: [0, -1]]"; got != want {
		t.Errorf("completed reshard:\n%s\nwant:\n%s", got, want)
	}
	if _, err := ops.Verify(m, ops.Options{}); err != nil {
		t.Errorf("the completed module does not verify: %v", err)
	}
}
