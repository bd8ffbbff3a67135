package check

import (
	"fmt"

	"github.com/distpass/distpass/ir"
)

// localBatchNorm refuses per-rank programs with a local batch norm: a
// training batch_norm whose X has its batch dim split over a mesh dim of
// size > 1 normalises each rank's shard by that shard's statistics
// (Paddle's default), which is not what the serial program computes, so
// comparing them would report a mismatch that is no partitioning error.
// A synchronised batch norm (sync_batch_norm, impl batch_norm:0)
// computes the serial statistics and is compared as any other op.
func localBatchNorm(ranks []int, mods []*ir.Module) error {
	for i, pm := range mods {
		if pm.Main == nil {
			continue
		}
		for _, b := range pm.Main.Blocks {
			for _, op := range b.Ops {
				if op.Type != "batch_norm" || op.Dist == nil || flag(op, "is_test") || flag(op, "use_global_stats") {
					continue
				}
				mesh := pm.Mesh(op.Dist.Mesh)
				for _, x := range op.Input("X") {
					m, ok := op.Dist.InputMapping(x)
					if !ok || len(m) == 0 || m[0] < 0 || mesh == nil || m[0] >= len(mesh.Shape) || mesh.Shape[m[0]] <= 1 {
						continue
					}
					return fmt.Errorf("rank %d: %s is a local batch norm: X %s has its batch dim split over %s (dims_mapping %s), so each rank normalises by its shard's statistics, not the serial program's; check compares with the serial program only: lower it with impl batch_norm:0 (sync_batch_norm: annotate-data-parallel's batch-norm=sync, or complete)",
						ranks[i], op, x, mesh.DimNames[m[0]], ir.FormatInts(m))
				}
			}
		}
	}
	return nil
}

// flag reads a bool attr that Paddle's older files write as an int.
func flag(op *ir.Op, name string) bool {
	switch v := op.Attrs.Get(name).(type) {
	case ir.Bool:
		return bool(v)
	case ir.Int:
		return v != 0
	}
	return false
}
