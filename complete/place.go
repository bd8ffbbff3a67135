package complete

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/lower"
	"github.com/distpass/distpass/ops"
	"github.com/distpass/distpass/spmd"
)

// implRef is one candidate impl of an op.
type implRef struct {
	typ  string
	idx  int
	impl *lower.Impl
}

func (r implRef) String() string { return fmt.Sprintf("%s:%d (%s)", r.typ, r.idx, r.impl.Name) }

// candidates returns, in the order completion tries them, the impls
// that may lower an op of type opType: the impls of its own container
// (lower.Registry.Register order, Paddle's impl index), then default,
// then the elementwise container's for an op the op table marks
// elementwise, then spmd (the generic rule-based impl). Completion takes
// the first that fits the inferred mappings. Paddle tries elementwise
// before default; default and elementwise lower alike, and default
// first keeps a data-parallel module's ops on default:0 (default fits
// only batch-split args), elementwise the rest.
func candidates(reg *lower.Registry, opType string) []implRef {
	var out []implRef
	add := func(typ string) {
		for i := 0; ; i++ {
			impl, err := reg.Lookup(typ, i)
			if err != nil {
				return
			}
			out = append(out, implRef{typ, i, impl})
		}
	}
	switch opType {
	case lower.DefaultType, lower.ElementwiseType, lower.SPMDType:
	default:
		add(opType)
	}
	add(lower.DefaultType)
	if d := ops.Lookup(opType); d != nil && d.Traits&ops.Elementwise != 0 {
		add(lower.ElementwiseType)
	}
	add(lower.SPMDType)
	return out
}

func (e *engine) candidates(opType string) []implRef {
	if c, ok := e.impls[opType]; ok {
		return c
	}
	if e.impls == nil {
		e.impls = map[string][]implRef{}
	}
	c := candidates(e.reg, opType)
	e.impls[opType] = c
	return c
}

// place gives op n the dist res describes and its outputs their dists,
// and picks its impl.
func (e *engine) place(n *opNode, res spmd.Sharding) error {
	// The outputs this op gives their dist: not annotated, not settled
	// before (an in-place or loop-carried var keeps its first).
	var mine []bool
	for _, v := range n.outs() {
		if v >= 0 {
			mine = append(mine, !e.s.settled[v])
			e.s.settled[v] = true
		}
	}
	err := e.placeWith(n, res, mine)
	var nf *noFit
	if !errors.As(err, &nf) {
		return err
	}
	// No impl lowers what the rule gives (a lookup in a vocabulary split
	// along another dim than an impl splits it): the op reads and writes
	// every arg replicated, its inputs resharded, and the report says so.
	rep := spmd.Sharding{Inputs: make([][]int, n.nIn), Outputs: make([][]int, len(n.args)-n.nIn)}
	for k, v := range n.args {
		if v < 0 {
			continue
		}
		m := make([]int, len(e.s.dims[v]))
		for d := range m {
			m[d] = -1
		}
		if k < n.nIn {
			rep.Inputs[k] = m
		} else {
			rep.Outputs[k-n.nIn] = m
		}
	}
	if e.placeWith(n, rep, mine) != nil {
		return err
	}
	e.rep.Fallbacks = append(e.rep.Fallbacks, Barrier{Op: n.op.ID, OpType: n.op.Type, Why: nf.why})
	return nil
}

// noFit is place's error when no impl lowers an op's dists.
type noFit struct{ msg, why string }

func (e *noFit) Error() string { return e.msg }

