package analysis

import (
	"fmt"
	"slices"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/ops"
	"github.com/distpass/distpass/spmd"
)

// Rank-local indices. assign_pos numbers the token slots of each rank's
// own split of its X (the gate's choices) from that rank's own counts:
// on a rank, its positions index the rank's own rows, not the serial
// tensor's. A gather or scatter by such indices is right only where the
// rows it indexes are split as those rows are (the same mesh, the same
// mesh dim on dim 0): read whole, or split otherwise, the same local
// positions pick other rows, and the program runs, wrong. Nothing in a
// dims_mapping says so (the positions' count is data, their mapping
// [-1]), so the checker traces the positions from assign_pos.

// localSource is where a rank-local index var comes from: the
// assign_pos op, its X, and how it read X (mesh and mapping).
type localSource struct {
	op      *ir.Op
	x       string
	mesh    *ir.ProcessMesh
	mapping []int
}

// rows is the mesh dim the source splits its rows (dim 0) along.
func (s *localSource) rows() int { return s.mapping[0] }

func (s *localSource) String() string {
	return fmt.Sprintf("op %d assign_pos, whose X %s is @%s%s", s.op.ID, quoteName(s.x), s.mesh.Name, fmtInts(s.mapping))
}

// localIndexSlots gives, for an op that indexes rows by an index input,
// that input's slot, and the slots (inputs, then outputs) whose indexed
// dim must be split as the index's source rows.
func localIndexSlots(t string) (index string, ins, outs []string) {
	switch t {
	case "gather":
		return "Index", []string{"X"}, nil
	case "gather_grad":
		return "Index", []string{"X"}, []string{"X@GRAD"}
	case "scatter":
		return "Ids", []string{"X"}, []string{"Out"}
	case "scatter_grad":
		return "Ids", []string{"Out@GRAD"}, []string{"X@GRAD"}
	}
	return "", nil, nil
}

// checkLocalIndices traces block b's rank-local indices and reports each
// gather or scatter (and their grads) that indexes rows not split as the
// indices' source rows, and each reshard that would move such indices.
func (c *annChecker) checkLocalIndices(bi int, b *ir.Block) {
	var local map[string]*localSource
	for _, op := range b.Ops {
		if op == nil {
			continue
		}
		var src *localSource
		switch {
		case op.Type == "assign_pos":
			src = c.assignPosSource(op)
		case op.Type == ops.ReshardType:
			for _, x := range op.Input("X") {
				if s := local[x]; s != nil {
					c.opErr(bi, op, x, fmt.Sprintf("X %s holds positions into each rank's own rows (from %s): a reshard cannot move them, "+
						"as their values mean nothing on another rank; the ops that read them must read them where they are", quoteName(x), s))
				}
			}
		case ops.Has(op.Type, ops.KeepsIndex):
			for a := range op.InputNames {
				if s := local[a]; s != nil {
					src = s
					break
				}
			}
		default:
			if index, ins, outs := localIndexSlots(op.Type); index != "" {
				for _, ix := range op.Input(index) {
					if s := local[ix]; s != nil {
						c.checkLocalRead(bi, op, index, ix, s, ins, outs)
						break
					}
				}
			}
		}
		// An op's outputs are local when src says so, and no longer
		// local (written anew) otherwise.
		for a := range op.OutputNames {
			if src != nil {
				if local == nil {
					local = map[string]*localSource{}
				}
				local[a] = src
			} else if local != nil {
				delete(local, a)
			}
		}
	}
}

// assignPosSource returns the source of an assign_pos op's positions,
// or nil when they are not rank-local: its X is read whole (every rank
// numbers every slot, as serially), or the op has no usable dist.
func (c *annChecker) assignPosSource(op *ir.Op) *localSource {
	xs := op.Input("X")
	if op.Dist == nil || len(xs) != 1 {
		return nil
	}
	pm := c.meshes.get(op.Dist.Mesh)
	dm, ok := op.Dist.InputMapping(xs[0])
	if pm == nil || !ok || len(dm) == 0 || !slices.ContainsFunc(dm, func(k int) bool { return k >= 0 }) {
		return nil
	}
	return &localSource{op: op, x: xs[0], mesh: pm, mapping: dm}
}

// checkLocalRead checks op, which indexes rows by ix (slot index),
// rank-local from s: the args of slots ins and outs must have their
// indexed dim split as s's rows, on s's mesh.
func (c *annChecker) checkLocalRead(bi int, op *ir.Op, index, ix string, s *localSource, ins, outs []string) {
	if op.Dist == nil {
		return // reported as an op without a dist
	}
	axis := 0
	if op.Type == "gather" || op.Type == "gather_grad" {
		if a, ok := ir.AsInt(ops.AttrValue(op, "axis")); ok {
			axis = int(a)
		}
	}
	pm := c.meshes.get(op.Dist.Mesh)
	head := fmt.Sprintf("%s %s holds positions into each rank's own rows (from %s)", index, quoteName(ix), s)
	if s.rows() < 0 {
		c.opErr(bi, op, ix, head+": its X's rows are not split, so no rows are split as they are; split the rows of assign_pos's X, not its other dims")
		return
	}
	if pm == nil {
		return // reported as a dist on an unknown mesh
	}
	if !spmd.SameMesh(pm, s.mesh) {
		c.opErr(bi, op, ix, fmt.Sprintf("%s: the op runs on mesh %s; it must run on mesh %s, where those rows are", head, quoteName(pm.Name), quoteName(s.mesh.Name)))
		return
	}
	check := func(side string, slot string, dm []int, ok bool, name string) {
		if !ok || axis < 0 || axis >= len(dm) || dm[axis] == s.rows() {
			return
		}
		c.opErr(bi, op, name, fmt.Sprintf("%s: %s %s %s is %s; its dim %d must be split along mesh dim %d as those rows are, "+
			"or the rank's local positions pick other rows", head, side, slot, quoteName(name), fmtInts(dm), axis, s.rows()))
	}
	for _, slot := range ins {
		for _, name := range op.Input(slot) {
			dm, ok := op.Dist.InputMapping(name)
			check("input", slot, dm, ok, name)
		}
	}
	for _, slot := range outs {
		for _, name := range op.Output(slot) {
			dm, ok := op.Dist.OutputMapping(name)
			check("output", slot, dm, ok, name)
		}
	}
}
