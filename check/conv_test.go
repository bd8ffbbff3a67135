package check_test

import (
	"context"
	"testing"

	"github.com/distpass/distpass/check"
	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/passes"
)

// convNet is a forward-only conv net with its batch split over a 4-rank
// dp mesh: conv2d (stride, padding), depthwise_conv2d (SAME, a channel
// multiplier), and a grouped conv2d with a Bias and a fused relu.
const convNet = `module convnet
mesh world shape [4] dims [dp] ranks [0, 1, 2, 3]

program main {
  block 0 {
    var x : f32[8, 3, 9, 9] @world[0, -1, -1, -1] {is_data, stop_gradient}
    param w1 : f32[4, 3, 3, 3] {trainable}
    param w2 : f32[8, 1, 3, 3] {trainable}
    param w3 : f32[6, 4, 1, 1] {trainable}
    param b3 : f32[6] {trainable}
    var c1 : f32[8, 4, 5, 5]
    var r1 : f32[8, 4, 5, 5]
    var c2 : f32[8, 8, 3, 3]
    var r2 : f32[8, 8, 3, 3]
    var c3 : f32[8, 6, 3, 3]
    var loss : f32[]
    op 1 conv2d(Input: x, Filter: w1, Bias: [], ResidualData: []) -> (Output: c1) {strides = [2, 2], paddings = [1, 1], dilations = [1, 1], groups = 1, data_format = "AnyLayout"}
    op 2 relu(X: c1) -> (Out: r1)
    op 3 depthwise_conv2d(Input: r1, Filter: w2) -> (Output: c2) {strides = [2, 2], paddings = [0, 0], padding_algorithm = "SAME", groups = 4, data_format = "NCHW"}
    op 4 relu(X: c2) -> (Out: r2)
    op 5 conv2d(Input: r2, Filter: w3, Bias: b3) -> (Output: c3) {groups = 2, fuse_activation = "relu", use_mkldnn = true}
    op 6 mean(X: c3) -> (Out: loss)
  }
}

program startup {
  block 0 {
    param w1 : f32[4, 3, 3, 3] {trainable}
    param w2 : f32[8, 1, 3, 3] {trainable}
    param w3 : f32[6, 4, 1, 1] {trainable}
    param b3 : f32[6] {trainable}
    op 1 uniform_random() -> (Out: w1) {dtype = 5, max = 0.5, min = -0.5, seed = 1, shape = [4, 3, 3, 3]}
    op 2 uniform_random() -> (Out: w2) {dtype = 5, max = 0.5, min = -0.5, seed = 2, shape = [8, 1, 3, 3]}
    op 3 uniform_random() -> (Out: w3) {dtype = 5, max = 0.5, min = -0.5, seed = 3, shape = [6, 4, 1, 1]}
    op 4 uniform_random() -> (Out: b3) {dtype = 5, max = 0.5, min = -0.5, seed = 4, shape = [6]}
  }
}
`

// TestConvNetDataParallel trains convNet two sgd steps, serial against
// the 4 ranks: append-backward emits conv2d_grad and depthwise_conv2d_grad,
// and every loss, activation, grad and param agrees.
func TestConvNetDataParallel(t *testing.T) {
	m, err := ir.Parse("convnet.dpir", []byte(convNet))
	if err != nil {
		t.Fatal(err)
	}
	pl, err := passes.DefaultRegistry().Parse("verify,append-backward{loss=loss},append-optimizer{type=sgd},complete")
	if err != nil {
		t.Fatal(err)
	}
	if err := (&passes.Manager{}).Run(context.Background(), pl, m); err != nil {
		t.Fatal(err)
	}
	grads := map[string]int{}
	for _, op := range m.Main.Global().Ops {
		grads[op.Type]++
	}
	if grads["conv2d_grad"] != 2 || grads["depthwise_conv2d_grad"] != 1 {
		t.Fatalf("grad ops %v, want 2 conv2d_grad and 1 depthwise_conv2d_grad", grads)
	}
	rep, err := check.Run(context.Background(), m, check.Options{Steps: 2})
	if err != nil {
		t.Fatal(err)
	}
	if err := rep.Err(); err != nil {
		t.Fatal(err)
	}
	if rep.Count("param") != 4 || rep.Count("grad") != 4 || rep.Count("activation") != 5 {
		t.Errorf("compared %d params, %d grads, %d activations; want 4, 4, 5", rep.Count("param"), rep.Count("grad"), rep.Count("activation"))
	}
}
