package passes_test

import (
	"math/rand/v2"
	"testing"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/sim"
)

// Finite-difference cases of append-backward for the small ops of the
// imported Paddle models.
func init() {
	fdCases["relu6"] = unaryCase("relu6", ir.A("threshold", ir.Float(0.5)))
	// Attrs that put some inputs on each of hard_swish's three pieces.
	fdCases["hard_swish"] = unaryCase("hard_swish", ir.A("threshold", ir.Float(1.2)), ir.A("scale", ir.Float(1.5)), ir.A("offset", ir.Float(0.3)))
	fdCases["swish"] = unaryCase("swish", ir.A("beta", ir.Float(1.3)))
	fdCases["silu"] = unaryCase("silu")
	// Its defaults keep inputs in [-1, 1] off the kinks at ±2.5.
	fdCases["hard_sigmoid"] = unaryCase("hard_sigmoid")
	for _, typ := range []string{"exp", "square", "abs", "sin", "cos", "erf", "softsign", "logsigmoid", "tanh_shrink", "leaky_relu", "softplus", "mish"} {
		fdCases[typ] = unaryCase(typ)
	}
	fdCases["pow"] = unaryCase("pow", ir.A("factor", ir.Float(3)))
	// Functions defined for positive X only read square(x) + 0.5.
	for _, typ := range []string{"log", "sqrt", "rsqrt", "reciprocal"} {
		fdCases[typ] = func(f *fdModule) string {
			f.in("x", 3, 4)
			f.out("sq", 3, 4)
			f.out("p", 3, 4)
			f.out("o", 3, 4)
			f.b.Op("square", ir.Slots("X", "x"), ir.Slots("Out", "sq"))
			f.b.Op("scale", ir.Slots("X", "sq"), ir.Slots("Out", "p"), ir.A("bias", ir.Float(0.5)))
			f.b.Op(typ, ir.Slots("X", "p"), ir.Slots("Out", "o"))
			return "o"
		}
	}
	fdCases["unsqueeze2"] = func(f *fdModule) string {
		f.in("x", 2, 3)
		f.out("o", 2, 1, 3)
		f.out("xs", 0, 2, 3)
		f.b.Op("unsqueeze2", ir.Slots("X", "x"), ir.Slots("Out", "o", "XShape", "xs"), ir.A("axes", ir.Ints{1}))
		return "o"
	}
	// Attention's q/k/v split, and its join.
	fdCases["slice"] = func(f *fdModule) string {
		f.in("x", 2, 9)
		f.out("o", 2, 3)
		f.b.Op("slice", ir.Slots("Input", "x"), ir.Slots("Out", "o"), ir.A("axes", ir.Ints{1}), ir.A("starts", ir.Ints{3}), ir.A("ends", ir.Ints{6}))
		return "o"
	}
	// q, k, v by split, v unused: its gradient is zeros.
	fdCases["split"] = func(f *fdModule) string {
		f.in("x", 2, 9)
		f.out("q", 2, 3)
		f.out("k", 2, 3)
		f.out("v", 2, 3)
		f.out("o", 2, 3)
		f.b.Op("split", ir.Slots("X", "x"), []ir.Slot{ir.S("Out", "q", "k", "v")}, ir.A("axis", ir.Int(1)), ir.A("num", ir.Int(3)))
		f.b.Op("elementwise_mul", ir.Slots("X", "q", "Y", "k"), ir.Slots("Out", "o"), ir.A("axis", ir.Int(-1)))
		return "o"
	}
	// The fake quantisations of quantisation-aware training (their grad is
	// the straight-through estimator: see straightThrough).
	state := func(f *fdModule, name string, v float64) {
		f.b.Var(name, ir.Tensor(ir.F64, 1)).WithFlags(ir.FlagStopGradient)
		f.feed[name] = sim.MustFromData(ir.F64, []int64{1}, []float64{v})
	}
	fdCases["fake_quantize_dequantize_abs_max"] = func(f *fdModule) string {
		f.in("x", 3, 4)
		f.out("o", 3, 4)
		f.out("s", 1)
		f.b.Op("fake_quantize_dequantize_abs_max", ir.Slots("X", "x"), ir.Slots("Out", "o", "OutScale", "s"), ir.A("bit_length", ir.Int(8)))
		return "o"
	}
	fdCases["fake_channel_wise_quantize_dequantize_abs_max"] = func(f *fdModule) string {
		f.in("x", 3, 4)
		f.out("o", 3, 4)
		f.out("s", 4)
		f.b.Op("fake_channel_wise_quantize_dequantize_abs_max", ir.Slots("X", "x"), ir.Slots("Out", "o", "OutScale", "s"), ir.A("quant_axis", ir.Int(1)))
		return "o"
	}
	fdCases["fake_quantize_dequantize_moving_average_abs_max"] = func(f *fdModule) string {
		f.in("x", 3, 4)
		state(f, "sc", 0.5)
		state(f, "acc", 2)
		state(f, "st", 3)
		f.out("o", 3, 4)
		f.b.Op("fake_quantize_dequantize_moving_average_abs_max", ir.Slots("X", "x", "InScale", "sc", "InAccum", "acc", "InState", "st"),
			ir.Slots("Out", "o", "OutScale", "sc", "OutAccum", "acc", "OutState", "st"), ir.A("is_test", ir.Bool(false)))
		return "o"
	}
	fdCases["moving_average_abs_max_scale"] = func(f *fdModule) string {
		f.in("x", 3, 4)
		state(f, "acc", 2)
		state(f, "st", 3)
		f.out("o", 3, 4)
		f.out("sc", 1)
		f.b.Op("moving_average_abs_max_scale", ir.Slots("X", "x", "InAccum", "acc", "InState", "st"),
			ir.Slots("Out", "o", "OutScale", "sc", "OutAccum", "acc", "OutState", "st"), ir.A("is_test", ir.Bool(false)))
		return "o"
	}
	for _, c := range []struct {
		typ string
		at  []ir.Attr
	}{
		{"bilinear_interp_v2", []ir.Attr{ir.A("out_h", ir.Int(5)), ir.A("out_w", ir.Int(4)), ir.A("align_corners", ir.Bool(false)), ir.A("align_mode", ir.Int(0))}},
		{"nearest_interp_v2", []ir.Attr{ir.A("out_h", ir.Int(5)), ir.A("out_w", ir.Int(4)), ir.A("interp_method", ir.String("nearest"))}},
	} {
		fdCases[c.typ] = func(f *fdModule) string {
			f.in("x", 2, 2, 3, 3)
			f.out("o", 2, 2, 5, 4)
			f.b.Op(c.typ, ir.Slots("X", "x"), ir.Slots("Out", "o"), c.at...)
			return "o"
		}
	}
	fdCases["clip"] = unaryCase("clip", ir.A("min", ir.Float(-0.5)), ir.A("max", ir.Float(0.6)))
	fdCases["expand_v2"] = func(f *fdModule) string {
		f.in("x", 3, 1)
		f.out("o", 2, 3, 4)
		f.b.Op("expand_v2", ir.Slots("X", "x"), ir.Slots("Out", "o"), ir.A("shape", ir.Ints{2, -1, 4}))
		return "o"
	}
	fdCases["tile"] = func(f *fdModule) string {
		f.in("x", 2, 3)
		f.out("o", 2, 2, 6)
		f.b.Op("tile", ir.Slots("X", "x"), ir.Slots("Out", "o"), ir.A("repeat_times", ir.Ints{2, 1, 2}))
		return "o"
	}
	fdCases["stack"] = func(f *fdModule) string {
		f.in("a", 2, 3)
		f.in("b", 2, 3)
		f.out("y", 2, 2, 3)
		f.b.Op("stack", []ir.Slot{ir.S("X", "a", "b")}, ir.Slots("Y", "y"), ir.A("axis", ir.Int(1)))
		return "y"
	}
	fdCases["where"] = func(f *fdModule) string {
		f.in("x", 2, 3)
		f.in("y", 2, 3)
		f.b.Var("cond", ir.Tensor(ir.Boolean, 2, 3)).WithFlags(ir.FlagStopGradient)
		f.feed["cond"] = sim.MustFromData(ir.Boolean, []int64{2, 3}, []float64{1, 0, 0, 1, 1, 0})
		f.out("o", 2, 3)
		f.b.Op("where", ir.Slots("Condition", "cond", "X", "x", "Y", "y"), ir.Slots("Out", "o"))
		return "o"
	}
	fdCases["flatten2"] = func(f *fdModule) string {
		f.in("x", 2, 3, 2)
		f.out("o", 6, 2)
		f.out("xs", 0, 2, 3, 2)
		f.b.Op("flatten2", ir.Slots("X", "x"), ir.Slots("Out", "o", "XShape", "xs"), ir.A("axis", ir.Int(2)))
		return "o"
	}
	// An exclusive, reversed running sum: its grad runs the other way.
	fdCases["cumsum"] = func(f *fdModule) string {
		f.in("x", 2, 4)
		f.out("o", 2, 4)
		f.b.Op("cumsum", ir.Slots("X", "x"), ir.Slots("Out", "o"), ir.A("axis", ir.Int(1)), ir.A("exclusive", ir.Bool(true)), ir.A("reverse", ir.Bool(true)))
		return "o"
	}
	fdCases["concat"] = func(f *fdModule) string {
		f.in("a", 2, 3)
		f.in("b", 2, 2)
		f.out("o", 2, 5)
		f.b.Op("concat", []ir.Slot{ir.S("X", "a", "b")}, ir.Slots("Out", "o"), ir.A("axis", ir.Int(1)))
		return "o"
	}
	fdCases["affine_channel"] = func(f *fdModule) string {
		f.in("x", 2, 3, 2, 2)
		f.in("scale", 3)
		f.in("bias", 3)
		f.out("o", 2, 3, 2, 2)
		f.b.Op("affine_channel", ir.Slots("X", "x", "Scale", "scale", "Bias", "bias"), ir.Slots("Out", "o"), ir.A("data_layout", ir.String("NCHW")))
		return "o"
	}
	fdCases["flatten_contiguous_range"] = func(f *fdModule) string {
		f.in("x", 2, 3, 4)
		f.out("o", 2, 12)
		f.out("xs", 0, 2, 3, 4)
		f.b.Op("flatten_contiguous_range", ir.Slots("X", "x"), ir.Slots("Out", "o", "XShape", "xs"), ir.A("start_axis", ir.Int(1)), ir.A("stop_axis", ir.Int(2)))
		return "o"
	}
	fdCases["squeeze2"] = func(f *fdModule) string {
		f.in("x", 2, 1, 3)
		f.out("o", 2, 3)
		f.out("xs", 0, 2, 1, 3)
		f.b.Op("squeeze2", ir.Slots("X", "x"), ir.Slots("Out", "o", "XShape", "xs"), ir.A("axes", ir.Ints{1}))
		return "o"
	}
}

