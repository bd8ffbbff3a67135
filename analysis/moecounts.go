package analysis

import (
	"fmt"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/ops"
)

// The MoE count vectors hold one entry per expert of the whole layer:
// n_expert experts on each of the world size ranks of the expert axis,
// in the exchanges' order (rank-major). Serially the world is one rank
// and the vector one entry per expert. A vector of another length makes
// the exchanges send the wrong rows, with nothing to notice it: the
// lengths are checked against the experts the layer declares.

// expertSource is where a count vector's expert count comes from.
type expertSource struct {
	n    int64 // experts of the layer
	what string
}

// checkCounts checks the count vectors of block bi's MoE ops: number_count's
// Out has upper_range entries, grouped_matmul's ExpertCount one per
// expert of W (its dim 0), and the counts of an exchange (global_scatter,
// global_gather, alltoall) one length, the experts that a number_count
// or grouped_matmul of the block says they count.
func (c *annChecker) checkCounts(bi int, b *ir.Block) {
	moe := c.moe // checkOp's list of the block's MoE ops
	if len(moe) == 0 {
		return
	}
	var experts map[string]expertSource // count var -> its experts
	var exchanged map[string]*ir.Op     // count var -> an exchange op that uses it
	for _, pos := range moe {
		op := b.Ops[pos]
		if op.Dist == nil || c.expertWorld(op) == 0 {
			continue
		}
		for _, n := range [4][]string{op.Input("local_count"), op.Input("global_count"), op.Input("X"), op.Output("Out")} {
			if len(n) == 1 && (op.Type == "alltoall" || op.Type == "all_to_all" || op.Type == "global_scatter" || op.Type == "global_gather") {
				if exchanged == nil {
					exchanged = map[string]*ir.Op{}
				}
				if _, ok := exchanged[n[0]]; !ok {
					exchanged[n[0]] = op
				}
			}
		}
	}
	for _, pos := range moe {
		op := b.Ops[pos]
		if op.Type != "number_count" && op.Type != "grouped_matmul" {
			continue
		}
		ins, outs := c.pi.opArgs(OpRef{int32(bi), int32(pos)})
		var cnt *ir.Var
		var src expertSource
		switch op.Type {
		case "number_count":
			n, ok := ir.AsInt(ops.AttrValue(op, "upper_range"))
			if cnt = c.slotVar(op.Outputs, outs, "Out"); cnt == nil || !ok {
				continue
			}
			src = expertSource{n, fmt.Sprintf("upper_range of op %d number_count", op.ID)}
		case "grouped_matmul":
			w := c.slotVar(op.Inputs, ins, "W")
			if cnt = c.slotVar(op.Inputs, ins, "ExpertCount"); cnt == nil || w == nil || w.Type.Rank() == 0 || w.Type.Shape[0] < 0 {
				continue
			}
			n := w.Type.Shape[0]
			if c.partitioned {
				// A rank's W holds its shard of the experts.
				if wm, ok := op.Dist.InputMapping(w.Name()); ok && len(wm) > 0 && wm[0] >= 0 {
					if pm := c.meshes.get(op.Dist.Mesh); pm != nil && wm[0] < len(pm.Shape) {
						n *= int64(pm.Shape[wm[0]])
					}
				}
			}
			src = expertSource{n, fmt.Sprintf("dim 0 of op %d grouped_matmul's W %s", op.ID, quoteName(w.Name()))}
			c.checkExpertSplit(bi, op, w, exchanged[cnt.Name()])
		}
		if n := countLen(cnt); n >= 0 && n != src.n {
			c.opErr(bi, op, cnt.Name(), fmt.Sprintf("%s %s has %d entries, want one per expert: %d (the %s)",
				cnt.Name(), cnt.Type, n, src.n, src.what))
			continue
		}
		if experts == nil {
			experts = map[string]expertSource{}
		}
		if _, ok := experts[cnt.Name()]; !ok {
			experts[cnt.Name()] = src
		}
	}
	for _, pos := range moe {
		op := b.Ops[pos]
		if op.Dist == nil {
			continue
		}
		var slots []string
		switch op.Type {
		case "global_scatter", "global_gather":
			slots = []string{"local_count", "global_count"}
		case "alltoall", "all_to_all":
			if op.Attrs.Get("expert_axis") == nil {
				continue // not an MoE count exchange
			}
			slots = []string{"X", "Out"}
		default:
			continue
		}
		ins, outs := c.pi.opArgs(OpRef{int32(bi), int32(pos)})
		vars := make([]*ir.Var, 0, 2)
		for i, s := range slots {
			v := c.slotVar(op.Inputs, ins, s)
			if i == 1 && len(op.Output(s)) > 0 {
				v = c.slotVar(op.Outputs, outs, s)
			}
			if v != nil && countLen(v) >= 0 {
				vars = append(vars, v)
			}
		}
		src, known := expertSource{}, false
		for _, v := range vars {
			if src, known = experts[v.Name()]; known {
				break
			}
		}
		world := c.expertWorld(op)
		for _, v := range vars {
			n := countLen(v)
			switch {
			case known && n != src.n:
				per := ""
				if world > 0 && src.n%int64(world) == 0 {
					per = fmt.Sprintf(" = n_expert %d × world size %d", src.n/int64(world), world)
				}
				c.opErr(bi, op, v.Name(), fmt.Sprintf("%s %s has %d entries, want %d%s (the %s)",
					v.Name(), v.Type, n, src.n, per, src.what))
			case !known && n != countLen(vars[0]):
				c.opErr(bi, op, v.Name(), fmt.Sprintf("%s %s has %d entries, %s %s %d: the counts of one exchange are n_expert × world size each",
					v.Name(), v.Type, n, vars[0].Name(), vars[0].Type, countLen(vars[0])))
			}
		}
	}
}

