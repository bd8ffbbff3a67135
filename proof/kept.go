package proof

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/ops"
)

// localAttrs are the attrs a lowering rewrites for a rank's block: not
// held to the serial op's, but to the block (localAttrsHold; a
// vocabulary-parallel lookup's start_index in vocabParallel).
var localAttrs = map[string]bool{"shape": true, "global_shape": true, "shard_offset": true, "start_index": true}

// kept follows a serial op kept on the rank: its type and attrs are the
// serial op's, its inputs hold what the serial op's dist reads, and its
// outputs get what the op's rule derives: the serial op's output
// placements, owing the rule's partials and those its partial inputs
// carry.
func (p *prover) kept(op *ir.Op) {
	sop := p.byID[op.ID]
	switch {
	case sop == nil:
		p.unknownOut(op, "no serial op has this id")
		return
	case sop.Type != op.Type:
		p.refute(op, "", "the serial op %d is a %s", sop.ID, sop.Type)
		p.unknownOut(op, "")
		return
	}
	if d := ops.Lookup(op.Type); d != nil && d.Traits&ops.OwnPart != 0 {
		p.exchange(op, sop)
		return
	}
	p.sameAttrs(op, sop)
	if p.startup && sop.Dist == nil {
		p.initialiser(op, sop)
		return
	}
	for _, a := range op.Attrs {
		switch v := a.Value.(type) {
		case ir.BlockRef:
			p.subBlock(op, sop, int(v))
			return
		case ir.BlockRefs:
			p.unknownOut(op, "an op with several sub-blocks: the proof does not follow them yet")
			return
		}
	}
	p.as(op, sop)
	p.localAttrsHold(op, sop)
}

// exchange follows a serial MoE op that reads its partial inputs as its
// rank's own part (the exchanges alltoall of the counts, global_scatter
// and global_gather, lowered in place; assign_pos, limit_by_capacity):
// which rows go where is data, so its outputs' placements are its
// rule's, trusted (the result's trust base lists it), and they carry
// X's factor (rows moved, not combined). An exchange's ring must be this
// rank's group along the op's expert_axis, and every member must issue
// it in order.
func (p *prover) exchange(op, sop *ir.Op) {
	axis, _ := op.Attrs.String("expert_axis")
	// The capacity ops count per rank of the expert axis: n_worker is the
	// axis's size, and prune's n_expert the experts of one rank.
	if sop.Dist == nil {
		p.unknownOut(op, "an exchange with no dist")
		return
	}
	w := int64(1)
	if pm := p.serial.Mesh(sop.Dist.Mesh); pm != nil && pm.DimIndex(axis) >= 0 {
		w = int64(pm.Shape[pm.DimIndex(axis)])
	}
	for _, a := range sop.Attrs {
		want := ops.ValueString(a.Value)
		switch a.Name {
		case "ring_id", "origin", "origin_op":
			continue
		case "n_worker":
			want = fmt.Sprint(w)
		case "n_expert":
			if n, ok := ir.AsInt(a.Value); ok && op.Type == "prune_gate_by_capacity" {
				want = fmt.Sprint(n / w)
			}
		}
		if v := op.Attrs.Get(a.Name); v == nil || ops.ValueString(v) != want {
			p.refute(op, "", "attr %s is %s, and this rank's is %s", a.Name, ops.ValueString(v), want)
		}
	}
	x := firstArg(op.Input("X"))
	in := &value{unknown: true}
	if x != "" {
		in = p.read(x)
	}
	if op.Attrs.Get("ring_id") != nil {
		p.record(op, &value{src: in.src, unknown: true})
		if grp, pm, d, ok := p.ring(op, x, sop.Dist.Mesh); ok && pm.DimNames[d] != axis {
			p.refute(op, x, "ring %d is ranks %v, the group along %s, not along expert_axis %s", grp.ID, grp.Ranks, pm.DimNames[d], axis)
		}
	}
	coef := 1.0
	if x != "" && !in.unknown {
		coef = in.coef
	}
	for _, s := range sop.Inputs {
		for k, sa := range s.Args {
			if ra := op.Input(s.Name); k < len(ra) {
				if v := p.read(ra[k]); !v.unknown && p.canon(v.src) != p.canon(sa) {
					p.refute(op, ra[k], "reads %s, which holds a block of %s, where the serial op reads %s", ra[k], v.src, sa)
				}
			}
		}
	}
	p.trust[op.Type] = true
	for _, s := range sop.Outputs {
		for i, sa := range s.Args {
			ra := op.Output(s.Name)
			d := p.declared(sa)
			if i >= len(ra) || d == nil {
				continue
			}
			p.write(ra[i], &value{src: sa, mesh: d.Mesh, dims: slices.Clone(d.DimsMapping), owed: slices.Clone(d.Partial), coef: coef})
		}
	}
}