// TestAppendBackwardArgMax: arg_max has no gradient, its index output
// takes none, and append-backward differentiates a loss that also reads
// it (through a cast) along the other paths.
func TestAppendBackwardArgMax(t *testing.T) {
	m := ir.NewModule("argmax")
	f := &fdModule{b: ir.NewBuilder(m), r: rand.New(rand.NewPCG(3, 4)), feed: sim.Scope{}}
	f.in("x", 3, 4)
	f.out("o", 3, 4)
	f.b.Op("softmax", ir.Slots("X", "x"), ir.Slots("Out", "o"), ir.A("axis", ir.Int(-1)))
	f.b.Var("idx", ir.Tensor(ir.I64, 3))
	f.b.Op("arg_max", ir.Slots("X", "o"), ir.Slots("Out", "idx"), ir.A("axis", ir.Long(-1)))
	f.out("fidx", 3)
	f.b.Op("cast", ir.Slots("X", "idx"), ir.Slots("Out", "fidx"), ir.A("in_dtype", ir.Int(3)), ir.A("out_dtype", ir.Int(6)))
	f.b.Var("c", ir.Tensor(ir.F64, 3, 4)).WithFlags(ir.FlagStopGradient)
	f.feed["c"] = sim.MustFromData(ir.F64, []int64{3, 4}, []float64{1, -2, 3, 0.5, -1, 2, 0.25, 1, 2, -3, 1, -0.5})
	f.out("wo", 3, 4)
	f.b.Op("elementwise_mul", ir.Slots("X", "o", "Y", "c"), ir.Slots("Out", "wo"), ir.A("axis", ir.Int(-1)))
	f.out("r", 3)
	f.b.Op("reduce_sum", ir.Slots("X", "wo"), ir.Slots("Out", "r"), ir.A("dim", ir.Ints{1}), ir.A("keep_dim", ir.Bool(false)))
	f.out("s", 3)
	f.b.Op("elementwise_add", ir.Slots("X", "r", "Y", "fidx"), ir.Slots("Out", "s"), ir.A("axis", ir.Int(-1)))
	f.out("loss")
	f.b.Op("mean", ir.Slots("X", "s"), ir.Slots("Out", "loss"))
	if err := f.b.Err(); err != nil {
		t.Fatal(err)
	}
	fwd := m.Clone()
	if err := appendBackward(t, m, "loss"); err != nil {
		t.Fatal(err)
	}
	if err := ir.Verify(m); err != nil {
		t.Fatalf("%v\n%s", err, ir.Print(m))
	}
	for _, op := range m.Main.Global().Ops {
		if op.Role.IsBackward() && (op.Type == "arg_max_grad" || op.Type == "cast" && op.Fwd != 0 && fwdType(m, op) == "cast") {
			t.Errorf("%s: a gradient through the index output of arg_max", op)
		}
	}
	checkGrads(t, fwd, m, f.feed, "loss", f.wrt)
}
