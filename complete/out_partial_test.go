package complete_test

import (
	"testing"

	"github.com/distpass/distpass/complete"
)

// TestAnnotatedWholeOutputOfPartialOp: the
// user annotated y whole ([-1, 1], no partial) but the 2-D
// tensor-parallel matmul gives it partial along mesh dim 0 (its
// contracted k is split there). Completion refuses ("no impl lowers the
// dists completion inferred ... spmd:0: rule_based needs Out y [-1, 1]
// partial [0] ...; its dist says [-1, 1] and not partial"). Without the
// annotation the same op completes to spmd:0. As inputs are read as the
// op requires them (a reshard), an annotated output should be given as
// the op gives it: spmd:0, and a listed reshard of y (the all-reduce).
func TestAnnotatedWholeOutputOfPartialOp(t *testing.T) {
	m := parseModule(t, "out_partial.dpir", `module out_partial
mesh world shape [2, 2] dims [a, b] ranks [0, 1, 2, 3]
program main {
  block 0 {
    var x : f64[4, 8] @world[-1, 0] {is_data, stop_gradient}
    param w : f64[8, 4] @world[0, 1] {trainable}
    var y : f64[4, 4] @world[-1, 1]
    op 1 matmul_v2(X: x, Y: w) -> (Out: y) {trans_x = false, trans_y = false} role forward
  }
}
`)
	rep, err := complete.Complete(m, complete.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if d := m.Main.Global().Ops[0].Dist; d.ImplType != "spmd" {
		t.Errorf("matmul_v2 on %s:%d, want spmd:0", d.ImplType, d.ImplIndex)
	}
	if len(rep.Reshards) != 1 || rep.Reshards[0].Var != "y" || !rep.Reshards[0].Output {
		t.Errorf("reshards %+v, want the op's output y", rep.Reshards)
	}
}
