package sim

import (
	"strings"
	"testing"

	"github.com/distpass/distpass/ir"
)

// A serial program's sync_batch_norm is a world of one: its kernels are
// batch_norm's, proven against finite differences in every training
// mode batch_norm's cases cover.
func init() {
	moreGradCases = append(moreGradCases, func() []gradCase {
		var cs []gradCase
		for _, c := range batchNormGradCases() {
			if !strings.HasPrefix(c.name, "batch_norm/train") {
				continue
			}
			c.name = "sync_" + c.name
			c.fwd, c.grad = c.fwd.Clone(), c.grad.Clone()
			c.fwd.Type, c.grad.Type = "sync_batch_norm", "sync_batch_norm_grad"
			cs = append(cs, c)
		}
		return cs
	})
	inferCases = append(inferCases,
		inferCase{Name: "sync_batch_norm", Src: `program main { block 0 {
 var x : f32[2, 3, 4, 5]
 var s : f32[3]
 var b : f32[3]
 var m : f32[3]
 var v : f32[3]
 var y : f32[-1, -1, -1, -1]
 var sm : f32[-1]
 var sv : f32[-1]
 op 1 sync_batch_norm(X: x, Scale: s, Bias: b, Mean: m, Variance: v) -> (Y: y, MeanOut: m, VarianceOut: v, SavedMean: sm, SavedVariance: sv) {epsilon = 1e-05, momentum = 0.9, ring_id = 0}
}}`},
		inferCase{Name: "sync_batch_norm_grad", Src: `program main { block 0 {
 var x : f32[2, 3, 4, 5]
 var s : f32[3]
 var b : f32[3]
 var m : f32[3]
 var v : f32[3]
 var sm : f32[3]
 var sv : f32[3]
 var g : f32[2, 3, 4, 5]
 var dx : f32[-1, -1, -1, -1]
 var ds : f32[-1]
 var db : f32[-1]
 op 1 sync_batch_norm_grad(X: x, Scale: s, Bias: b, Mean: m, Variance: v, SavedMean: sm, SavedVariance: sv, Y@GRAD: g) -> (X@GRAD: dx, Scale@GRAD: ds, Bias@GRAD: db) {epsilon = 1e-05, ring_id = 0}
}}`},
	)
}

func TestSyncBatchNormRefusesGlobalStats(t *testing.T) {
	in := Args{"X": {td(sh(2, 2), 1, 2, 3, 6)}, "Mean": {td(sh(2), 0, 0)}, "Variance": {td(sh(2), 1, 1)}}
	op := bnOp(A("use_global_stats", ir.Bool(true)))
	op.Type = "sync_batch_norm"
	wantErr(t, op, in, "attr use_global_stats = true: sync_batch_norm takes batch statistics")
}