// subBlock follows a control-flow op (while, conditional_block, their
// grads) whose body is block b: every rank runs the body as often as the
// serial program, its condition being whole on every rank, and the body
// is followed once: each var it writes that held a value before must
// leave it holding the same (placement, owed reductions, factor), what
// the next run of the body reads; its collectives are recorded once, in
// the order of one run.
func (p *prover) subBlock(op, sop *ir.Op, b int) {
	rb, sb := p.prog.Block(b), p.sprog.Block(b)
	if rb == nil || sb == nil {
		p.unknownOut(op, fmt.Sprintf("its sub-block %d is not in the rank's program and the serial one", b))
		return
	}
	for _, slot := range []string{"Condition", "Cond"} {
		for _, c := range op.Input(slot) {
			v := p.read(c)
			if v.unknown {
				p.unknownOut(op, "")
				return
			}
			whole := v.lay == nil && !slices.ContainsFunc(v.dims, func(d int) bool { return d >= 0 })
			if !whole || len(v.owed) > 0 || v.coef != 1 {
				p.unproven(op, c, "the condition %s is not whole on every rank (%s, owing %s): the ranks may run the body unequally", c, v.placement(), fmtOwed(v.owed))
			}
		}
	}
	outer, souter, entry := p.g, p.sg, p.entry
	p.g, p.sg, p.entry = rb, sb, map[string]*value{}
	for _, o := range rb.Ops {
		if o.Type == "send_v2" || o.Type == "recv_v2" {
			p.unknownOut(o, "a send or receive in a sub-block")
			continue
		}
		p.step(o)
	}
	inner := p.entry
	p.g, p.sg, p.entry = outer, souter, entry
	names := slices.Sorted(maps.Keys(inner))
	for _, a := range names {
		before, after := inner[a], p.env[a]
		if entry != nil {
			if _, ok := entry[a]; !ok {
				entry[a] = before // the enclosing body's entry value
			}
		}
		if before == nil || before.unknown || after == nil || after.unknown {
			continue
		}
		if !sameValue(before, after) {
			p.unproven(op, a, "%s enters the body of %s as %s owing %s times %g and leaves it as %s owing %s times %g: a second run would read another value",
				a, op.Type, before.placement(), fmtOwed(before.owed), before.coef, after.placement(), fmtOwed(after.owed), after.coef)
		}
	}
}

// sameValue reports whether two values are the same blocks of the same
// serial var, owing the same, with the same factor.
func sameValue(a, b *value) bool {
	if (a.lay == nil) != (b.lay == nil) || a.lay != nil && !a.lay.merge().equal(b.lay.merge()) {
		return false
	}
	return a.src == b.src && a.mesh == b.mesh && slices.Equal(a.dims, b.dims) && slices.Equal(a.owed, b.owed) && a.coef == b.coef
}

