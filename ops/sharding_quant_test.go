package ops_test

import "testing"

// TestQuantShardingRules: an op that computes its scale from X keeps X
// whole (but its channel axis, per channel); an op that reads its scale
// passes X through, per-channel scales following the channel axis.
func TestQuantShardingRules(t *testing.T) {
	w := "var x : f32[8, 16, 3, 3]\nvar o : f32[8, 16, 3, 3]"
	absMax := w + "\nvar s : f32[1]"
	chw := w + "\nvar s : f32[8]"
	mov := w + "\nvar is : f32[1]\nvar s : f32[1]\nvar st : f32[1]\nvar ac : f32[1]"
	lin := "var x : f32[8, 16]\nvar s : f32[16]\nvar z : f32[16]\nvar o : f32[8, 16]"
	linT := "var x : f32[8, 16]\nvar s : f32[1]\nvar z : f32[1]\nvar o : f32[8, 16]\nvar os : f32[1]"
	runShardCases(t, []shardCase{
		{name: "abs_max", vars: absMax, op: "op 1 fake_quantize_abs_max(X: x) -> (Out: o, OutScale: s)", forward: true,
			given: []string{"[0, 1, -1, -1]"}, wantIn: []string{"[-1, -1, -1, -1]"}, wantOut: []string{"[-1, -1, -1, -1]", "[-1]"}, partial: []string{"", ""}},
		{name: "abs_max reverse", vars: absMax, op: "op 1 fake_quantize_dequantize_abs_max(X: x) -> (Out: o, OutScale: s)",
			given: []string{"[0, -1, -1, -1]", "[-1]"}, wantIn: []string{"[-1, -1, -1, -1]"}, wantOut: []string{"[-1, -1, -1, -1]", "[-1]"}},
		// The channels (quant_axis 0) may stay split: each rank's scales
		// are its channels'.
		{name: "channel-wise", vars: chw, op: "op 1 fake_channel_wise_quantize_abs_max(X: x) -> (Out: o, OutScale: s) {quant_axis = 0}", forward: true,
			given: []string{"[0, 1, -1, -1]"}, wantIn: []string{"[0, -1, -1, -1]"}, wantOut: []string{"[0, -1, -1, -1]", "[0]"}, partial: []string{"", ""}},
		{name: "channel-wise reverse", vars: chw, op: "op 1 fake_channel_wise_quantize_dequantize_abs_max(X: x) -> (Out: o, OutScale: s) {quant_axis = 0}",
			given: []string{"[-1, 1, -1, -1]", "[0]"}, wantIn: []string{"[0, -1, -1, -1]"}, wantOut: []string{"[0, -1, -1, -1]", "[0]"}},
		{name: "moving average", vars: mov,
			op:    "op 1 fake_quantize_moving_average_abs_max(X: x, InScale: is, InAccum: ac, InState: st) -> (Out: o, OutScale: s, OutState: st, OutAccum: ac)",
			given: []string{"[0, -1, -1, -1]", "[-1]", "[-1]", "[-1]"}, forward: true,
			wantIn: []string{"[-1, -1, -1, -1]", "[-1]", "[-1]", "[-1]"}, wantOut: []string{"[-1, -1, -1, -1]", "[-1]", "[-1]", "[-1]"}, partial: []string{"", "", "", ""}},
		{name: "dequantize max_abs", vars: absMax, op: "op 1 fake_dequantize_max_abs(X: x, Scale: s) -> (Out: o) {max_range = 127.0}", forward: true,
			given: []string{"[0, 1, -1, -1]", "[0]"}, wantIn: []string{"[0, 1, -1, -1]", "[-1]"}, wantOut: []string{"[0, 1, -1, -1]"}, partial: []string{""}},
		{name: "channel-wise dequantize", vars: chw, op: "op 1 fake_channel_wise_dequantize_max_abs(X: x, Scales: s) -> (Out: o) {quant_bits = [8], quant_axis = 0}", forward: true,
			given: []string{"[-1, 1, -1, -1]", "[0]"}, wantIn: []string{"[0, 1, -1, -1]", "[0]"}, wantOut: []string{"[0, 1, -1, -1]"}, partial: []string{""}},
		{name: "channel-wise dequantize two scales", vars: w + "\nvar s1 : f32[16]\nvar s2 : f32[1]",
			op: "op 1 fake_channel_wise_dequantize_max_abs(X: x, Scales: [s1, s2]) -> (Out: o) {quant_bits = [8, 8]}", forward: true,
			given: []string{"[0, -1, -1, -1]", "[1]", "[1]"}, wantIn: []string{"[0, 1, -1, -1]", "[1]", "[-1]"}, wantOut: []string{"[0, 1, -1, -1]"}, partial: []string{""}},
		// dequantize_linear reads its scale: X passes through.
		{name: "dequantize_linear per channel", vars: lin, op: "op 1 dequantize_linear(X: x, Scale: s, ZeroPoint: z) -> (Y: o) {quant_axis = 1}", forward: true,
			given: []string{"[0, -1]", "[1]", "[-1]"}, wantIn: []string{"[0, 1]", "[1]", "[1]"}, wantOut: []string{"[0, 1]"}, partial: []string{""}},
		{name: "quantize_linear at test", vars: linT, op: "op 1 quantize_linear(X: x, Scale: s, ZeroPoint: z) -> (Y: o, OutScale: os) {quant_axis = -1, is_test = true}", forward: true,
			given: []string{"[0, 1]", "[-1]", "[-1]"}, wantIn: []string{"[0, 1]", "[-1]", "[-1]"}, wantOut: []string{"[0, 1]", "[-1]"}, partial: []string{"", ""}},
		// In training it computes the scale from X: X whole.
		{name: "quantize_linear training", vars: linT, op: "op 1 quantize_linear(X: x, Scale: s, ZeroPoint: z) -> (Y: o, OutScale: os) {quant_axis = -1}", forward: true,
			given: []string{"[0, 1]", "[-1]", "[-1]"}, wantIn: []string{"[-1, -1]", "[-1]", "[-1]"}, wantOut: []string{"[-1, -1]", "[-1]"}, partial: []string{"", ""}},
		{name: "quantize_linear reverse", vars: lin, op: "op 1 quantize_linear(X: x, Scale: s, ZeroPoint: z) -> (Y: o) {quant_axis = 1}",
			given: []string{"[1, 0]"}, wantIn: []string{"[1, 0]", "[0]", "[0]"}, wantOut: []string{"[1, 0]"}},
	})
}

