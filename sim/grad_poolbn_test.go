package sim

import (
	"math/rand/v2"

	"github.com/distpass/distpass/ir"
)

// Finite-difference cases for pool2d (each pooling mode) and batch_norm
// (training, is_test, use_global_stats, layouts).
func init() {
	moreGradCases = append(moreGradCases, poolGradCases, batchNormGradCases)
}

func poolGradCases() []gradCase {
	r := rand.New(rand.NewPCG(27, 2))
	u := func(shape ...int64) *Tensor { return randT(r, -1, 1, shape...) }
	var cs []gradCase
	pool := func(name string, x *Tensor, at ...ir.Attr) {
		cs = append(cs, gradCase{"pool2d/" + name, mkOp("pool2d", Sl("X", "x"), Sl("Out", "o"), at...),
			mkOp("pool2d_grad", Sl("X", "x", "Out", "o", "Out@GRAD", "g"), Sl("X@GRAD", "dx"), at...),
			Args{"X": {x}}, "Out"})
	}
	for _, typ := range []string{"max", "avg"} {
		pt := A("pooling_type", ir.String(typ))
		pool(typ+"/pads-stride", u(2, 2, 5, 6), pt, A("ksize", ir.Ints{3, 3}), A("strides", ir.Ints{2, 2}), A("paddings", ir.Ints{1, 1}))
		pool(typ+"/ceil-4pads", u(1, 2, 5, 5), pt, A("ksize", ir.Ints{2, 3}), A("strides", ir.Ints{2, 2}),
			A("paddings", ir.Ints{0, 1, 1, 0}), A("ceil_mode", ir.Bool(true)))
		pool(typ+"/same", u(1, 2, 5, 7), pt, A("ksize", ir.Ints{3, 2}), A("strides", ir.Ints{2, 2}), A("padding_algorithm", ir.String("SAME")))
		pool(typ+"/valid", u(1, 2, 6, 5), pt, A("ksize", ir.Ints{2, 2}), A("strides", ir.Ints{2, 1}),
			A("paddings", ir.Ints{1, 1}), A("padding_algorithm", ir.String("VALID")))
		pool(typ+"/global", u(2, 3, 3, 4), pt, A("ksize", ir.Ints{1, 1}), A("global_pooling", ir.Bool(true)))
		pool(typ+"/adaptive", u(1, 2, 5, 7), pt, A("ksize", ir.Ints{2, 3}), A("adaptive", ir.Bool(true)))
		pool(typ+"/nhwc", u(2, 5, 4, 3), pt, A("ksize", ir.Ints{2, 2}), A("strides", ir.Ints{2, 1}),
			A("paddings", ir.Ints{1, 0}), A("data_format", ir.String("NHWC")))
	}
	avg := A("pooling_type", ir.String("avg"))
	pool("avg/inclusive", u(2, 2, 5, 6), avg, A("ksize", ir.Ints{3, 3}), A("strides", ir.Ints{2, 2}),
		A("paddings", ir.Ints{1, 2, 0, 1}), A("exclusive", ir.Bool(false)))
	pool("avg/inclusive-ceil", u(1, 1, 5, 4), avg, A("ksize", ir.Ints{2, 2}), A("strides", ir.Ints{2, 2}),
		A("paddings", ir.Ints{1, 1}), A("exclusive", ir.Bool(false)), A("ceil_mode", ir.Bool(true)))
	pool("avg/global-adaptive", u(1, 2, 3, 2), avg, A("ksize", ir.Ints{1, 1}), A("global_pooling", ir.Bool(true)), A("adaptive", ir.Bool(true)))
	return cs
}

func batchNormGradCases() []gradCase {
	r := rand.New(rand.NewPCG(27, 3))
	u := func(shape ...int64) *Tensor { return randT(r, -1, 1, shape...) }
	pos := func(shape ...int64) *Tensor { return randT(r, 0.5, 1.5, shape...) }
	var cs []gradCase
	bn := func(name string, x *Tensor, c int64, affine bool, at ...ir.Attr) {
		at = append(at, A("epsilon", ir.Float(1e-5)), A("momentum", ir.Float(0.9)))
		in := Args{"X": {x}, "Mean": {u(c)}, "Variance": {pos(c)}}
		fwdIn := Sl("X", "x", "Mean", "rm", "Variance", "rv")
		gIn := Sl("X", "x", "Mean", "rm", "Variance", "rv", "SavedMean", "sm", "SavedVariance", "sv", "Y@GRAD", "g")
		gOut := Sl("X@GRAD", "dx")
		if affine {
			in["Scale"], in["Bias"] = []*Tensor{pos(c)}, []*Tensor{u(c)}
			fwdIn = append(fwdIn, Sl("Scale", "sc", "Bias", "b")...)
			gIn = append(gIn, Sl("Scale", "sc", "Bias", "b")...)
			gOut = append(gOut, Sl("Scale@GRAD", "dsc", "Bias@GRAD", "db")...)
		}
		fwdOut := Sl("Y", "y", "MeanOut", "rm", "VarianceOut", "rv", "SavedMean", "sm", "SavedVariance", "sv")
		cs = append(cs, gradCase{"batch_norm/" + name, mkOp("batch_norm", fwdIn, fwdOut, at...),
			mkOp("batch_norm_grad", gIn, gOut, at...), in, "Y"})
	}
	bn("train", u(3, 2, 2, 3), 2, true)
	bn("train/2d", u(5, 3), 3, true)
	bn("train/5d", u(2, 2, 2, 1, 3), 2, true)
	bn("train/nhwc", u(2, 3, 2, 4), 4, true, A("data_layout", ir.String("NHWC")))
	bn("train/no-affine", u(3, 2, 2, 2), 2, false)
	bn("train/one-element", u(1, 2), 2, true) // Y = X, as Paddle copies it
	bn("is_test", u(2, 3, 2, 2), 3, true, A("is_test", ir.Bool(true)))
	bn("is_test/nhwc", u(2, 2, 2, 3), 3, true, A("is_test", ir.Bool(true)), A("data_layout", ir.String("NHWC")))
	bn("use_global_stats", u(2, 3, 2, 2), 3, true, A("use_global_stats", ir.Bool(true)))
	bn("is_test/trainable_statistics", u(2, 3, 2, 2), 3, true, A("is_test", ir.Bool(true)), A("trainable_statistics", ir.Bool(true)))
	return cs
}