// initialiser follows a startup op with no dist: with no inputs (a fill,
// a random draw) it writes the block its output's declared dist gives.
func (p *prover) initialiser(op, sop *ir.Op) {
	if len(sop.Inputs) > 0 {
		p.unknownOut(op, "a startup op with inputs and no dist")
		return
	}
	for _, s := range sop.Outputs {
		rargs := op.Output(s.Name)
		if len(rargs) != len(s.Args) {
			p.refute(op, "", "slot %s has %d args, the serial op's %d", s.Name, len(rargs), len(s.Args))
			p.unknownOut(op, "")
			return
		}
		for i, sa := range s.Args {
			d := p.declared(sa)
			if d == nil {
				p.unknownOut(op, "the startup var "+sa+" has no dist")
				return
			}
			p.write(rargs[i], &value{src: sa, mesh: d.Mesh, dims: slices.Clone(d.DimsMapping), owed: slices.Clone(d.Partial), coef: 1})
		}
	}
	p.localAttrsHold(op, sop)
}

// localAttrsHold holds the attrs a lowering makes local to the rank's
// block: a forward op's shape attr must give Out this rank's block's
// shape (reshape2's 0 copying X's dim and -1 inferred from X's count); a
// random op must draw the block of the serial draw its Out is
// (global_shape the serial shape, shard_offset the block's offset), or,
// when Out is whole, the serial draw itself.
func (p *prover) localAttrsHold(op, sop *ir.Op) {
	outs := op.Output("Out")
	if len(outs) != 1 || op.Role.IsBackward() {
		return
	}
	d := ops.Lookup(op.Type)
	random := d != nil && d.Traits&ops.Random != 0
	v := p.env[outs[0]]
	if v == nil || v.unknown || !random && op.Attrs.Get("shape") == nil {
		return
	}
	lay, err := p.layoutOf(v)
	if err != nil {
		p.unproven(op, outs[0], "%v", err)
		return
	}
	block := lay.shape()
	// The shape attr is Out's shape for a fill or a draw, a reshape's
	// with 0 and -1 spelled out, an expand's with -1 keeping X's dim.
	reshape, expand := strings.HasPrefix(op.Type, "reshape"), op.Type == "expand_v2"
	held := d != nil && d.Traits&ops.ShapeOfOut != 0 || reshape || expand
	if shape, ok := ir.AsInts(ops.AttrValue(op, "shape")); ok && held && len(op.Input("ShapeTensor")) == 0 && len(op.Input("ShapeTensorList")) == 0 && len(op.Input("Shape")) == 0 {
		got := slices.Clone(shape)
		if x := p.env[firstArg(op.Input("X"))]; (reshape || expand) && x != nil && !x.unknown {
			if xl, err := p.layoutOf(x); err == nil {
				if reshape {
					got = resolveReshape(got, xl.shape())
				} else {
					got = resolveExpand(got, xl.shape())
				}
			}
		}
		if !slices.Equal(got, block) {
			p.refute(op, outs[0], "attr shape %v makes %s %v, and this rank's block of it is %v", shape, outs[0], got, block)
		}
	}
	if !random {
		return
	}
	sv := p.serialVar(p.canon(v.src))
	c, _, err := p.coordOn(v.mesh)
	if sv == nil || err != nil {
		p.unproven(op, outs[0], "a random draw of no placed serial var")
		return
	}
	at := lay.at(c)
	if len(at.tiles) != 1 {
		p.unproven(op, outs[0], "a random draw into a layout of blocks")
		return
	}
	whole := slices.Equal(block, sv.Type.Shape)
	global, hasG := ir.AsInts(ops.AttrValue(op, "global_shape"))
	offset, _ := ir.AsInts(ops.AttrValue(op, "shard_offset"))
	switch {
	case whole && !hasG:
	case !hasG:
		p.refute(op, outs[0], "draws %v numbers from the serial op's seed, the first ones of its draw, where this rank's block of %s is elsewhere: each rank must draw its block's (global_shape, shard_offset)", block, outs[0])
	case !slices.Equal(global, sv.Type.Shape):
		p.refute(op, outs[0], "global_shape %v, and the serial draw's shape is %v", global, sv.Type.Shape)
	default:
		want := make([]int64, len(at.tiles[0].lo))
		for a, o := range at.tiles[0].lo {
			want[a] = o.c
		}
		if !slices.Equal(offset, want) {
			p.refute(op, outs[0], "shard_offset %v, and this rank's block of %s begins at %v", offset, outs[0], want)
		}
	}
}

