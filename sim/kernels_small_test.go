package sim

import (
	"math"
	"testing"

	"github.com/distpass/distpass/ir"
)

// TestSmallOpValues checks the small ops of the imported Paddle models on
// inputs small enough to compute by hand, and the elementwise, mul and
// scale forms those models use.
func TestSmallOpValues(t *testing.T) {
	i64 := func(shape []int64, d ...float64) *Tensor { return MustFromData(ir.I64, shape, d) }
	x4 := td(sh(1, 2, 1, 2), 1, 2, 3, 4)
	cases := []struct {
		name string
		op   *ir.Op
		in   Args
		slot string
		want *Tensor
	}{
		{"relu6", mkOp("relu6", Sl("X", "x"), Sl("Out", "o")), Args{"X": {td(sh(4), -1, 0.5, 6, 6.5)}}, "Out", td(sh(4), 0, 0.5, 6, 6)},
		{"relu6/threshold", mkOp("relu6", Sl("X", "x"), Sl("Out", "o"), A("threshold", ir.Float(1))),
			Args{"X": {td(sh(3), -1, 0.5, 2)}}, "Out", td(sh(3), 0, 0.5, 1)},
		// Out is 0 or threshold: no gradient passes.
		{"relu6_grad", mkOp("relu6_grad", Sl("Out", "o", "Out@GRAD", "g"), Sl("X@GRAD", "d")),
			Args{"Out": {td(sh(3), 0, 3, 6)}, "Out@GRAD": {td(sh(3), 5, 6, 7)}}, "X@GRAD", td(sh(3), 0, 6, 0)},
		// Paddle's documented example, and the two flat ends.
		{"hard_swish", mkOp("hard_swish", Sl("X", "x"), Sl("Out", "o")),
			Args{"X": {td(sh(6), -4, -3, 1, 2, 3, 4)}}, "Out", td(sh(6), 0, 0, 4.0/6, 10.0/6, 3, 4)},
		{"hard_swish/attrs", mkOp("hard_swish", Sl("X", "x"), Sl("Out", "o"), A("threshold", ir.Float(4)), A("scale", ir.Float(2)), A("offset", ir.Float(1))),
			Args{"X": {td(sh(3), -2, 1, 5)}}, "Out", td(sh(3), 0, 1, 10)},
		{"hard_swish_grad", mkOp("hard_swish_grad", Sl("X", "x", "Out@GRAD", "g"), Sl("X@GRAD", "d")),
			Args{"X": {td(sh(3), -4, 0, 4)}, "Out@GRAD": {td(sh(3), 2, 2, 2)}}, "X@GRAD", td(sh(3), 0, 1, 2)},
		// swish(x) = x * sigmoid(beta x): 0 at 0, x/2 at beta 0.
		{"swish/beta0", mkOp("swish", Sl("X", "x"), Sl("Out", "o"), A("beta", ir.Float(0))),
			Args{"X": {td(sh(3), -2, 0, 4)}}, "Out", td(sh(3), -1, 0, 2)},
		{"swish_grad/beta0", mkOp("swish_grad", Sl("X", "x", "Out@GRAD", "g"), Sl("X@GRAD", "d"), A("beta", ir.Float(0))),
			Args{"X": {td(sh(2), -2, 4)}, "Out@GRAD": {td(sh(2), 2, 4)}}, "X@GRAD", td(sh(2), 1, 2)},
		{"silu/zero", mkOp("silu", Sl("X", "x"), Sl("Out", "o")), Args{"X": {td(sh(1), 0)}}, "Out", td(sh(1), 0)},
		// sigmoid(0) = 1/2 and silu'(0) = 1/2.
		{"silu_grad/zero", mkOp("silu_grad", Sl("X", "x", "Out@GRAD", "g"), Sl("X@GRAD", "d")),
			Args{"X": {td(sh(1), 0)}, "Out@GRAD": {td(sh(1), 3)}}, "X@GRAD", td(sh(1), 1.5)},
		// Paddle's defaults: slope 0.2, offset 0.5, clipped to [0, 1].
		{"hard_sigmoid", mkOp("hard_sigmoid", Sl("X", "x"), Sl("Out", "o")),
			Args{"X": {td(sh(4), -5, -1, 1, 5)}}, "Out", td(sh(4), 0, 0.3, 0.7, 1)},
		{"hard_sigmoid_grad", mkOp("hard_sigmoid_grad", Sl("Out", "o", "Out@GRAD", "g"), Sl("X@GRAD", "d")),
			Args{"Out": {td(sh(3), 0, 0.3, 1)}, "Out@GRAD": {td(sh(3), 5, 5, 5)}}, "X@GRAD", td(sh(3), 0, 1, 0)},
		// Values known in closed form: log(sigmoid(0)) = -ln 2, mish(0) = 0,
		// softplus(x) = x past beta * x > threshold, pow's factor attr.
		{"logsigmoid", mkOp("logsigmoid", Sl("X", "x"), Sl("Out", "o")), Args{"X": {td(sh(2), 0, -800)}}, "Out", td(sh(2), -math.Ln2, -800)},
		{"softplus/threshold", mkOp("softplus", Sl("X", "x"), Sl("Out", "o"), A("beta", ir.Float(2)), A("threshold", ir.Float(1))),
			Args{"X": {td(sh(2), 0, 3)}}, "Out", td(sh(2), math.Ln2/2, 3)},
		{"mish/zero", mkOp("mish", Sl("X", "x"), Sl("Out", "o")), Args{"X": {td(sh(1), 0)}}, "Out", td(sh(1), 0)},
		{"pow", mkOp("pow", Sl("X", "x"), Sl("Out", "o"), A("factor", ir.Float(3))), Args{"X": {td(sh(2), -2, 0.5)}}, "Out", td(sh(2), -8, 0.125)},
		{"pow/FactorTensor", mkOp("pow", Sl("X", "x", "FactorTensor", "f"), Sl("Out", "o"), A("factor", ir.Float(3))),
			Args{"X": {td(sh(2), 4, 9)}, "FactorTensor": {td(sh(1), 0.5)}}, "Out", td(sh(2), 2, 3)},
		{"rsqrt_grad", mkOp("rsqrt_grad", Sl("Out", "o", "Out@GRAD", "g"), Sl("X@GRAD", "d")),
			Args{"Out": {td(sh(1), 0.5)}, "Out@GRAD": {td(sh(1), 8)}}, "X@GRAD", td(sh(1), -0.5)},
		{"leaky_relu_grad", mkOp("leaky_relu_grad", Sl("X", "x", "Out@GRAD", "g"), Sl("X@GRAD", "d"), A("alpha", ir.Float(-0.5))),
			Args{"X": {td(sh(2), -1, 1)}, "Out@GRAD": {td(sh(2), 2, 2)}}, "X@GRAD", td(sh(2), -1, 2)},
		// expand_v2 broadcasts dims of 1 (X right-aligned, -1 keeps X's);
		// tile repeats whole dims, a short repeat_times padded with 1s.
		{"expand_v2", mkOp("expand_v2", Sl("X", "x"), Sl("Out", "o"), A("shape", ir.Ints{2, -1, 2})),
			Args{"X": {td(sh(2, 1), 1, 2)}}, "Out", td(sh(2, 2, 2), 1, 1, 2, 2, 1, 1, 2, 2)},
		{"expand_v2/Shape", mkOp("expand_v2", Sl("X", "x", "Shape", "s"), Sl("Out", "o"), A("shape", ir.Ints{9})),
			Args{"X": {td(sh(1), 5)}, "Shape": {MustFromData(ir.I32, sh(1), []float64{3})}}, "Out", td(sh(3), 5, 5, 5)},
		{"tile", mkOp("tile", Sl("X", "x"), Sl("Out", "o"), A("repeat_times", ir.Ints{2})),
			Args{"X": {td(sh(2, 2), 1, 2, 3, 4)}}, "Out", td(sh(2, 4), 1, 2, 1, 2, 3, 4, 3, 4)},
		{"tile/new_dim", mkOp("tile", Sl("X", "x"), Sl("Out", "o"), A("repeat_times", ir.Ints{2, 1})),
			Args{"X": {td(sh(2), 1, 2)}}, "Out", td(sh(2, 2), 1, 2, 1, 2)},
		{"tile_grad", mkOp("tile_grad", Sl("X", "x", "Out@GRAD", "g"), Sl("X@GRAD", "d"), A("repeat_times", ir.Ints{3})),
			Args{"X": {td(sh(2), 0, 0)}, "Out@GRAD": {td(sh(6), 1, 2, 3, 4, 5, 6)}}, "X@GRAD", td(sh(2), 9, 12)},
		{"stack", mkOp("stack", []ir.Slot{S("X", "a", "b")}, Sl("Y", "y"), A("axis", ir.Int(1))),
			Args{"X": {td(sh(2), 1, 2), td(sh(2), 3, 4)}}, "Y", td(sh(2, 2), 1, 3, 2, 4)},
		{"where", mkOp("where", Sl("Condition", "c", "X", "x", "Y", "y"), Sl("Out", "o")),
			Args{"Condition": {MustFromData(ir.Boolean, sh(3), []float64{1, 0, 1})}, "X": {td(sh(3), 1, 2, 3)}, "Y": {td(sh(3), 7, 8, 9)}}, "Out", td(sh(3), 1, 8, 3)},
		{"flatten2", mkOp("flatten2", Sl("X", "x"), Sl("Out", "o", "XShape", "xs"), A("axis", ir.Int(1))),
			Args{"X": {x4}}, "Out", td(sh(1, 4), 1, 2, 3, 4)},
		// 2 bits: one level each side of 0 at scale max(abs(X)) = 1. Half a
		// level rounds to even (0) with round_type 0, away from zero with 1;
		// with 0, -1.5 levels clamp at -bin-1 = -2 of which -1 is the most
		// X reaches here.
		{"fake_quantize_dequantize_abs_max/even", mkOp("fake_quantize_dequantize_abs_max", Sl("X", "x"), Sl("Out", "o", "OutScale", "s"), A("bit_length", ir.Int(2))),
			Args{"X": {td(sh(4), -1, 0.5, 0.26, -0.5)}}, "Out", td(sh(4), -1, 0, 0, 0)},
		{"fake_quantize_dequantize_abs_max/away", mkOp("fake_quantize_dequantize_abs_max", Sl("X", "x"), Sl("Out", "o", "OutScale", "s"), A("bit_length", ir.Int(2)), A("round_type", ir.Int(1))),
			Args{"X": {td(sh(4), -1, 0.5, 0.26, -0.5)}}, "Out", td(sh(4), -1, 1, 0, -1)},
		{"fake_quantize_dequantize_abs_max/scale", mkOp("fake_quantize_dequantize_abs_max", Sl("X", "x"), Sl("Out", "o", "OutScale", "s")),
			Args{"X": {td(sh(3), -4, 0.5, 2)}}, "OutScale", td(sh(1), 4)},
		// Per column (quant_axis 1): scales 2 and 0.5; 3 bits, 3 levels:
		// 1 is 1.5 levels of 2 and -0.25 -1.5 of 0.5, both rounded to even.
		{"fake_channel_wise_quantize_dequantize_abs_max", mkOp("fake_channel_wise_quantize_dequantize_abs_max", Sl("X", "x"), Sl("Out", "o", "OutScale", "s"), A("quant_axis", ir.Int(1)), A("bit_length", ir.Int(3))),
			Args{"X": {td(sh(2, 2), 2, 0.5, 1, -0.25)}}, "OutScale", td(sh(2), 2, 0.5)},
		{"fake_channel_wise_quantize_dequantize_abs_max/out", mkOp("fake_channel_wise_quantize_dequantize_abs_max", Sl("X", "x"), Sl("Out", "o", "OutScale", "s"), A("quant_axis", ir.Int(1)), A("bit_length", ir.Int(3))),
			Args{"X": {td(sh(2, 2), 2, 0.5, 1, -0.25)}}, "Out", td(sh(2, 2), 2, 0.5, 4.0/3, -1.0/3)},
		// state 0.9*3+1 = 3.7, accum 0.9*2+1 = 2.8: scale 2.8/3.7.
		{"fake_quantize_dequantize_moving_average_abs_max/scale", mkOp("fake_quantize_dequantize_moving_average_abs_max",
			Sl("X", "x", "InScale", "sc", "InAccum", "a", "InState", "st"), Sl("Out", "o", "OutScale", "sc2", "OutAccum", "a2", "OutState", "st2")),
			Args{"X": {td(sh(2), -1, 0.25)}, "InScale": {td(sh(1), 9)}, "InAccum": {td(sh(1), 2)}, "InState": {td(sh(1), 3)}}, "OutScale", td(sh(1), 2.8/3.7)},
		// At test the stored scale 2 quantises: 8 bits, 127 levels.
		{"fake_quantize_dequantize_moving_average_abs_max/test", mkOp("fake_quantize_dequantize_moving_average_abs_max",
			Sl("X", "x", "InScale", "sc"), Sl("Out", "o", "OutScale", "sc2"), A("is_test", ir.Bool(true))),
			Args{"X": {td(sh(2), 1, 3)}, "InScale": {td(sh(1), 2)}}, "Out", td(sh(2), 64*2.0/127, 2)},
		{"moving_average_abs_max_scale", mkOp("moving_average_abs_max_scale", Sl("X", "x", "InAccum", "a", "InState", "st"), Sl("Out", "o", "OutScale", "sc", "OutAccum", "a2", "OutState", "st2")),
			Args{"X": {td(sh(2), -1, 0.25)}, "InAccum": {td(sh(1), 2)}, "InState": {td(sh(1), 3)}}, "OutState", td(sh(1), 3.7)},
		{"straight_through_estimator_grad", mkOp("straight_through_estimator_grad", Sl("Out@GRAD", "g"), Sl("X@GRAD", "d")),
			Args{"Out@GRAD": {td(sh(3), -1, 0, 2.5)}}, "X@GRAD", td(sh(3), -1, 0, 2.5)},
		// Bilinear with corners aligned: the corners kept, the middle their
		// mean; half-pixel (align_mode 0), PyTorch's align_corners=False;
		// nearest without aligned corners takes floor(k * in / out).
		{"bilinear_interp_v2/corners", mkOp("bilinear_interp_v2", Sl("X", "x"), Sl("Out", "o"), A("out_h", ir.Int(3)), A("out_w", ir.Int(3))),
			Args{"X": {td(sh(1, 1, 2, 2), 1, 2, 3, 4)}}, "Out", td(sh(1, 1, 3, 3), 1, 1.5, 2, 2, 2.5, 3, 3, 3.5, 4)},
		{"bilinear_interp_v2/half_pixel", mkOp("bilinear_interp_v2", Sl("X", "x"), Sl("Out", "o"), A("out_h", ir.Int(1)), A("out_w", ir.Int(4)), A("align_corners", ir.Bool(false)), A("align_mode", ir.Int(0))),
			Args{"X": {td(sh(1, 1, 1, 2), 1, 2)}}, "Out", td(sh(1, 1, 1, 4), 1, 1.25, 1.75, 2)},
		{"nearest_interp_v2", mkOp("nearest_interp_v2", Sl("X", "x"), Sl("Out", "o"), A("out_h", ir.Int(1)), A("out_w", ir.Int(4)), A("align_corners", ir.Bool(false))),
			Args{"X": {td(sh(1, 1, 1, 2), 1, 2)}}, "Out", td(sh(1, 1, 1, 4), 1, 1, 2, 2)},
		{"bilinear_interp_v2/OutSize", mkOp("bilinear_interp_v2", Sl("X", "x", "OutSize", "s"), Sl("Out", "o"), A("out_h", ir.Int(9)), A("out_w", ir.Int(9))),
			Args{"X": {td(sh(1, 1, 2, 2), 1, 2, 3, 4)}, "OutSize": {MustFromData(ir.I32, sh(2), []float64{1, 2})}}, "Out", td(sh(1, 1, 1, 2), 1, 2)},
		{"clip", mkOp("clip", Sl("X", "x"), Sl("Out", "o"), A("min", ir.Float(-1)), A("max", ir.Float(2))),
			Args{"X": {td(sh(3), -3, 0.5, 7)}}, "Out", td(sh(3), -1, 0.5, 2)},
		{"affine_channel/NCHW", mkOp("affine_channel", Sl("X", "x", "Scale", "s", "Bias", "b"), Sl("Out", "o"), A("data_layout", ir.String("NCHW"))),
			Args{"X": {x4}, "Scale": {td(sh(2), 2, -1)}, "Bias": {td(sh(2), 0.5, 1)}}, "Out", td(sh(1, 2, 1, 2), 2.5, 4.5, -2, -3)},
		{"affine_channel/NHWC", mkOp("affine_channel", Sl("X", "x", "Scale", "s", "Bias", "b"), Sl("Out", "o"), A("data_layout", ir.String("NHWC"))),
			Args{"X": {td(sh(1, 2, 2), 1, 2, 3, 4)}, "Scale": {td(sh(2), 2, -1)}, "Bias": {td(sh(2), 0.5, 1)}}, "Out", td(sh(1, 2, 2), 2.5, -1, 6.5, -3)},
		{"affine_channel_grad/Scale", mkOp("affine_channel_grad", Sl("X", "x", "Scale", "s", "Out@GRAD", "g"), Sl("X@GRAD", "dx", "Scale@GRAD", "ds", "Bias@GRAD", "db"), A("data_layout", ir.String("NCHW"))),
			Args{"X": {x4}, "Scale": {td(sh(2), 2, -1)}, "Out@GRAD": {td(sh(1, 2, 1, 2), 1, 1, 1, 1)}}, "Scale@GRAD", td(sh(2), 3, 7)},
		{"affine_channel_grad/Bias", mkOp("affine_channel_grad", Sl("X", "x", "Scale", "s", "Out@GRAD", "g"), Sl("Bias@GRAD", "db"), A("data_layout", ir.String("NCHW"))),
			Args{"X": {x4}, "Scale": {td(sh(2), 2, -1)}, "Out@GRAD": {td(sh(1, 2, 1, 2), 1, 2, 3, 4)}}, "Bias@GRAD", td(sh(2), 3, 7)},
		{"affine_channel_grad/X", mkOp("affine_channel_grad", Sl("X", "x", "Scale", "s", "Out@GRAD", "g"), Sl("X@GRAD", "dx"), A("data_layout", ir.String("NCHW"))),
			Args{"X": {x4}, "Scale": {td(sh(2), 2, -1)}, "Out@GRAD": {td(sh(1, 2, 1, 2), 1, 2, 3, 4)}}, "X@GRAD", td(sh(1, 2, 1, 2), 2, 4, -3, -4)},
		{"flatten_contiguous_range", mkOp("flatten_contiguous_range", Sl("X", "x"), Sl("Out", "o", "XShape", "xs"), A("start_axis", ir.Int(1)), A("stop_axis", ir.Int(3))),
			Args{"X": {x4}}, "Out", td(sh(1, 4), 1, 2, 3, 4)},
		{"flatten_contiguous_range/XShape", mkOp("flatten_contiguous_range", Sl("X", "x"), Sl("Out", "o", "XShape", "xs"), A("start_axis", ir.Int(0)), A("stop_axis", ir.Int(1))),
			Args{"X": {x4}}, "XShape", MustFromData(ir.F64, sh(0, 1, 2, 1, 2), nil)},
		{"flatten_contiguous_range_grad", mkOp("flatten_contiguous_range_grad", Sl("XShape", "xs", "Out@GRAD", "g"), Sl("X@GRAD", "d")),
			Args{"XShape": {MustFromData(ir.F64, sh(0, 2, 1, 2), nil)}, "Out@GRAD": {td(sh(2, 2), 1, 2, 3, 4)}}, "X@GRAD", td(sh(2, 1, 2), 1, 2, 3, 4)},
		{"squeeze2/all", mkOp("squeeze2", Sl("X", "x"), Sl("Out", "o")), Args{"X": {x4}}, "Out", td(sh(2, 2), 1, 2, 3, 4)},
		{"squeeze2/axes", mkOp("squeeze2", Sl("X", "x"), Sl("Out", "o"), A("axes", ir.Ints{-2})), Args{"X": {x4}}, "Out", td(sh(1, 2, 2), 1, 2, 3, 4)},
		// A named dim of size 2 stays, as in Paddle.
		{"squeeze2/not_one", mkOp("squeeze2", Sl("X", "x"), Sl("Out", "o"), A("axes", ir.Ints{0, 1})), Args{"X": {x4}}, "Out", td(sh(2, 1, 2), 1, 2, 3, 4)},
		// Axes apply in turn: -1 is counted in the shape 0 made.
		{"unsqueeze2", mkOp("unsqueeze2", Sl("X", "x"), Sl("Out", "o"), A("axes", ir.Ints{0, -1})),
			Args{"X": {td(sh(2, 2), 1, 2, 3, 4)}}, "Out", td(sh(1, 2, 2, 1), 1, 2, 3, 4)},
		{"squeeze2_grad", mkOp("squeeze2_grad", Sl("XShape", "xs", "Out@GRAD", "g"), Sl("X@GRAD", "d")),
			Args{"XShape": {MustFromData(ir.F64, sh(0, 1, 2, 1, 2), nil)}, "Out@GRAD": {td(sh(2, 2), 1, 2, 3, 4)}}, "X@GRAD", x4},
		{"arg_max", mkOp("arg_max", Sl("X", "x"), Sl("Out", "o"), A("axis", ir.Long(1))),
			Args{"X": {td(sh(2, 3), 1, 5, 5, 7, 2, 7)}}, "Out", i64(sh(2), 1, 0)},
		{"arg_max/axis0", mkOp("arg_max", Sl("X", "x"), Sl("Out", "o"), A("axis", ir.Long(0))),
			Args{"X": {td(sh(2, 3), 1, 5, 5, 7, 2, 7)}}, "Out", i64(sh(3), 1, 0, 1)},
		{"arg_max/keepdims_int32", mkOp("arg_max", Sl("X", "x"), Sl("Out", "o"), A("axis", ir.Long(-1)), A("keepdims", ir.Bool(true)), A("dtype", ir.Int(2))),
			Args{"X": {td(sh(2, 3), 1, 5, 5, 7, 2, 8)}}, "Out", MustFromData(ir.I32, sh(2, 1), []float64{1, 2})},
		{"arg_max/flatten", mkOp("arg_max", Sl("X", "x"), Sl("Out", "o"), A("flatten", ir.Bool(true))),
			Args{"X": {td(sh(2, 3), 1, 5, 5, 7, 2, 7)}}, "Out", i64(sh(), 3)},
		{"arg_max/flatten_keepdims", mkOp("arg_max", Sl("X", "x"), Sl("Out", "o"), A("flatten", ir.Bool(true)), A("keepdims", ir.Bool(true))),
			Args{"X": {td(sh(2, 3), 1, 5, 5, 7, 2, 9)}}, "Out", i64(sh(1, 1), 5)},
		// A bias [C] added at axis 1 of NCHW (conv2d's in the imported
		// models), and its gradient summed over N, H and W.
		{"elementwise_add/nchw_bias", mkOp("elementwise_add", Sl("X", "x", "Y", "y"), Sl("Out", "o"), A("axis", ir.Int(1))),
			Args{"X": {x4}, "Y": {td(sh(2), 10, 20)}}, "Out", td(sh(1, 2, 1, 2), 11, 12, 23, 24)},
		{"elementwise_add_grad/nchw_bias", mkOp("elementwise_add_grad", Sl("X", "x", "Y", "y", "Out@GRAD", "g"), Sl("Y@GRAD", "dy"), A("axis", ir.Int(1))),
			Args{"X": {x4}, "Y": {td(sh(2), 10, 20)}, "Out@GRAD": {td(sh(1, 2, 1, 2), 1, 2, 3, 4)}}, "Y@GRAD", td(sh(2), 3, 7)},
		// The fc bias [K] at axis 1 of [N, K].
		{"elementwise_add/fc_bias", mkOp("elementwise_add", Sl("X", "x", "Y", "y"), Sl("Out", "o"), A("axis", ir.Int(1))),
			Args{"X": {td(sh(2, 2), 1, 2, 3, 4)}, "Y": {td(sh(2), 10, 20)}}, "Out", td(sh(2, 2), 11, 22, 13, 24)},
		// Equal ranks with axis -1 ([32, 3, 3, 3] + [1, 3, 1, 1] in demo_custom_gap).
		{"elementwise_add/equal_rank", mkOp("elementwise_add", Sl("X", "x", "Y", "y"), Sl("Out", "o"), A("axis", ir.Int(-1))),
			Args{"X": {x4}, "Y": {td(sh(1, 2, 1, 1), 10, 20)}}, "Out", td(sh(1, 2, 1, 2), 11, 12, 23, 24)},
		// Paddle 1.x's matmul: a transposed 1-D X is a column.
		{"matmul/1-D_transpose_X", mkOp("matmul", Sl("X", "x", "Y", "y"), Sl("Out", "o"), A("transpose_X", ir.Bool(true))),
			Args{"X": {td(sh(3), 1, 2, 3)}, "Y": {td(sh(1, 2), 10, 20)}}, "Out", td(sh(3, 2), 10, 20, 20, 40, 30, 60)},
		{"matmul/1-D_both", mkOp("matmul", Sl("X", "x", "Y", "y"), Sl("Out", "o"), A("alpha", ir.Float(2))),
			Args{"X": {td(sh(3), 1, 2, 3)}, "Y": {td(sh(3), 1, 1, -1)}}, "Out", td(sh(), 0)},
		// Batches of as many matrices, shaped differently: Out takes X's.
		{"matmul/batch_product", mkOp("matmul", Sl("X", "x", "Y", "y"), Sl("Out", "o")),
			Args{"X": {td(sh(2, 1, 1, 2), 1, 2, 3, 4)}, "Y": {td(sh(2, 2, 1), 1, 1, 1, -1)}}, "Out", td(sh(2, 1, 1, 1), 3, -1)},
		// mul of a pooled [N, C, 1, 1] by the fc weight [C, K].
		{"mul/pooled", mkOp("mul", Sl("X", "x", "Y", "y"), Sl("Out", "o"), A("x_num_col_dims", ir.Int(1)), A("y_num_col_dims", ir.Int(1))),
			Args{"X": {td(sh(2, 2, 1, 1), 1, 2, 3, 4)}, "Y": {td(sh(2, 3), 1, 0, 1, 0, 1, 1)}}, "Out", td(sh(2, 3), 1, 2, 3, 3, 4, 7)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := run(t, c.op, c.in)
			if len(out[c.slot]) != 1 {
				t.Fatalf("no %s", c.slot)
			}
			// -0 and 0 compare equal (hard_swish writes -0 below the ramp).
			got := out[c.slot][0]
			if d, err := MaxAbsDiff(got, c.want); err != nil || d > 1e-15 || got.DType != c.want.DType {
				t.Errorf("%s = %v, want %v", c.slot, got, c.want)
			}
		})
	}
}

