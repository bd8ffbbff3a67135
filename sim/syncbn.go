package sim

import (
	"fmt"

	"github.com/distpass/distpass/ir"
)

// syncBatchNorm and syncBatchNormGrad are sync_batch_norm's kernels:
// batch_norm's, with reduce combining the per-channel sums over the
// op's group. DefaultKernels passes nil, a world of one, which is what a
// serial program's sync_batch_norm is; the SPMD runner passes
// rankRun.syncBNReduce. use_global_stats is refused, as Paddle's kernel
// refuses it: batch_norm normalises by running statistics without any
// communication.
func syncBatchNorm(reduce bnReduce) Kernel { return refuseGlobalStats(batchNorm(reduce)) }

func syncBatchNormGrad(reduce bnReduce) Kernel { return refuseGlobalStats(batchNormGrad(reduce)) }

func refuseGlobalStats(k Kernel) Kernel {
	return func(op *ir.Op, in Args) (Args, error) {
		if attrBool(op, "use_global_stats", false) {
			return nil, errf(op, "attr use_global_stats = true: sync_batch_norm takes batch statistics (batch_norm normalises by the running ones)")
		}
		return k(op, in)
	}
}

// bnSums is one member's contribution to a sync_batch_norm all-reduce.
type bnSums struct {
	sums  [][]float64
	count int64
}

// syncBNReduce all-reduces a sync_batch_norm's (or its grad's) sums and
// element counts over the group of its ring_id (0, the world, when it
// has none, as Paddle's op uses the default communicator). The members
// add in group order, so that every rank computes the same bits.
func (r *rankRun) syncBNReduce(op *ir.Op, sums [][]float64, count int64) ([][]float64, int64, error) {
	ring := attrInt(op, "ring_id", 0)
	g := r.m.Group(int(ring))
	if g == nil {
		return nil, 0, fmt.Errorf("%s: ring_id %d is not in the group table", op, ring)
	}
	width := 0
	if len(sums) > 0 {
		width = len(sums[0])
	}
	call := &Call{Rank: r.rank, Group: g.Ranks, OpID: op.ID, OpType: op.Type,
		Kind:      fmt.Sprintf("%s/%d", op.Type, ring),
		Signature: fmt.Sprintf("%d sums of %d channels", len(sums), width),
		Payload:   bnSums{sums, count}, Origin: origin(op)}
	got, err := r.comm.Meet(call)
	if err != nil {
		return nil, 0, err
	}
	out := make([][]float64, len(sums))
	for j := range out {
		out[j] = make([]float64, width)
	}
	var n int64
	for _, p := range got {
		m := p.(bnSums)
		for j := range out {
			for c := range out[j] {
				out[j][c] += m.sums[j][c]
			}
		}
		n += m.count
	}
	return out, n, nil
}
