package sim

import (
	"math"
	"slices"

	"github.com/distpass/distpass/ir"
)

// bnReduce combines batch norm's per-channel partial sums over the batch
// (each row one sum, one value per channel) and the count of elements per
// channel. nil keeps this batch's own sums: Paddle's local batch norm. A
// synchronized batch norm passes one that all-reduces them over the
// data-parallel group, so that every rank sees the whole batch's.
type bnReduce func(op *ir.Op, sums [][]float64, count int64) ([][]float64, int64, error)

// bnPlan is a batch_norm op's layout: X is [outer, C, inner] with C the
// channel dim (dim 1 for NCHW, the last for NHWC).
type bnPlan struct {
	x, scale, bias  *Tensor // scale and bias nil when absent (1 and 0)
	outer, c, inner int64
	global          bool // normalise with the running statistics
	eps             float64
}

func planBN(op *ir.Op, in Args) (*bnPlan, error) {
	x, err := one(op, in, "X")
	if err != nil {
		return nil, err
	}
	if x.Rank() < 2 || x.Rank() > 5 {
		return nil, errf(op, "X %v: batch_norm takes a 2-D to 5-D input", x.Shape)
	}
	pl := &bnPlan{x: x, eps: attrFloat(op, "epsilon", 1e-5)}
	ax := 1
	switch l := attrString(op, "data_layout", "NCHW"); l {
	case "NCHW":
	case "NHWC":
		ax = x.Rank() - 1
	default:
		return nil, errf(op, "attr data_layout %q: batch_norm takes NCHW or NHWC", l)
	}
	pl.outer, pl.c, pl.inner = numel(x.Shape[:ax]), x.Shape[ax], numel(x.Shape[ax+1:])
	// trainable_statistics keeps batch statistics under is_test. Paddle's
	// grad kernel ignores it; this one uses the forward's rule, so that
	// the grad is the forward's.
	pl.global = attrBool(op, "use_global_stats", false) ||
		attrBool(op, "is_test", false) && !attrBool(op, "trainable_statistics", false)
	pl.scale, pl.bias = opt(in, "Scale"), opt(in, "Bias")
	for _, s := range [...]string{"Scale", "Bias", "Mean", "Variance", "SavedMean", "SavedVariance"} {
		if t := opt(in, s); t != nil && (t.Rank() != 1 || t.Shape[0] != pl.c) {
			return nil, errf(op, "%s %v: want [%d], one value per channel of X %v", s, t.Shape, pl.c, x.Shape)
		}
	}
	return pl, nil
}

// each calls f with the flat index and channel of every element of X.
func (pl *bnPlan) each(f func(i, c int64)) {
	i := int64(0)
	for range pl.outer {
		for c := range pl.c {
			for range pl.inner {
				f(i, c)
				i++
			}
		}
	}
}

// affine returns channel c's scale and bias.
func (pl *bnPlan) affine(c int64) (float64, float64) {
	s, b := 1.0, 0.0
	if pl.scale != nil {
		s = pl.scale.Data[c]
	}
	if pl.bias != nil {
		b = pl.bias.Data[c]
	}
	return s, b
}

// moments returns the per-channel sum and sum of squares of x, and the
// count of elements per channel: all a batch's statistics need, in a form
// that adds up over the shards of a batch.
func (pl *bnPlan) moments() (sum, sq []float64, count int64) {
	sum, sq = make([]float64, pl.c), make([]float64, pl.c)
	pl.each(func(i, c int64) {
		v := pl.x.Data[i]
		sum[c] += v
		sq[c] += v * v
	})
	return sum, sq, pl.outer * pl.inner
}

// bnStats returns the mean and the biased variance (divided by count, as
// Paddle's training statistics are) from a batch's moments.
func bnStats(sum, sq []float64, count int64) (mean, variance []float64) {
	n := float64(count)
	mean, variance = make([]float64, len(sum)), make([]float64, len(sum))
	for c := range sum {
		mean[c] = sum[c] / n
		variance[c] = max(sq[c]/n-mean[c]*mean[c], 0) // never negative from rounding
	}
	return mean, variance
}

// batchNorm computes batch_norm as Paddle's CPU kernel does. Training
// normalises by the batch statistics over every dim but the channel,
// saves the batch mean (SavedMean) and inverse std 1/sqrt(var+eps)
// (SavedVariance), and updates the running statistics:
// MeanOut = momentum*Mean + (1-momentum)*batch mean, VarianceOut likewise
// with the biased batch variance; MomentumTensor, when given, replaces the
// momentum attr. is_test and use_global_stats normalise by Mean and
// Variance, which pass through unchanged, and save them (as the mean and
// inverse std Y was normalised with). A training batch of one element per
// channel is copied, as Paddle does, with the statistics left as they are
// and zeros saved.
func batchNorm(reduce bnReduce) Kernel {
	return func(op *ir.Op, in Args) (Args, error) {
		pl, err := planBN(op, in)
		if err != nil {
			return nil, err
		}
		mean, err := one(op, in, "Mean")
		if err != nil {
			return nil, err
		}
		variance, err := one(op, in, "Variance")
		if err != nil {
			return nil, err
		}
		x := pl.x
		sdt := x.DType
		if sdt == ir.F16 || sdt == ir.BF16 {
			sdt = ir.F32 // as the inference says
		}
		y := like(x)
		meanOut, varOut := mean.Clone(), variance.Clone()
		savedMean, savedInv := Zeros(sdt, pl.c), Zeros(sdt, pl.c)
		out := Args{"Y": {y}, "MeanOut": {meanOut}, "VarianceOut": {varOut}, "SavedMean": {savedMean}, "SavedVariance": {savedInv}}
		mu, inv := make([]float64, pl.c), make([]float64, pl.c)
		if pl.global {
			for c := range pl.c {
				mu[c], inv[c] = mean.Data[c], 1/math.Sqrt(variance.Data[c]+pl.eps)
			}
		} else {
			sum, sq, count := pl.moments()
			if reduce != nil {
				sums, n, err := reduce(op, [][]float64{sum, sq}, count)
				if err != nil {
					return nil, err
				}
				sum, sq, count = sums[0], sums[1], n
			}
			if count == 1 {
				copy(y.Data, x.Data)
				return out, nil
			}
			m := attrFloat(op, "momentum", 0.9)
			if mt := opt(in, "MomentumTensor"); mt != nil {
				if mt.Numel() != 1 {
					return nil, errf(op, "MomentumTensor %v holds one value", mt.Shape)
				}
				m = mt.Data[0]
			}
			bm, bv := bnStats(sum, sq, count)
			for c := range pl.c {
				meanOut.Data[c] = m*mean.Data[c] + (1-m)*bm[c]
				varOut.Data[c] = m*variance.Data[c] + (1-m)*bv[c]
				mu[c], inv[c] = bm[c], 1/math.Sqrt(bv[c]+pl.eps)
			}
		}
		copy(savedMean.Data, mu)
		copy(savedInv.Data, inv)
		pl.each(func(i, c int64) {
			s, b := pl.affine(c)
			y.Data[i] = (x.Data[i]-mu[c])*inv[c]*s + b
		})
		return out, nil
	}
}

