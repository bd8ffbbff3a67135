package sim

import (
	"math"
	"slices"

	"github.com/distpass/distpass/ir"
)

// binop is an elementwise binary function with its partial derivatives
// (dx, dy nil for ops without a grad kernel).
type binop struct {
	f      func(x, y float64) float64
	dx, dy func(x, y float64) float64
}

var (
	opAdd = binop{
		f:  func(x, y float64) float64 { return x + y },
		dx: func(x, y float64) float64 { return 1 },
		dy: func(x, y float64) float64 { return 1 },
	}
	opSub = binop{
		f:  func(x, y float64) float64 { return x - y },
		dx: func(x, y float64) float64 { return 1 },
		dy: func(x, y float64) float64 { return -1 },
	}
	opMul = binop{
		f:  func(x, y float64) float64 { return x * y },
		dx: func(x, y float64) float64 { return y },
		dy: func(x, y float64) float64 { return x },
	}
	opDiv = binop{
		f:  func(x, y float64) float64 { return x / y },
		dx: func(x, y float64) float64 { return 1 / y },
		dy: func(x, y float64) float64 { return -x / (y * y) },
	}
	opMax = binop{f: math.Max}
	opMin = binop{f: math.Min}
)

// bcast is the broadcast plan of an elementwise op: the output shape and,
// per output element, the element of X and of Y it reads.
type bcast struct {
	out    []int64
	xi, yi []int64
}

// planBroadcast applies Paddle's elementwise rule: the lower-rank operand's
// dims line up with the other's starting at axis (-1: trailing), then
// dims of size 1 broadcast.
func planBroadcast(op *ir.Op, x, y *Tensor) (*bcast, error) {
	axis := attrInt(op, "axis", -1)
	xs, ys := x.Shape, y.Shape
	swap := len(ys) > len(xs)
	if swap {
		xs, ys = ys, xs
	}
	if axis < 0 {
		axis = int64(len(xs) - len(ys))
	}
	if axis > int64(len(xs)-len(ys)) {
		return nil, errf(op, "shapes %v and %v: axis %d out of range", x.Shape, y.Shape, axis)
	}
	padded := make([]int64, len(xs))
	for i := range padded {
		padded[i] = 1
	}
	copy(padded[axis:], ys)
	big := xs
	if swap {
		big, padded = padded, big
	}
	// big is X's shape, padded is Y's, both of len(xs) dims
	out, ok := broadcastShape(big, padded)
	if !ok {
		return nil, errf(op, "shapes %v and %v do not broadcast (axis %d)", x.Shape, y.Shape, attrInt(op, "axis", -1))
	}
	return &bcast{out: out, xi: broadcastIndex(out, big), yi: broadcastIndex(out, padded)}, nil
}

// broadcastXY reads the X and Y of a binary op and plans their
// broadcast.
func broadcastXY(op *ir.Op, in Args) (x, y *Tensor, p *bcast, err error) {
	if x, err = one(op, in, "X"); err != nil {
		return nil, nil, nil, err
	}
	if y, err = one(op, in, "Y"); err != nil {
		return nil, nil, nil, err
	}
	p, err = planBroadcast(op, x, y)
	return x, y, p, err
}

func binary(b binop) Kernel {
	return func(op *ir.Op, in Args) (Args, error) {
		x, y, p, err := broadcastXY(op, in)
		if err != nil {
			return nil, err
		}
		out := Zeros(x.DType, p.out...)
		for i := range out.Data {
			out.Data[i] = b.f(x.Data[p.xi[i]], y.Data[p.yi[i]])
		}
		return out1("Out", out), nil
	}
}

// binaryGrad sums each upstream element's contribution into the operand
// element it read, which reduces over broadcast dims.
func binaryGrad(b binop) Kernel {
	return func(op *ir.Op, in Args) (Args, error) {
		x, y, p, err := broadcastXY(op, in)
		if err != nil {
			return nil, err
		}
		g, err := one(op, in, "Out@GRAD")
		if err != nil {
			return nil, err
		}
		if !slices.Equal(g.Shape, p.out) {
			return nil, errf(op, "Out@GRAD shape %v, want %v", g.Shape, p.out)
		}
		out := Args{}
		if wants(op, "X@GRAD") {
			dx := like(x)
			for i, gv := range g.Data {
				dx.Data[p.xi[i]] += gv * b.dx(x.Data[p.xi[i]], y.Data[p.yi[i]])
			}
			out["X@GRAD"] = []*Tensor{dx}
		}
		if wants(op, "Y@GRAD") {
			dy := like(y)
			for i, gv := range g.Data {
				dy.Data[p.yi[i]] += gv * b.dy(x.Data[p.xi[i]], y.Data[p.yi[i]])
			}
			out["Y@GRAD"] = []*Tensor{dy}
		}
		return out, nil
	}
}

// compare returns a comparison kernel writing a bool Out.
func compare(f func(a, b float64) bool) Kernel {
	return func(op *ir.Op, in Args) (Args, error) {
		x, y, p, err := broadcastXY(op, in)
		if err != nil {
			return nil, err
		}
		out := Zeros(ir.Boolean, p.out...)
		for i := range out.Data {
			if f(x.Data[p.xi[i]], y.Data[p.yi[i]]) {
				out.Data[i] = 1
			}
		}
		return out1("Out", out), nil
	}
}

// elementwiseKernels are the kernels of this file, by op type.
func elementwiseKernels() Kernels {
	return Kernels{
		"elementwise_add": binary(opAdd), "elementwise_add_grad": binaryGrad(opAdd),
		"elementwise_sub": binary(opSub), "elementwise_sub_grad": binaryGrad(opSub),
		"elementwise_mul": binary(opMul), "elementwise_mul_grad": binaryGrad(opMul),
		"elementwise_div": binary(opDiv), "elementwise_div_grad": binaryGrad(opDiv),
		"elementwise_max": binary(opMax), "elementwise_min": binary(opMin),
		"less_than":     compare(func(a, b float64) bool { return a < b }),
		"less_equal":    compare(func(a, b float64) bool { return a <= b }),
		"greater_than":  compare(func(a, b float64) bool { return a > b }),
		"greater_equal": compare(func(a, b float64) bool { return a >= b }),
		"equal":         compare(func(a, b float64) bool { return a == b }),
		"not_equal":     compare(func(a, b float64) bool { return a != b }),
	}
}
