package analysis

import (
	"fmt"
	"slices"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/ops"
	"github.com/distpass/distpass/spmd"
)

// Rank-local positions. assign_pos numbers the token slots of each
// rank's own split of its X (the gate's choices) from that rank's own
// counts: on a rank, its positions index the rank's own rows, not the
// serial tensor's. A var's dist states it: local [d] (ir.TensorDist.Local)
// says its values index each rank's own rows split along mesh dim d. A
// gather or scatter by such indices is right only where the rows it
// indexes are split as those rows are (the same mesh, mesh dim d on the
// indexed dim): read whole, or split otherwise, the same local positions
// pick other rows, and the program runs, wrong.
//
// The checker derives, op by op, what each writer makes of its integer
// outputs (assign_pos over rows split along d: local [d]; integer
// arithmetic on a local [d] var: local [d]; anything else: none) and
// holds each var's local dims to it, both ways: a wrong local [d] and a
// missing one are errors naming the var. The ops that read positions
// (gather, scatter, reshard) are checked by their index var's local dims.

// localSource is an assign_pos op whose positions are rank-local: its
// X, and how it reads X (mesh and mapping).
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

// localFact is what an op makes of its integer outputs' values when they
// are rank-local positions.
type localFact struct {
	// dims are the local dims the outputs must be declared with; nil
	// for unsplit positions.
	dims []int
	// src is the assign_pos they come from, when this block shows it.
	src *localSource
	// kept names the input whose local dims an op keeping indices
	// keeps ("" for assign_pos's own).
	kept string
	// unsplit: rank-local positions no local [d] can state, for their
	// X's rows are not split (other dims of it are).
	unsplit bool
}

// origin says where the positions come from, for messages about op.
func (f *localFact) origin(op *ir.Op) string {
	switch {
	case f.src != nil && f.src.op == op:
		return fmt.Sprintf("numbered in the rows of this op's X %s, @%s%s", quoteName(f.src.x), f.src.mesh.Name, fmtInts(f.src.mapping))
	case f.src != nil:
		return "from " + f.src.String()
	}
	return fmt.Sprintf("from %s, local %s", quoteName(f.kept), fmtInts(f.dims))
}

// localIndexSlots gives, for an op that indexes rows by an index input
// (its record's Indexing), that input's slot, and the slots (inputs,
// then outputs) whose indexed dim must be split as the index's source
// rows.
func localIndexSlots(t string) (index string, ins, outs []string) {
	if d := ops.Lookup(t); d != nil && d.Indexing != nil {
		return d.Indexing.Index, d.Indexing.RowsIn, d.Indexing.RowsOut
	}
	return "", nil, nil
}

// hasLocal reports whether program p numbers positions (an assign_pos
// op) or declares a var rank-local: the local checks have something to
// check.
func hasLocal(p *ir.Program) bool {
	for _, b := range p.Blocks {
		if b == nil {
			continue
		}
		for _, v := range b.Vars() {
			if v != nil && v.Dist.IsLocal() {
				return true
			}
		}
		for _, op := range b.Ops {
			if op != nil && ops.Has(op.Type, ops.NumbersRows) {
				return true
			}
		}
	}
	return false
}

