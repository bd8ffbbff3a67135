package sim

import (
	"slices"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/ops"
)

// dtypeAttr reads a dtype attr as verify does (a Paddle code at either
// width, or the table's default); def when neither is there.
func dtypeAttr(op *ir.Op, name string, def ir.DType) (ir.DType, error) {
	v := ops.AttrValue(op, name)
	if v == nil {
		return def, nil
	}
	dt, ok := ops.AttrDType(v)
	if !ok {
		return 0, errf(op, "unknown dtype code %s = %s", name, ops.ValueString(v))
	}
	return dt, nil
}

// fillConstant writes shape filled with value (dtype default f32). A
// str_value attr is not supported; a ValueTensor input overrides value.
func fillConstant(op *ir.Op, in Args) (Args, error) {
	dt, shape, err := randShape(op)
	if err != nil {
		return nil, err
	}
	v := attrFloat(op, "value", 0)
	if t := opt(in, "ValueTensor"); t != nil && t.Numel() > 0 {
		v = t.Data[0]
	}
	return out1("Out", Full(dt, v, shape...)), nil
}

// fillAnyLike writes X's shape filled with value, in dtype (-1: X's).
func fillAnyLike(op *ir.Op, in Args) (Args, error) {
	x, err := one(op, in, "X")
	if err != nil {
		return nil, err
	}
	dt := x.DType
	if c := attrInt(op, "dtype", -1); c != -1 {
		if dt, err = dtypeAttr(op, "dtype", x.DType); err != nil {
			return nil, err
		}
	}
	return out1("Out", Full(dt, attrFloat(op, "value", 0), x.Shape...)), nil
}

func assign(op *ir.Op, in Args) (Args, error) {
	x, err := one(op, in, "X")
	if err != nil {
		return nil, err
	}
	return out1("Out", x.Clone()), nil
}

// reshard is the serial reshard: the logical value does not change, only
// how ranks hold it, and a serial program has one rank holding it all.
// The SPMD runner replaces it (an unlowered reshard is not the identity
// on a rank's part).
func reshard(op *ir.Op, in Args) (Args, error) {
	x, err := one(op, in, "X")
	if err != nil {
		return nil, err
	}
	return out1("Out", x.Clone()), nil
}

// increment adds step (default 1) to a one-element X.
func increment(op *ir.Op, in Args) (Args, error) {
	x, err := one(op, in, "X")
	if err != nil {
		return nil, err
	}
	if x.Numel() != 1 {
		return nil, errf(op, "X shape %v, want one element", x.Shape)
	}
	s := attrFloat(op, "step", 1)
	return out1("Out", mapUnary(x, func(v float64) float64 { return v + s })), nil
}

func logicalNot(op *ir.Op, in Args) (Args, error) {
	x, err := one(op, in, "X")
	if err != nil {
		return nil, err
	}
	out := mapUnary(x, func(v float64) float64 {
		if v == 0 {
			return 1
		}
		return 0
	})
	out.DType = ir.Boolean
	return out1("Out", out), nil
}

// cast converts X to out_dtype (a Paddle code); in_dtype, when given, must
// match X.
func cast(op *ir.Op, in Args) (Args, error) {
	x, err := one(op, in, "X")
	if err != nil {
		return nil, err
	}
	if op.Attrs.Has("in_dtype") {
		dt, err := dtypeAttr(op, "in_dtype", x.DType)
		if err != nil {
			return nil, err
		}
		if dt != x.DType {
			return nil, errf(op, "in_dtype %s but X is %s", dt, x.DType)
		}
	}
	// Absent, out_dtype is the table's default, as verify infers it.
	dt, err := dtypeAttr(op, "out_dtype", x.DType)
	if err != nil {
		return nil, err
	}
	out := x.Clone()
	out.DType = dt
	return out1("Out", out), nil
}

// reshapeShape resolves reshape2's shape attr against X: 0 copies X's dim
// at that position, -1 (at most one) is inferred.
func reshapeShape(op *ir.Op, x *Tensor) ([]int64, error) {
	shape, ok := attrInts(op, "shape")
	if !ok {
		return nil, errf(op, "no shape attr")
	}
	infer := -1
	known := int64(1)
	for i, d := range shape {
		switch {
		case d == 0:
			if i >= x.Rank() {
				return nil, errf(op, "shape %v: 0 at dim %d beyond X %v", shape, i, x.Shape)
			}
			shape[i] = x.Shape[i]
		case d == -1:
			if infer >= 0 {
				return nil, errf(op, "shape %v has two -1", shape)
			}
			infer = i
			continue
		case d < 0:
			return nil, errf(op, "shape %v: bad dim %d", shape, d)
		}
		known *= shape[i]
	}
	n := x.Numel()
	if infer >= 0 {
		if known == 0 || n%known != 0 {
			return nil, errf(op, "cannot reshape X %v to %v", x.Shape, shape)
		}
		shape[infer] = n / known
	}
	if err := checkShape(shape); err != nil || numel(shape) != n {
		return nil, errf(op, "cannot reshape X %v (%d elements) to %v", x.Shape, n, shape)
	}
	return shape, nil
}

