package passes_test

import (
	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/sim"
)

// Finite-difference cases of append-backward through pool2d and
// batch_norm: each chains the op's modes, so that every grad op the
// table derives runs in a program.
func init() {
	fdCases["pool2d"] = func(f *fdModule) string {
		f.in("x", 2, 2, 5, 4)
		f.out("p", 2, 2, 3, 2)
		f.out("o", 2, 2, 2, 2)
		f.b.Op("pool2d", ir.Slots("X", "x"), ir.Slots("Out", "p"), ir.A("pooling_type", ir.String("max")),
			ir.A("ksize", ir.Ints{3, 3}), ir.A("strides", ir.Ints{2, 2}), ir.A("paddings", ir.Ints{1, 1}))
		f.b.Op("pool2d", ir.Slots("X", "p"), ir.Slots("Out", "o"), ir.A("pooling_type", ir.String("avg")),
			ir.A("ksize", ir.Ints{2, 2}), ir.A("strides", ir.Ints{2, 2}), ir.A("paddings", ir.Ints{0, 1, 1, 0}),
			ir.A("ceil_mode", ir.Bool(true)), ir.A("exclusive", ir.Bool(false)))
		return "o"
	}
	// A training batch norm (the statistics depend on x) into an inference
	// one; the running statistics are persistable state updated in place,
	// which takes no gradient.
	fdCases["batch_norm"] = func(f *fdModule) string {
		f.in("x", 3, 2, 2, 2)
		for _, bn := range []string{"bn0", "bn1"} {
			f.in(bn+".scale", 2)
			f.in(bn+".bias", 2)
			for _, s := range []string{".mean", ".var"} {
				f.b.Persist(bn+s, ir.Tensor(ir.F64, 2))
				f.feed[bn+s] = sim.MustFromData(ir.F64, []int64{2}, []float64{0.3, 0.7})
			}
			f.out(bn+".saved_mean", 2)
			f.out(bn+".saved_var", 2)
		}
		f.out("y", 3, 2, 2, 2)
		f.out("o", 3, 2, 2, 2)
		bn := func(name, x, y string, isTest bool) {
			f.b.Op("batch_norm",
				ir.Slots("X", x, "Scale", name+".scale", "Bias", name+".bias", "Mean", name+".mean", "Variance", name+".var"),
				ir.Slots("Y", y, "MeanOut", name+".mean", "VarianceOut", name+".var", "SavedMean", name+".saved_mean", "SavedVariance", name+".saved_var"),
				ir.A("epsilon", ir.Float(1e-5)), ir.A("momentum", ir.Float(0.9)), ir.A("is_test", ir.Bool(isTest)))
		}
		bn("bn0", "x", "y", false)
		bn("bn1", "y", "o", true)
		return "o"
	}
}
