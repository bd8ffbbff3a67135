package complete_test

import (
	"context"
	"testing"

	"github.com/distpass/distpass/check"
	"github.com/distpass/distpass/complete"
	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/passes"
)

// A training batch_norm whose X completion splits along dp gets impl
// batch_norm:0 (sync_batch_norm), its container's, tried before default
// (local batch norm): the completed module is annotate-data-parallel's,
// and checks against the serial program. An inference batch_norm gets
// default:0.
func TestCompleteSyncBatchNorm(t *testing.T) {
	m, err := ir.ParseString("bn", `mesh world shape [4] dims [dp] ranks [0, 1, 2, 3]
program main {
  block 0 {
    var x : f64[8, 2, 3] {is_data, stop_gradient}
    var w : f64[8, 2, 3] {is_data, stop_gradient}
    param s : f64[2] {trainable}
    param b : f64[2] {trainable}
    persist rm : f64[2]
    persist rv : f64[2]
    persist im : f64[2]
    persist iv : f64[2]
    var y : f64[8, 2, 3]
    var sm : f64[2]
    var sv : f64[2]
    var y2 : f64[8, 2, 3]
    var sm2 : f64[2]
    var sv2 : f64[2]
    var z : f64[8, 2, 3]
    var loss : f64[]
    op 1 batch_norm(X: x, Scale: s, Bias: b, Mean: rm, Variance: rv) -> (Y: y, MeanOut: rm, VarianceOut: rv, SavedMean: sm, SavedVariance: sv) {epsilon = 1e-05, momentum = 0.9, is_test = false}
    op 2 batch_norm(X: y, Scale: s, Bias: b, Mean: im, Variance: iv) -> (Y: y2, MeanOut: im, VarianceOut: iv, SavedMean: sm2, SavedVariance: sv2) {epsilon = 1e-05, is_test = true}
    op 3 elementwise_mul(X: y2, Y: w) -> (Out: z) {axis = -1}
    op 4 mean(X: z) -> (Out: loss) role forward|loss
  }
}
`)
	if err != nil {
		t.Fatal(err)
	}
	pl, err := passes.DefaultRegistry().Parse("append-backward{loss=loss},append-optimizer{type=sgd,lr=0.5}")
	if err != nil {
		t.Fatal(err)
	}
	if err := (&passes.Manager{}).Run(context.Background(), pl, m); err != nil {
		t.Fatal(err)
	}
	if err := passes.AnnotateDataParallel(m, "world", 0, "dp"); err != nil {
		t.Fatal(err)
	}
	dp := m.Clone()
	strip(m, func(v *ir.Var) bool { return v.Has(ir.FlagIsData) })
	if _, err := complete.Complete(m, complete.Options{}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		id   int64
		impl string
	}{{1, "batch_norm"}, {2, "default"}} {
		op := m.Main.Global().Ops[c.id-1]
		if op.ID != c.id || op.Dist.ImplType != c.impl || op.Dist.ImplIndex != 0 {
			t.Errorf("%s: want impl %s:0", ir.PrintOp(op), c.impl)
		}
		if d := dp.Main.Global().Ops[c.id-1].Dist; d.ImplType != c.impl {
			t.Errorf("annotate-data-parallel gives op %d impl %s, want %s", c.id, d.ImplType, c.impl)
		}
	}
	rep, err := check.Run(context.Background(), m, check.Options{Steps: 2, Tol: 1e-9})
	if err != nil {
		t.Fatal(err)
	}
	if err := rep.Err(); err != nil {
		t.Fatal(err)
	}
	if rep.Count("grad") != 2 || len(rep.LocalBatchNorm) != 0 {
		t.Errorf("compared %d grads, local batch norms %v; want 2, none", rep.Count("grad"), rep.LocalBatchNorm)
	}
}