// xshape is the XShape output Paddle's reshape2 and transpose2 write: dims
// [0, X's dims...], no elements. The grad kernels read X's shape from it.
func xshape(x *Tensor) *Tensor {
	return &Tensor{DType: x.DType, Shape: append([]int64{0}, x.Shape...), Data: []float64{}}
}

func reshape2(op *ir.Op, in Args) (Args, error) {
	x, err := one(op, in, "X")
	if err != nil {
		return nil, err
	}
	shape, err := reshapeShape(op, x)
	if err != nil {
		return nil, err
	}
	return Args{"Out": {&Tensor{DType: x.DType, Shape: shape, Data: slices.Clone(x.Data)}}, "XShape": {xshape(x)}}, nil
}

// gradShape returns X's shape for a reshape2/transpose2 grad: from the
// XShape input, or from an X input.
func gradShape(op *ir.Op, in Args) ([]int64, error) {
	if xs := opt(in, "XShape"); xs != nil && xs.Rank() >= 1 {
		return slices.Clone(xs.Shape[1:]), nil
	}
	if x := opt(in, "X"); x != nil {
		return slices.Clone(x.Shape), nil
	}
	return nil, errf(op, "neither XShape nor X given")
}

// reshape2Grad is the grad of every view that keeps X's elements in
// order (reshape2, squeeze2, flatten_contiguous_range): Out@GRAD's
// elements in X's shape.
func reshape2Grad(op *ir.Op, in Args) (Args, error) {
	g, err := one(op, in, "Out@GRAD")
	if err != nil {
		return nil, err
	}
	shape, err := gradShape(op, in)
	if err != nil {
		return nil, err
	}
	if numel(shape) != g.Numel() {
		return nil, errf(op, "Out@GRAD %v does not reshape to X %v", g.Shape, shape)
	}
	return out1("X@GRAD", &Tensor{DType: g.DType, Shape: shape, Data: slices.Clone(g.Data)}), nil
}

// permute returns x with dims permuted: out dim i is x dim perm[i].
func permute(op *ir.Op, x *Tensor, perm []int64) (*Tensor, error) {
	r := x.Rank()
	if len(perm) != r {
		return nil, errf(op, "axis %v for X %v", perm, x.Shape)
	}
	seen := make([]bool, r)
	shape := make([]int64, r)
	for i, p := range perm {
		if p < 0 || p >= int64(r) || seen[p] {
			return nil, errf(op, "axis %v is not a permutation for X %v", perm, x.Shape)
		}
		seen[p] = true
		shape[i] = x.Shape[p]
	}
	xs := strides(x.Shape)
	st := make([]int64, r) // x stride of each out dim
	for i, p := range perm {
		st[i] = xs[p]
	}
	out := Zeros(x.DType, shape...)
	ctr := make([]int64, r)
	off := int64(0)
	for k := range out.Data {
		out.Data[k] = x.Data[off]
		for d := r - 1; d >= 0; d-- {
			ctr[d]++
			off += st[d]
			if ctr[d] < shape[d] {
				break
			}
			off -= st[d] * ctr[d]
			ctr[d] = 0
		}
	}
	return out, nil
}

func transpose2(op *ir.Op, in Args) (Args, error) {
	x, err := one(op, in, "X")
	if err != nil {
		return nil, err
	}
	perm, _ := attrInts(op, "axis")
	out, err := permute(op, x, perm)
	if err != nil {
		return nil, err
	}
	return Args{"Out": {out}, "XShape": {xshape(x)}}, nil
}

func transpose2Grad(op *ir.Op, in Args) (Args, error) {
	g, err := one(op, in, "Out@GRAD")
	if err != nil {
		return nil, err
	}
	perm, _ := attrInts(op, "axis")
	inv := make([]int64, len(perm))
	for i, p := range perm {
		if p < 0 || p >= int64(len(perm)) {
			return nil, errf(op, "axis %v is not a permutation", perm)
		}
		inv[p] = int64(i)
	}
	dx, err := permute(op, g, inv)
	if err != nil {
		return nil, err
	}
	return out1("X@GRAD", dx), nil
}