// batchNormGrad(X, Scale, Bias, Mean, Variance, SavedMean, SavedVariance,
// Y@GRAD) -> (X@GRAD, Scale@GRAD, Bias@GRAD). With x̂ = (x-mean)*inv:
// Bias@GRAD = Σdy, Scale@GRAD = Σdy·x̂ per channel; X@GRAD is
// scale*inv*(dy - Σdy/M - x̂·Σdy·x̂/M) over the batch's M elements per
// channel in training (the statistics depend on X), scale*inv*dy with the
// running statistics. The sums X@GRAD uses go through reduce (a
// synchronized batch norm's are the whole batch's); Scale@GRAD and
// Bias@GRAD keep this batch's own, which the data-parallel gradient
// all-reduce adds up.
func batchNormGrad(reduce bnReduce) Kernel {
	return func(op *ir.Op, in Args) (Args, error) {
		pl, err := planBN(op, in)
		if err != nil {
			return nil, err
		}
		g, err := one(op, in, "Y@GRAD")
		if err != nil {
			return nil, err
		}
		x := pl.x
		if !slices.Equal(g.Shape, x.Shape) {
			return nil, errf(op, "Y@GRAD %v: want X's shape %v", g.Shape, x.Shape)
		}
		mu, inv := make([]float64, pl.c), make([]float64, pl.c)
		if pl.global {
			mean, err := one(op, in, "Mean")
			if err != nil {
				return nil, err
			}
			variance, err := one(op, in, "Variance")
			if err != nil {
				return nil, err
			}
			for c := range pl.c {
				mu[c], inv[c] = mean.Data[c], 1/math.Sqrt(variance.Data[c]+pl.eps)
			}
		} else {
			sm, err := one(op, in, "SavedMean")
			if err != nil {
				return nil, err
			}
			si, err := one(op, in, "SavedVariance")
			if err != nil {
				return nil, err
			}
			copy(mu, sm.Data)
			copy(inv, si.Data)
		}
		dsum, dxsum := make([]float64, pl.c), make([]float64, pl.c)
		pl.each(func(i, c int64) {
			dsum[c] += g.Data[i]
			dxsum[c] += g.Data[i] * (x.Data[i] - mu[c]) * inv[c]
		})
		dx := like(x)
		switch count := pl.outer * pl.inner; {
		case pl.global:
			pl.each(func(i, c int64) {
				s, _ := pl.affine(c)
				dx.Data[i] = s * inv[c] * g.Data[i]
			})
		default:
			rs, rx := dsum, dxsum
			if reduce != nil {
				sums, n, err := reduce(op, [][]float64{dsum, dxsum}, count)
				if err != nil {
					return nil, err
				}
				rs, rx, count = sums[0], sums[1], n
			}
			if count == 1 { // the forward copied X
				copy(dx.Data, g.Data)
				clear(dsum)
				clear(dxsum)
				break
			}
			n := float64(count)
			pl.each(func(i, c int64) {
				s, _ := pl.affine(c)
				xh := (x.Data[i] - mu[c]) * inv[c]
				dx.Data[i] = s * inv[c] * (g.Data[i] - rs[c]/n - xh*rx[c]/n)
			})
		}
		out := Args{}
		if wants(op, "X@GRAD") {
			out["X@GRAD"] = []*Tensor{dx}
		}
		if wants(op, "Scale@GRAD") {
			out["Scale@GRAD"] = []*Tensor{perChannel(x, pl.scale, dxsum)}
		}
		if wants(op, "Bias@GRAD") {
			out["Bias@GRAD"] = []*Tensor{perChannel(x, pl.bias, dsum)}
		}
		return out, nil
	}
}

// perChannel returns v as a [C] tensor of p's dtype (X's when p is absent).
func perChannel(x, p *Tensor, v []float64) *Tensor {
	dt := x.DType
	if p != nil {
		dt = p.DType
	}
	t := Zeros(dt, int64(len(v)))
	copy(t.Data, v)
	return t
}

// batchNormKernels are the kernels of this file, by op type.
func batchNormKernels() Kernels {
	return Kernels{
		"batch_norm": batchNorm(nil), "batch_norm_grad": batchNormGrad(nil),
		"sync_batch_norm": syncBatchNorm(nil), "sync_batch_norm_grad": syncBatchNormGrad(nil),
	}
}
