package check_test

import (
	"context"
	"strings"
	"testing"

	"github.com/distpass/distpass/passes"
)

// batchSoftmaxSrc reads the batch whole in the middle of data-parallel
// ops: softmax over axis 0 (completion gathers h), then the rows of each
// rank's batch again (a second data input multiplies them). In the
// backward the gradient is gathered along dp, the dim the loss averages
// over, and split again before w's grad: each rank's part keeps the
// factor the average takes back.
const batchSoftmaxSrc = `module batchsoftmax
mesh world shape [2] dims [dp] ranks [0, 1]

program main {
  block 0 {
    var x : f32[4, 6] {is_data, stop_gradient}
    var y : f32[4, 8] {is_data, stop_gradient}
    param w : f32[6, 8] {trainable}
    var h : f32[4, 8]
    var s : f32[4, 8]
    var p : f32[4, 8]
    var loss : f32[]
    op 1 matmul_v2(X: x, Y: w) -> (Out: h) {trans_x = false, trans_y = false} role forward
    op 2 softmax(X: h) -> (Out: s) {axis = 0} role forward
    op 3 elementwise_mul(X: s, Y: y) -> (Out: p) {axis = -1} role forward
    op 4 mean(X: p) -> (Out: loss) role forward|loss
  }
}

program startup {
  block 0 {
    param w : f32[6, 8] {trainable}
    op 1 uniform_random() -> (Out: w) {dtype = 5, max = 1.0, min = -1.0, seed = 21, shape = [6, 8]} role forward
  }
}
`

// TestGatheredGradSplitAgainTrains: a gradient gathered along the loss's
// averaging dim and split again before the param's grad is lowered, and
// proven by check; the same gather feeding w's grad whole is refused
// (passes' TestMakeTrainableQAT), as it would give n times the gradient.
func TestGatheredGradSplitAgainTrains(t *testing.T) {
	for _, f64 := range []bool{false, true} {
		m, rep := provenDataParallel(t, batchSoftmaxSrc, f64)
		gathers := 0
		for _, op := range m.Main.Global().Ops {
			if op.Type == "reshard" && op.Role.IsBackward() && strings.Contains(op.Input("X")[0], "@GRAD") {
				gathers++
			}
		}
		if gathers == 0 {
			t.Fatal("no backward reshard of a gradient: the case lost its premise")
		}
		if rep.Count("grad") != 1 {
			t.Errorf("compared %d grads, want w's", rep.Count("grad"))
		}
		if err := (&passes.Manager{}).Run(context.Background(), passes.DefaultRegistry().MustParse("check-annotations"), m); err != nil {
			t.Errorf("check-annotations refuses a gather split again before w's grad: %v", err)
		}
	}
}