// slice keeps Input[starts:ends] along axes, Paddle's way: a negative
// bound counts from the end, bounds are clamped to the dim, and the
// decrease_axis dims (of size 1) are dropped. Bounds given as tensors
// are not supported.
func slice(op *ir.Op, in Args) (Args, error) {
	x, err := one(op, in, "Input")
	if err != nil {
		return nil, err
	}
	for _, s := range []string{"StartsTensor", "EndsTensor", "StartsTensorList", "EndsTensorList"} {
		if len(in[s]) > 0 {
			return nil, errf(op, "bounds from %s are not supported", s)
		}
	}
	bounds, err := sliceBounds(op, x.Shape)
	if err != nil {
		return nil, err
	}
	t := x
	for _, b := range bounds {
		if t, err = t.Slice(b.dim, b.lo, b.hi); err != nil {
			return nil, errf(op, "%v", err)
		}
	}
	if t == x {
		t = x.Clone()
	}
	if dec, _ := attrInts(op, "decrease_axis"); len(dec) > 0 {
		var shape []int64
		for d, n := range t.Shape {
			if !slices.Contains(dec, int64(d)) {
				shape = append(shape, n)
			} else if n != 1 {
				return nil, errf(op, "decrease_axis %d has size %d, not 1", d, n)
			}
		}
		t.Shape = shape
	}
	return out1("Out", t), nil
}

// sliceBound is what slice keeps of one dim: [lo, hi).
type sliceBound struct {
	dim    int
	lo, hi int64
}

// sliceBounds reads slice's axes, starts and ends against Input's shape,
// Paddle's way: a negative bound counts from the end, bounds are clamped
// to the dim, an end before its start keeps nothing.
func sliceBounds(op *ir.Op, shape []int64) ([]sliceBound, error) {
	axes, _ := attrInts(op, "axes")
	starts, _ := attrInts(op, "starts")
	ends, _ := attrInts(op, "ends")
	if len(starts) != len(axes) || len(ends) != len(axes) {
		return nil, errf(op, "%d axes, %d starts, %d ends", len(axes), len(starts), len(ends))
	}
	bs := make([]sliceBound, len(axes))
	for i, a := range axes {
		d, err := normAxis(op, a, len(shape))
		if err != nil {
			return nil, err
		}
		n := shape[d]
		bound := func(b int64) int64 {
			if b < 0 {
				b += n
			}
			return min(max(b, 0), n)
		}
		lo, hi := bound(starts[i]), bound(ends[i])
		bs[i] = sliceBound{d, lo, max(hi, lo)}
	}
	return bs, nil
}

// sliceGrad puts Out@GRAD back where slice took Out from, in zeros of
// Input's shape: the decreased dims restored, each sliced dim padded
// with zeros before and after.
func sliceGrad(op *ir.Op, in Args) (Args, error) {
	x, err := one(op, in, "Input")
	if err != nil {
		return nil, err
	}
	g, err := one(op, in, "Out@GRAD")
	if err != nil {
		return nil, err
	}
	bounds, err := sliceBounds(op, x.Shape)
	if err != nil {
		return nil, err
	}
	kept := slices.Clone(x.Shape) // Out's shape before decrease_axis
	for _, b := range bounds {
		kept[b.dim] = b.hi - b.lo
	}
	if numel(kept) != numel(g.Shape) {
		return nil, errf(op, "Out@GRAD of shape %v for a slice of shape %v", g.Shape, kept)
	}
	dx := &Tensor{DType: g.DType, Shape: kept, Data: g.Data}
	for _, b := range bounds {
		before, after := slices.Clone(dx.Shape), slices.Clone(dx.Shape)
		before[b.dim], after[b.dim] = b.lo, x.Shape[b.dim]-b.hi
		if dx, err = Concat(b.dim, Zeros(g.DType, before...), dx, Zeros(g.DType, after...)); err != nil {
			return nil, errf(op, "%v", err)
		}
	}
	if len(bounds) == 0 {
		dx = dx.Clone() // nothing sliced: not g's own data
	}
	return out1("Input@GRAD", dx), nil
}

// concat joins the X along axis. An AxisTensor is not supported.
func concat(op *ir.Op, in Args) (Args, error) {
	if len(in["AxisTensor"]) > 0 {
		return nil, errf(op, "an axis from AxisTensor is not supported")
	}
	xs := in["X"]
	if len(xs) == 0 {
		return nil, errf(op, "no X")
	}
	for i, x := range xs {
		if x == nil {
			return nil, errf(op, "X %d has no value", i)
		}
	}
	d, err := normAxis(op, attrInt(op, "axis", 0), xs[0].Rank())
	if err != nil {
		return nil, err
	}
	t, err := Concat(d, xs...)
	if err != nil {
		return nil, errf(op, "%v", err)
	}
	return out1("Out", t), nil
}

