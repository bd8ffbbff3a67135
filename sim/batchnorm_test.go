package sim

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/distpass/distpass/ir"
)

// near fails unless got and want agree to rounding (relative 1e-12).
func near(t *testing.T, what string, got, want *Tensor) {
	t.Helper()
	if got == nil {
		t.Fatalf("%s: missing", what)
	}
	if got.DType != want.DType {
		t.Fatalf("%s: dtype %s, want %s", what, got.DType, want.DType)
	}
	d, err := MaxRelDiff(got, want, 1e-12)
	if err != nil || d > 1e-12 {
		t.Errorf("%s = %v, want %v (%v)", what, got, want, err)
	}
}

func bnOp(at ...ir.Attr) *ir.Op {
	return mkOp("batch_norm", Sl("X", "x", "Scale", "s", "Bias", "b", "Mean", "m", "Variance", "v"),
		Sl("Y", "y", "MeanOut", "m", "VarianceOut", "v", "SavedMean", "sm", "SavedVariance", "sv"), at...)
}

// TestBatchNormForward checks training and inference batch norm on two
// channels by hand: {1, 3} (mean 2, variance 1) and {2, 6} (mean 4,
// variance 4), in each layout.
func TestBatchNormForward(t *testing.T) {
	eps0 := A("epsilon", ir.Float(0))
	stats := Args{"Scale": {td(sh(2), 2, 1)}, "Bias": {td(sh(2), 0, 1)}, "Mean": {td(sh(2), 0, 0)}, "Variance": {td(sh(2), 1, 1)}}
	with := func(x *Tensor) Args {
		in := Args{"X": {x}}
		for k, v := range stats {
			in[k] = v
		}
		return in
	}
	for _, c := range []struct {
		name string
		x, y *Tensor
		at   []ir.Attr
	}{
		{"2d", td(sh(2, 2), 1, 2, 3, 6), td(sh(2, 2), -2, 0, 2, 2), nil},
		{"nchw", td(sh(1, 2, 1, 2), 1, 3, 2, 6), td(sh(1, 2, 1, 2), -2, 2, 0, 2), nil},
		{"nhwc", td(sh(1, 1, 2, 2), 1, 2, 3, 6), td(sh(1, 1, 2, 2), -2, 0, 2, 2), []ir.Attr{A("data_layout", ir.String("NHWC"))}},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := run(t, bnOp(append(c.at, eps0, A("momentum", ir.Float(0.9)))...), with(c.x))
			near(t, "Y", out["Y"][0], c.y)
			near(t, "SavedMean", out["SavedMean"][0], td(sh(2), 2, 4))
			near(t, "SavedVariance", out["SavedVariance"][0], td(sh(2), 1, 0.5)) // 1/sqrt(var)
			near(t, "MeanOut", out["MeanOut"][0], td(sh(2), 0.2, 0.4))
			near(t, "VarianceOut", out["VarianceOut"][0], td(sh(2), 1.0, 1.3)) // biased: 0.9 + 0.1*4
		})
	}
	// Inference normalises by the running statistics, which stay.
	in := Args{"X": {td(sh(2, 2), 1, 2, 3, 6)}, "Mean": {td(sh(2), 1, 2)}, "Variance": {td(sh(2), 4, 0.25)}}
	for _, at := range []ir.Attr{A("is_test", ir.Bool(true)), A("use_global_stats", ir.Bool(true)), A("is_test", ir.Int(1))} {
		out := run(t, mkOp("batch_norm", Sl("X", "x", "Mean", "m", "Variance", "v"),
			Sl("Y", "y", "MeanOut", "m", "VarianceOut", "v", "SavedMean", "sm", "SavedVariance", "sv"), at, eps0), in)
		near(t, at.Name+" Y", out["Y"][0], td(sh(2, 2), 0, 0, 1, 8))
		near(t, at.Name+" MeanOut", out["MeanOut"][0], in["Mean"][0])
		near(t, at.Name+" VarianceOut", out["VarianceOut"][0], in["Variance"][0])
		near(t, at.Name+" SavedVariance", out["SavedVariance"][0], td(sh(2), 0.5, 2))
	}
	// trainable_statistics keeps the batch statistics under is_test.
	out := run(t, bnOp(A("is_test", ir.Bool(true)), A("trainable_statistics", ir.Bool(true)), eps0), with(td(sh(2, 2), 1, 2, 3, 6)))
	near(t, "trainable_statistics Y", out["Y"][0], td(sh(2, 2), -2, 0, 2, 2))
	// One element per channel: Paddle copies X and keeps the statistics.
	out = run(t, bnOp(eps0), with(td(sh(1, 2), 5, 7)))
	near(t, "one element Y", out["Y"][0], td(sh(1, 2), 5, 7))
	near(t, "one element MeanOut", out["MeanOut"][0], stats["Mean"][0])
}

