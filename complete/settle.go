package complete

import (
	"errors"
	"slices"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/lower"
	"github.com/distpass/distpass/ops"
	"github.com/distpass/distpass/spmd"
)

// settle gives every op its dist and every var its own, in settling
// order, then writes them into the module.
func (e *engine) settle() error {
	var errs []error
	for i := range e.g.ops {
		n := &e.g.ops[i]
		local := e.localOuts(e.localBuf[:0], n)
		var err error
		switch {
		case n.fixed:
			e.settleFixed(n)
		case n.op.Role.IsBackward() && n.op.Fwd != 0:
			err = e.settleGrad(n)
		default:
			err = e.settleRule(n)
		}
		if err != nil {
			errs = append(errs, err)
		}
		if len(local) > 0 {
			e.settleLocal(n, local)
		}
		e.localBuf = local
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	for v := range e.g.vars {
		e.writeVar(int32(v))
	}
	return nil
}

// settleFixed keeps a user-annotated op's dist; its unproduced args and
// outputs without a dist take its mappings.
func (e *engine) settleFixed(n *opNode) {
	d := n.op.Dist
	for k, v := range n.args {
		if v < 0 || e.s.settled[v] {
			continue
		}
		name := e.argName(n, k)
		m, ok := d.OutputMapping(name)
		if k < n.nIn {
			m, ok = d.InputMapping(name)
		}
		if ok && len(m) == len(e.s.dims[v]) {
			copy(e.s.dims[v], m)
		}
		e.s.settled[v] = true
	}
	e.rep.Ops.Kept++
	for _, v := range n.args {
		if v >= 0 {
			e.writeVar(v) // its reshards are compared with the vars' dists
		}
	}
	e.noteReshards(n)
}

// settledDims returns var v's settled mapping, or for an unsettled var
// (unproduced, or read before its producer in a loop) its fixpoint one,
// settling it.
func (e *engine) settledDims(v int32) []int {
	if !e.s.settled[v] {
		e.s.settled[v] = true
		e.writeVar(v)
	}
	return e.s.dims[v]
}

// setDims settles var v's mapping to m, given by op i: the dims it
// changes come from the op's other args.
func (e *engine) setDims(i, v int32, m []int) {
	cur := e.s.dims[v]
	for d, k := range m {
		if d < len(cur) && cur[d] != k {
			cur[d] = -1
			if k >= 0 {
				e.s.origin[v][d] = e.source(i, v, k)
			} else {
				e.s.origin[v][d] = step{op: -1, from: -1}
			}
			cur[d] = k
		}
	}
}

// readAsForward makes the args of n, the grad op of an op the
// rule-based impl lowers, read each forward var (and the grad of one)
// as the forward op read or wrote it rather than as its var is: a
// forward op that reads a resharded input (a column-parallel matmul's
// all-gathered X) has a grad op that reads the same, not one whose rule
// starts again from the var's dist.
func (e *engine) readAsForward(n *opNode, ins, outs [][]int) {
	fd := n.gradOf
	as := func(k int, cur []int) []int {
		name := e.argName(n, k)
		if fv := lower.ForwardVar(name); fv != "" {
			name = fv
		}
		m, ok := fd.InputMapping(name)
		if !ok {
			m, ok = fd.OutputMapping(name)
		}
		if ok && len(m) == len(cur) {
			return m
		}
		return cur
	}
	for k, v := range n.ins() {
		if v >= 0 && ins[k] != nil {
			ins[k] = as(k, ins[k])
		}
	}
	// A grad output is split as its forward var was where the forward
	// op had it, not as the fixpoint left the grad var.
	for k, v := range n.outs() {
		if v >= 0 && outs[k] != nil {
			outs[k] = as(n.nIn+k, outs[k])
		}
	}
}

// settleRule settles a forward, loss-grad or optimizer op by its rule.
func (e *engine) settleRule(n *opNode) error {
	ins := make([][]int, n.nIn)
	var fresh []int // inputs first settled here: they take what the op requires
	for k, v := range n.ins() {
		switch {
		case v < 0:
		case e.s.mesh[v] == n.mesh:
			if !e.s.settled[v] {
				fresh = append(fresh, k)
			}
			ins[k] = e.settledDims(v)
		case alike(e.s.mesh[v], n.mesh):
			ins[k] = e.settledDims(v)
		}
	}
	outs := make([][]int, len(n.args)-n.nIn)
	for k, v := range n.outs() {
		if v >= 0 && e.s.mesh[v] == n.mesh {
			outs[k] = e.s.dims[v]
		}
	}
	if n.gradOf != nil {
		e.readAsForward(n, ins, outs)
	}
	var res spmd.Sharding
	e.buildRule(n)
	switch {
	case n.rule == nil:
		res = replicated(ins, outs)
		e.barrier(n)
	default:
		f, ferr := e.forward(n, ins)
		if ferr != nil {
			// The inputs' dists cannot be met together (a dim split along
			// two mesh dims): the earlier inputs keep theirs, as Paddle's
			// merge keeps its first, and the later ones are resharded to
			// what the rule then requires.
			if ins2, f2, ok := e.firstWins(n, ins); ok {
				e.rep.ruleConflict(n, ferr, ins, f2.Inputs)
				ins, f, ferr = ins2, f2, nil
			}
		}
		req := ins
		if ferr == nil {
			req = f.Inputs
			if anySplit(outs) {
				if b, berr := e.backward(n, outs); berr == nil {
					req = e.joinAll(n, f.Inputs, b.Inputs)
				}
			}
		}
		fin, err := f, ferr
		if ferr != nil || !sameMappings(req, ins) {
			// The rule reads its inputs as it requires them.
			fin, err = e.forward(n, req)
		}
		if n.op.Role.IsLoss() && err == nil {
			// The trained loss may be partial only along the mesh dims that
			// split the batch: the data-parallel sync averages the param
			// grads over those alone. Any other is gathered first.
			if drop := e.nonBatchPartials(n, fin); len(drop) > 0 {
				req = withoutMeshDims(fin.Inputs, drop)
				fin, err = e.forward(n, req)
			}
		}
		for range n.mesh.Shape {
			// A mesh dim that would split an output dim it does not divide
			// (a -1 batch met a known one) splits none of the op's args.
			drop := e.unevenOutputs(n, fin)
			if err != nil || len(drop) == 0 {
				break
			}
			req = withoutMeshDims(fin.Inputs, drop)
			fin, err = e.forward(n, req)
		}
		if err != nil {
			// What the inputs are cannot be met together (a Strict rule's
			// mesh dim on two dims): the op reads them replicated.
			e.rep.ruleError(n, err)
			fin = replicated(ins, outs)
		}
		res = fin
	}
	for _, k := range fresh {
		v := n.args[k]
		if k < len(res.Inputs) && res.Inputs[k] != nil && !e.s.closed[v] {
			e.adopt(n, v, res.Inputs[k])
		}
	}
	res = e.passPartial(n, res)
	return e.place(n, res)
}

// passPartial carries a partial X through an op that is linear in it
// (ops.PassesPartial) when the op reads X as it is: Out is partial
// alike, and X needs no reshard.
func (e *engine) passPartial(n *opNode, res spmd.Sharding) spmd.Sharding {
	n.passes = false
	if n.op.Type == "sum" {
		return e.passPartials(n, res)
	}
	if n.nIn != 1 || len(n.args) != 2 || n.args[0] < 0 || n.args[1] < 0 {
		return res
	}
	x := n.args[0]
	p := e.s.partial[x]
	if len(p) == 0 || e.g.vars[x].Dist == nil || len(res.Inputs) != 1 || len(res.Outputs) != 1 ||
		!slices.Equal(res.Inputs[0], e.s.dims[x]) || !ops.PassesPartial(n.op, p) {
		return res
	}
	if o := n.args[1]; e.partialFixed(o, p) {
		return res // Out is annotated otherwise: X is read whole
	}
	n.passes = true
	res.Partial = [][]ir.Partial{p} // a new slice: res may be the memo's
	return res
}

// passPartials carries through a sum (the grad parts of a var read by
// several ops) inputs all partial alike that it reads as they are: its
// Out is their sum's part, and each part needs no reshard (the column-
// parallel q, k and v matmuls' X@GRAD are then reduced once).
func (e *engine) passPartials(n *opNode, res spmd.Sharding) spmd.Sharding {
	if len(n.args)-n.nIn != 1 || len(res.Inputs) != n.nIn || len(res.Outputs) != 1 {
		return res
	}
	var p []ir.Partial
	for k, x := range n.ins() {
		if x < 0 || e.g.vars[x].Dist == nil || !slices.Equal(res.Inputs[k], e.s.dims[x]) {
			return res
		}
		if k == 0 {
			p = e.s.partial[x]
		}
		if len(p) == 0 || !slices.Equal(e.s.partial[x], p) {
			return res
		}
	}
	parts := make([]bool, n.nIn)
	for k := range parts {
		parts[k] = true
	}
	if o := n.args[n.nIn]; o < 0 || !ops.LinearInParts(n.op, parts) ||
		e.partialFixed(o, p) {
		return res
	}
	n.passes = true
	res.Partial = [][]ir.Partial{p}
	return res
}

// firstWins finds the longest run of leading inputs whose dists the
// rule accepts together, the others given as replicated for the rule
// to split as it requires.
func (e *engine) firstWins(n *opNode, ins [][]int) ([][]int, spmd.Sharding, bool) {
	for j := len(ins) - 1; j >= 1; j-- {
		trial := slices.Clone(ins)
		for k := j; k < len(trial); k++ {
			if trial[k] != nil {
				trial[k] = make([]int, len(trial[k]))
				for d := range trial[k] {
					trial[k][d] = -1 // replicated, for the rule to split
				}
			}
		}
		if f, err := e.forward(n, trial); err == nil {
			return trial, f, true
		}
	}
	return nil, spmd.Sharding{}, false
}

// nonBatchPartials returns the mesh dims that res makes loss op n's
// outputs partial along, other than the one splitting dim 0 (the batch)
// of its first dense input.
func (e *engine) nonBatchPartials(n *opNode, res spmd.Sharding) []int {
	batch := -1
	for k := range n.ins() {
		if k < len(res.Inputs) && res.Inputs[k] != nil {
			if len(res.Inputs[k]) > 0 {
				batch = res.Inputs[k][0]
			}
			break
		}
	}
	var drop []int
	for _, ps := range res.Partial {
		for _, p := range ps {
			if p.Dim != batch && !slices.Contains(drop, p.Dim) {
				drop = append(drop, p.Dim)
			}
		}
	}
	return drop
}

// unevenOutputs returns the mesh dims that res would split an output
// dim of op n along without dividing it, listing each in the report.
func (e *engine) unevenOutputs(n *opNode, res spmd.Sharding) []int {
	var drop []int
	for k, v := range n.outs() {
		if v < 0 || k >= len(res.Outputs) {
			continue
		}
		sh := e.g.vars[v].Type.Shape
		for d, x := range res.Outputs[k] {
			if x >= 0 && d < len(sh) && !divides(sh[d], n.mesh.Shape[x]) {
				e.uneven(n.idx, v, d, x)
				if !slices.Contains(drop, x) {
					drop = append(drop, x)
				}
			}
		}
	}
	return drop
}

// withoutMeshDims returns ms with the mesh dims drop replicated.
func withoutMeshDims(ms [][]int, drop []int) [][]int {
	out := make([][]int, len(ms))
	for i, m := range ms {
		if m == nil {
			continue
		}
		out[i] = slices.Clone(m)
		for d, x := range out[i] {
			if slices.Contains(drop, x) {
				out[i][d] = -1
			}
		}
	}
	return out
}

// adopt gives var v, unproduced and read first by op n, what n
// requires of it where its fixpoint mapping leaves a dim replicated (an
// optimizer's state, which the fixpoint does not reach, follows its
// Param so).
func (e *engine) adopt(n *opNode, v int32, req []int) {
	cur := e.s.dims[v]
	if len(req) != len(cur) {
		return
	}
	m := slices.Clone(cur)
	sh := e.g.vars[v].Type.Shape
	for d, k := range req {
		if k >= 0 && m[d] < 0 && !slices.Contains(m, k) && divides(sh[d], n.mesh.Shape[k]) {
			m[d] = k
		}
	}
	if !slices.Equal(m, cur) {
		e.setDims(n.idx, v, m)
		e.writeVar(v)
	}
}

// anySplit reports whether a mapping splits a dim: a rule's backward
// learns nothing from replicated outputs.
func anySplit(ms [][]int) bool {
	for _, m := range ms {
		for _, k := range m {
			if k >= 0 {
				return true
			}
		}
	}
	return false
}

// sameMappings reports whether a and b map alike (nil is not []).
func sameMappings(a, b [][]int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if (a[i] == nil) != (b[i] == nil) || !slices.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}

// joinAll joins each input's forward and backward requirement, keeping
// only mesh dims that divide the dim.
func (e *engine) joinAll(n *opNode, f, b [][]int) [][]int {
	out := make([][]int, len(f))
	for k := range f {
		var bk []int
		if k < len(b) {
			bk = b[k]
		}
		j := joinReq(f[k], bk)
		if v := n.args[k]; v >= 0 && j != nil && !slices.Equal(j, f[k]) {
			sh := e.g.vars[v].Type.Shape
			j = slices.Clone(j)
			for d, x := range j {
				if x >= 0 && (f[k] == nil || f[k][d] != x) && (d >= len(sh) || !divides(sh[d], n.mesh.Shape[x])) {
					j[d] = -1
				}
			}
		}
		out[k] = j
	}
	return out
}

// replicated is the barrier's sharding: every dense arg replicated.
func replicated(ins, outs [][]int) spmd.Sharding {
	rep := func(ms [][]int) [][]int {
		out := make([][]int, len(ms))
		for i, m := range ms {
			if m != nil {
				out[i] = make([]int, len(m))
				for d := range out[i] {
					out[i][d] = -1
				}
			}
		}
		return out
	}
	return spmd.Sharding{Inputs: rep(ins), Outputs: rep(outs), Partial: make([][]ir.Partial, len(outs))}
}