// resolveExpand spells out an expand's -1 entries (X's dim, X aligned to
// the right).
func resolveExpand(shape, x []int64) []int64 {
	off := len(shape) - len(x)
	for i, d := range shape {
		if d == -1 && i-off >= 0 {
			shape[i] = x[i-off]
		}
	}
	return shape
}

// resolveReshape spells out a reshape's 0 (X's dim) and -1 (the rest of
// X's count) entries.
func resolveReshape(shape, x []int64) []int64 {
	n, known, infer := int64(1), int64(1), -1
	for _, d := range x {
		n *= d
	}
	for i, d := range shape {
		switch {
		case d == 0 && i < len(x):
			shape[i] = x[i]
		case d == -1:
			infer = i
			continue
		}
		known *= shape[i]
	}
	if infer >= 0 && known > 0 && n >= 0 {
		shape[infer] = n / known
	}
	return shape
}

// sameAttrs refutes an attr of sop that op has otherwise (but the local
// ones).
func (p *prover) sameAttrs(op, sop *ir.Op) {
	for _, a := range sop.Attrs {
		if localAttrs[a.Name] || a.Name == "origin" || a.Name == "origin_op" {
			continue
		}
		if v := op.Attrs.Get(a.Name); v == nil || ops.ValueString(v) != ops.ValueString(a.Value) {
			p.refute(op, "", "attr %s is %s, the serial op's %s", a.Name, ops.ValueString(v), ops.ValueString(a.Value))
		}
	}
}

// syncBatchNorm follows sync_batch_norm and its grad, a serial
// batch_norm (origin_op) whose per-channel sums are all-reduced over
// ring_id: the ring must be the group along the mesh dim X's batch is
// split on, and the statistics it writes are the whole batch's.
func (p *prover) syncBatchNorm(op *ir.Op) {
	id, _ := originOp(op)
	sop := p.byID[id]
	x := p.serialVar(firstArg(op.Input("X")))
	if sop == nil || sop.Dist == nil || x == nil || x.Dist == nil {
		p.unknownOut(op, "a synchronised batch norm of no serial batch norm with a placed X")
		return
	}
	p.sameAttrs(op, sop)
	pm := p.serial.Mesh(x.Dist.Mesh)
	d := -1 // the batch, dim 0 in either layout
	if len(x.Dist.DimsMapping) > 0 {
		d = x.Dist.DimsMapping[0]
	}
	ring, _ := ir.AsInt(op.Attrs.Get("ring_id"))
	grp := p.part.Group(int(ring))
	if pm == nil || d < 0 || grp == nil {
		p.unknownOut(op, "a synchronised batch norm of an X whose batch is not split, or of no group")
		return
	}
	if g, err := pm.Group(d, p.rank); err != nil || !slices.Equal(g, grp.Ranks) {
		p.refute(op, x.Name(), "ring %d is ranks %v, not the group along mesh dim %d (%s) that %s's batch is split on", ring, grp.Ranks, d, pm.DimNames[d], x.Name())
	}
	p.as(op, sop)
	if op.Role.IsBackward() {
		return
	}
	for a := range op.OutputNames { // the statistics are the whole batch's
		if v := p.env[a]; v != nil {
			v.owed = slices.DeleteFunc(v.owed, func(q ir.Partial) bool { return q.Dim == d })
		}
	}
}