// checkLocalIndices derives block b's rank-local positions op by op,
// holds every output's local dims to what its writer makes of it, and
// reports each gather or scatter (and their grads) that indexes rows not
// split as its local index says, each reshard that would move rank-local
// positions, and each local var no op writes.
func (c *annChecker) checkLocalIndices(bi int, b *ir.Block) {
	var facts map[string]*localFact // by name, as the block's ops last wrote them
	p := c.module.Main
	for _, op := range b.Ops {
		if op == nil {
			continue
		}
		var f *localFact
		why := "" // when f is nil: why op makes no output local ("": not said)
		switch {
		case ops.Has(op.Type, ops.NumbersRows):
			f, why = c.assignPosFact(op)
		case op.Type == ops.ReshardType:
			for _, x := range op.Input("X") {
				if head := c.localHead(p, b, facts, "X", x); head != "" {
					c.opErr(bi, op, x, head+": a reshard cannot move them, "+
						"as their values mean nothing on another rank; the ops that read them must read them where they are")
				}
			}
			why = "this op is a reshard, which moves values but numbers no positions"
		case ops.Has(op.Type, ops.KeepsIndex):
			f = keptFact(p, b, facts, op)
			why = "this op reads no rank-local positions (no input of it is local)"
		default:
			why = "this op numbers no positions: they come from assign_pos, and from integer arithmetic on rank-local positions"
			if index, ins, outs := localIndexSlots(op.Type); index != "" {
				for _, ix := range op.Input(index) {
					if c.checkLocalRead(bi, op, p, b, facts, index, ix, ins, outs) {
						break
					}
				}
			}
		}
		for _, s := range op.Outputs {
			for _, a := range s.Args {
				v := p.LookupVar(b, a)
				of := f
				if v == nil || v.Type.Kind != ir.DenseTensor || !v.Type.DType.IsInteger() {
					of = nil // positions are integers (a cast to floats is no index)
				} else {
					c.checkLocalOut(bi, op, s.Name, v, of, why)
				}
				// An op's outputs are what it makes them, and no longer
				// what an earlier writer made them.
				if of != nil {
					if facts == nil {
						facts = map[string]*localFact{}
					}
					facts[a] = of
				} else if facts != nil {
					delete(facts, a)
				}
			}
		}
	}
	for _, v := range b.Vars() {
		if v != nil && v.Dist.IsLocal() && !c.writtenInMain(v) {
			c.varErr(bi, v, fmt.Sprintf("its dist is local %s but no op writes it: rank-local positions come from assign_pos, "+
				"and from integer arithmetic on rank-local positions", fmtInts(v.Dist.Local)))
		}
	}
}

// assignPosFact returns what assign_pos op makes of its Out, or nil and
// why not: its X is read whole (every rank numbers every slot, as
// serially), or the op has no usable dist ("": said elsewhere).
func (c *annChecker) assignPosFact(op *ir.Op) (*localFact, string) {
	xs := op.Input("X")
	if op.Dist == nil || len(xs) != 1 {
		return nil, ""
	}
	pm := c.meshes.get(op.Dist.Mesh)
	dm, ok := op.Dist.InputMapping(xs[0])
	if pm == nil || !ok || len(dm) == 0 {
		return nil, ""
	}
	if !slices.ContainsFunc(dm, func(k int) bool { return k >= 0 }) {
		return nil, fmt.Sprintf("this op reads its X %s whole (%s): every rank numbers every slot, as the serial program does", quoteName(xs[0]), fmtInts(dm))
	}
	src := &localSource{op: op, x: xs[0], mesh: pm, mapping: dm}
	if src.rows() < 0 {
		return &localFact{src: src, unsplit: true}, ""
	}
	return &localFact{dims: []int{src.rows()}, src: src}, ""
}

// keptFact returns what op, which keeps indices, makes of its outputs:
// what its first input holding rank-local positions holds, as its dist
// says, else as its writer made it (a var lacking its local dims is
// reported at its writer, once, not again at each op that keeps it), or
// nil.
func keptFact(p *ir.Program, b *ir.Block, facts map[string]*localFact, op *ir.Op) *localFact {
	for a := range op.InputNames {
		g := facts[a]
		if v := p.LookupVar(b, a); v != nil && v.Dist.IsLocal() {
			f := &localFact{dims: v.Dist.Local, kept: a}
			if g != nil && slices.Equal(g.dims, f.dims) {
				f.src = g.src
			}
			return f
		}
		if g != nil {
			return g
		}
	}
	return nil
}

// checkLocalOut holds output v (of slot slot) of op to what op makes of
// it (f; nil: not positions, for the reason why).
func (c *annChecker) checkLocalOut(bi int, op *ir.Op, slot string, v *ir.Var, f *localFact, why string) {
	if v.Dist == nil {
		return // reported as a var without a dist
	}
	have := v.Dist.Local
	name := slot + " " + quoteName(v.Name())
	switch {
	case f == nil:
		if len(have) > 0 && why != "" {
			c.opErr(bi, op, v.Name(), fmt.Sprintf("%s is local %s but %s", name, fmtInts(have), why))
		}
	case f.unsplit:
		if len(have) > 0 {
			c.opErr(bi, op, v.Name(), fmt.Sprintf("%s is local %s but its positions (%s) index rows that are not split, so no rows are split as they are; "+
				"split the rows of assign_pos's X, not its other dims", name, fmtInts(have), f.origin(op)))
		}
	case len(have) == 0:
		c.opErr(bi, op, v.Name(), fmt.Sprintf("%s holds positions into each rank's own rows (%s), but its dist %s does not say so: annotate it local %s",
			name, f.origin(op), fmtDist(v.Dist), fmtInts(f.dims)))
	case !slices.Equal(have, f.dims):
		c.opErr(bi, op, v.Name(), fmt.Sprintf("%s is local %s but it holds positions into each rank's own rows split along mesh dim %d (%s): annotate it local %s",
			name, fmtInts(have), f.dims[0], f.origin(op), fmtInts(f.dims)))
	}
}

