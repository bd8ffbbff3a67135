package sim

import (
	"slices"

	"github.com/distpass/distpass/ir"
)

func dtypeAttr(op *ir.Op, name string, def ir.DType) (ir.DType, error) {
	if !op.Attrs.Has(name) {
		return def, nil
	}
	code := attrInt(op, name, -1)
	dt, ok := ir.DTypeFromPaddle(code)
	if !ok {
		return 0, errf(op, "unknown dtype code %s = %d", name, code)
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
	if !op.Attrs.Has("out_dtype") {
		return nil, errf(op, "no out_dtype")
	}
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
