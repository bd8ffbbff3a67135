package ops_test

import "testing"

// TestMovingAverageQuantAtTest: at test (is_test) the moving-average
// fake-quantisation ops quantise by their stored InScale, elementwise:
// X passes to Out dim for dim (the batch stays split), the scale and the
// running state replicated. In training they keep X whole, as before.
func TestMovingAverageQuantAtTest(t *testing.T) {
	mov := "var x : f32[8, 16, 3, 3]\nvar o : f32[8, 16, 3, 3]\nvar is : f32[1]\nvar s : f32[1]\nvar st : f32[1]\nvar ac : f32[1]"
	slots := "(X: x, InScale: is, InAccum: ac, InState: st) -> (Out: o, OutScale: s, OutState: st, OutAccum: ac)"
	var cases []shardCase
	for _, typ := range []string{"fake_quantize_dequantize_moving_average_abs_max", "fake_quantize_moving_average_abs_max"} {
		cases = append(cases,
			shardCase{name: typ + " at test", vars: mov, op: "op 1 " + typ + slots + " {is_test = true}", forward: true,
				given: []string{"[0, 1, -1, -1]", "[-1]", "[-1]", "[-1]"}, wantIn: []string{"[0, 1, -1, -1]", "[-1]", "[-1]", "[-1]"},
				wantOut: []string{"[0, 1, -1, -1]", "[-1]", "[-1]", "[-1]"}, partial: []string{"", "", "", ""}},
			// Old Paddle files write is_test as an int.
			shardCase{name: typ + " at test, int attr", vars: mov, op: "op 1 " + typ + slots + " {is_test = 1}", forward: true,
				given: []string{"[0, -1, -1, -1]", "[-1]", "[-1]", "[-1]"}, wantIn: []string{"[0, -1, -1, -1]", "[-1]", "[-1]", "[-1]"},
				wantOut: []string{"[0, -1, -1, -1]", "[-1]", "[-1]", "[-1]"}, partial: []string{"", "", "", ""}},
			shardCase{name: typ + " at test reverse", vars: mov, op: "op 1 " + typ + slots + " {is_test = true}",
				given: []string{"[0, -1, -1, -1]", "[-1]", "[-1]", "[-1]"}, wantIn: []string{"[0, -1, -1, -1]", "[-1]", "[-1]", "[-1]"},
				wantOut: []string{"[0, -1, -1, -1]", "[-1]", "[-1]", "[-1]"}},
			shardCase{name: typ + " training", vars: mov, op: "op 1 " + typ + slots + " {is_test = false}", forward: true,
				given: []string{"[0, -1, -1, -1]", "[-1]", "[-1]", "[-1]"}, wantIn: []string{"[-1, -1, -1, -1]", "[-1]", "[-1]", "[-1]"},
				wantOut: []string{"[-1, -1, -1, -1]", "[-1]", "[-1]", "[-1]"}, partial: []string{"", "", "", ""}},
		)
	}
	scale := "var x : f32[8, 16]\nvar o : f32[8, 16]\nvar s : f32[1]\nvar st : f32[1]\nvar ac : f32[1]"
	cases = append(cases, shardCase{name: "moving_average_abs_max_scale at test", vars: scale,
		op:      "op 1 moving_average_abs_max_scale(X: x, InAccum: ac, InState: st) -> (Out: o, OutScale: s, OutState: st, OutAccum: ac) {is_test = true}",
		forward: true, given: []string{"[1, 0]", "[-1]", "[-1]"}, wantIn: []string{"[1, 0]", "[-1]", "[-1]"},
		wantOut: []string{"[1, 0]", "[-1]", "[-1]", "[-1]"}, partial: []string{"", "", "", ""}})
	runShardCases(t, cases)
}