// placeWith gives op n the dist res describes and the outputs it owns
// (mine) their dists, and picks its impl.
func (e *engine) placeWith(n *opNode, res spmd.Sharding, mine []bool) error {
	d := e.slab.opDist()
	d.Mesh = n.mesh.Name
	d.Inputs = e.slab.argDists(n.nIn)
	d.Outputs = e.slab.argDists(len(n.args) - n.nIn)
	for k, v := range n.ins() {
		if v < 0 {
			continue
		}
		m := e.pick(res.Inputs, k, e.s.dims[v])
		d.Inputs = addArg(d.Inputs, e.argName(n, k), m)
	}
	type out struct {
		v       int32
		m       []int
		partial []ir.Partial
	}
	var outs []out
	for k, v := range n.outs() {
		if v < 0 {
			continue
		}
		m := e.pick(res.Outputs, k, e.s.dims[v])
		var p []ir.Partial
		if k < len(res.Partial) {
			p = res.Partial[k]
		}
		d.Outputs = addArg(d.Outputs, e.argName(n, n.nIn+k), m)
		outs = append(outs, out{v, m, p})
	}
	n.op.Dist = d
	give := func(whole bool) {
		for j, o := range outs {
			if !mine[j] {
				if e.s.partialOpen[o.v] && slices.Equal(o.m, e.s.dims[o.v]) {
					// A derived grad: its mapping kept, its partial state
					// the op's.
					var p []ir.Partial
					if !whole {
						p = o.partial
					}
					e.s.partial[o.v] = p
					if x := e.g.vars[o.v]; !slices.Equal(x.Dist.Partial, p) {
						d := *x.Dist
						d.Partial = slices.Clone(p)
						x.Dist = &d
					}
				}
				continue
			}
			e.setDims(n.idx, o.v, o.m)
			e.s.partial[o.v] = nil
			if !whole {
				e.s.partial[o.v] = o.partial
			}
			e.writeVar(o.v)
		}
	}
	if n.gradOf != nil {
		// The grad op of an op the rule-based impl lowers: that impl,
		// with the grads' partials as the rule gives them, averaged
		// where the loss is (lower.SPMDGradPartial).
		for j := range outs {
			outs[j].partial = lower.SPMDGradPartial(outs[j].partial, e.lossDist())
		}
		give(false)
		d.ImplType, d.ImplIndex = n.gradOf.ImplType, n.gradOf.ImplIndex
		e.rep.Ops.Completed++
		e.noteReshards(n)
		ps := make([][]ir.Partial, len(outs))
		for j, o := range outs {
			ps[j] = o.partial
		}
		e.notePartialOutputs(n, d, ps, mine)
		return nil
	}
	if !n.op.Role.IsForward() {
		// Backward and optimize ops without a forward op are lowered by
		// the default impl's backward, which no compatibility check
		// guards: optimize ops update shards elementwise.
		give(false)
		d.ImplType, d.ImplIndex = lower.DefaultType, 0
		e.rep.implName(lower.DefaultType + ":0")
		e.noteReshards(n)
		return nil
	}
	type failure struct {
		c   implRef
		err error
	}
	var why []failure // spelled only when no impl fits
	// The impls are asked as the op will be lowered once its reshards
	// are in: each input var dist'd as the op requires it.
	restore := e.asRequired(n, d, func(j int) []ir.Partial { return outs[j].partial }, mine)
	defer restore()
	for _, c := range e.candidates(n.op.Type) {
		variants := []bool{false}
		if c.impl.Reduces && !e.opts.Lazy && hasPartial(res.Partial) {
			variants = []bool{true, false}
		}
		for _, whole := range variants {
			give(whole)
			d.ImplType, d.ImplIndex = c.typ, c.idx
			err := e.fit.Fits(n.block, n.op, c.typ, c.idx)
			if err == nil {
				restore()
				e.rep.impl(n, c)
				e.noteReshards(n)
				ps := make([][]ir.Partial, len(outs))
				for j, o := range outs {
					if !whole {
						ps[j] = o.partial
					}
				}
				e.notePartialOutputs(n, d, ps, mine)
				return nil
			}
			why = append(why, failure{c, err})
		}
	}
	give(false)
	restore()
	e.noteReshards(n)
	var reasons []string
	for _, f := range why {
		r := fmt.Sprintf("%s: %s", f.c, trimOp(f.err, n.op))
		if !slices.Contains(reasons, r) { // a Reduces impl fails alike whole and partial
			reasons = append(reasons, r)
		}
	}
	why = nil
	return &noFit{
		msg: fmt.Sprintf("complete: %s: no impl lowers the dists completion inferred, %s: %s",
			n.op, spellDist(d, e, n), strings.Join(reasons, "; ")),
		why: fmt.Sprintf("no impl lowers %s (%s)", spellDist(d, e, n), strings.Join(reasons, "; ")),
	}
}

