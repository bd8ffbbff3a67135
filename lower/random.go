package lower

import (
	"fmt"
	"slices"

	"github.com/distpass/distpass/ir"
)

// drawnSlot names, for each op type that draws random numbers (the op
// table's Random trait), the arg whose elements it draws one per: an
// input (dropout's mask is X's shape) or its output (the initialisers).
var drawnSlot = map[string]struct {
	slot  string
	input bool
}{
	"dropout":         {"X", true},
	"uniform_random":  {"Out", false},
	"gaussian_random": {"Out", false},
}

// DrawnBlock returns, for op of block b of program p of a partitioned
// module m, the var whose elements op draws random numbers for, the mesh
// it is split over and its dims mapping: from the op's dist when it has
// one (a main op), else from the var's own (a startup initialiser). ok is
// false for an op that draws nothing, or whose var is not split.
func DrawnBlock(m *ir.Module, p *ir.Program, b *ir.Block, op *ir.Op) (v *ir.Var, mesh *ir.ProcessMesh, mapping []int, ok bool) {
	ds, drawn := drawnSlot[op.Type]
	if !drawn {
		return nil, nil, nil, false
	}
	var args []string
	if ds.input {
		args = op.Input(ds.slot)
	} else {
		args = op.Output(ds.slot)
	}
	if len(args) != 1 {
		return nil, nil, nil, false
	}
	if v = p.LookupVar(b, args[0]); v == nil || !v.Type.IsTensor() {
		return nil, nil, nil, false
	}
	var meshName string
	switch {
	case op.Dist != nil:
		meshName = op.Dist.Mesh
		if ds.input {
			mapping, ok = op.Dist.InputMapping(args[0])
		} else {
			mapping, ok = op.Dist.OutputMapping(args[0])
		}
		if !ok && v.Dist != nil {
			mapping = v.Dist.DimsMapping
		}
	case v.Dist != nil:
		meshName, mapping = v.Dist.Mesh, v.Dist.DimsMapping
	}
	if mesh = m.Mesh(meshName); mesh == nil || len(mapping) != v.Type.Rank() {
		return nil, nil, nil, false
	}
	for _, axis := range mapping {
		if axis >= 0 && axis < len(mesh.Shape) && mesh.Shape[axis] > 1 {
			return v, mesh, mapping, true
		}
	}
	return nil, nil, nil, false
}

// DrawOffset is where the block of shape local of the rank at coordinate
// coord of a mesh, split over it by mapping, begins in the whole tensor:
// the coordinate times the block's size along each split dim. Shards are
// even (check-annotations).
func DrawOffset(coord []int, mapping []int, local []int64) (ir.Ints, error) {
	off := make(ir.Ints, len(local))
	for d, axis := range mapping {
		if axis >= 0 {
			if axis >= len(coord) {
				return nil, fmt.Errorf("mesh axis %d is out of range for a mesh of %d dims", axis, len(coord))
			}
			off[d] = int64(coord[axis]) * local[d]
		}
	}
	return off, nil
}

// shardDraws gives every random op of block b that draws for a split var
// the global_shape and shard_offset attrs of rank's block (sim's random
// kernels say what they mean): so each rank draws its own part of the
// serial program's numbers rather than a local shape's from the same
// seed. Rank classes recompute shard_offset for each rank, as they do
// start_index, so reading the coordinate here is not a rank read.
func shardDraws(m *ir.Module, p *ir.Program, b *ir.Block, ops []*ir.Op, rank int) error {
	for _, op := range ops {
		v, mesh, mapping, ok := DrawnBlock(m, p, b, op)
		if !ok || !mesh.Contains(rank) {
			continue
		}
		if err := ShardDraw(op, mesh, mapping, v.Type.Shape, rank); err != nil {
			return &OpError{Rank: rank, Block: b.Index, OpID: op.ID, OpType: op.Type, Phase: "shard random draws", Err: err}
		}
	}
	return nil
}

// ShardDraw sets op's global_shape (local times the mesh dims it is split
// over) and shard_offset (DrawOffset) for rank. An op that has them
// already was partitioned before, or written so by hand: refused, since
// its serial meaning is not the whole draw.
func ShardDraw(op *ir.Op, mesh *ir.ProcessMesh, mapping []int, local []int64, rank int) error {
	if op.Attrs.Has("global_shape") || op.Attrs.Has("shard_offset") {
		return fmt.Errorf("already draws a block of a larger tensor (global_shape, shard_offset): a serial program's random op draws its whole output")
	}
	global := make(ir.Ints, len(local))
	for d, n := range local {
		global[d] = n
		if axis := mapping[d]; axis >= 0 {
			if n < 0 {
				return fmt.Errorf("dim %d is split over mesh %s dim %d but its size is unknown: its random numbers cannot be placed", d, mesh.Name, axis)
			}
			global[d] = n * int64(mesh.Shape[axis])
		}
	}
	coord, err := mesh.Coord(rank)
	if err != nil {
		return err
	}
	off, err := DrawOffset(coord, mapping, local)
	if err != nil {
		return err
	}
	op.Attrs.Set("global_shape", global)
	op.Attrs.Set("shard_offset", off)
	return nil
}

// drawnTypes lists the op types DrawnBlock knows, sorted.
func drawnTypes() []string {
	var out []string
	for t := range drawnSlot {
		out = append(out, t)
	}
	slices.Sort(out)
	return out
}
