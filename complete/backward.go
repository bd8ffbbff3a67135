package complete

import (
	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/lower"
)

// settleGrad settles a grad op by its forward op, as Paddle's
// complete_backward_annotation does and as the impls' backward lowering
// expects: the forward op's mesh and impl; each forward var the forward
// op's mapping of it; an input X@GRAD the forward op's mapping of X
// (its output), an output X@GRAD the same of X (its input); the grads
// whole (the impl's backward reduces what its grad op leaves partial,
// the data-parallel sync of param grads included).
func (e *engine) settleGrad(n *opNode) error {
	fi, ok := e.byID[n.op.Fwd]
	if !ok {
		return e.settleRule(n)
	}
	f := &e.g.ops[fi]
	fd := f.op.Dist
	if fd == nil {
		return e.settleRule(n)
	}
	if fd.ImplType == lower.SPMDType {
		n.gradOf = fd
		return e.settleRule(n)
	}
	d := e.slab.opDist()
	*d = ir.OpDist{Mesh: fd.Mesh, ImplType: fd.ImplType, ImplIndex: fd.ImplIndex,
		Inputs: e.slab.argDists(n.nIn), Outputs: e.slab.argDists(len(n.args) - n.nIn)}
	fwdMapping := func(name string, inputFirst bool) ([]int, bool) {
		a, b := fd.OutputMapping, fd.InputMapping
		if inputFirst {
			a, b = b, a
		}
		if m, ok := a(name); ok {
			return m, true
		}
		return b(name)
	}
	for k, v := range n.args {
		if v < 0 {
			continue
		}
		name := e.argName(n, k)
		out := k >= n.nIn
		var m []int
		fv := lower.ForwardVar(name)
		switch {
		case fv != "":
			var ok bool
			if m, ok = fwdMapping(fv, out); !ok {
				if x := e.g.p.LookupVar(n.block, fv); x != nil && x.Dist != nil {
					m = x.Dist.DimsMapping
				}
			}
		case !out:
			m, _ = fwdMapping(name, true)
		}
		if len(m) != len(e.s.dims[v]) {
			m = e.s.dims[v] // not a grad of a var of its shape: as it is
		}
		m = e.slab.clone(m)
		if out {
			d.Outputs = addArg(d.Outputs, name, m)
			if !e.s.settled[v] {
				e.s.settled[v] = true
				e.setDims(n.idx, v, m)
				e.s.partial[v] = nil
				e.writeVar(v)
			}
		} else {
			e.settledDims(v)
			d.Inputs = addArg(d.Inputs, name, m)
		}
	}
	n.op.Dist = d
	e.rep.Ops.Completed++
	e.noteReshards(n)
	return nil
}