// asRequired gives each input var of op n whose dist is not what the op
// requires (d) that dist for a while, and returns what puts them back.
func (e *engine) asRequired(n *opNode, d *ir.OpDist, partial func(j int) []ir.Partial, mine []bool) func() {
	type saved struct {
		v *ir.Var
		d *ir.TensorDist
	}
	var kept []saved
	// An output the op does not give its dist (annotated, or settled
	// before) is presented as the op gives it: a reshard after the op
	// will make it what it is.
	j := 0
	for k, v := range n.outs() {
		if v < 0 {
			continue
		}
		jj := j
		j++
		if jj < len(mine) && mine[jj] {
			continue
		}
		x := e.g.vars[v]
		m, ok := d.OutputMapping(e.argName(n, n.nIn+k))
		p := partial(jj)
		if !ok || x.Dist == nil || x.Dist.Mesh == d.Mesh && slices.Equal(x.Dist.Partial, p) && slices.Equal(x.Dist.DimsMapping, m) {
			continue
		}
		if slices.ContainsFunc(kept, func(s saved) bool { return s.v == x }) {
			continue
		}
		kept = append(kept, saved{x, x.Dist})
		x.Dist = &ir.TensorDist{Mesh: d.Mesh, DimsMapping: m, Partial: p}
	}
	own := ops.ReadsOwnPart(n.op.Type)
	for k, v := range n.ins() {
		if v < 0 || n.passes || own {
			continue
		}
		x := e.g.vars[v]
		m, ok := d.InputMapping(e.argName(n, k))
		if !ok || x.Dist == nil || x.Dist.Mesh == d.Mesh && !x.Dist.IsPartial() && slices.Equal(x.Dist.DimsMapping, m) {
			continue
		}
		if slices.ContainsFunc(kept, func(s saved) bool { return s.v == x }) {
			continue
		}
		kept = append(kept, saved{x, x.Dist})
		x.Dist = &ir.TensorDist{Mesh: d.Mesh, DimsMapping: m}
	}
	return func() {
		for _, s := range kept {
			s.v.Dist = s.d
		}
		kept = nil
	}
}

// lossDist is the dist of the loss the module's loss-grad op seeds
// (LOSS@GRAD's forward var), or nil.
func (e *engine) lossDist() *ir.TensorDist {
	for i := range e.g.ops {
		n := &e.g.ops[i]
		if !n.op.Role.IsLossGrad() {
			continue
		}
		for a := range n.op.OutputNames {
			if f := lower.ForwardVar(a); f != "" {
				if v := e.g.p.LookupVar(n.block, f); v != nil {
					return v.Dist
				}
			}
		}
	}
	return nil
}

// trimOp drops the op's own name from the front of an impl's message.
func trimOp(err error, op *ir.Op) string {
	return strings.TrimPrefix(err.Error(), op.String()+": ")
}

func hasPartial(ps [][]ir.Partial) bool {
	for _, p := range ps {
		if len(p) > 0 {
			return true
		}
	}
	return false
}

// pick returns ms[k], or def when the rule leaves arg k unconstrained.
func (e *engine) pick(ms [][]int, k int, def []int) []int {
	if k < len(ms) && ms[k] != nil {
		return e.slab.clone(ms[k])
	}
	return e.slab.clone(def)
}

// addArg appends name's mapping: one per arg, as the annotators write
// them (an op reading one var twice has it twice).
func addArg(as []ir.ArgDist, name string, m []int) []ir.ArgDist {
	return append(as, ir.ArgDist{Name: name, DimsMapping: m})
}

