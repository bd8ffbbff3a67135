package passes_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/distpass/distpass/check"
	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/passes"
)

// qatInference is a quantisation-aware program as Paddle exports one for
// inference: the input quantised by a stored scale (is_test) whose
// running state the file leaves out, the weight per output channel, and
// the activation's scale observed, before the classifier.
const qatInference = `module qat
program main {
  block 0 {
    persist feed : feed_list
    persist fetch : fetch_list
    var x : f64[-1, 4] lod 0
    persist xs : f64[1]
    persist w : f64[4, 6]
    persist rs : f64[1]
    var xq : f64[-1, 4]
    var wq : f64[4, 6]
    var ws : f64[6]
    var h : f64[-1, 6]
    var r : f64[-1, 6]
    var rq : f64[-1, 6]
    op 1 feed(X: feed) -> (Out: x) {col = 0}
    op 2 fake_quantize_dequantize_moving_average_abs_max(X: x, InScale: xs) -> (Out: xq, OutScale: xs) {bit_length = 8, moving_rate = 0.9, is_test = true}
    op 3 fake_channel_wise_quantize_dequantize_abs_max(X: w) -> (Out: wq, OutScale: ws) {bit_length = 8, quant_axis = 1}
    op 4 matmul_v2(X: xq, Y: wq) -> (Out: h) {trans_x = false, trans_y = false}
    op 5 relu(X: h) -> (Out: r)
    op 6 moving_average_abs_max_scale(X: r) -> (Out: rq, OutScale: rs) {moving_rate = 0.9, is_test = true}
    op 7 fetch(X: rq) -> (Out: fetch) {col = 0}
  }
}
`

// TestMakeTrainableQAT: make-trainable turns the quantisations to
// training, gives the two moving-average ops the running state the file
// left out (in place, persistable, initialised by startup), makes w a
// param and the scales state, and the straight-through gradients carry
// w's. On one rank check proves two steps, the scales' state compared.
// Split over dp the moving averages read the whole batch (completion
// gathers it) while the loss reads its rows: the gradient would be
// gathered along the dim the loss averages over, which the lowering
// refuses, naming the reshard (it once trained n times the gradient, and
// exited 0).
func TestMakeTrainableQAT(t *testing.T) {
	for _, ranks := range []int{1, 2} {
		m := parseModule(t, qatInference)
		st, err := passes.MakeTrainable(m, passes.TrainableOptions{Loss: "softmax_with_cross_entropy", Label: "label", Shape: []int64{4, 4}, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		if st.States != 4 {
			t.Errorf("%d running-state vars added, want 4 (state and accum of two ops)", st.States)
		}
		g := m.Main.Global()
		want := "op 2 fake_quantize_dequantize_moving_average_abs_max(X: x, InScale: xs, InState: xs.state, InAccum: xs.accum) -> (Out: xq, OutScale: xs, OutState: xs.state, OutAccum: xs.accum) {bit_length = 8, is_test = false, moving_rate = 0.9} role forward"
		if got := ir.PrintOp(g.Ops[0]); got != want {
			t.Errorf("got  %s\nwant %s", got, want)
		}
		if w := g.Var("w"); w.Kind != ir.KindParam || g.Var("xs.state").Kind != ir.KindPersist {
			t.Errorf("w is %s, xs.state %s: want a param and state", w.Kind, g.Var("xs.state").Kind)
		}
		pipeline := fmt.Sprintf("verify,append-backward{loss=loss},annotate-data-parallel{shape=%d,data-only=true},append-optimizer{type=sgd},complete,insert-reshards,verify", ranks)
		if err := run(t, testRegistry(t), pipeline, m); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(ir.Print(m)), "straight_through_estimator_grad") {
			t.Fatal("no straight-through gradient in the training program")
		}
		if ranks == 2 {
			// check-annotations names it without running, as the lowering does.
			if err := run(t, testRegistry(t), "check-annotations", m.Clone()); err == nil || !strings.Contains(err.Error(), "op 27 reshard: gathers rq@GRAD along mesh dim 0 (dp), over which the loss is averaged") {
				t.Errorf("check-annotations: err = %v, want the gather of rq@GRAD named", err)
			}
			_, err := check.Run(context.Background(), m, check.Options{Steps: 2})
			if err == nil || !strings.Contains(err.Error(), "gathers rq@GRAD along mesh dim 0") {
				t.Errorf("dp over 2: err = %v, want the gather of rq@GRAD refused", err)
			}
			continue
		}
		rep := checkSteps(t, m, 2)
		if rep.Count("state") < 6 || rep.Count("grad") != 1 {
			t.Errorf("compared %d state vars and %d grads, want the 6 scales and states and w's grad", rep.Count("state"), rep.Count("grad"))
		}
	}
}
