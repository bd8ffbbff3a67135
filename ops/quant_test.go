package ops_test

import "testing"

// The fake-quantisation family as Paddle's slim passes insert it, output
// shapes from Paddle's InferShape: Out = X, one scale or one per channel.
func TestQuantInfer(t *testing.T) {
	w := " persist w : f32[8, 4, 3, 3]\n var q : f32[8, 4, 3, 3]\n"
	x := " var x : f32[-1, 16, 7, 7]\n var q : f32[-1, 16, 7, 7]\n"
	one := " var s : f32[1]\n"
	checkCases(t, []visionCase{
		{"abs-max", prog(x + one + " op 1 fake_quantize_abs_max(X: x) -> (Out: q, OutScale: s) {bit_length = 8}"), ""},
		{"qdq-abs-max", prog(x + one + " op 1 fake_quantize_dequantize_abs_max(X: x) -> (Out: q, OutScale: s) {bit_length = 8, round_type = 1}"), ""},
		{"channel-wise/axis0", prog(w + " var s : f32[8]\n op 1 fake_channel_wise_quantize_abs_max(X: w) -> (Out: q, OutScale: s) {quant_axis = 0}"), ""},
		{"channel-wise/axis1", prog(w + " var s : f32[4]\n op 1 fake_channel_wise_quantize_dequantize_abs_max(X: w) -> (Out: q, OutScale: s) {quant_axis = 1}"), ""},
		{"range", prog(x + one + " persist in : f32[1]\n persist it : i64[1]\n var ss : f32[20]\n op 1 fake_quantize_range_abs_max(X: x, InScale: in, Iter: it) -> (Out: q, OutScale: s, OutScales: ss) {window_size = 20}"), ""},
		{"moving-average", prog(x + " persist s : f32[1]\n persist acc : f32[1]\n persist st : f32[1]\n op 1 fake_quantize_dequantize_moving_average_abs_max(X: x, InScale: s, InAccum: acc, InState: st) -> (Out: q, OutScale: s, OutAccum: acc, OutState: st) {moving_rate = 0.9}"), ""},
		{"moving-scale/no-out", prog(" var x : f32[-1, 16]\n var s : f32[1]\n op 1 moving_average_abs_max_scale(X: x) -> (OutScale: s)"), ""},
		{"dequantize", prog(x + one + " op 1 fake_dequantize_max_abs(X: x, Scale: s) -> (Out: q) {max_range = 127.0}"), ""},
		{"channel-dequantize/one", prog(w + " persist s : f32[8]\n op 1 fake_channel_wise_dequantize_max_abs(X: w, Scales: s) -> (Out: q) {quant_bits = [8], quant_axis = 0}"), ""},
		{"channel-dequantize/two", prog(x + " persist s : f32[16]\n persist s2 : f32[1]\n op 1 fake_channel_wise_dequantize_max_abs(X: x, Scales: [s, s2]) -> (Out: q) {quant_bits = [8, 8]}"), ""},
		{"quantize-linear/per-tensor", prog(x + one + " persist z : f32[1]\n op 1 quantize_linear(X: x, Scale: s, ZeroPoint: z) -> (Y: q) {quant_axis = -1}"), ""},
		{"quantize-linear/per-channel", prog(w + " persist s : f32[8]\n persist z : f32[8]\n var os : f32[8]\n op 1 quantize_linear(X: w, Scale: s, ZeroPoint: z) -> (Y: q, OutScale: os) {quant_axis = 0}"), ""},
		{"dequantize-linear/int8", prog(" persist w : i8[8, 4]\n var q : f32[8, 4]\n persist s : f32[4]\n persist z : f32[4]\n op 1 dequantize_linear(X: w, Scale: s, ZeroPoint: z) -> (Y: q) {quant_axis = 1}"), ""},

		{"channel-wise/scale", prog(w + " var s : f32[4]\n op 1 fake_channel_wise_quantize_abs_max(X: w) -> (Out: q, OutScale: s) {quant_axis = 0}"),
			"output OutScale s: declared f32[4], inferred [8] from X f32[8, 4, 3, 3]"},
		{"channel-wise/axis", prog(w + " var s : f32[4]\n op 1 fake_channel_wise_quantize_abs_max(X: w) -> (Out: q, OutScale: s) {quant_axis = 2}"),
			"attr quant_axis = 2 is not one of [0, 1]"},
		{"channel-wise/per-tensor-axis", prog(w + " var s : f32[1]\n op 1 fake_channel_wise_quantize_abs_max(X: w) -> (Out: q, OutScale: s) {quant_axis = -1}"),
			"attr quant_axis = -1 is not one of [0, 1]"},
		{"abs-max/bits", prog(x + one + " op 1 fake_quantize_abs_max(X: x) -> (Out: q, OutScale: s) {bit_length = 17}"),
			"attr bit_length 17 is not in [1, 16]"},
		{"abs-max/out", prog(" var x : f32[4, 4]\n var q : f32[4, 5]\n var s : f32[1]\n op 1 fake_quantize_abs_max(X: x) -> (Out: q, OutScale: s)"),
			"output Out q: declared f32[4, 5], inferred [4, 4] from X f32[4, 4]"},
		{"quantize-linear/axis", prog(" var x : f32[16]\n var q : f32[16]\n persist s : f32[1]\n persist z : f32[1]\n op 1 quantize_linear(X: x, Scale: s, ZeroPoint: z) -> (Y: q) {quant_axis = 1}"),
			"X x [16]: attr quant_axis 1 is not a dim of it"},
		{"quantize-linear/scale", prog(w + " persist s : f32[4]\n persist z : f32[4]\n op 1 quantize_linear(X: w, Scale: s, ZeroPoint: z) -> (Y: q) {quant_axis = 0}"),
			"Scale s [4] and X w [8, 4, 3, 3]: Scale must be [8] for quant_axis 0"},
		{"channel-dequantize/bits", prog(w + " persist s : f32[8]\n op 1 fake_channel_wise_dequantize_max_abs(X: w, Scales: s) -> (Out: q) {quant_bits = [8, 8]}"),
			"attr quant_bits [8, 8] has 2 values for 1 Scales; it takes one per scale"},
		{"channel-dequantize/scale", prog(x + " persist s : f32[16]\n persist s2 : f32[2]\n op 1 fake_channel_wise_dequantize_max_abs(X: x, Scales: [s, s2]) -> (Out: q) {quant_bits = [8, 8]}"),
			"Scales s2 [2] and X x [-1, 16, 7, 7]: Scales[1] must be [1]"},
		{"range/window", prog(x + one + " persist in : f32[1]\n var ss : f32[20]\n op 1 fake_quantize_range_abs_max(X: x, InScale: in) -> (Out: q, OutScale: s, OutScales: ss) {window_size = 0}"),
			"attr window_size 0 is not positive"},
	})
}
