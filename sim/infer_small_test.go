package sim

// Cases of the small ops of the imported Paddle models: relu6,
// hard_swish, affine_channel, flatten_contiguous_range, squeeze2 and
// arg_max, forward and grad.
func init() {
	act := func(typ, attrs string) inferCase {
		return inferCase{Name: typ, Src: `program main { block 0 {
 var x : f32[2, 3, 4]
 var o : f32[-1, -1, -1]
 op 1 ` + typ + `(X: x) -> (Out: o) ` + attrs + `
}}`}
	}
	actGrad := func(typ, src, attrs string) inferCase {
		return inferCase{Name: typ, Src: `program main { block 0 {
 var v : f64[3, 2]
 var g : f64[3, 2]
 var dx : f64[-1, -1]
 op 1 ` + typ + `(` + src + `: v, Out@GRAD: g) -> (X@GRAD: dx) ` + attrs + `
}}`}
	}
	inferCases = append(inferCases,
		act("relu6", "{threshold = 0.5}"), actGrad("relu6_grad", "Out", "{threshold = 0.5}"),
		act("hard_swish", "{threshold = 6.0, scale = 6.0, offset = 3.0}"), actGrad("hard_swish_grad", "X", ""),
		inferCase{Name: "slice_grad", Src: `program main { block 0 {
 var x : f64[3, 4, 2]
 var g : f64[3, 2]
 var dx : f64[-1, -1, -1]
 op 1 slice_grad(Input: x, Out@GRAD: g) -> (Input@GRAD: dx) {axes = [1], starts = [2], ends = [3], decrease_axis = [1]}
}}`},
		inferCase{Name: "concat_grad", Src: `program main { block 0 {
 var a : f64[2, 3]
 var b : f64[2, 1]
 var g : f64[2, 4]
 var da : f64[-1, -1]
 var db : f64[-1, -1]
 op 1 concat_grad(X: [a, b], Out@GRAD: g) -> (X@GRAD: [da, db]) {axis = 1}
}}`},
		act("exp", ""), actGrad("exp_grad", "Out", ""), act("log", ""), actGrad("log_grad", "X", ""),
		act("sqrt", ""), actGrad("sqrt_grad", "Out", ""), act("rsqrt", ""), actGrad("rsqrt_grad", "Out", ""),
		act("square", ""), actGrad("square_grad", "X", ""), act("abs", ""), actGrad("abs_grad", "X", ""),
		act("reciprocal", ""), actGrad("reciprocal_grad", "Out", ""),
		act("sin", ""), actGrad("sin_grad", "X", ""), act("cos", ""), actGrad("cos_grad", "X", ""),
		act("erf", ""), actGrad("erf_grad", "X", ""), act("softsign", ""), actGrad("softsign_grad", "X", ""),
		act("logsigmoid", ""), actGrad("logsigmoid_grad", "X", ""), act("tanh_shrink", ""), actGrad("tanh_shrink_grad", "X", ""),
		act("leaky_relu", "{alpha = 0.1}"), actGrad("leaky_relu_grad", "X", "{alpha = 0.1}"),
		act("softplus", "{beta = 2.0}"), actGrad("softplus_grad", "X", "{beta = 2.0}"),
		act("mish", ""), actGrad("mish_grad", "X", ""), act("pow", "{factor = 3.0}"), actGrad("pow_grad", "X", "{factor = 3.0}"),
		inferCase{Name: "expand_v2", Src: `program main { block 0 {
 var x : f32[3, 1]
 var o : f32[-1, -1, -1]
 op 1 expand_v2(X: x) -> (Out: o) {shape = [2, -1, 4]}
}}`},
		inferCase{Name: "expand_v2_grad", Src: `program main { block 0 {
 var x : f32[3, 1]
 var g : f32[2, 3, 4]
 var dx : f32[-1, -1]
 op 1 expand_v2_grad(X: x, Out@GRAD: g) -> (X@GRAD: dx) {shape = [2, -1, 4]}
}}`},
		inferCase{Name: "tile", Src: `program main { block 0 {
 var x : f32[2, 3]
 var o : f32[-1, -1, -1]
 op 1 tile(X: x) -> (Out: o) {repeat_times = [2, 1, 3]}
}}`},
		inferCase{Name: "tile_grad", Src: `program main { block 0 {
 var x : f32[2, 3]
 var g : f32[2, 2, 9]
 var dx : f32[-1, -1]
 op 1 tile_grad(X: x, Out@GRAD: g) -> (X@GRAD: dx) {repeat_times = [2, 1, 3]}
}}`},
		inferCase{Name: "stack", Src: `program main { block 0 {
 var a : f32[2, 3]
 var b : f32[2, 3]
 var y : f32[-1, -1, -1]
 op 1 stack(X: [a, b]) -> (Y: y) {axis = -1}
}}`},
		inferCase{Name: "stack_grad", Src: `program main { block 0 {
 var g : f32[2, 3, 2]
 var da : f32[-1, -1]
 var db : f32[-1, -1]
 op 1 stack_grad(Y@GRAD: g) -> (X@GRAD: [da, db]) {axis = -1}
}}`},
		inferCase{Name: "where", Src: `program main { block 0 {
 var c : bool[2, 3]
 var x : f32[2, 3]
 var y : f32[2, 3]
 var o : f32[-1, -1]
 op 1 where(Condition: c, X: x, Y: y) -> (Out: o)
}}`},
		inferCase{Name: "where_grad", Src: `program main { block 0 {
 var c : bool[2, 3]
 var x : f32[2, 3]
 var y : f32[2, 3]
 var g : f32[2, 3]
 var dx : f32[-1, -1]
 var dy : f32[-1, -1]
 op 1 where_grad(Condition: c, X: x, Y: y, Out@GRAD: g) -> (X@GRAD: dx, Y@GRAD: dy)
}}`},
		inferCase{Name: "flatten2", Src: `program main { block 0 {
 var x : f32[2, 3, 4]
 var o : f32[-1, -1]
 var xs : f32[-1, -1, -1, -1]
 op 1 flatten2(X: x) -> (Out: o, XShape: xs) {axis = 2}
}}`},
		inferCase{Name: "flatten2_grad", Src: `program main { block 0 {
 var xs : f32[0, 2, 3, 4]
 var g : f32[6, 4]
 var dx : f32[-1, -1, -1]
 op 1 flatten2_grad(XShape: xs, Out@GRAD: g) -> (X@GRAD: dx) {axis = 2}
}}`},
		inferCase{Name: "fake_quantize_dequantize_abs_max", Src: `program main { block 0 {
 var x : f32[2, 3]
 var o : f32[-1, -1]
 var s : f32[-1]
 op 1 fake_quantize_dequantize_abs_max(X: x) -> (Out: o, OutScale: s)
}}`},
		inferCase{Name: "fake_channel_wise_quantize_dequantize_abs_max", Src: `program main { block 0 {
 var x : f32[2, 3]
 var o : f32[-1, -1]
 var s : f32[-1]
 op 1 fake_channel_wise_quantize_dequantize_abs_max(X: x) -> (Out: o, OutScale: s) {quant_axis = 1}
}}`},
		inferCase{Name: "fake_quantize_dequantize_moving_average_abs_max", Src: `program main { block 0 {
 var x : f32[2, 3]
 var sc : f32[1]
 var a : f32[1]
 var st : f32[1]
 var o : f32[-1, -1]
 var sc2 : f32[-1]
 var a2 : f32[-1]
 var st2 : f32[-1]
 op 1 fake_quantize_dequantize_moving_average_abs_max(X: x, InScale: sc, InAccum: a, InState: st) -> (Out: o, OutScale: sc2, OutAccum: a2, OutState: st2) {is_test = false}
}}`},
		inferCase{Name: "moving_average_abs_max_scale", Src: `program main { block 0 {
 var x : f32[2, 3]
 var a : f32[1]
 var st : f32[1]
 var o : f32[-1, -1]
 var sc2 : f32[-1]
 var a2 : f32[-1]
 var st2 : f32[-1]
 op 1 moving_average_abs_max_scale(X: x, InAccum: a, InState: st) -> (Out: o, OutScale: sc2, OutAccum: a2, OutState: st2) {is_test = false}
}}`},
		inferCase{Name: "straight_through_estimator_grad", Src: `program main { block 0 {
 var g : f32[2, 3]
 var d : f32[-1, -1]
 op 1 straight_through_estimator_grad(Out@GRAD: g) -> (X@GRAD: d)
}}`},
		inferCase{Name: "bilinear_interp_v2", Src: `program main { block 0 {
 var x : f32[2, 3, 4, 5]
 var o : f32[-1, -1, -1, -1]
 op 1 bilinear_interp_v2(X: x) -> (Out: o) {out_h = 6, out_w = 7}
}}`},
		inferCase{Name: "bilinear_interp_v2_grad", Src: `program main { block 0 {
 var x : f32[2, 3, 4, 5]
 var g : f32[2, 3, 6, 7]
 var dx : f32[-1, -1, -1, -1]
 op 1 bilinear_interp_v2_grad(X: x, Out@GRAD: g) -> (X@GRAD: dx) {out_h = 6, out_w = 7}
}}`},
		inferCase{Name: "nearest_interp_v2", Src: `program main { block 0 {
 var x : f32[2, 4, 5, 3]
 var o : f32[-1, -1, -1, -1]
 op 1 nearest_interp_v2(X: x) -> (Out: o) {scale = [2.0, 2.0], data_layout = "NHWC", interp_method = "nearest"}
}}`},
		inferCase{Name: "nearest_interp_v2_grad", Src: `program main { block 0 {
 var x : f32[2, 3, 4, 5]
 var g : f32[2, 3, 8, 10]
 var dx : f32[-1, -1, -1, -1]
 op 1 nearest_interp_v2_grad(X: x, Out@GRAD: g) -> (X@GRAD: dx) {scale = [2.0, 2.0], interp_method = "nearest"}
}}`},
		act("clip", "{min = -1.0, max = 1.0}"), actGrad("clip_grad", "X", "{min = -1.0, max = 1.0}"),
		act("swish", "{beta = 1.5}"), actGrad("swish_grad", "X", "{beta = 1.5}"),
		act("silu", ""), actGrad("silu_grad", "X", ""),
		act("hard_sigmoid", "{slope = 0.2, offset = 0.5}"), actGrad("hard_sigmoid_grad", "Out", "{slope = 0.2, offset = 0.5}"),
		inferCase{Name: "affine_channel/NCHW", Src: `program main { block 0 {
 var x : f32[2, 3, 4, 5]
 var s : f32[3]
 var b : f32[3]
 var o : f32[-1, -1, -1, -1]
 op 1 affine_channel(X: x, Scale: s, Bias: b) -> (Out: o) {data_layout = "NCHW"}
}}`},
		inferCase{Name: "affine_channel/AnyLayout", Src: `program main { block 0 {
 var x : f32[2, 4, 5, 3]
 var s : f32[3]
 var b : f32[3]
 var o : f32[-1, -1, -1, -1]
 op 1 affine_channel(X: x, Scale: s, Bias: b) -> (Out: o)
}}`},
		inferCase{Name: "affine_channel_grad", Src: `program main { block 0 {
 var x : f64[2, 3, 4]
 var s : f64[3]
 var g : f64[2, 3, 4]
 var dx : f64[-1, -1, -1]
 var ds : f64[-1]
 var db : f64[-1]
 op 1 affine_channel_grad(X: x, Scale: s, Out@GRAD: g) -> (X@GRAD: dx, Scale@GRAD: ds, Bias@GRAD: db) {data_layout = "NCHW"}
}}`},
		inferCase{Name: "flatten_contiguous_range", Src: `program main { block 0 {
 var x : f32[2, 3, 4, 5]
 var o : f32[-1, -1, -1]
 var xs : f32[-1, -1, -1, -1, -1]
 op 1 flatten_contiguous_range(X: x) -> (Out: o, XShape: xs) {start_axis = 1, stop_axis = 2}
}}`},
		inferCase{Name: "flatten_contiguous_range/negative", Src: `program main { block 0 {
 var x : f32[2, 3, 4]
 var o : f32[-1]
 op 1 flatten_contiguous_range(X: x) -> (Out: o) {start_axis = 0, stop_axis = -1}
}}`},
		inferCase{Name: "flatten_contiguous_range/0-D", Src: `program main { block 0 {
 var x : f32[]
 var o : f32[-1]
 op 1 flatten_contiguous_range(X: x) -> (Out: o) {start_axis = 0, stop_axis = -1}
}}`},
		inferCase{Name: "flatten_contiguous_range_grad", Src: `program main { block 0 {
 var xs : f32[0, 2, 3, 4]
 var g : f32[2, 12]
 var dx : f32[-1, -1, -1]
 op 1 flatten_contiguous_range_grad(XShape: xs, Out@GRAD: g) -> (X@GRAD: dx) {start_axis = 1, stop_axis = 2}
}}`},
		inferCase{Name: "squeeze2", Src: `program main { block 0 {
 var x : f32[2, 1, 3, 1]
 var o : f32[-1, -1, -1]
 var xs : f32[-1, -1, -1, -1, -1]
 op 1 squeeze2(X: x) -> (Out: o, XShape: xs) {axes = [-1]}
}}`},
		inferCase{Name: "squeeze2/all", Src: `program main { block 0 {
 var x : f32[1, 2, 1, 3, 1]
 var o : f32[-1, -1]
 op 1 squeeze2(X: x) -> (Out: o) {axes = []}
}}`},
		inferCase{Name: "squeeze2_grad", Src: `program main { block 0 {
 var xs : f32[0, 2, 1, 3]
 var g : f32[2, 3]
 var dx : f32[-1, -1, -1]
 op 1 squeeze2_grad(XShape: xs, Out@GRAD: g) -> (X@GRAD: dx) {axes = [1]}
}}`},
		inferCase{Name: "unsqueeze2", Src: `program main { block 0 {
 var x : f32[2, 3]
 var o : f32[-1, -1, -1, -1]
 var xs : f32[-1, -1, -1]
 op 1 unsqueeze2(X: x) -> (Out: o, XShape: xs) {axes = [0, -1]}
}}`},
		inferCase{Name: "unsqueeze2_grad", Src: `program main { block 0 {
 var xs : f32[0, 2, 3]
 var g : f32[1, 2, 3, 1]
 var dx : f32[-1, -1]
 op 1 unsqueeze2_grad(XShape: xs, Out@GRAD: g) -> (X@GRAD: dx) {axes = [0, -1]}
}}`},
		inferCase{Name: "arg_max", Src: `program main { block 0 {
 var x : f32[2, 3, 4]
 var o : i64[-1, -1]
 op 1 arg_max(X: x) -> (Out: o) {axis = long(1)}
}}`},
		inferCase{Name: "arg_max/keepdims_int32", Src: `program main { block 0 {
 var x : f32[2, 3, 4]
 var o : i32[-1, -1, -1]
 op 1 arg_max(X: x) -> (Out: o) {axis = long(-1), keepdims = true, dtype = 2}
}}`},
		inferCase{Name: "arg_max/flatten", Src: `program main { block 0 {
 var x : f32[2, 3]
 var o : i64[]
 op 1 arg_max(X: x) -> (Out: o) {flatten = true}
}}`},
		inferCase{Name: "arg_max/flatten_keepdims", Src: `program main { block 0 {
 var x : f32[2, 3]
 var o : i64[-1, -1]
 op 1 arg_max(X: x) -> (Out: o) {flatten = true, keepdims = true, dtype = -1}
}}`},
		inferCase{Name: "matmul/1-D_transpose_X", Src: `program main { block 0 {
 var x : f32[3]
 var y : f32[1, 2]
 var o : f32[-1, -1]
 op 1 matmul(X: x, Y: y) -> (Out: o) {transpose_X = true}
}}`},
		inferCase{Name: "matmul/1-D_both", Src: `program main { block 0 {
 var x : f32[3]
 var y : f32[3]
 var o : f32[]
 op 1 matmul(X: x, Y: y) -> (Out: o)
}}`},
		inferCase{Name: "matmul/batch_product", Src: `program main { block 0 {
 var x : f32[2, 3, 2, 4]
 var y : f32[6, 4, 5]
 var o : f32[-1, -1, -1, -1]
 op 1 matmul(X: x, Y: y) -> (Out: o)
}}`},
		inferCase{Name: "matmul_grad/1-D_transpose_Y", Src: `program main { block 0 {
 var x : f64[2, 1]
 var y : f64[3]
 var g : f64[2, 3]
 var dx : f64[-1, -1]
 var dy : f64[-1]
 op 1 matmul_grad(X: x, Y: y, Out@GRAD: g) -> (X@GRAD: dx, Y@GRAD: dy) {transpose_Y = true}
}}`},
	)
}
