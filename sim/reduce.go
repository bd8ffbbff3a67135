package sim

import (
	"slices"

	"github.com/distpass/distpass/ir"
)

// reducePlan resolves reduce_*'s dims: which dims are reduced, the output
// shape, and for each input element the output element it folds into.
func reducePlan(op *ir.Op, x *Tensor) (outShape []int64, idx []int64, count int64, err error) {
	r := x.Rank()
	red := make([]bool, r)
	dims, ok := attrInts(op, "dim")
	if !ok {
		dims = []int64{0} // Paddle's default; an empty dim folds every dim
	}
	all := attrBool(op, "reduce_all", false) || len(dims) == 0
	for _, d := range dims {
		if r == 0 {
			break
		}
		a, err := normAxis(op, d, r)
		if err != nil {
			return nil, nil, 0, errf(op, "dim %v out of range for shape %v", dims, x.Shape)
		}
		red[a] = true
	}
	keep := attrBool(op, "keep_dim", false)
	full := make([]int64, r) // the output shape with reduced dims as 1
	count = 1
	for i, d := range x.Shape {
		full[i] = d
		if all || red[i] {
			full[i] = 1
			count *= d
		}
	}
	for i, d := range full {
		if keep || !(all || red[i]) {
			outShape = append(outShape, d)
		}
	}
	if outShape == nil {
		outShape = []int64{}
	}
	// map each input element to its output element: invert broadcasting
	idx = broadcastIndex(x.Shape, full)
	return outShape, idx, count, nil
}

func reduce(isMean bool) Kernel {
	return func(op *ir.Op, in Args) (Args, error) {
		x, err := one(op, in, "X")
		if err != nil {
			return nil, err
		}
		shape, idx, count, err := reducePlan(op, x)
		if err != nil {
			return nil, err
		}
		dt := x.DType
		if !isMean {
			// reduce_sum's dtype is out_dtype, else int64 for bool and
			// int32 X (Paddle's SumRawInferMeta), else X's.
			if code := attrInt(op, "out_dtype", -1); code >= 0 {
				d, ok := ir.DTypeFromPaddle(code)
				if !ok {
					return nil, errf(op, "out_dtype %d is not a dtype", code)
				}
				dt = d
			} else if dt == ir.Boolean || dt == ir.I32 {
				dt = ir.I64
			}
		}
		out := Zeros(dt, shape...)
		for i, v := range x.Data {
			out.Data[idx[i]] += v
		}
		if isMean && count > 0 {
			for i := range out.Data {
				out.Data[i] /= float64(count)
			}
		}
		return out1("Out", out), nil
	}
}

func reduceGrad(isMean bool) Kernel {
	return func(op *ir.Op, in Args) (Args, error) {
		x, err := one(op, in, "X")
		if err != nil {
			return nil, err
		}
		g, err := one(op, in, "Out@GRAD")
		if err != nil {
			return nil, err
		}
		shape, idx, count, err := reducePlan(op, x)
		if err != nil {
			return nil, err
		}
		if !slices.Equal(g.Shape, shape) {
			return nil, errf(op, "Out@GRAD shape %v, want %v for X %v", g.Shape, shape, x.Shape)
		}
		f := 1.0
		if isMean && count > 0 {
			f = 1 / float64(count)
		}
		dx := Zeros(g.DType, x.Shape...)
		for i := range dx.Data {
			dx.Data[i] = g.Data[idx[i]] * f
		}
		return out1("X@GRAD", dx), nil
	}
}

// mean averages all of X into a 0-D Out.
func mean(op *ir.Op, in Args) (Args, error) {
	x, err := one(op, in, "X")
	if err != nil {
		return nil, err
	}
	if x.Numel() == 0 {
		return nil, errf(op, "mean of empty X %v", x.Shape)
	}
	s := 0.0
	for _, v := range x.Data {
		s += v
	}
	return out1("Out", Scalar(x.DType, s/float64(x.Numel()))), nil
}

func meanGrad(op *ir.Op, in Args) (Args, error) {
	x, err := one(op, in, "X")
	if err != nil {
		return nil, err
	}
	g, err := one(op, in, "Out@GRAD")
	if err != nil {
		return nil, err
	}
	if g.Numel() != 1 {
		return nil, errf(op, "Out@GRAD shape %v, want one element", g.Shape)
	}
	return out1("X@GRAD", Full(g.DType, g.Data[0]/float64(x.Numel()), x.Shape...)), nil
}

// sum adds the tensors of its X list, which must share a shape.
func sum(op *ir.Op, in Args) (Args, error) {
	xs := in["X"]
	if len(xs) == 0 {
		return nil, errf(op, "sum of no inputs")
	}
	out := xs[0].Clone()
	for _, x := range xs[1:] {
		if !slices.Equal(x.Shape, out.Shape) {
			return nil, errf(op, "sum of shapes %v and %v", out.Shape, x.Shape)
		}
		for i, v := range x.Data {
			out.Data[i] += v
		}
	}
	return out1("Out", out), nil
}

// reduceKernels are the kernels of this file, by op type.
func reduceKernels() Kernels {
	return Kernels{
		"reduce_sum": reduce(false), "reduce_sum_grad": reduceGrad(false),
		"reduce_mean": reduce(true), "reduce_mean_grad": reduceGrad(true),
		"mean": mean, "mean_grad": meanGrad,
		"sum": sum,
	}
}
