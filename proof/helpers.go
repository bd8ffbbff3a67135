package proof

import (
	"slices"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/ops"
)

// The reshard helpers a lowering emits around its collectives (origin_op
// names the serial reshard): split, concat and slice move blocks within
// a rank's tensor, so they are followed on layouts.

// split follows split(X) -> Out[...] along axis, num equal parts or
// sections.
func (p *prover) split(op *ir.Op) {
	x, outs := firstArg(op.Input("X")), op.Output("Out")
	in := p.read(x)
	if in.unknown || len(op.Input("AxisTensor")) > 0 || len(op.Input("SectionsTensorList")) > 0 {
		p.unknownIf(op, in, "a split by tensors")
		return
	}
	lay, err := p.layoutOf(in)
	if err != nil {
		p.unknownOut(op, err.Error())
		return
	}
	axis, _ := ir.AsInt(op.Attrs.Get("axis"))
	a := int(axis)
	if a < 0 {
		a += len(lay.seg)
	}
	rows := lay.shape()[min(max(a, 0), len(lay.seg)-1)]
	var sizes []int64
	if secs, ok := ir.AsInts(ops.AttrValue(op, "sections")); ok && len(secs) > 0 {
		sizes = slices.Clone(secs)
	} else if num, _ := ir.AsInt(op.Attrs.Get("num")); num > 0 && rows >= 0 && rows%num == 0 {
		for range num {
			sizes = append(sizes, rows/num)
		}
	}
	if a < 0 || a >= len(lay.seg) || len(sizes) != len(outs) || slices.Contains(sizes, -1) {
		p.unknownOut(op, "a split the proof cannot size")
		return
	}
	var off int64
	for k, n := range sizes {
		l, err := lay.take(a, off, off+n)
		if err != nil {
			p.unknownOut(op, err.Error())
			return
		}
		off += n
		p.write(outs[k], p.with(in, l.merge()))
	}
}

// concat follows concat(X[...]) -> Out along axis.
func (p *prover) concat(op *ir.Op) {
	xs, out := op.Input("X"), firstArg(op.Output("Out"))
	if len(op.Input("AxisTensor")) > 0 || len(xs) == 0 {
		p.unknownOut(op, "a concat by a tensor axis")
		return
	}
	axis, _ := ir.AsInt(op.Attrs.Get("axis"))
	var (
		ls    []*layout
		first *value // the first part that is not a constant
	)
	ins := make([]*value, len(xs))
	for i, x := range xs {
		if ins[i] = p.read(x); ins[i].unknown {
			p.write(out, &value{unknown: true})
			return
		}
		if first == nil && (ins[i].lay == nil || !ins[i].lay.allFill()) {
			first = ins[i]
		}
	}
	if first == nil {
		first = ins[0]
	}
	for _, in := range ins {
		// A constant (padding) joins any part; the others must be of one
		// serial var, owing alike, with one factor.
		constant := in.lay != nil && in.lay.allFill()
		if !constant && (p.canon(in.src) != p.canon(first.src) || !slices.Equal(in.owed, first.owed) || in.coef != first.coef) {
			p.unknownOut(op, "a concat of "+first.src+" and "+in.src+", or of parts owing differently")
			return
		}
		l, err := p.layoutOf(in)
		if err != nil {
			p.unknownOut(op, err.Error())
			return
		}
		// Each part in this rank's coordinates: they may be of two meshes.
		if in.mesh != first.mesh && in.mesh != "" {
			c, _, err := p.coordOn(in.mesh)
			if err != nil {
				p.unknownOut(op, err.Error())
				return
			}
			l = l.at(c)
		}
		ls = append(ls, l)
	}
	a := int(axis)
	if a < 0 {
		a += len(ls[0].seg)
	}
	l, err := concatLayouts(ls, a)
	if err != nil {
		p.unknownOut(op, err.Error())
		return
	}
	p.write(out, p.with(first, l.merge()))
}

// slice follows slice(Input) -> Out: starts and ends along axes, no dim
// dropped.
func (p *prover) slice(op *ir.Op) {
	x, out := firstArg(op.Input("Input")), firstArg(op.Output("Out"))
	in := p.read(x)
	axes, _ := ir.AsInts(ops.AttrValue(op, "axes"))
	starts, _ := ir.AsInts(ops.AttrValue(op, "starts"))
	ends, _ := ir.AsInts(ops.AttrValue(op, "ends"))
	dec, _ := ir.AsInts(ops.AttrValue(op, "decrease_axis"))
	if in.unknown || len(dec) > 0 || len(axes) != len(starts) || len(axes) != len(ends) || len(op.Input("StartsTensor")) > 0 ||
		len(op.Input("EndsTensor")) > 0 || len(op.Input("StartsTensorList")) > 0 || len(op.Input("EndsTensorList")) > 0 {
		p.unknownIf(op, in, "a slice by tensors or dropping dims")
		return
	}
	lay, err := p.layoutOf(in)
	if err != nil {
		p.unknownOut(op, err.Error())
		return
	}
	shape := lay.shape()
	for k, ax := range axes {
		a := int(ax)
		if a < 0 {
			a += len(shape)
		}
		if a < 0 || a >= len(shape) || shape[a] < 0 {
			p.unknownOut(op, "a slice of a dim of unknown size")
			return
		}
		lo, hi := clampIndex(starts[k], shape[a]), clampIndex(ends[k], shape[a])
		if hi < lo {
			hi = lo
		}
		if lay, err = lay.take(a, lo, hi); err != nil {
			p.unknownOut(op, err.Error())
			return
		}
	}
	p.write(out, p.with(in, lay.merge()))
}

func clampIndex(i, n int64) int64 {
	if i < 0 {
		i += n
	}
	return min(max(i, 0), n)
}

// with returns in's value laid out as l.
func (p *prover) with(in *value, l *layout) *value {
	return &value{src: in.src, mesh: in.mesh, lay: l, owed: slices.Clone(in.owed), coef: in.coef}
}

// unknownIf marks op's outputs unknown: silently when its input is (the
// proof said why there), else for why.
func (p *prover) unknownIf(op *ir.Op, in *value, why string) {
	if in.unknown {
		for a := range op.OutputNames {
			p.write(a, &value{unknown: true})
		}
		return
	}
	p.unknownOut(op, why)
}