// localHead describes var name (of slot slot), read by an op of block b,
// when it holds rank-local positions: its dist says so, or its positions
// are unsplit (which no dist can say). "" otherwise.
func (c *annChecker) localHead(p *ir.Program, b *ir.Block, facts map[string]*localFact, slot, name string) string {
	f := facts[name]
	if v := p.LookupVar(b, name); v != nil && v.Dist.IsLocal() {
		origin := fmt.Sprintf("its dist says local %s", fmtInts(v.Dist.Local))
		if f != nil && f.src != nil && slices.Equal(f.dims, v.Dist.Local) {
			origin = f.origin(nil)
		}
		return fmt.Sprintf("%s %s holds positions into each rank's own rows (%s)", slot, quoteName(name), origin)
	}
	if f != nil && f.unsplit {
		return fmt.Sprintf("%s %s holds positions into each rank's own rows (%s)", slot, quoteName(name), f.origin(nil))
	}
	return ""
}

// checkLocalRead checks op, which indexes rows by ix (slot index), when
// ix holds rank-local positions: the args of slots ins and outs must
// have their indexed dim split along ix's local mesh dim, on its mesh.
// It reports whether ix holds such positions.
func (c *annChecker) checkLocalRead(bi int, op *ir.Op, p *ir.Program, b *ir.Block, facts map[string]*localFact, index, ix string, ins, outs []string) bool {
	head := c.localHead(p, b, facts, index, ix)
	if head == "" {
		return false
	}
	if op.Dist == nil {
		return true // reported as an op without a dist
	}
	v := p.LookupVar(b, ix)
	if !v.Dist.IsLocal() {
		c.opErr(bi, op, ix, head+": its X's rows are not split, so no rows are split as they are; split the rows of assign_pos's X, not its other dims")
		return true
	}
	if len(v.Dist.Local) != 1 {
		return true // no mapping splits rows along two mesh dims: said at its writer
	}
	rows := v.Dist.Local[0]
	pm, rm := c.meshes.get(op.Dist.Mesh), c.meshes.get(v.Dist.Mesh)
	if pm == nil || rm == nil {
		return true // reported as a dist on an unknown mesh
	}
	if !spmd.SameMesh(pm, rm) {
		c.opErr(bi, op, ix, fmt.Sprintf("%s: the op runs on mesh %s; it must run on mesh %s, where those rows are", head, quoteName(pm.Name), quoteName(rm.Name)))
		return true
	}
	axis := 0
	if d := ops.Lookup(op.Type); d != nil && d.Indexing != nil && d.Indexing.Axis != "" {
		if a, ok := ir.AsInt(ops.AttrValue(op, d.Indexing.Axis)); ok {
			axis = int(a)
		}
	}
	check := func(side string, slot string, dm []int, ok bool, name string) {
		if !ok || axis < 0 || axis >= len(dm) || dm[axis] == rows {
			return
		}
		c.opErr(bi, op, name, fmt.Sprintf("%s: %s %s %s is %s; its dim %d must be split along mesh dim %d as those rows are, "+
			"or the rank's local positions pick other rows", head, side, slot, quoteName(name), fmtInts(dm), axis, rows))
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
	return true
}

// writtenInMain reports whether an op of the main program writes v.
func (c *annChecker) writtenInMain(v *ir.Var) bool {
	if c.localWritten == nil {
		c.localWritten = map[*ir.Var]bool{}
		p := c.module.Main
		for _, b := range p.Blocks {
			if b == nil {
				continue
			}
			for _, op := range b.Ops {
				if op == nil {
					continue
				}
				for a := range op.OutputNames {
					if w := p.LookupVar(b, a); w != nil {
						c.localWritten[w] = true
					}
				}
			}
		}
	}
	return c.localWritten[v]
}
