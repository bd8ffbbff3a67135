package check_test

import (
	"strings"
	"testing"

	"github.com/distpass/distpass/check"
	"github.com/distpass/distpass/ir"
)

// qkvSrc is attention's projection cut into q, k and v by slice, two of
// them joined again by concat, the product given a dim by unsqueeze2
// (as attention's masks are): the grads of slice, concat and unsqueeze2
// carry the weights' grads. W1 is how w1 is split.
const qkvSrc = `module qkv
mesh world shape [2, 2] dims [dp, mp] ranks RANKS

program main {
  block 0 {
    var x : f32[4, 6] {is_data, stop_gradient}
    param w1 : f32[6, 12] W1 {trainable}
    param w2 : f32[8, 4] {trainable}
    var h : f32[4, 12]
    var q : f32[4, 4]
    var k : f32[4, 4]
    var v : f32[4, 4]
    var qv : f32[4, 8]
    var o : f32[4, 4]
    var s : f32[4, 4]
    var u : f32[4, 1, 4]
    var loss : f32[]
    op 1 matmul_v2(X: x, Y: w1) -> (Out: h) {trans_x = false, trans_y = false} role forward
    op 2 slice(Input: h) -> (Out: q) {axes = [1], starts = [0], ends = [4]} role forward
    op 3 slice(Input: h) -> (Out: k) {axes = [1], starts = [4], ends = [8]} role forward
    op 4 slice(Input: h) -> (Out: v) {axes = [1], starts = [-4], ends = [100]} role forward
    op 5 concat(X: [q, v]) -> (Out: qv) {axis = 1} role forward
    op 6 matmul_v2(X: qv, Y: w2) -> (Out: o) {trans_x = false, trans_y = false} role forward
    op 7 elementwise_mul(X: o, Y: k) -> (Out: s) {axis = -1} role forward
    op 8 unsqueeze2(X: s) -> (Out: u) {axes = [1]} role forward
    op 9 mean(X: u) -> (Out: loss) role forward|loss
  }
}

program startup {
  block 0 {
    param w1 : f32[6, 12] {trainable}
    param w2 : f32[8, 4] {trainable}
    op 1 uniform_random() -> (Out: w1) {dtype = 5, max = 1.0, min = -1.0, seed = 5, shape = [6, 12]} role forward
    op 2 uniform_random() -> (Out: w2) {dtype = 5, max = 1.0, min = -1.0, seed = 6, shape = [8, 4]} role forward
  }
}
`

// TestSliceConcatTrainDistributed: slice, concat and unsqueeze2 train under data
// parallelism, and with the projection split by columns along mp (the
// slices then read it whole: completion gathers it), in two rank orders
// and two dtypes, proven by check.
func TestSliceConcatTrainDistributed(t *testing.T) {
	provenVariants(t, qkvSrc, "W1", []string{"", "@world[-1, 1]"}, []string{"[0, 1, 2, 3]", "[3, 1, 0, 2]"}, func(t *testing.T, w1 string, m *ir.Module, rep *check.Report) {
		if d := m.Main.Global().Var("w1").Dist; w1 != "" && (d == nil || d.String() != "@world[-1, 1]") {
			t.Fatalf("w1 is %v after completion: want it split by columns, the premise of the case", d)
		}
		wantCompared(t, rep, "w1@GRAD", "w2@GRAD")
	})
}