// TestBatchNormRunningStats runs training steps that feed MeanOut and
// VarianceOut back, as a program does in place, and checks them against
// Paddle's update computed independently: running = momentum*running +
// (1-momentum)*batch, with the batch variance divided by N*H*W (not
// N*H*W-1); MomentumTensor replaces the momentum attr.
func TestBatchNormRunningStats(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	const n, c, hw = 3, 2, 4
	for _, mt := range []bool{false, true} {
		m := 0.9
		op := bnOp(A("momentum", ir.Float(m)), A("epsilon", ir.Float(1e-5)))
		var mtT *Tensor
		if mt {
			m = 0.7
			op.Inputs = append(op.Inputs, S("MomentumTensor", "mt"))
			mtT = td(sh(1), m)
		}
		mean, variance := td(sh(c), 0.5, -0.5), td(sh(c), 2, 3)
		want := [2][]float64{{0.5, -0.5}, {2, 3}}
		for step := range 3 {
			x := randT(r, -2, 2, n, c, 2, 2)
			in := Args{"X": {x}, "Scale": {td(sh(c), 1, 1)}, "Bias": {td(sh(c), 0, 0)}, "Mean": {mean}, "Variance": {variance}}
			if mtT != nil {
				in["MomentumTensor"] = []*Tensor{mtT}
			}
			out := run(t, op, in)
			for ch := range c {
				var vals []float64
				for i := range n {
					for j := range hw {
						vals = append(vals, x.Data[(i*c+ch)*hw+j])
					}
				}
				bm := 0.0
				for _, v := range vals {
					bm += v
				}
				bm /= float64(len(vals))
				bv := 0.0
				for _, v := range vals {
					bv += (v - bm) * (v - bm)
				}
				bv /= float64(len(vals))
				want[0][ch] = m*want[0][ch] + (1-m)*bm
				want[1][ch] = m*want[1][ch] + (1-m)*bv
				if got := out["SavedVariance"][0].Data[ch]; math.Abs(got-1/math.Sqrt(bv+1e-5)) > 1e-12 {
					t.Errorf("step %d channel %d: SavedVariance %v, want the inverse std %v", step, ch, got, 1/math.Sqrt(bv+1e-5))
				}
			}
			mean, variance = out["MeanOut"][0], out["VarianceOut"][0]
			near(t, "MeanOut", mean, td(sh(c), want[0]...))
			near(t, "VarianceOut", variance, td(sh(c), want[1]...))
		}
	}
}

// TestBatchNormGradIsTest checks the inference gradient by hand:
// X@GRAD = scale/sqrt(var+eps)*dy, Scale@GRAD = Σdy·x̂, Bias@GRAD = Σdy.
func TestBatchNormGradIsTest(t *testing.T) {
	op := mkOp("batch_norm_grad", Sl("X", "x", "Scale", "s", "Bias", "b", "Mean", "m", "Variance", "v", "SavedMean", "sm", "SavedVariance", "sv", "Y@GRAD", "g"),
		Sl("X@GRAD", "dx", "Scale@GRAD", "ds", "Bias@GRAD", "db"), A("is_test", ir.Bool(true)), A("epsilon", ir.Float(0)))
	junk := td(sh(2), 99, 99) // saved statistics are not read under is_test
	out := run(t, op, Args{"X": {td(sh(2, 2), 1, 2, 3, 6)}, "Scale": {td(sh(2), 2, 1)}, "Bias": {td(sh(2), 0, 0)},
		"Mean": {td(sh(2), 1, 2)}, "Variance": {td(sh(2), 4, 0.25)}, "SavedMean": {junk}, "SavedVariance": {junk},
		"Y@GRAD": {td(sh(2, 2), 1, 1, 2, 3)}})
	near(t, "X@GRAD", out["X@GRAD"][0], td(sh(2, 2), 1, 2, 2, 6))
	near(t, "Scale@GRAD", out["Scale@GRAD"][0], td(sh(2), 2, 24)) // x̂ = (0, 1), (0, 8)
	near(t, "Bias@GRAD", out["Bias@GRAD"][0], td(sh(2), 3, 4))
}

func TestBatchNormRefuses(t *testing.T) {
	in := Args{"X": {td(sh(2, 2), 1, 2, 3, 6)}, "Scale": {td(sh(2), 1, 1)}, "Bias": {td(sh(2), 0, 0)}, "Mean": {td(sh(2), 0, 0)}, "Variance": {td(sh(2), 1, 1)}}
	wantErr(t, bnOp(A("data_layout", ir.String("NCDHW"))), in, `attr data_layout "NCDHW"`)
	bad := Args{"X": {td(sh(2), 1, 2)}, "Mean": in["Mean"], "Variance": in["Variance"]}
	wantErr(t, bnOp(), bad, "2-D to 5-D")
	bad = Args{"X": in["X"], "Scale": {td(sh(3), 1, 1, 1)}, "Bias": in["Bias"], "Mean": in["Mean"], "Variance": in["Variance"]}
	wantErr(t, bnOp(), bad, "Scale [3]: want [2]")
	op := bnOp()
	op.Inputs = append(op.Inputs, S("MomentumTensor", "mt"))
	in["MomentumTensor"] = []*Tensor{td(sh(2), 0.1, 0.2)}
	wantErr(t, op, in, "MomentumTensor [2] holds one value")
}

