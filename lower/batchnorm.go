package lower

import (
	"fmt"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/ops"
)

// SyncBatchNorm is impl 0 "sync_batch_norm" of batch_norm: a training
// batch norm whose X has its batch dim split over a mesh dim becomes
// Paddle's sync_batch_norm with ring_id that dim's group, so each rank
// normalises its shard by the whole batch's statistics (the per-channel
// sums all-reduced), as the serial program does; its grad becomes
// sync_batch_norm_grad, whose X@GRAD reads the all-reduced Σdy and
// Σdy·x̂. Scale@GRAD and Bias@GRAD stay each rank's own and get the
// data-parallel grad sync, as the default impl's. The default impl
// instead keeps batch_norm as it is: Paddle's local batch norm, each
// rank's statistics its shard's.
func SyncBatchNorm() *Impl {
	return &Impl{
		Name:       "sync_batch_norm",
		Doc:        "sync_batch_norm over the batch's mesh dim (statistics all-reduced); data-parallel grad allreduce",
		Compatible: syncBNCompatible,
		Forward: func(ctx *Lowering, op *ir.Op) error {
			if err := toSyncBN(ctx, op, "sync_batch_norm"); err != nil {
				return err
			}
			return SyncParams(ctx, op)
		},
		Backward: func(ctx *Lowering, op *ir.Op) error {
			if op.Type == "batch_norm_grad" {
				if err := toSyncBN(ctx, op, "sync_batch_norm_grad"); err != nil {
					return err
				}
			} else {
				ctx.Keep(op)
			}
			return SyncGrads(ctx, op)
		},
	}
}

// syncBNCompatible holds the op to its sharding rule (ruleFit: Y split
// as X, the spatial dims replicated, the per-channel tensors split as
// the channels, nothing partial) and to the impl's own constraint,
// syncBNFits.
func syncBNCompatible(ctx *Lowering, op *ir.Op) error {
	if err := syncBNFits(ctx, op); err != nil {
		return err
	}
	return ruleFit(ctx, op, ruleOpts{impl: "sync_batch_norm", carries: true, spell: true})
}

// syncBNFits: a training batch_norm (neither is_test nor
// use_global_stats: those normalise by the running statistics, which
// need no communication and which Paddle's sync_batch_norm refuses),
// X's batch dim split over a mesh dim of size > 1, and its channels
// whole (the default impl's grad sync of Scale and Bias, which this impl
// shares, is what the check of conv-bn-relu proves; a channel split is
// the rule's but no test proves it here).
func syncBNFits(ctx *Lowering, op *ir.Op) error {
	for _, a := range [...]string{"is_test", "use_global_stats"} {
		if ops.AttrOn(op, a) {
			return fmt.Errorf("%s: sync_batch_norm synchronises batch statistics; with %s = true the op normalises by its running ones (the default impl lowers it)", op, a)
		}
	}
	if _, err := bnBatchAxis(ctx, op); err != nil {
		return err
	}
	x, m, err := argMapping(ctx, op, "X", true)
	if err != nil {
		return err
	}
	c := 1
	if l, _ := op.Attrs.Get("data_layout").(ir.String); l == "NHWC" || l == "NDHWC" || l == "NLC" {
		c = len(m) - 1
	}
	if c < len(m) && m[c] != -1 {
		return fmt.Errorf("%s: sync_batch_norm needs X's channels (dim %d) replicated; X %s has dims_mapping %s", op, c, x, ir.FormatInts(m))
	}
	return nil
}

// bnBatchAxis returns the mesh dim X's batch dim is split over, or why
// there is none.
func bnBatchAxis(ctx *Lowering, op *ir.Op) (int, error) {
	x, m, err := argMapping(ctx, op, "X", true)
	if err != nil {
		return 0, err
	}
	if len(m) == 0 || m[0] < 0 || ctx.Mesh().Shape[m[0]] <= 1 {
		return 0, fmt.Errorf("%s: sync_batch_norm needs X's batch dim split over a mesh dim of size > 1; X %s has dims_mapping %s (the default impl lowers a whole batch)",
			op, x, ir.FormatInts(m))
	}
	return m[0], nil
}

// toSyncBN keeps op as typ, with ring_id the group of X's batch dim.
func toSyncBN(ctx *Lowering, op *ir.Op, typ string) error {
	axis, err := bnBatchAxis(ctx, op)
	if err != nil {
		return err
	}
	id, _, err := group(ctx, op, axis)
	if err != nil {
		return err
	}
	serial := op.Type
	op.Type = typ
	op.Attrs.Set("ring_id", ir.Int(int64(id)))
	ctx.SetOrigin(op, fmt.Sprintf("synchronised batch norm: %s with its per-channel sums all-reduced over %s", serial, ctx.Mesh().DimNames[axis]))
	ctx.Keep(op)
	return nil
}
