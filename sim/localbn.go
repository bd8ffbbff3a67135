package sim

import (
	"github.com/distpass/distpass/ir"
)

// LocalBatchNorm returns the kernels of batch_norm and batch_norm_grad
// over a batch cut along dim 0 into groups equal blocks, each normalised
// by its own statistics: what a data-parallel program's local batch norm
// (Paddle's default) computes, its rank r holding block r, written as
// one serial op. Block r of Y and of X@GRAD is then the serial program
// run on block r of the batch; Scale@GRAD and Bias@GRAD are the blocks'
// sums, as the data-parallel grad sync makes them; MeanOut, VarianceOut,
// SavedMean and SavedVariance are the blocks' averages (each rank holds
// its own block's, so they are no serial value). The grad recomputes
// each block's statistics from X, which is what the forward saved. The
// running-statistics modes need no statistics and are batch_norm's.
func LocalBatchNorm(groups int64) (fwd, grad Kernel) {
	return rounded(localBN(groups, false)), rounded(localBN(groups, true))
}

func localBN(groups int64, isGrad bool) Kernel {
	whole, wholeGrad := batchNorm(nil), batchNormGrad(nil)
	return func(op *ir.Op, in Args) (Args, error) {
		pl, err := planBN(op, in)
		if err != nil {
			return nil, err
		}
		k := whole
		if isGrad {
			k = wholeGrad
		}
		if pl.global || groups == 1 {
			return k(op, in)
		}
		x := pl.x
		if groups < 1 || x.Shape[0]%groups != 0 {
			return nil, errf(op, "X %v: a batch of %d does not cut into %d blocks", x.Shape, x.Shape[0], groups)
		}
		rows := x.Shape[0] / groups
		batched := []string{"X"}
		if isGrad {
			batched = append(batched, "Y@GRAD")
		}
		parts := map[string][]*Tensor{}
		for i := range groups {
			gin := Args{}
			for s, ts := range in {
				gin[s] = ts
			}
			for _, s := range batched {
				t, err := one(op, in, s)
				if err != nil {
					return nil, err
				}
				if gin[s], err = sliceArgs(t, i*rows, (i+1)*rows); err != nil {
					return nil, errf(op, "%s: %v", s, err)
				}
			}
			if isGrad {
				// This block's saved statistics, as its forward saves them.
				f, err := whole(op, gin)
				if err != nil {
					return nil, err
				}
				gin["SavedMean"], gin["SavedVariance"] = f["SavedMean"], f["SavedVariance"]
			}
			out, err := k(op, gin)
			if err != nil {
				return nil, err
			}
			for s, ts := range out {
				parts[s] = append(parts[s], ts[0])
			}
		}
		out := Args{}
		for s, ts := range parts {
			switch s {
			case "Y", "X@GRAD":
				t, err := Concat(0, ts...)
				if err != nil {
					return nil, errf(op, "%s: %v", s, err)
				}
				out[s] = []*Tensor{t}
			default: // per channel: the grads add up, the statistics average
				t := ts[0].Clone()
				for _, p := range ts[1:] {
					for c, v := range p.Data {
						t.Data[c] += v
					}
				}
				if s != "Scale@GRAD" && s != "Bias@GRAD" {
					for c := range t.Data {
						t.Data[c] /= float64(groups)
					}
				}
				out[s] = []*Tensor{t}
			}
		}
		return out, nil
	}
}

func sliceArgs(t *Tensor, start, end int64) ([]*Tensor, error) {
	s, err := t.Slice(0, start, end)
	if err != nil {
		return nil, err
	}
	return []*Tensor{s}, nil
}
