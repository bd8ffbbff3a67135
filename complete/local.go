package complete

import (
	"github.com/distpass/distpass/ops"
	"github.com/distpass/distpass/spmd"
)

// localRule is the rule of a gather or scatter whose index holds
// positions into each rank's own rows split along mesh dim d.
type localRule struct {
	d    int
	rule spmd.ShardingRule
}

// localRule returns op n's rule when n is a gather or a scatter whose
// index holds positions into each rank's own rows (ops.LocalIndexRule),
// or nil. The positions are assign_pos's Out (and what integer
// arithmetic makes of it) over an X whose rows are split along a mesh
// dim, as the lattice has them now: mappings only grow, so a gather
// once local stays so, along the same mesh dim.
func (e *engine) localRule(n *opNode) spmd.ShardingRule {
	slot := ""
	switch n.op.Type {
	case "gather":
		slot = "Index"
	case "scatter":
		slot = "Ids"
	default:
		return nil
	}
	ix := e.inputVar(n, slot)
	if ix < 0 {
		return nil
	}
	d := e.positionsDim(n, ix, 0)
	if d < 0 {
		return nil
	}
	if c, ok := e.local[n.idx]; ok && c.d == d {
		return c.rule
	}
	r, err := ops.LocalIndexRule(n.op, e.g.lookup(n), d)
	if err != nil || r == nil {
		return nil
	}
	if e.local == nil {
		e.local = map[int32]localRule{}
	}
	e.local[n.idx] = localRule{d, r}
	return r
}

// inputVar returns the var of op n's one arg in input slot slot, or -1.
func (e *engine) inputVar(n *opNode, slot string) int32 {
	args := n.op.Input(slot)
	if len(args) != 1 {
		return -1
	}
	for k, v := range n.ins() {
		if v >= 0 && e.argName(n, k) == args[0] {
			return v
		}
	}
	return -1
}

// positionsDim returns the mesh dim along which var v holds positions
// into each rank's own rows of op n's mesh, or -1: v is written once, by
// assign_pos whose X's rows are split along it on n's mesh, or by an op
// that carries such positions (the op table's KeepsIndex trait) from an input.
func (e *engine) positionsDim(n *opNode, v int32, depth int) int {
	if depth > 16 {
		return -1
	}
	w, ok := e.writerOf(v)
	if !ok {
		return -1
	}
	p := &e.g.ops[w]
	switch {
	case p.op.Type == "assign_pos":
		x := e.inputVar(p, "X")
		if x < 0 || e.s.mesh[x] != n.mesh || len(e.s.dims[x]) == 0 {
			return -1
		}
		return e.s.dims[x][0]
	case ops.Has(p.op.Type, ops.KeepsIndex):
		for _, in := range p.ins() {
			if in >= 0 {
				if d := e.positionsDim(n, in, depth+1); d >= 0 {
					return d
				}
			}
		}
	}
	return -1
}

// writerOf returns the forward op that writes var v, when exactly one
// does.
func (e *engine) writerOf(v int32) (int32, bool) {
	if e.writer == nil {
		e.writer = map[int32]int32{}
		for _, i := range e.g.fwd {
			for _, o := range e.g.ops[i].outs() {
				if o < 0 {
					continue
				}
				if _, seen := e.writer[o]; seen {
					e.writer[o] = -1
				} else {
					e.writer[o] = i
				}
			}
		}
	}
	w, ok := e.writer[v]
	return w, ok && w >= 0
}
