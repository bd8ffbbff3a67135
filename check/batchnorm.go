package check

import (
	"slices"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/ops"
	"github.com/distpass/distpass/sim"
)

// A local batch norm is a training batch_norm of the per-rank programs
// whose X has its batch dim split over a mesh dim of size > 1: each rank
// normalises its shard by that shard's statistics (Paddle's default),
// which the serial program, normalising by the batch's, does not
// compute. check then compares against the serial program run on each
// rank's shard: the serial run's batch_norm over the batch cut into as
// many blocks as the mesh dim has ranks, each normalised by its own
// statistics (sim.LocalBatchNorm), so that every value downstream is, on
// rank r's block, what the serial program computes on that block alone,
// and the loss, the param grads and the params are the data-parallel
// average of those. The op's saved and running statistics are each
// rank's own and are not compared. A synchronised batch norm (sync_batch_norm, impl
// batch_norm:0) computes the serial statistics and is compared as any
// other op.
type localBN struct {
	op     *ir.Op // the serial op
	dim    string // the mesh dim the batch is split over
	groups int64
}

// localBatchNorms returns the local batch norms of the serial module m by
// op id, in program order: the training batch_norms whose X has its batch
// dim split over a mesh dim of size > 1 and whose impl is not the
// synchronised one (batch_norm:0). It reads the serial module, never the
// programs under test: what the reference computes must not follow them.
func localBatchNorms(m *ir.Module) (map[int64]localBN, []int64) {
	found := map[int64]localBN{}
	var order []int64
	for _, b := range m.Main.Blocks {
		for _, op := range b.Ops {
			if op.Type != "batch_norm" || op.Dist == nil || op.Dist.ImplType == "batch_norm" ||
				ops.AttrOn(op, "is_test") || ops.AttrOn(op, "use_global_stats") {
				continue
			}
			mesh := m.Mesh(op.Dist.Mesh)
			for _, x := range op.Input("X") {
				mp, ok := op.Dist.InputMapping(x)
				if !ok || len(mp) == 0 || mp[0] < 0 || mesh == nil || mp[0] >= len(mesh.Shape) || mesh.Shape[mp[0]] <= 1 {
					continue
				}
				if _, ok := found[op.ID]; !ok {
					found[op.ID] = localBN{op: op, dim: mesh.DimNames[mp[0]], groups: int64(mesh.Shape[mp[0]])}
					order = append(order, op.ID)
				}
			}
		}
	}
	return found, order
}

// perShardKernels returns ks with batch_norm and its grad computing the
// local batch norms by block, the others as ks does.
func perShardKernels(ks sim.Kernels, local map[int64]localBN) sim.Kernels {
	out := make(sim.Kernels, len(ks))
	for k, v := range ks {
		out[k] = v
	}
	fwd, grad := ks["batch_norm"], ks["batch_norm_grad"]
	type pair struct{ fwd, grad sim.Kernel }
	byGroups := map[int64]pair{}
	for _, l := range local {
		if _, ok := byGroups[l.groups]; !ok {
			f, g := sim.LocalBatchNorm(l.groups)
			byGroups[l.groups] = pair{f, g}
		}
	}
	out["batch_norm"] = func(op *ir.Op, in sim.Args) (sim.Args, error) {
		if l, ok := local[op.ID]; ok {
			return byGroups[l.groups].fwd(op, in)
		}
		return fwd(op, in)
	}
	out["batch_norm_grad"] = func(op *ir.Op, in sim.Args) (sim.Args, error) {
		if l, ok := local[op.Fwd]; ok {
			return byGroups[l.groups].grad(op, in)
		}
		return grad(op, in)
	}
	return out
}

// perRankStats returns the saved and running statistics of the local
// batch norms: each rank's own, from its own shards, so replicas of the
// running mean and variance differ across the batch's mesh dim (as they
// do under Paddle): not compared.
func perRankStats(local map[int64]localBN, order []int64) []string {
	var out []string
	for _, id := range order {
		for _, s := range [...]string{"SavedMean", "SavedVariance", "MeanOut", "VarianceOut"} {
			for _, a := range local[id].op.Output(s) {
				if !slices.Contains(out, a) {
					out = append(out, a)
				}
			}
		}
	}
	return out
}
