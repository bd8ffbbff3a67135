package check_test

import (
	"testing"

	"github.com/distpass/distpass/check"
	"github.com/distpass/distpass/ir"
)

// repeatsSrc feeds one projection through the ops that repeat, stack and
// select (expand_v2 of an unsqueezed copy, tile, stack, where against a
// data mask, flatten2, cumsum), joins them and projects again: each op's
// grad carries w1's. W1 is how w1 is split.
const repeatsSrc = `module repeats
mesh world shape [2, 2] dims [dp, mp] ranks RANKS

program main {
  block 0 {
    var x : f32[4, 6] {is_data, stop_gradient}
    var mask : bool[4, 8] {is_data, stop_gradient}
    param w1 : f32[6, 8] W1 {trainable}
    param w2 : f32[64, 3] {trainable}
    var h : f32[4, 8]
    var r : f32[4, 8]
    var hu : f32[4, 1, 8]
    var he : f32[4, 2, 8]
    var hf : f32[4, 16]
    var ht : f32[4, 16]
    var hs : f32[4, 2, 8]
    var hsf : f32[4, 16]
    var hw : f32[4, 8]
    var hc : f32[4, 8]
    var j : f32[4, 64]
    var o : f32[4, 3]
    var loss : f32[]
    op 1 matmul_v2(X: x, Y: w1) -> (Out: h) {trans_x = false, trans_y = false} role forward
    op 2 relu(X: h) -> (Out: r) role forward
    op 3 unsqueeze2(X: h) -> (Out: hu) {axes = [1]} role forward
    op 4 expand_v2(X: hu) -> (Out: he) {shape = [-1, 2, -1]} role forward
    op 5 flatten2(X: he) -> (Out: hf) {axis = 1} role forward
    op 6 tile(X: r) -> (Out: ht) {repeat_times = [1, 2]} role forward
    op 7 stack(X: [h, r]) -> (Y: hs) {axis = 1} role forward
    op 8 flatten2(X: hs) -> (Out: hsf) {axis = 1} role forward
    op 9 where(Condition: mask, X: h, Y: r) -> (Out: hw) role forward
    op 10 cumsum(X: h) -> (Out: hc) {axis = 1, reverse = true} role forward
    op 11 concat(X: [hf, ht, hsf, hw, hc]) -> (Out: j) {axis = 1} role forward
    op 12 matmul_v2(X: j, Y: w2) -> (Out: o) {trans_x = false, trans_y = false} role forward
    op 13 mean(X: o) -> (Out: loss) role forward|loss
  }
}

program startup {
  block 0 {
    param w1 : f32[6, 8] {trainable}
    param w2 : f32[64, 3] {trainable}
    op 1 uniform_random() -> (Out: w1) {dtype = 5, max = 1.0, min = -1.0, seed = 11, shape = [6, 8]} role forward
    op 2 uniform_random() -> (Out: w2) {dtype = 5, max = 1.0, min = -1.0, seed = 12, shape = [64, 3]} role forward
  }
}
`

// TestRepeatsTrainDistributed: expand_v2, tile, stack, where, flatten2
// and cumsum train under data parallelism, and with the projection split
// by columns along mp (each rule keeps what it can of the split), in two
// rank orders and two dtypes, proven by check.
func TestRepeatsTrainDistributed(t *testing.T) {
	provenVariants(t, repeatsSrc, "W1", []string{"", "@world[-1, 1]"}, []string{"[0, 1, 2, 3]", "[2, 3, 1, 0]"}, func(t *testing.T, _ string, m *ir.Module, rep *check.Report) {
		seen := map[string]bool{}
		for _, op := range m.Main.Global().Ops {
			seen[op.Type] = true
		}
		for _, typ := range []string{"expand_v2_grad", "tile_grad", "stack_grad", "where_grad", "flatten2_grad", "cumsum"} {
			if !seen[typ] {
				t.Errorf("no %s in the trained program", typ)
			}
		}
		wantCompared(t, rep, "w1@GRAD", "w2@GRAD")
	})
}