// TestSplitTrainsDistributed: attention's q/k/v cut by one split
// instead of three slices, v unused by the loss (its gradient zeros):
// split's grad is the concat of its Out@GRADs, trained under dp and with
// the projection split along mp, in two rank orders and dtypes, proven by
// check.
func TestSplitTrainsDistributed(t *testing.T) {
	src := strings.NewReplacer(
		"    op 2 slice(Input: h) -> (Out: q) {axes = [1], starts = [0], ends = [4]} role forward\n", "",
		"    op 3 slice(Input: h) -> (Out: k) {axes = [1], starts = [4], ends = [8]} role forward\n", "",
		"op 4 slice(Input: h) -> (Out: v) {axes = [1], starts = [-4], ends = [100]}", "op 4 split(X: h) -> (Out: [q, k, v]) {axis = 1, num = 3}",
		"concat(X: [q, v])", "concat(X: [q, q])",
	).Replace(qkvSrc)
	if !strings.Contains(src, "split(") || strings.Contains(src, "slice(") || !strings.Contains(src, "[q, q]") {
		t.Fatal("the split source was not made from qkvSrc")
	}
	provenVariants(t, src, "W1", []string{"", "@world[-1, 1]"}, []string{"[0, 1, 2, 3]", "[3, 1, 0, 2]"}, func(t *testing.T, _ string, m *ir.Module, rep *check.Report) {
		var zeros, joins int
		for _, op := range m.Main.Global().Ops {
			switch {
			case op.Type == "fill_any_like" && op.Output("Out")[0] == "v@GRAD":
				zeros++
			case op.Type == "concat" && op.Output("Out")[0] == "h@GRAD":
				joins++
			}
		}
		if zeros != 1 || joins != 1 {
			t.Fatalf("v@GRAD by fill_any_like ×%d, h@GRAD by concat ×%d: want one each", zeros, joins)
		}
		wantCompared(t, rep, "w1@GRAD", "w2@GRAD")
	})
}

// mixedConcatSrc joins a constant (data, no gradient) and an activation:
// concat's grad slot holds one grad for each input, the constant's read
// by no one.
const mixedConcatSrc = `module mixed
mesh world shape [2] dims [dp] ranks RANKS

program main {
  block 0 {
    var x : f32[4, 6] {is_data, stop_gradient}
    var c : f32[4, 2] {is_data, stop_gradient}
    param w : f32[6, 2] {trainable}
    param w2 : f32[4, 3] {trainable}
    var h : f32[4, 2]
    var j : f32[4, 4]
    var o : f32[4, 3]
    var loss : f32[]
    op 1 matmul_v2(X: x, Y: w) -> (Out: h) {trans_x = false, trans_y = false} role forward
    op 2 concat(X: [c, h]) -> (Out: j) {axis = 1} role forward
    op 3 matmul_v2(X: j, Y: w2) -> (Out: o) {trans_x = false, trans_y = false} role forward
    op 4 mean(X: o) -> (Out: loss) role forward|loss
  }
}

program startup {
  block 0 {
    param w : f32[6, 2] {trainable}
    param w2 : f32[4, 3] {trainable}
    op 1 uniform_random() -> (Out: w) {dtype = 5, max = 1.0, min = -1.0, seed = 7, shape = [6, 2]} role forward
    op 2 uniform_random() -> (Out: w2) {dtype = 5, max = 1.0, min = -1.0, seed = 8, shape = [4, 3]} role forward
  }
}
`

// TestConcatOfAConstantTrains: append-backward gives concat's grad a
// throwaway grad for the constant (it once refused: "slot X has args
// with and without gradients"), and the step is proven by check.
func TestConcatOfAConstantTrains(t *testing.T) {
	for _, ranks := range []string{"[0, 1]", "[1, 0]"} {
		for _, f64 := range []bool{false, true} {
			m, rep := provenDataParallel(t, strings.Replace(mixedConcatSrc, "RANKS", ranks, 1), f64)
			if m.Main.Global().Var("c@GRAD@UNUSED") == nil {
				t.Fatal("no c@GRAD@UNUSED: concat's grad did not take the constant's grad apart")
			}
			if m.Main.Global().Var("c@GRAD") != nil {
				t.Error("c@GRAD declared: the constant got a gradient")
			}
			if rep.Count("grad") < 2 {
				t.Errorf("check compared %d grads, want w@GRAD and w2@GRAD", rep.Count("grad"))
			}
		}
	}
}