// concatGrad cuts Out@GRAD along axis into the X's sizes: X@GRAD.
func concatGrad(op *ir.Op, in Args) (Args, error) {
	if len(in["AxisTensor"]) > 0 {
		return nil, errf(op, "an axis from AxisTensor is not supported")
	}
	g, err := one(op, in, "Out@GRAD")
	if err != nil {
		return nil, err
	}
	xs := in["X"]
	if len(xs) == 0 {
		return nil, errf(op, "no X")
	}
	d, err := normAxis(op, attrInt(op, "axis", 0), g.Rank())
	if err != nil {
		return nil, err
	}
	outs := make([]*Tensor, len(xs))
	at := int64(0)
	for i, x := range xs {
		if x == nil || x.Rank() != g.Rank() {
			return nil, errf(op, "X %d has no value of Out@GRAD's rank %d", i, g.Rank())
		}
		if outs[i], err = g.Slice(d, at, at+x.Shape[d]); err != nil {
			return nil, errf(op, "%v", err)
		}
		at += x.Shape[d]
	}
	if at != g.Shape[d] {
		return nil, errf(op, "the X's dims %d add up to %d, Out@GRAD's is %d", d, at, g.Shape[d])
	}
	return Args{"X@GRAD": outs}, nil
}

// split cuts X along axis into num equal parts, or parts of the sizes
// sections (one -1 takes the rest). Tensor-given axis or sections are not
// supported.
func split(op *ir.Op, in Args) (Args, error) {
	x, err := one(op, in, "X")
	if err != nil {
		return nil, err
	}
	if len(in["AxisTensor"]) > 0 || len(in["SectionsTensorList"]) > 0 {
		return nil, errf(op, "an axis or sections from tensors are not supported")
	}
	d, err := normAxis(op, attrInt(op, "axis", 0), x.Rank())
	if err != nil {
		return nil, err
	}
	n := x.Shape[d]
	sections, _ := attrInts(op, "sections")
	if num := attrInt(op, "num", 0); num > 0 {
		if n%num != 0 {
			return nil, errf(op, "dim %d of size %d does not split into %d", d, n, num)
		}
		sections = make([]int64, num)
		for i := range sections {
			sections[i] = n / num
		}
	}
	rest, free := n, -1
	for i, s := range sections {
		switch {
		case s == -1 && free < 0:
			free = i
		case s < 0:
			return nil, errf(op, "sections %v: a negative size other than one -1", sections)
		default:
			rest -= s
		}
	}
	if free >= 0 {
		sections[free] = rest
		rest = 0
	}
	if rest != 0 || len(sections) == 0 {
		return nil, errf(op, "sections %v do not add up to dim %d of size %d", sections, d, n)
	}
	outs := make([]*Tensor, len(sections))
	at := int64(0)
	for i, s := range sections {
		if outs[i], err = x.Slice(d, at, at+s); err != nil {
			return nil, errf(op, "%v", err)
		}
		at += s
	}
	return Args{"Out": outs}, nil
}

// view returns X's elements in shape, with the XShape output.
func view(x *Tensor, shape []int64) Args {
	return Args{"Out": {&Tensor{DType: x.DType, Shape: shape, Data: slices.Clone(x.Data)}}, "XShape": {xshape(x)}}
}

// flattenContiguousRange merges dims start_axis..stop_axis of X into one;
// a 0-D X becomes [1], as in Paddle.
func flattenContiguousRange(op *ir.Op, in Args) (Args, error) {
	x, err := one(op, in, "X")
	if err != nil {
		return nil, err
	}
	if x.Rank() == 0 {
		return view(x, []int64{1}), nil
	}
	start, err1 := normAxis(op, attrInt(op, "start_axis", 1), x.Rank())
	stop, err2 := normAxis(op, attrInt(op, "stop_axis", 1), x.Rank())
	if err1 != nil || err2 != nil || start > stop {
		return nil, errf(op, "attrs start_axis %d and stop_axis %d are not a range of the dims of X %v",
			attrInt(op, "start_axis", 1), attrInt(op, "stop_axis", 1), x.Shape)
	}
	shape := slices.Concat(x.Shape[:start], []int64{numel(x.Shape[start : stop+1])}, x.Shape[stop+1:])
	return view(x, shape), nil
}