// TestSmallOpErrors: attrs and inputs the kernels do not support are
// errors naming the attr or input.
func TestSmallOpErrors(t *testing.T) {
	x := Args{"X": {td(sh(1, 2, 1, 2), 1, 2, 3, 4)}}
	ac := Args{"X": x["X"], "Scale": {td(sh(2), 1, 1)}, "Bias": {td(sh(2), 0, 0)}}
	for _, c := range []struct {
		op  *ir.Op
		in  Args
		sub string
	}{
		{mkOp("hard_swish", Sl("X", "x"), Sl("Out", "o"), A("scale", ir.Float(0))), x, "attr scale is 0"},
		{mkOp("affine_channel", Sl("X", "x", "Scale", "s", "Bias", "b"), Sl("Out", "o"), A("data_layout", ir.String("NDHWC"))), ac, `attr data_layout "NDHWC" is not supported`},
		// AnyLayout is channel-last: X has 2 channels.
		{mkOp("affine_channel", Sl("X", "x", "Scale", "s", "Bias", "b"), Sl("Out", "o")),
			Args{"X": x["X"], "Scale": {td(sh(3), 1, 1, 1)}, "Bias": {td(sh(2), 0, 0)}}, "Scale [3]: want [2], one value per channel"},
		{mkOp("affine_channel_grad", Sl("X", "x", "Scale", "s", "Out@GRAD", "g"), Sl("X@GRAD", "dx")),
			Args{"X": x["X"], "Scale": {td(sh(2), 1, 1)}, "Out@GRAD": {td(sh(4), 1, 2, 3, 4)}}, "Out@GRAD [4] and X [1 2 1 2] differ"},
		{mkOp("flatten_contiguous_range", Sl("X", "x"), Sl("Out", "o"), A("start_axis", ir.Int(2)), A("stop_axis", ir.Int(1))), x, "attrs start_axis 2 and stop_axis 1"},
		{mkOp("flatten_contiguous_range", Sl("X", "x"), Sl("Out", "o"), A("start_axis", ir.Int(0)), A("stop_axis", ir.Int(4))), x, "attrs start_axis 0 and stop_axis 4"},
		{mkOp("squeeze2", Sl("X", "x"), Sl("Out", "o"), A("axes", ir.Ints{4})), x, "attr axes [4]: dim 4 out of range"},
		{mkOp("matmul", Sl("X", "x", "Y", "y"), Sl("Out", "o"), A("fused_reshape_X", ir.Ints{2, 2})),
			Args{"X": {td(sh(4), 1, 2, 3, 4)}, "Y": {td(sh(2, 1), 1, 1)}}, "attr fused_reshape_X [2 2]: a fused reshape or transpose is not supported"},
		{mkOp("matmul", Sl("X", "x", "Y", "y"), Sl("Out", "o"), A("head_number", ir.Int(2))),
			Args{"X": {td(sh(1, 2), 1, 2)}, "Y": {td(sh(2, 1), 1, 1)}}, "attr head_number 2"},
		{mkOp("matmul_grad", Sl("X", "x", "Y", "y", "Out@GRAD", "g"), Sl("X@GRAD", "dx"), A("head_number", ir.Int(2))),
			Args{"X": {td(sh(1, 2), 1, 2)}, "Y": {td(sh(2, 1), 1, 1)}, "Out@GRAD": {td(sh(1, 1), 1)}}, "attr head_number 2"},
		{mkOp("matmul", Sl("X", "x", "Y", "y"), Sl("Out", "o")),
			Args{"X": {td(sh(2, 1, 2), 1, 2, 3, 4)}, "Y": {td(sh(3, 2, 1), 1, 1, 1, 1, 1, 1)}}, "batches of 2 and 3 matrices"},
		{mkOp("arg_max", Sl("X", "x"), Sl("Out", "o"), A("axis", ir.Long(4))), x, "axis 4 out of range"},
		{mkOp("arg_max", Sl("X", "x"), Sl("Out", "o"), A("dtype", ir.Int(5))), x, "attr dtype f32: want int32 or int64"},
		{mkOp("arg_max", Sl("X", "x"), Sl("Out", "o")), Args{"X": {td(sh(0, 2))}}, "X [0 2] has no elements"},
	} {
		wantErr(t, c.op, c.in, c.sub)
	}
}
