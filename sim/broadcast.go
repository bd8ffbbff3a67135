package sim

import (
	"slices"

	"github.com/distpass/distpass/ir"
)

// copyIndex maps each element of out (row-major) to the element of x it
// copies, for x's shape right-aligned in out's and each of its dims 1,
// out's, or a divisor of out's (expand_v2 broadcasts dims of 1, tile
// repeats whole dims: out index i reads x index i mod x's dim).
func copyIndex(x, out []int64) ([]int64, bool) {
	off := len(out) - len(x)
	if off < 0 {
		return nil, false
	}
	xd := make([]int64, len(out))
	for i := range out {
		xd[i] = 1
		if i >= off {
			xd[i] = x[i-off]
		}
		if xd[i] <= 0 || out[i]%xd[i] != 0 {
			return nil, false
		}
	}
	xs := strides(xd)
	idx := make([]int64, numel(out))
	pos := make([]int64, len(out))
	for k := range idx {
		var at int64
		for d, p := range pos {
			at += (p % xd[d]) * xs[d]
		}
		idx[k] = at
		for d := len(pos) - 1; d >= 0; d-- {
			if pos[d]++; pos[d] < out[d] {
				break
			}
			pos[d] = 0
		}
	}
	return idx, true
}

// targetInts returns an int list given by attr name, or by tensor slot
// one (its values) or list slot many (one value each), which win.
func targetInts(op *ir.Op, in Args, name, one, many string) []int64 {
	var v []int64
	if t := opt(in, one); t != nil {
		for _, x := range t.Data {
			v = append(v, int64(x))
		}
		return v
	}
	if ts := in[many]; len(ts) > 0 {
		for _, t := range ts {
			if t != nil && t.Numel() > 0 {
				v = append(v, int64(t.Data[0]))
			}
		}
		return v
	}
	v, _ = attrInts(op, name)
	return v
}

// repeated writes x copied into shape out, by copyIndex.
func repeated(op *ir.Op, x *Tensor, out []int64) (Args, error) {
	idx, ok := copyIndex(x.Shape, out)
	if !ok {
		return nil, errf(op, "X %v does not repeat into %v", x.Shape, out)
	}
	o := Zeros(x.DType, out...)
	for k, at := range idx {
		o.Data[k] = x.Data[at]
	}
	return out1("Out", o), nil
}

func expandV2(op *ir.Op, in Args) (Args, error) {
	x, err := one(op, in, "X")
	if err != nil {
		return nil, err
	}
	shape := targetInts(op, in, "shape", "Shape", "expand_shapes_tensor")
	off := len(shape) - x.Rank()
	if off < 0 {
		return nil, errf(op, "shape %v has fewer dims than X %v", shape, x.Shape)
	}
	out := slices.Clone(shape)
	for i, t := range shape {
		switch {
		case t == -1 && i >= off:
			out[i] = x.Shape[i-off]
		case t < 0:
			return nil, errf(op, "shape %v: dim %d is %d", shape, i, t)
		case i >= off && x.Shape[i-off] != 1 && x.Shape[i-off] != t:
			return nil, errf(op, "X %v does not broadcast to shape %v", x.Shape, shape)
		}
	}
	return repeated(op, x, out)
}

func tile(op *ir.Op, in Args) (Args, error) {
	x, err := one(op, in, "X")
	if err != nil {
		return nil, err
	}
	reps := targetInts(op, in, "repeat_times", "RepeatTimes", "repeat_times_tensor")
	n := max(x.Rank(), len(reps))
	out := make([]int64, n)
	for i := range n {
		d, r := int64(1), int64(1)
		if j := i - (n - x.Rank()); j >= 0 {
			d = x.Shape[j]
		}
		if j := i - (n - len(reps)); j >= 0 {
			r = reps[j]
		}
		if r < 1 {
			return nil, errf(op, "repeat_times %v: a repeat below 1", reps)
		}
		out[i] = d * r
	}
	return repeated(op, x, out)
}

// repeatGrad (expand_v2_grad, tile_grad) sums Out@GRAD into X's shape:
// each element of X gets the gradient of every copy made of it.
func repeatGrad(op *ir.Op, in Args) (Args, error) {
	x, err := one(op, in, "X")
	if err != nil {
		return nil, err
	}
	g, err := one(op, in, "Out@GRAD")
	if err != nil {
		return nil, err
	}
	idx, ok := copyIndex(x.Shape, g.Shape)
	if !ok {
		return nil, errf(op, "Out@GRAD %v is not a repeat of X %v", g.Shape, x.Shape)
	}
	dx := Zeros(g.DType, x.Shape...)
	for k, at := range idx {
		dx.Data[at] += g.Data[k]
	}
	return out1("X@GRAD", dx), nil
}