// TestBatchNormReduceSeam splits a batch in two and gives each half's
// kernels a reduce that adds the other half's sums, as a synchronized
// batch norm's all-reduce would: each half's Y, running statistics and
// X@GRAD are then the whole batch's, and the halves' Scale@GRAD and
// Bias@GRAD add up to the whole batch's.
func TestBatchNormReduceSeam(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 9))
	x, g := randT(r, -1, 1, 4, 2, 2, 3), randT(r, -1, 1, 4, 2, 2, 3)
	half := func(t0 *Tensor, i int64) *Tensor {
		n := int64(len(t0.Data)) / 2
		return MustFromData(ir.F64, []int64{2, 2, 2, 3}, t0.Data[i*n:(i+1)*n])
	}
	stats := func(x *Tensor) Args {
		return Args{"X": {x}, "Scale": {td(sh(2), 1.5, 0.5)}, "Bias": {td(sh(2), 0.1, -0.2)}, "Mean": {td(sh(2), 0, 1)}, "Variance": {td(sh(2), 1, 2)}}
	}
	op := bnOp(A("epsilon", ir.Float(1e-5)), A("momentum", ir.Float(0.9)))
	gop := mkOp("batch_norm_grad", Sl("X", "x", "Scale", "s", "Bias", "b", "Mean", "m", "Variance", "v", "SavedMean", "sm", "SavedVariance", "sv", "Y@GRAD", "g"),
		Sl("X@GRAD", "dx", "Scale@GRAD", "ds", "Bias@GRAD", "db"), op.Attrs.Clone()...)
	// own[k][i] holds half i's own sums of kernel k (0 forward, 1 grad).
	var own [2][2][][]float64
	capture := func(k, i int) bnReduce {
		return func(_ *ir.Op, sums [][]float64, n int64) ([][]float64, int64, error) {
			own[k][i] = sums
			return sums, n, nil
		}
	}
	plus := func(k, i int) bnReduce {
		return func(_ *ir.Op, sums [][]float64, n int64) ([][]float64, int64, error) {
			out := make([][]float64, len(sums))
			for j := range sums {
				out[j] = make([]float64, len(sums[j]))
				for c := range sums[j] {
					out[j][c] = sums[j][c] + own[k][1-i][j][c]
				}
			}
			return out, 2 * n, nil
		}
	}
	whole := stats(x)
	want, err := batchNorm(nil)(op, whole)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range want {
		whole[k] = v
	}
	whole["Mean"], whole["Variance"] = stats(x)["Mean"], stats(x)["Variance"]
	whole["Y@GRAD"] = []*Tensor{g}
	wantG, err := batchNormGrad(nil)(gop, whole)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if _, err := batchNorm(capture(0, i))(op, stats(half(x, int64(i)))); err != nil {
			t.Fatal(err)
		}
	}
	var dScale, dBias [2]float64
	var ins [2]Args
	for i := range 2 {
		in := stats(half(x, int64(i)))
		out, err := batchNorm(plus(0, i))(op, in)
		if err != nil {
			t.Fatal(err)
		}
		near(t, "Y half", out["Y"][0], half(want["Y"][0], int64(i)))
		near(t, "MeanOut", out["MeanOut"][0], want["MeanOut"][0])
		near(t, "VarianceOut", out["VarianceOut"][0], want["VarianceOut"][0])
		for k, v := range out {
			if k != "MeanOut" && k != "VarianceOut" {
				in[k] = v
			}
		}
		in["Y@GRAD"] = []*Tensor{half(g, int64(i))}
		if _, err := batchNormGrad(capture(1, i))(gop, in); err != nil {
			t.Fatal(err)
		}
		ins[i] = in
	}
	for i, in := range ins {
		gout, err := batchNormGrad(plus(1, i))(gop, in)
		if err != nil {
			t.Fatal(err)
		}
		near(t, "X@GRAD half", gout["X@GRAD"][0], half(wantG["X@GRAD"][0], int64(i)))
		for c := range 2 {
			dScale[c] += gout["Scale@GRAD"][0].Data[c]
			dBias[c] += gout["Bias@GRAD"][0].Data[c]
		}
	}
	near(t, "Scale@GRAD", td(sh(2), dScale[:]...), wantG["Scale@GRAD"][0])
	near(t, "Bias@GRAD", td(sh(2), dBias[:]...), wantG["Bias@GRAD"][0])
}