// writeVar writes var v's dist into the module (an annotated var keeps
// its own).
func (e *engine) writeVar(v int32) {
	if e.s.closed[v] || !e.g.dense[v] {
		return
	}
	x := e.g.vars[v]
	if d := x.Dist; d != nil && len(d.DimsMapping) == len(e.s.dims[v]) {
		// Written before by completion (an annotated var is closed):
		// rewrite it in place.
		d.Mesh = e.s.mesh[v].Name
		copy(d.DimsMapping, e.s.dims[v])
		d.Partial = slices.Clone(e.s.partial[v]) // the rule's answer is shared
		d.Local = slices.Clone(e.s.local[v])
		return
	}
	d := e.slab.dist()
	*d = ir.TensorDist{Mesh: e.s.mesh[v].Name, DimsMapping: e.slab.clone(e.s.dims[v]), Partial: slices.Clone(e.s.partial[v]), Local: slices.Clone(e.s.local[v])}
	x.Dist = d
}

// noteReshards lists op n's args whose var's dist is not what the op
// requires of it.
func (e *engine) noteReshards(n *opNode) {
	if n.op.Type == ops.ReshardType {
		return // it is the reshard: its ends differ by design
	}
	d := n.op.Dist
	for k, v := range n.args {
		if v < 0 {
			continue
		}
		name := e.argName(n, k)
		out := k >= n.nIn
		if seenArg(n, k) {
			continue // one reshard serves every read of a var (concat(x, x))
		}
		m, _ := d.InputMapping(name)
		if out {
			m, _ = d.OutputMapping(name)
		}
		vd := e.g.vars[v].Dist
		if vd == nil {
			continue
		}
		same := !spmd.NeedsReshard(ops.ReadsOwnPart(n.op.Type), !out, m, n.mesh, vd, e.m.Mesh(vd.Mesh), n.passes)
		if !same {
			e.rep.reshard(n, name, out, vd, m)
		}
	}
}

// notePartialOutputs lists the outputs of op n (dist d) that it gives
// partial as ps says (per dense output) otherwise than their vars' own
// dists say, on the same mapping: vars it does not own (annotated, or
// settled before).
func (e *engine) notePartialOutputs(n *opNode, d *ir.OpDist, ps [][]ir.Partial, mine []bool) {
	j := 0
	for k, v := range n.outs() {
		if v < 0 {
			continue
		}
		p, own := ps[j], mine[j]
		j++
		vd := e.g.vars[v].Dist
		name := e.argName(n, n.nIn+k)
		m, _ := d.OutputMapping(name)
		if own || vd == nil || vd.Mesh != d.Mesh || !slices.Equal(vd.DimsMapping, m) || slices.Equal(vd.Partial, p) {
			continue
		}
		e.rep.reshardPartial(n, name, vd, m, p)
	}
}

// seenArg reports whether op n's arg k names the var of an earlier arg
// on its side.
func seenArg(n *opNode, k int) bool {
	lo, hi := 0, n.nIn
	if k >= n.nIn {
		lo, hi = n.nIn, len(n.args)
	}
	for j := lo; j < k && j < hi; j++ {
		if n.args[j] == n.args[k] {
			return true
		}
	}
	return false
}

func spellDist(d *ir.OpDist, e *engine, n *opNode) string {
	var sb strings.Builder
	sb.WriteString("[")
	for i, a := range d.Inputs {
		if i > 0 {
			sb.WriteString(", ")
		}
		fmt.Fprintf(&sb, "%s: %s", a.Name, ir.FormatInts(a.DimsMapping))
	}
	sb.WriteString(" ->")
	for i, a := range d.Outputs {
		if i > 0 {
			sb.WriteString(",")
		}
		fmt.Fprintf(&sb, " %s: %s", a.Name, ir.FormatInts(a.DimsMapping))
		if v := e.g.p.LookupVar(n.block, a.Name); v != nil && v.Dist != nil && v.Dist.IsPartial() {
			sb.WriteString(" partial " + ir.FormatPartial(v.Dist.Partial))
		}
	}
	sb.WriteString("]")
	return sb.String()
}