// as follows op as the serial op sop computes on the rank's blocks: its
// inputs hold what sop's dist reads, its outputs what sop's rule gives.
func (p *prover) as(op, sop *ir.Op) {
	if sop.Dist == nil {
		p.unknownOut(op, "the serial op has no dist")
		return
	}
	pm := p.serial.Mesh(sop.Dist.Mesh)
	if pm == nil {
		p.unknownOut(op, "the serial op's mesh is not declared")
		return
	}
	var (
		maps     = p.maps[:0]
		partials = p.partials[:0]
		names    = p.names[:0]
		factors  = p.factors[:0] // the inputs carrying a factor
		coef     = 1.0
		unknown  bool
	)
	defer func() { p.maps, p.partials, p.names, p.factors = maps, partials, names, factors }()
	for _, s := range sop.Inputs {
		rargs := op.Input(s.Name)
		if len(rargs) != len(s.Args) {
			p.refute(op, "", "slot %s has %d args, the serial op's %d", s.Name, len(rargs), len(s.Args))
			p.unknownOut(op, "")
			return
		}
		for k, sa := range s.Args {
			want, _ := sop.Dist.InputMapping(sa)
			maps = append(maps, want)
			names = append(names, rargs[k])
			v := p.read(rargs[k])
			if v.unknown {
				unknown = true
				partials = append(partials, nil)
				continue
			}
			if p.canon(v.src) != p.canon(sa) {
				p.refute(op, rargs[k], "reads %s, which holds a block of %s, where the serial op reads %s", rargs[k], v.src, sa)
			}
			if want != nil && !p.placedAs(v, sop.Dist.Mesh, want) {
				p.refute(op, rargs[k], "reads %s as %s, which holds %s", rargs[k], ir.FormatInts(want), v.placement())
			}
			partials = append(partials, v.owed)
			factors = append(factors, v.coef != 1)
			if v.coef != 1 {
				if coef != 1 && coef != v.coef {
					p.refute(op, rargs[k], "reads values carrying factors %g and %g", coef, v.coef)
				}
				coef = v.coef
			}
		}
	}
	if unknown {
		for a := range op.OutputNames {
			p.write(a, &value{unknown: true})
		}
		return
	}
	if coef != 1 && !linearIn(sop, factors, names) {
		k := slices.Index(factors, true)
		p.refute(op, names[k], "reads %s carrying %g times its share of the serial value, and is not linear in it: the factor does not come out", names[k], coef)
	}
	if op.Role.IsLossGrad() && op.Role.IsBackward() && len(op.Inputs) == 0 || op.Role.IsLossGrad() && op.Type == "fill_any_like" {
		coef = p.lossCoef // the seed of the loss's gradient
	}
	carried, err := ops.CarriedPartial(sop, partials, func(k int) string { return names[k] })
	if err != nil {
		p.refute(op, "", "%v", err)
	}
	ruleOut := p.ruleOutOf(sop, pm, maps)
	k := 0
	for _, s := range sop.Outputs {
		rargs := op.Output(s.Name)
		if len(rargs) != len(s.Args) {
			// A missing output (a param's update) would leave the old value.
			p.refute(op, "", "output slot %s has %d args, the serial op's %d", s.Name, len(rargs), len(s.Args))
		}
		for i, sa := range s.Args {
			dims, _ := sop.Dist.OutputMapping(sa)
			mesh := sop.Dist.Mesh
			if sv := p.serialVar(sa); sv != nil && sv.Dist != nil {
				mesh = sv.Dist.Mesh
			}
			out := &value{src: sa, mesh: mesh, dims: dims, coef: coef} // dims: the serial dist's, shared, never written
			if k < len(ruleOut) {
				out.owed = append(out.owed, ruleOut[k]...)
			}
			for _, c := range carried {
				if !slices.ContainsFunc(out.owed, func(q ir.Partial) bool { return q.Dim == c.Dim }) {
					out.owed = append(out.owed, c)
				}
			}
			slices.SortFunc(out.owed, func(a, b ir.Partial) int { return a.Dim - b.Dim })
			if i < len(rargs) {
				p.write(rargs[i], out)
			}
			k++
		}
	}
}

// ruleOutOf returns the partials sop's rule gives its outputs on its
// declared placement maps (the same on every rank: found once).
func (p *prover) ruleOutOf(sop *ir.Op, pm *ir.ProcessMesh, maps [][]int) [][]ir.Partial {
	if out, ok := p.ruleOut[sop.ID]; ok {
		return out
	}
	var vars []*ir.Var
	for _, s := range sop.Inputs {
		for _, a := range s.Args {
			vars = append(vars, p.serialVar(a))
		}
	}
	for _, s := range sop.Outputs {
		for _, a := range s.Args {
			vars = append(vars, p.serialVar(a))
		}
	}
	var out [][]ir.Partial
	if r, id, err := p.memo.Rule(sop, vars, p.serialVar); err == nil && r != nil {
		if sh, err := p.memo.Run(r, id, false, pm.Shape, slices.Index(p.serial.Meshes, pm), maps); err == nil {
			out = sh.Partial
		}
	}
	p.ruleOut[sop.ID] = out
	return out
}

