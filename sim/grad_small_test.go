package sim

import (
	"math/rand/v2"

	"github.com/distpass/distpass/ir"
)

// Finite-difference cases of the small ops of the imported Paddle
// models. The piecewise activations take inputs that keep clear of
// their kinks, where no derivative exists.
func init() {
	moreGradCases = append(moreGradCases, func() []gradCase {
		r := rand.New(rand.NewPCG(27, 2))
		u := func(shape ...int64) *Tensor { return randT(r, -1, 1, shape...) }
		pos := func(shape ...int64) *Tensor { return randT(r, 0.5, 1.5, shape...) }
		var cs []gradCase
		// act: the grad op reads src (X or Out) and Out@GRAD.
		act := func(name, typ, src string, x *Tensor, at ...ir.Attr) {
			cs = append(cs, gradCase{name, mkOp(typ, Sl("X", "x"), Sl("Out", "o"), at...),
				mkOp(typ+"_grad", Sl(src, "s", "Out@GRAD", "g"), Sl("X@GRAD", "dx"), at...), Args{"X": {x}}, "Out"})
		}
		act("relu6", "relu6", "Out", td(sh(2, 4), -7, -2.5, 0.5, 1.5, 3.2, 5.9, 6.2, 9))
		act("relu6/threshold", "relu6", "Out", td(sh(2, 4), -0.9, -0.3, 0.1, 0.2, 0.45, 0.7, 0.95, 0.05),
			A("threshold", ir.Float(0.5)))
		act("hard_swish", "hard_swish", "X", td(sh(2, 5), -5, -3.5, -2.9, -1, -0.2, 0.4, 1.7, 2.95, 3.1, 6))
		// threshold and scale differ: above the ramp the slope is 4/5.
		act("hard_swish/attrs", "hard_swish", "X", td(sh(2, 4), -3, -1.2, -0.8, 0.3, 1.5, 2.9, 3.1, 5),
			A("threshold", ir.Float(4)), A("scale", ir.Float(5)), A("offset", ir.Float(1)))
		act("swish", "swish", "X", u(3, 4))
		act("swish/beta", "swish", "X", u(3, 4), A("beta", ir.Float(1.7)))
		act("silu", "silu", "X", u(3, 4))
		// hard_sigmoid's kinks are at Out 0 and 1 (X -2.5 and 2.5 by default).
		act("hard_sigmoid", "hard_sigmoid", "Out", td(sh(2, 4), -4, -2.6, -2.3, -0.5, 0.7, 2.2, 2.7, 5))
		act("hard_sigmoid/attrs", "hard_sigmoid", "Out", td(sh(2, 3), -3, -0.9, -0.2, 0.4, 0.7, 2),
			A("slope", ir.Float(0.5)), A("offset", ir.Float(0.25)))
		// The elementary functions, on inputs inside their domains and
		// off abs's kink.
		act("exp", "exp", "Out", u(3, 4))
		act("log", "log", "X", pos(3, 4))
		act("sqrt", "sqrt", "Out", pos(3, 4))
		act("rsqrt", "rsqrt", "Out", pos(3, 4))
		act("square", "square", "X", u(3, 4))
		act("abs", "abs", "X", td(sh(2, 3), -0.9, -0.4, -0.1, 0.2, 0.6, 1.1))
		act("reciprocal", "reciprocal", "Out", pos(3, 4))
		act("sin", "sin", "X", u(3, 4))
		act("cos", "cos", "X", u(3, 4))
		act("erf", "erf", "X", u(3, 4))
		act("softsign", "softsign", "X", td(sh(2, 3), -0.9, -0.4, -0.1, 0.2, 0.6, 1.1))
		act("logsigmoid", "logsigmoid", "X", u(3, 4))
		act("tanh_shrink", "tanh_shrink", "X", u(3, 4))
		act("leaky_relu", "leaky_relu", "X", td(sh(2, 3), -0.9, -0.4, -0.1, 0.2, 0.6, 1.1))
		act("leaky_relu/negative", "leaky_relu", "X", td(sh(2, 3), -0.9, -0.4, -0.1, 0.2, 0.6, 1.1), A("alpha", ir.Float(-0.3)))
		act("softplus", "softplus", "X", u(3, 4))
		// beta 2, threshold 1: inputs on both sides of the cut-off at 0.5.
		act("softplus/threshold", "softplus", "X", td(sh(2, 3), -0.9, -0.2, 0.3, 0.7, 1.2, 2), A("beta", ir.Float(2)), A("threshold", ir.Float(1)))
		act("mish", "mish", "X", u(3, 4))
		act("mish/threshold", "mish", "X", td(sh(2, 3), -0.9, -0.2, 0.3, 0.7, 1.2, 2), A("threshold", ir.Float(0.5)))
		act("pow", "pow", "X", pos(3, 4), A("factor", ir.Float(2.5)))
		act("pow/square", "pow", "X", u(3, 4), A("factor", ir.Float(2)))
		// The repeats and the stack of attention masks and position ids.
		rep := func(name, typ string, x *Tensor, at ...ir.Attr) {
			cs = append(cs, gradCase{name, mkOp(typ, Sl("X", "x"), Sl("Out", "o"), at...),
				mkOp(typ+"_grad", Sl("X", "x", "Out@GRAD", "g"), Sl("X@GRAD", "dx"), at...), Args{"X": {x}}, "Out"})
		}
		rep("expand_v2", "expand_v2", u(3, 1), A("shape", ir.Ints{2, 3, 4}))
		rep("expand_v2/keep", "expand_v2", u(1, 2, 1), A("shape", ir.Ints{3, -1, 2}))
		rep("tile", "tile", u(2, 3), A("repeat_times", ir.Ints{2, 1, 2}))
		rep("tile/short", "tile", u(2, 2, 3), A("repeat_times", ir.Ints{3}))
		cs = append(cs, gradCase{"stack", mkOp("stack", []ir.Slot{S("X", "a", "b", "c")}, Sl("Y", "y"), A("axis", ir.Int(1))),
			mkOp("stack_grad", Sl("Y@GRAD", "g"), []ir.Slot{S("X@GRAD", "da", "db", "dc")}, A("axis", ir.Int(1))),
			Args{"X": {u(2, 3), u(2, 3), u(2, 3)}}, "Y"})
		cs = append(cs, gradCase{"stack/last", mkOp("stack", []ir.Slot{S("X", "a", "b")}, Sl("Y", "y"), A("axis", ir.Int(-1))),
			mkOp("stack_grad", Sl("Y@GRAD", "g"), []ir.Slot{S("X@GRAD", "da", "db")}, A("axis", ir.Int(-1))),
			Args{"X": {u(2, 3), u(2, 3)}}, "Y"})
		cond := MustFromData(ir.Boolean, sh(2, 3), []float64{1, 0, 0, 1, 1, 0})
		cs = append(cs, gradCase{"where", mkOp("where", Sl("Condition", "c", "X", "x", "Y", "y"), Sl("Out", "o")),
			mkOp("where_grad", Sl("Condition", "c", "X", "x", "Y", "y", "Out@GRAD", "g"), Sl("X@GRAD", "dx", "Y@GRAD", "dy")),
			Args{"Condition": {cond}, "X": {u(2, 3)}, "Y": {u(2, 3)}}, "Out"})
		// The resizes: bilinear with corners aligned, half-pixel
		// (align_mode 0) and Paddle's default otherwise, by a scale, NHWC;
		// nearest; clip off its bounds.
		rs := func(name, typ string, x *Tensor, at ...ir.Attr) {
			cs = append(cs, gradCase{name, mkOp(typ, Sl("X", "x"), Sl("Out", "o"), at...),
				mkOp(typ+"_grad", Sl("X", "x", "Out@GRAD", "g"), Sl("X@GRAD", "dx"), at...), Args{"X": {x}}, "Out"})
		}
		rs("bilinear_interp_v2/corners", "bilinear_interp_v2", u(2, 2, 3, 3), A("out_h", ir.Int(5)), A("out_w", ir.Int(4)))
		rs("bilinear_interp_v2/half_pixel", "bilinear_interp_v2", u(1, 2, 3, 4), A("out_h", ir.Int(6)), A("out_w", ir.Int(5)), A("align_corners", ir.Bool(false)), A("align_mode", ir.Int(0)))
		rs("bilinear_interp_v2/scale", "bilinear_interp_v2", u(1, 2, 3, 3), A("scale", ir.Floats{2, 1.5}), A("align_corners", ir.Bool(false)))
		rs("bilinear_interp_v2/NHWC", "bilinear_interp_v2", u(1, 3, 3, 2), A("out_h", ir.Int(2)), A("out_w", ir.Int(5)), A("data_layout", ir.String("NHWC")))
		rs("nearest_interp_v2", "nearest_interp_v2", u(1, 2, 3, 2), A("out_h", ir.Int(5)), A("out_w", ir.Int(4)), A("align_corners", ir.Bool(false)))
		rs("nearest_interp_v2/corners", "nearest_interp_v2", u(1, 2, 3, 2), A("out_h", ir.Int(4)), A("out_w", ir.Int(3)))
		act("clip", "clip", "X", td(sh(2, 3), -0.9, -0.4, -0.1, 0.2, 0.6, 1.1), A("min", ir.Float(-0.5)), A("max", ir.Float(0.5)))
		ac := func(name string, x *Tensor, c int64, layout string) {
			var at []ir.Attr
			if layout != "" {
				at = append(at, A("data_layout", ir.String(layout)))
			}
			cs = append(cs, gradCase{name, mkOp("affine_channel", Sl("X", "x", "Scale", "s", "Bias", "b"), Sl("Out", "o"), at...),
				mkOp("affine_channel_grad", Sl("X", "x", "Scale", "s", "Out@GRAD", "g"), Sl("X@GRAD", "dx", "Scale@GRAD", "ds", "Bias@GRAD", "db"), at...),
				Args{"X": {x}, "Scale": {pos(c)}, "Bias": {u(c)}}, "Out"})
		}
		ac("affine_channel/NCHW", u(2, 3, 2, 2), 3, "NCHW")
		ac("affine_channel/NHWC", u(2, 2, 3), 3, "NHWC")
		ac("affine_channel/AnyLayout", u(3, 4), 4, "")
		view := func(name, typ string, x *Tensor, at ...ir.Attr) {
			cs = append(cs, gradCase{name, mkOp(typ, Sl("X", "x"), Sl("Out", "o", "XShape", "xs"), at...),
				mkOp(typ+"_grad", Sl("XShape", "xs", "Out@GRAD", "g"), Sl("X@GRAD", "dx"), at...), Args{"X": {x}}, "Out"})
		}
		view("flatten_contiguous_range", "flatten_contiguous_range", u(2, 3, 4, 2), A("start_axis", ir.Int(1)), A("stop_axis", ir.Int(2)))
		view("flatten_contiguous_range/all", "flatten_contiguous_range", u(2, 3, 2), A("start_axis", ir.Int(0)), A("stop_axis", ir.Int(-1)))
		view("squeeze2", "squeeze2", u(2, 1, 3, 1), A("axes", ir.Ints{1}))
		view("squeeze2/all", "squeeze2", u(1, 2, 1, 3), A("axes", ir.Ints{}))
		view("unsqueeze2", "unsqueeze2", u(2, 3), A("axes", ir.Ints{0, -1}))
		view("flatten2", "flatten2", u(2, 3, 2), A("axis", ir.Int(2)))
		view("flatten2/zero", "flatten2", u(2, 3), A("axis", ir.Int(0)))
		view("unsqueeze2/middle", "unsqueeze2", u(2, 3), A("axes", ir.Ints{1, 2}))
		sl := func(name string, x *Tensor, at ...ir.Attr) {
			cs = append(cs, gradCase{name, mkOp("slice", Sl("Input", "x"), Sl("Out", "o"), at...),
				mkOp("slice_grad", Sl("Input", "x", "Out@GRAD", "g"), Sl("Input@GRAD", "dx"), at...), Args{"Input": {x}}, "Out"})
		}
		// Attention's q/k/v split: thirds of the last dim.
		sl("slice/qkv", u(2, 3, 9), A("axes", ir.Ints{2}), A("starts", ir.Ints{3}), A("ends", ir.Ints{6}))
		sl("slice/negative-clamped", u(4, 5), A("axes", ir.Ints{0, 1}), A("starts", ir.Ints{-3, 1}), A("ends", ir.Ints{100, -1}))
		sl("slice/decrease", u(3, 4, 2), A("axes", ir.Ints{1}), A("starts", ir.Ints{2}), A("ends", ir.Ints{3}), A("decrease_axis", ir.Ints{1}))
		cc := func(name string, axis int64, xs ...*Tensor) {
			names := []string{"x0", "x1", "x2"}[:len(xs)]
			grads := []string{"d0", "d1", "d2"}[:len(xs)]
			cs = append(cs, gradCase{name, mkOp("concat", []ir.Slot{S("X", names...)}, Sl("Out", "o"), A("axis", ir.Int(axis))),
				mkOp("concat_grad", []ir.Slot{S("X", names...), S("Out@GRAD", "g")}, []ir.Slot{S("X@GRAD", grads...)}, A("axis", ir.Int(axis))),
				Args{"X": xs}, "Out"})
		}
		cc("concat/axis1", 1, u(2, 3, 2), u(2, 1, 2), u(2, 4, 2))
		cc("concat/axis-1", -1, u(3, 2), u(3, 5))
		mm := func(name string, x, y *Tensor, at ...ir.Attr) {
			cs = append(cs, gradCase{name, mkOp("matmul", Sl("X", "x", "Y", "y"), Sl("Out", "o"), at...),
				mkOp("matmul_grad", Sl("X", "x", "Y", "y", "Out@GRAD", "g"), Sl("X@GRAD", "dx", "Y@GRAD", "dy"), at...),
				Args{"X": {x}, "Y": {y}}, "Out"})
		}
		mm("matmul/1-D-transpose_X", u(3), u(1, 2), A("transpose_X", ir.Bool(true)), A("alpha", ir.Float(0.5)))
		mm("matmul/1-D-transpose_Y", u(2, 1), u(3), A("transpose_Y", ir.Bool(true)))
		mm("matmul/batch-product", u(2, 3, 2, 2), u(6, 2, 1))
		return cs
	})
}