// stack joins the X along a new dim axis.
func stack(op *ir.Op, in Args) (Args, error) {
	xs := in["X"]
	if len(xs) == 0 || xs[0] == nil {
		return nil, errf(op, "no X")
	}
	ax, err := normAxis(op, attrInt(op, "axis", 0), xs[0].Rank()+1)
	if err != nil {
		return nil, err
	}
	parts := make([]*Tensor, len(xs))
	for i, x := range xs {
		if x == nil || !slices.Equal(x.Shape, xs[0].Shape) {
			return nil, errf(op, "X %d: stack needs %d values of one shape %v", i, len(xs), xs[0].Shape)
		}
		parts[i] = reshaped(x, slices.Insert(slices.Clone(x.Shape), ax, 1))
	}
	y, err := Concat(ax, parts...)
	if err != nil {
		return nil, errf(op, "%v", err)
	}
	return out1("Y", y), nil
}

// stackGrad cuts Y@GRAD along axis: X@GRAD i is its slice i.
func stackGrad(op *ir.Op, in Args) (Args, error) {
	g, err := one(op, in, "Y@GRAD")
	if err != nil {
		return nil, err
	}
	if g.Rank() == 0 {
		return nil, errf(op, "Y@GRAD is 0-D")
	}
	ax, err := normAxis(op, attrInt(op, "axis", 0), g.Rank())
	if err != nil {
		return nil, err
	}
	n := len(op.Output("X@GRAD"))
	if int64(n) != g.Shape[ax] {
		return nil, errf(op, "Y@GRAD %v has %d along axis %d, but %d X@GRAD", g.Shape, g.Shape[ax], ax, n)
	}
	out := make([]*Tensor, n)
	for i := range n {
		s, err := g.Slice(ax, int64(i), int64(i)+1)
		if err != nil {
			return nil, errf(op, "%v", err)
		}
		out[i] = reshaped(s, slices.Delete(slices.Clone(s.Shape), ax, ax+1))
	}
	return Args{"X@GRAD": out}, nil
}

// whereK is X where Condition, Y elsewhere, all of one shape.
func whereK(op *ir.Op, in Args) (Args, error) {
	c, x, y, err := whereArgs(op, in)
	if err != nil {
		return nil, err
	}
	o := like(x)
	for i := range o.Data {
		if c.Data[i] != 0 {
			o.Data[i] = x.Data[i]
		} else {
			o.Data[i] = y.Data[i]
		}
	}
	return out1("Out", o), nil
}

// whereGrad routes Out@GRAD to X where Condition holds, to Y elsewhere.
func whereGrad(op *ir.Op, in Args) (Args, error) {
	c, _, _, err := whereArgs(op, in)
	if err != nil {
		return nil, err
	}
	g, err := one(op, in, "Out@GRAD")
	if err != nil {
		return nil, err
	}
	if !slices.Equal(g.Shape, c.Shape) {
		return nil, errf(op, "Out@GRAD %v and Condition %v differ", g.Shape, c.Shape)
	}
	dx, dy := like(g), like(g)
	for i, v := range g.Data {
		if c.Data[i] != 0 {
			dx.Data[i] = v
		} else {
			dy.Data[i] = v
		}
	}
	out := Args{}
	if wants(op, "X@GRAD") {
		out["X@GRAD"] = []*Tensor{dx}
	}
	if wants(op, "Y@GRAD") {
		out["Y@GRAD"] = []*Tensor{dy}
	}
	return out, nil
}

func whereArgs(op *ir.Op, in Args) (c, x, y *Tensor, err error) {
	if c, err = one(op, in, "Condition"); err != nil {
		return
	}
	if x, err = one(op, in, "X"); err != nil {
		return
	}
	if y, err = one(op, in, "Y"); err != nil {
		return
	}
	if !slices.Equal(c.Shape, x.Shape) || !slices.Equal(x.Shape, y.Shape) {
		err = errf(op, "Condition %v, X %v and Y %v: where needs one shape", c.Shape, x.Shape, y.Shape)
	}
	return
}

// flatten2 is X as a matrix: the dims before axis are its rows.
func flatten2(op *ir.Op, in Args) (Args, error) {
	x, err := one(op, in, "X")
	if err != nil {
		return nil, err
	}
	ax := attrInt(op, "axis", 1)
	if ax < 0 || ax > int64(x.Rank()) {
		return nil, errf(op, "attr axis %d out of range [0, %d] for X %v", ax, x.Rank(), x.Shape)
	}
	return view(x, []int64{numel(x.Shape[:ax]), numel(x.Shape[ax:])}), nil
}

// broadcastKernels are the kernels of this file, by op type.
func broadcastKernels() Kernels {
	return Kernels{
		"expand_v2": expandV2, "expand_v2_grad": repeatGrad,
		"tile": tile, "tile_grad": repeatGrad,
		"stack": stack, "stack_grad": stackGrad,
		"where": whereK, "where_grad": whereGrad,
		"flatten2": flatten2, "flatten2_grad": reshape2Grad,
	}
}