// ends holds every serial var the rank wrote to its declared dist: the
// placement, exactly the partials it declares, and no factor (but an
// activation's gradient, below).
func (p *prover) ends() {
	grads := map[string]bool{}
	for _, pg := range p.serial.ParamGrads {
		grads[pg.Grad] = true
	}
	// In the rank's declaration order: the findings come out in one order.
	for _, d := range p.g.Vars() {
		a := d.Name()
		v := p.env[a]
		if v == nil || !v.written || v.unknown || v.lay != nil {
			continue // not written, not followed, or refuted when written
		}
		sv := p.serialVar(a)
		if sv == nil || sv.Dist == nil {
			continue // a rank's temp
		}
		// An activation's gradient carries the loss's factor, or none
		// where a sync took it back on its way to a param's (a view's grad,
		// synced before the reshape back): what it carries reaches a
		// param's grad, held to 1 there, or the optimizer, refuted there.
		activationGrad := strings.Contains(a, "@GRAD") && !grads[a]
		declared := slices.Clone(sv.Dist.Partial)
		slices.SortFunc(declared, func(a, b ir.Partial) int { return a.Dim - b.Dim })
		p.asDeclared(v, declared, sv.Dist.Mesh)
		switch {
		case !p.placedAs(v, sv.Dist.Mesh, sv.Dist.DimsMapping):
			p.refute(nil, a, "ends placed %s, declared %s", ir.FormatInts(v.dims), ir.FormatInts(sv.Dist.DimsMapping))
		case !slices.Equal(v.owed, declared):
			p.refute(nil, a, "ends owing %s, declared %s", fmtOwed(v.owed), fmtOwed(declared))
		case !activationGrad && math.Abs(v.coef-1) > 1e-9:
			p.refute(nil, a, "ends %g times its share of the serial value", v.coef)
		}
	}
}

// asDeclared restates what v owes in the reductions declared: parts
// owing a sum over a dim of n ranks, each c times its share, owe an
// average c/n times the value, and back.
func (p *prover) asDeclared(v *value, declared []ir.Partial, mesh string) {
	pm := p.serial.Mesh(mesh)
	if pm == nil || len(v.owed) != len(declared) {
		return
	}
	owed, coef := slices.Clone(v.owed), v.coef
	for i, q := range owed {
		w := declared[i]
		if q.Dim != w.Dim || q.Dim >= len(pm.Shape) {
			return
		}
		n := float64(pm.Shape[q.Dim])
		switch {
		case q.Reduce == w.Reduce:
		case q.Reduce == ir.ReduceSum && w.Reduce == ir.ReduceAvg:
			coef /= n
		case q.Reduce == ir.ReduceAvg && w.Reduce == ir.ReduceSum:
			coef *= n
		default:
			return
		}
		owed[i].Reduce = w.Reduce
	}
	v.owed, v.coef = owed, coef
}

func fmtOwed(ps []ir.Partial) string {
	if len(ps) == 0 {
		return "nothing"
	}
	return "partial " + ir.FormatPartial(ps)
}

// linearIn reports whether op is linear in the inputs flagged (jointly,
// with one factor): a grad op in its output gradients (backpropagation
// is linear in them), another op as ops.LinearInParts says.
func linearIn(op *ir.Op, flags []bool, names []string) bool {
	if op.Role.IsBackward() && !op.Role.IsOptimize() {
		for k, f := range flags {
			if f && !strings.Contains(names[k], "@GRAD") {
				return false
			}
		}
		return true
	}
	return ops.LinearInParts(op, flags)
}
