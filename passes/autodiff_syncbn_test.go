package passes_test

import (
	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/sim"
)

// A serial program's sync_batch_norm is a world of one: append-backward
// differentiates it as batch_norm (training, the statistics depending on
// x).
func init() {
	fdCases["sync_batch_norm"] = func(f *fdModule) string {
		f.in("x", 3, 2, 2, 2)
		f.in("bn.scale", 2)
		f.in("bn.bias", 2)
		for _, s := range []string{".mean", ".var"} {
			f.b.Persist("bn"+s, ir.Tensor(ir.F64, 2))
			f.feed["bn"+s] = sim.MustFromData(ir.F64, []int64{2}, []float64{0.3, 0.7})
		}
		f.out("bn.saved_mean", 2)
		f.out("bn.saved_var", 2)
		f.out("y", 3, 2, 2, 2)
		f.b.Op("sync_batch_norm",
			ir.Slots("X", "x", "Scale", "bn.scale", "Bias", "bn.bias", "Mean", "bn.mean", "Variance", "bn.var"),
			ir.Slots("Y", "y", "MeanOut", "bn.mean", "VarianceOut", "bn.var", "SavedMean", "bn.saved_mean", "SavedVariance", "bn.saved_var"),
			ir.A("epsilon", ir.Float(1e-5)), ir.A("momentum", ir.Float(0.9)), ir.A("is_test", ir.Bool(false)), ir.A("ring_id", ir.Int(0)))
		return "y"
	}
}
