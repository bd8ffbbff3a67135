package check_test

import (
	"testing"

	"github.com/distpass/distpass/check"
	"github.com/distpass/distpass/ir"
)

// qatSrc is a layer as Paddle's quantisation-aware training writes it:
// the input quantised by the moving average of its max(abs) (the scale,
// accumulator and state persistables updated in place), the weight
// quantised per output channel, the activation's scale observed by
// moving_average_abs_max_scale; each with the straight-through gradient.
// W1 is how w1 is split.
const qatSrc = `module qat
mesh world shape [2, 2] dims [dp, mp] ranks RANKS

program main {
  block 0 {
    var x : f32[4, 6] {is_data, stop_gradient}
    persist xs : f32[1]
    persist xa : f32[1]
    persist xst : f32[1]
    persist ra : f32[1]
    persist rst : f32[1]
    persist rs : f32[1]
    param w1 : f32[6, 8] W1 {trainable}
    param w2 : f32[8, 3] {trainable}
    var xq : f32[4, 6]
    var w1q : f32[6, 8]
    var w1s : f32[8]
    var h : f32[4, 8]
    var r : f32[4, 8]
    var rq : f32[4, 8]
    var o : f32[4, 3]
    var loss : f32[]
    op 1 fake_quantize_dequantize_moving_average_abs_max(X: x, InScale: xs, InAccum: xa, InState: xst) -> (Out: xq, OutScale: xs, OutAccum: xa, OutState: xst) {bit_length = 8, moving_rate = 0.9, is_test = false} role forward
    op 2 fake_channel_wise_quantize_dequantize_abs_max(X: w1) -> (Out: w1q, OutScale: w1s) {bit_length = 8, quant_axis = 1} role forward
    op 3 matmul_v2(X: xq, Y: w1q) -> (Out: h) {trans_x = false, trans_y = false} role forward
    op 4 tanh(X: h) -> (Out: r) role forward
    op 5 moving_average_abs_max_scale(X: r, InAccum: ra, InState: rst) -> (Out: rq, OutScale: rs, OutAccum: ra, OutState: rst) {moving_rate = 0.9, is_test = false} role forward
    op 6 matmul_v2(X: rq, Y: w2) -> (Out: o) {trans_x = false, trans_y = false} role forward
    op 7 mean(X: o) -> (Out: loss) role forward|loss
  }
}

program startup {
  block 0 {
    persist xs : f32[1]
    persist xa : f32[1]
    persist xst : f32[1]
    persist ra : f32[1]
    persist rst : f32[1]
    persist rs : f32[1]
    param w1 : f32[6, 8] {trainable}
    param w2 : f32[8, 3] {trainable}
    op 1 uniform_random() -> (Out: w1) {dtype = 5, max = 1.0, min = -1.0, seed = 13, shape = [6, 8]} role forward
    op 2 uniform_random() -> (Out: w2) {dtype = 5, max = 1.0, min = -1.0, seed = 14, shape = [8, 3]} role forward
    op 3 fill_constant() -> (Out: xs) {dtype = 5, shape = [1], value = 0.001} role forward
    op 4 fill_constant() -> (Out: xa) {dtype = 5, shape = [1], value = 1.0} role forward
    op 5 fill_constant() -> (Out: xst) {dtype = 5, shape = [1], value = 1.0} role forward
    op 6 fill_constant() -> (Out: ra) {dtype = 5, shape = [1], value = 1.0} role forward
    op 7 fill_constant() -> (Out: rst) {dtype = 5, shape = [1], value = 1.0} role forward
    op 8 fill_constant() -> (Out: rs) {dtype = 5, shape = [1], value = 0.001} role forward
  }
}
`

// TestQATTrainsDistributed: a quantisation-aware layer trains under data
// parallelism (the moving-average scale sees the whole batch: its input
// is gathered) and with w1 split by its output channels along mp (each
// rank quantises its own channels), in two rank orders and dtypes: check
// proves the weights, their grads through the straight-through estimator,
// and the scales' running state, step after step.
func TestQATTrainsDistributed(t *testing.T) {
	provenVariants(t, qatSrc, "W1", []string{"", "@world[-1, 1]"}, []string{"[0, 1, 2, 3]", "[1, 3, 0, 2]"}, func(t *testing.T, _ string, m *ir.Module, rep *check.Report) {
		ste := 0
		for _, op := range m.Main.Global().Ops {
			if op.Type == "straight_through_estimator_grad" {
				ste++
			}
		}
		if ste != 2 {
			t.Errorf("%d straight-through grads, want 2 (w1's quantisation, the observer)", ste)
		}
		wantCompared(t, rep, "w1@GRAD", "w2@GRAD", "xs", "xa", "xst", "rs", "ra", "rst")
	})
}
