package check_test

import (
	"testing"

	"github.com/distpass/distpass/check"
	"github.com/distpass/distpass/ir"
)

// resizeSrc upsamples a convolution's output as a detector's neck does
// (bilinear, then nearest), clips it, pools it and classifies it. FILTER
// is how the convolution's filter is split.
const resizeSrc = `module resize
mesh world shape [2, 2] dims [dp, mp] ranks RANKS

program main {
  block 0 {
    var x : f32[4, 2, 3, 3] {is_data, stop_gradient}
    param f : f32[4, 2, 1, 1] FILTER {trainable}
    param w : f32[4, 3] {trainable}
    var c : f32[4, 4, 3, 3]
    var b : f32[4, 4, 5, 6]
    var n : f32[4, 4, 10, 12]
    var k : f32[4, 4, 10, 12]
    var p : f32[4, 4, 1, 1]
    var q : f32[4, 4]
    var o : f32[4, 3]
    var loss : f32[]
    op 1 conv2d(Input: x, Filter: f) -> (Output: c) {strides = [1, 1], paddings = [0, 0], dilations = [1, 1], groups = 1, data_format = "NCHW"} role forward
    op 2 bilinear_interp_v2(X: c) -> (Out: b) {out_h = 5, out_w = 6, align_corners = false, align_mode = 0, interp_method = "bilinear"} role forward
    op 3 nearest_interp_v2(X: b) -> (Out: n) {scale = [2.0, 2.0], align_corners = false, interp_method = "nearest"} role forward
    op 4 clip(X: n) -> (Out: k) {min = -0.5, max = 0.5} role forward
    op 5 pool2d(X: k) -> (Out: p) {pooling_type = "avg", ksize = [1, 1], global_pooling = true} role forward
    op 6 flatten_contiguous_range(X: p) -> (Out: q) {start_axis = 1, stop_axis = 3} role forward
    op 7 matmul_v2(X: q, Y: w) -> (Out: o) {trans_x = false, trans_y = false} role forward
    op 8 mean(X: o) -> (Out: loss) role forward|loss
  }
}

program startup {
  block 0 {
    param f : f32[4, 2, 1, 1] {trainable}
    param w : f32[4, 3] {trainable}
    op 1 uniform_random() -> (Out: f) {dtype = 5, max = 1.0, min = -1.0, seed = 31, shape = [4, 2, 1, 1]} role forward
    op 2 uniform_random() -> (Out: w) {dtype = 5, max = 1.0, min = -1.0, seed = 32, shape = [4, 3]} role forward
  }
}
`

// TestResizesTrainDistributed: bilinear_interp_v2, nearest_interp_v2 and
// clip train under data parallelism, and with the convolution's output
// channels split along mp (the resizes keep the split, as a pool does),
// in two rank orders and two dtypes, proven by check.
func TestResizesTrainDistributed(t *testing.T) {
	provenVariants(t, resizeSrc, "FILTER", []string{"", "@world[1, -1, -1, -1]"}, []string{"[0, 1, 2, 3]", "[3, 2, 1, 0]"}, func(t *testing.T, filter string, m *ir.Module, rep *check.Report) {
		if d := m.Main.Global().Var("n").Dist; filter != "" && (d == nil || d.String() != "@world[0, 1, -1, -1]") {
			t.Errorf("n is %v, want @world[0, 1, -1, -1]: the resizes keep the channel split", d)
		}
		wantCompared(t, rep, "f@GRAD", "w@GRAD")
	})
}
