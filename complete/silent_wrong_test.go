package complete_test

import (
	"testing"

	"github.com/distpass/distpass/complete"
	"github.com/distpass/distpass/passes"
)

// TestMeanOverSplitFeatureChecks: a column-parallel matmul (w [-1, mp])
// whose output y, batch on dp and features on mp, is averaged by the
// loss's mean. Completion once made the mean spmd:0 with the loss
// partial [0:avg, 1:avg] and the grads whole: check-annotations accepted
// it, and check found w diverged (the average over mp was nowhere in the
// grads). Completion must give a module that checks, or one
// check-annotations refuses with the reshard it needs listed (the loss
// is now partial along the batch's mesh dim alone).
func TestMeanOverSplitFeatureChecks(t *testing.T) {
	m := parseModule(t, "mean_mp.dpir", `module mean_mp
mesh world shape [2, 2] dims [dp, mp] ranks [0, 1, 2, 3]
program main {
  block 0 {
    var x : f64[4, 8] @world[0, -1] {is_data, stop_gradient}
    param w : f64[8, 8] @world[-1, 1] {trainable}
    var y : f64[4, 8]
    var loss : f64[]
    op 1 matmul_v2(X: x, Y: w) -> (Out: y) {trans_x = false, trans_y = false} role forward
    op 2 mean(X: y) -> (Out: loss) role forward
  }
}
`)
	if _, err := passes.AppendBackward(m, "loss"); err != nil {
		t.Fatal(err)
	}
	if _, err := passes.AppendOptimizer(m, "sgd", 0.01); err != nil {
		t.Fatal(err)
	}
	rep, err := complete.Complete(m, complete.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if annotationsErr(m) != nil && len(rep.Reshards) > 0 {
		return // refused, naming the reshard: fine
	}
	checks(t, "mean_mp", m)
}