// TestLossScalingShardingRules: each X passes to its Out; the flag of
// check_finite_and_unscale is partial (max) where the Xs are split.
func TestLossScalingShardingRules(t *testing.T) {
	v := "var a : f32[8, 16]\nvar b : f32[16]\nvar s : f32[1]\nvar oa : f32[8, 16]\nvar ob : f32[16]\nvar f : bool[1]"
	cf := "op 1 check_finite_and_unscale(X: [a, b], Scale: s) -> (Out: [oa, ob], FoundInfinite: f)"
	u := v + "\nvar ls : f32[1]\nvar g : i32[1]\nvar bd : i32[1]"
	ul := "op 1 update_loss_scaling(X: [a, b], FoundInfinite: f, PrevLossScaling: ls, InGoodSteps: g, InBadSteps: bd) -> (Out: [oa, ob], LossScaling: ls, OutGoodSteps: g, OutBadSteps: bd) {incr_every_n_steps = 1000, decr_every_n_nan_or_inf = 2, incr_ratio = 2.0, decr_ratio = 0.5}"
	runShardCases(t, []shardCase{
		{name: "check_finite", vars: v, op: cf, forward: true,
			given: []string{"[0, 1]", "[-1]", "[0]"}, wantIn: []string{"[0, 1]", "[-1]", "[-1]"},
			wantOut: []string{"[0, 1]", "[-1]", "[-1]"}, partial: []string{"", "", "0:max,1:max"}},
		{name: "check_finite one split", vars: v, op: cf, forward: true,
			given: []string{"[-1, -1]", "[1]", "[-1]"}, wantIn: []string{"[-1, -1]", "[1]", "[-1]"},
			wantOut: []string{"[-1, -1]", "[1]", "[-1]"}, partial: []string{"", "", "1:max"}},
		{name: "check_finite reverse", vars: v, op: cf,
			given: []string{"[1, -1]", "[0]", "[-1]"}, wantIn: []string{"[1, -1]", "[0]", "[-1]"}, wantOut: []string{"[1, -1]", "[0]", "[-1]"}},
		{name: "check_finite bad mapping", vars: v, op: cf, forward: true,
			given: []string{"[0, 0]", "[-1]", "[-1]"}, err: "rule each X to its Out: X 0: mapping [0, 0] uses mesh dim 0 twice"},
		{name: "check_finite mesh dim off the mesh", vars: v, op: cf, forward: true,
			given: []string{"[2, -1]", "[-1]", "[-1]"}, err: "rule each X to its Out: X 0: mapping [2, -1] uses mesh dim 2 of a 2-dim mesh"},
		{name: "update_loss_scaling", vars: u, op: ul, forward: true,
			given:   []string{"[0, -1]", "[1]", "[-1]", "[-1]", "[-1]", "[-1]"},
			wantIn:  []string{"[0, -1]", "[1]", "[-1]", "[-1]", "[-1]", "[-1]"},
			wantOut: []string{"[0, -1]", "[1]", "[-1]", "[-1]", "[-1]"}, partial: []string{"", "", "", "", ""}},
	})
}