// countLen returns the length of a count vector, or -1 when v is not a
// vector of known length.
func countLen(v *ir.Var) int64 {
	if v.Type.Kind != ir.DenseTensor || v.Type.Rank() != 1 || v.Type.Shape[0] < 0 {
		return -1
	}
	return v.Type.Shape[0]
}

// expertWorld returns the size of the mesh dim an exchange's expert_axis
// names, or 0.
func (c *annChecker) expertWorld(op *ir.Op) int {
	name, ok := op.Attrs.Get("expert_axis").(ir.String)
	pm := c.meshes.get(op.Dist.Mesh)
	if !ok || pm == nil {
		return 0
	}
	if a := pm.DimIndex(string(name)); a >= 0 {
		return pm.Shape[a]
	}
	return 0
}

// slotVar returns the var of the first arg of slot (gids gs), or nil.
func (c *annChecker) slotVar(slots []ir.Slot, gs []int32, slot string) *ir.Var {
	j := slotStart(slots, slot)
	if j < 0 || gs[j] < 0 {
		return nil
	}
	return c.pi.v(gs[j])
}

// checkExpertSplit: the rows a grouped matmul receives come from an
// exchange over the expert axis, grouped by this rank's own experts, so
// W must hold exactly those: its dim 0 split along that axis.
func (c *annChecker) checkExpertSplit(bi int, op *ir.Op, w *ir.Var, ex *ir.Op) {
	if ex == nil || op.Dist == nil {
		return
	}
	world := c.expertWorld(ex)
	wm, ok := op.Dist.InputMapping(w.Name())
	pm := c.meshes.get(ex.Dist.Mesh)
	if world <= 1 || !ok || len(wm) == 0 || pm == nil {
		return
	}
	name, _ := ex.Attrs.Get("expert_axis").(ir.String)
	axis := pm.DimIndex(string(name))
	if wm[0] == axis {
		return
	}
	want := append([]int{axis}, wm[1:]...)
	c.opErr(bi, op, w.Name(), fmt.Sprintf("W %s is split as %s, but its rows come from op %d %s over mesh dim %d (%s) of size %d, grouped by each rank's own experts: its experts must be split along it (%s)",
		quoteName(w.Name()), fmtInts(wm), ex.ID, ex.Type, axis, quoteName(string(name)), world, fmtInts(want)))
}

// isMoEOp reports whether ops of type typ take part in the count checks.
func isMoEOp(typ string) bool {
	switch typ {
	case "number_count", "grouped_matmul", "global_scatter", "global_gather", "alltoall", "all_to_all":
		return true
	}
	return false
}
