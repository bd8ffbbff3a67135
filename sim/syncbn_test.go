package sim

import (
	"math/rand/v2"
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

// LocalBatchNorm cuts the batch into blocks, each normalised and
// differentiated by batch_norm alone: Y and X@GRAD are the blocks',
// Scale@GRAD and Bias@GRAD their sums, the running statistics their
// averages. A batch that does not cut evenly is refused.
func TestLocalBatchNorm(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 5))
	x, g := randT(r, -1, 1, 6, 2, 2, 2), randT(r, -1, 1, 6, 2, 2, 2)
	stats := func(x *Tensor) Args {
		return Args{"X": {x}, "Scale": {td(sh(2), 1.5, 0.5)}, "Bias": {td(sh(2), 0.1, -0.2)}, "Mean": {td(sh(2), 0, 1)}, "Variance": {td(sh(2), 1, 2)}}
	}
	op := bnOp(A("epsilon", ir.Float(1e-5)), A("momentum", ir.Float(0.9)))
	gop := mkOp("batch_norm_grad", Sl("X", "x", "Scale", "s", "Bias", "b", "Mean", "m", "Variance", "v", "SavedMean", "sm", "SavedVariance", "sv", "Y@GRAD", "g"),
		Sl("X@GRAD", "dx", "Scale@GRAD", "ds", "Bias@GRAD", "db"), op.Attrs.Clone()...)
	fwd, grad := LocalBatchNorm(3)
	out, err := fwd(op, stats(x))
	if err != nil {
		t.Fatal(err)
	}
	gin := stats(x)
	gin["SavedMean"], gin["SavedVariance"], gin["Y@GRAD"] = out["SavedMean"], out["SavedVariance"], []*Tensor{g}
	gout, err := grad(gop, gin)
	if err != nil {
		t.Fatal(err)
	}
	block := func(t0 *Tensor, i int64) *Tensor {
		b, err := t0.Slice(0, 2*i, 2*i+2)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	var dScale, dBias, meanOut [2]float64
	for i := range int64(3) {
		want, err := batchNorm(nil)(op, stats(block(x, i)))
		if err != nil {
			t.Fatal(err)
		}
		near(t, "Y block", block(out["Y"][0], i), want["Y"][0])
		in := stats(block(x, i))
		in["SavedMean"], in["SavedVariance"], in["Y@GRAD"] = want["SavedMean"], want["SavedVariance"], []*Tensor{block(g, i)}
		wantG, err := batchNormGrad(nil)(gop, in)
		if err != nil {
			t.Fatal(err)
		}
		near(t, "X@GRAD block", block(gout["X@GRAD"][0], i), wantG["X@GRAD"][0])
		for c := range 2 {
			dScale[c] += wantG["Scale@GRAD"][0].Data[c]
			dBias[c] += wantG["Bias@GRAD"][0].Data[c]
			meanOut[c] += want["MeanOut"][0].Data[c] / 3
		}
	}
	near(t, "Scale@GRAD", gout["Scale@GRAD"][0], td(sh(2), dScale[:]...))
	near(t, "Bias@GRAD", gout["Bias@GRAD"][0], td(sh(2), dBias[:]...))
	near(t, "MeanOut", out["MeanOut"][0], td(sh(2), meanOut[:]...))
	// The whole batch's statistics are not the blocks': Y differs.
	whole, err := batchNorm(nil)(op, stats(x))
	if err != nil {
		t.Fatal(err)
	}
	if d, _ := MaxRelDiff(whole["Y"][0], out["Y"][0], 1); d < 1e-3 {
		t.Errorf("Y of blocks and of the whole batch differ by %g only", d)
	}
	if _, err := fwd(op, stats(randT(r, -1, 1, 4, 2, 2, 2))); err == nil || !strings.Contains(err.Error(), "a batch of 4 does not cut into 3 blocks") {
		t.Errorf("err = %v", err)
	}
}

// A rank's program runs its sync_batch_norm only in an SPMD run, where
// the other ranks' sums come; a serial program's is a world of one.
func TestSyncBatchNormOutsideSPMD(t *testing.T) {
	src := `program main rank 1 { block 0 {
 var x : f64[2, 2]
 var m : f64[2]
 var v : f64[2]
 var y : f64[2, 2]
 var sm : f64[2]
 var sv : f64[2]
 op 1 sync_batch_norm(X: x, Mean: m, Variance: v) -> (Y: y, MeanOut: m, VarianceOut: v, SavedMean: sm, SavedVariance: sv) {ring_id = 0}
}}`
	feed := func() Scope {
		return Scope{"x": td(sh(2, 2), 1, 2, 3, 6), "m": td(sh(2), 0, 0), "v": td(sh(2), 1, 1)}
	}
	m, err := ir.ParseString("t", src)
	if err != nil {
		t.Fatal(err)
	}
	err = NewInterp(nil).RunProgram(m.Main, feed())
	if err == nil || !strings.Contains(err.Error(), "sync_batch_norm of rank 1's program outside an SPMD run") {
		t.Errorf("err = %v", err)
	}
	m, err = ir.ParseString("t", strings.Replace(src, " rank 1", "", 1))
	if err != nil {
		t.Fatal(err)
	}
	sc := feed()
	if err := NewInterp(nil).RunProgram(m.Main, sc); err != nil {
		t.Fatal(err)
	}
	// Channel 0 holds 1 and 3: mean 2, variance 1.
	near(t, "SavedMean", sc["sm"], td(sh(2), 2, 4))
}