// squeeze2 drops the dims of size 1 that axes names (a named dim of
// another size stays, as in Paddle), or every dim of size 1 when axes is
// empty.
func squeeze2(op *ir.Op, in Args) (Args, error) {
	x, err := one(op, in, "X")
	if err != nil {
		return nil, err
	}
	axes, _ := attrInts(op, "axes")
	drop := make([]bool, x.Rank())
	for _, a := range axes {
		d, err := normAxis(op, a, x.Rank())
		if err != nil {
			return nil, errf(op, "attr axes %v: dim %d out of range for X %v", axes, a, x.Shape)
		}
		drop[d] = x.Shape[d] == 1
	}
	shape := []int64{}
	for d, n := range x.Shape {
		if len(axes) == 0 && n == 1 || drop[d] {
			continue
		}
		shape = append(shape, n)
	}
	return view(x, shape), nil
}

// unsqueeze2 inserts a dim of size 1 at each of axes in turn, a
// negative axis counted from the end of the shape it is inserted into.
// Axes from tensors are not supported.
func unsqueeze2(op *ir.Op, in Args) (Args, error) {
	x, err := one(op, in, "X")
	if err != nil {
		return nil, err
	}
	if len(in["AxesTensor"])+len(in["AxesTensorList"]) > 0 {
		return nil, errf(op, "axes from tensors are not supported")
	}
	axes, _ := attrInts(op, "axes")
	shape := slices.Clone(x.Shape)
	for _, a := range axes {
		r := int64(len(shape))
		if a < 0 {
			a += r + 1
		}
		if a < 0 || a > r {
			return nil, errf(op, "attr axes %v: axis out of range for %d dims", axes, r)
		}
		shape = slices.Insert(shape, int(a), 1)
	}
	return view(x, shape), nil
}

// argMax writes the index of the largest element of each lane along axis
// (of all of X with flatten), the first one on ties, as int64 or dtype.
func argMax(op *ir.Op, in Args) (Args, error) {
	x, err := one(op, in, "X")
	if err != nil {
		return nil, err
	}
	dt := ir.I64
	if attrInt(op, "dtype", -1) != -1 {
		if dt, err = dtypeAttr(op, "dtype", ir.I64); err != nil {
			return nil, err
		}
		if dt != ir.I32 && dt != ir.I64 {
			return nil, errf(op, "attr dtype %s: want int32 or int64", dt)
		}
	}
	if x.Numel() == 0 {
		return nil, errf(op, "X %v has no elements", x.Shape)
	}
	keep := attrBool(op, "keepdims", false)
	if attrBool(op, "flatten", false) || x.Rank() == 0 {
		var shape []int64
		if keep {
			shape = make([]int64, x.Rank())
			for i := range shape {
				shape[i] = 1
			}
		}
		out := Zeros(dt, shape...)
		out.Data[0] = float64(argMaxLane(x.Data, 0, 1, x.Numel()))
		return out1("Out", out), nil
	}
	ax, err := normAxis(op, attrInt(op, "axis", -1), x.Rank())
	if err != nil {
		return nil, err
	}
	shape := slices.Clone(x.Shape[:ax])
	if keep {
		shape = append(shape, 1)
	}
	shape = append(shape, x.Shape[ax+1:]...)
	out := Zeros(dt, shape...)
	k := 0
	lanes(x.Shape, ax, func(base, st int64) {
		out.Data[k] = float64(argMaxLane(x.Data, base, st, x.Shape[ax]))
		k++
	})
	return out1("Out", out), nil
}

// argMaxLane returns the index of the first largest of the n elements at
// base, base+st, ... of d.
func argMaxLane(d []float64, base, st, n int64) int64 {
	best := int64(0)
	for j := int64(1); j < n; j++ {
		if d[base+j*st] > d[base+best*st] {
			best = j
		}
	}
	return best
}

// dataKernels are the kernels of this file, by op type.
func dataKernels() Kernels {
	return Kernels{
		"fill_constant": fillConstant, "assign": assign, "increment": increment,
		"cast": cast, "reshape2": reshape2, "reshape2_grad": reshape2Grad,
		"transpose2": transpose2, "transpose2_grad": transpose2Grad,
		"squeeze2": squeeze2, "squeeze2_grad": reshape2Grad,
		"unsqueeze2": unsqueeze2, "unsqueeze2_grad": reshape2Grad,
		"flatten_contiguous_range": flattenContiguousRange, "flatten_contiguous_range_grad": reshape2Grad,
		"logical_not": logicalNot, "fill_any_like": fillAnyLike,
		ops.ReshardType: reshard, "slice": slice, "slice_grad": sliceGrad, "concat": concat, "concat_grad": concatGrad, "split": split, "arg_max": argMax,
	}
}
