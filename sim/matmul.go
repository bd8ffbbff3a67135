package sim

import (
	"slices"

	"github.com/distpass/distpass/ir"
)

// broadcastShape returns the numpy broadcast of a and b (right-aligned).
func broadcastShape(a, b []int64) ([]int64, bool) {
	n := max(len(a), len(b))
	out := make([]int64, n)
	for i := range n {
		da, db := int64(1), int64(1)
		if j := i - (n - len(a)); j >= 0 {
			da = a[j]
		}
		if j := i - (n - len(b)); j >= 0 {
			db = b[j]
		}
		switch {
		case da == db || db == 1:
			out[i] = da
		case da == 1:
			out[i] = db
		default:
			return nil, false
		}
	}
	return out, true
}

// broadcastIndex returns, for each linear index of outShape, the linear
// index of the element of inShape (right-aligned, broadcast) it reads.
func broadcastIndex(outShape, inShape []int64) []int64 {
	n := numel(outShape)
	idx := make([]int64, n)
	r := len(outShape)
	off := r - len(inShape)
	inStr := strides(inShape)
	// stride of each out dim into in; 0 where broadcast or absent
	st := make([]int64, r)
	for i := range r {
		if j := i - off; j >= 0 && inShape[j] != 1 {
			st[i] = inStr[j]
		}
	}
	ctr := make([]int64, r)
	cur := int64(0)
	for k := range n {
		idx[k] = cur
		for d := r - 1; d >= 0; d-- {
			ctr[d]++
			cur += st[d]
			if ctr[d] < outShape[d] {
				break
			}
			cur -= st[d] * ctr[d]
			ctr[d] = 0
		}
	}
	return idx
}

// mm describes a batched product Out = op(X) @ op(Y) on operands whose
// 1-D forms have been lifted to 2-D.
type mm struct {
	x, y         *Tensor // lifted to ≥2-D
	tx, ty       bool
	m, k, n      int64
	outShape     []int64 // before squeezing
	final        []int64 // after squeezing the lifted dims
	xb, yb       []int64 // batch index maps
	xr1, yr1     int64   // last dim of x and y (row length)
	xmat, ymat   int64   // matrix sizes
	batch        int64
	xOrig, yOrig []int64
}

func planMatmul(op *ir.Op, x, y *Tensor, tx, ty bool) (*mm, error) {
	p := &mm{tx: tx, ty: ty, xOrig: x.Shape, yOrig: y.Shape}
	if x.Rank() == 0 || y.Rank() == 0 {
		return nil, errf(op, "matmul of shapes %v and %v: scalars not allowed", x.Shape, y.Shape)
	}
	xs, ys := x.Shape, y.Shape
	xv, yv := x.Rank() == 1, y.Rank() == 1
	if xv {
		xs, tx = []int64{1, xs[0]}, false
	}
	if yv {
		ys, ty = []int64{ys[0], 1}, false
	}
	p.tx, p.ty = tx, ty
	p.x, p.y = reshaped(x, xs), reshaped(y, ys)
	xr0, xr1 := xs[len(xs)-2], xs[len(xs)-1]
	yr0, yr1 := ys[len(ys)-2], ys[len(ys)-1]
	m, k := xr0, xr1
	if tx {
		m, k = xr1, xr0
	}
	k2, n := yr0, yr1
	if ty {
		k2, n = yr1, yr0
	}
	if k != k2 {
		return nil, errf(op, "matmul of shapes %v and %v (trans_x=%v, trans_y=%v): contracted dims %d and %d differ",
			x.Shape, y.Shape, tx, ty, k, k2)
	}
	bs, ok := broadcastShape(xs[:len(xs)-2], ys[:len(ys)-2])
	if !ok {
		return nil, errf(op, "matmul of shapes %v and %v: batch dims do not broadcast", x.Shape, y.Shape)
	}
	p.m, p.k, p.n = m, k, n
	p.xr1, p.yr1 = xr1, yr1
	p.xmat, p.ymat = xr0*xr1, yr0*yr1
	p.batch = numel(bs)
	p.xb = broadcastIndex(bs, xs[:len(xs)-2])
	p.yb = broadcastIndex(bs, ys[:len(ys)-2])
	p.outShape = append(slices.Clone(bs), m, n)
	p.final = slices.Clone(bs)
	if !xv {
		p.final = append(p.final, m)
	}
	if !yv {
		p.final = append(p.final, n)
	}
	return p, nil
}

// xOff is the offset of op(X)[i, l] within one matrix of X.
func (p *mm) xOff(i, l int64) int64 {
	if p.tx {
		return l*p.xr1 + i
	}
	return i*p.xr1 + l
}

func (p *mm) yOff(l, j int64) int64 {
	if p.ty {
		return j*p.yr1 + l
	}
	return l*p.yr1 + j
}

func (p *mm) forward(alpha float64) *Tensor {
	out := Zeros(p.x.DType, p.final...)
	for b := range p.batch {
		xd := p.x.Data[p.xb[b]*p.xmat:]
		yd := p.y.Data[p.yb[b]*p.ymat:]
		od := out.Data[b*p.m*p.n:]
		for i := range p.m {
			for j := range p.n {
				s := 0.0
				for l := range p.k {
					s += xd[p.xOff(i, l)] * yd[p.yOff(l, j)]
				}
				od[i*p.n+j] = alpha * s
			}
		}
	}
	return out
}

// backward returns dX and dY (each nil unless asked) for upstream g.
func (p *mm) backward(op *ir.Op, g *Tensor, alpha float64, wantX, wantY bool) (dx, dy *Tensor, err error) {
	if numel(g.Shape) != numel(p.outShape) || !slices.Equal(g.Shape, p.final) {
		return nil, nil, errf(op, "Out@GRAD shape %v, want %v", g.Shape, p.final)
	}
	var gx, gy []float64
	if wantX {
		gx = make([]float64, len(p.x.Data))
	}
	if wantY {
		gy = make([]float64, len(p.y.Data))
	}
	for b := range p.batch {
		xb, yb := p.xb[b]*p.xmat, p.yb[b]*p.ymat
		gd := g.Data[b*p.m*p.n:]
		for i := range p.m {
			for j := range p.n {
				gv := alpha * gd[i*p.n+j]
				if gv == 0 {
					continue
				}
				for l := range p.k {
					xo, yo := xb+p.xOff(i, l), yb+p.yOff(l, j)
					if gx != nil {
						gx[xo] += gv * p.y.Data[yo]
					}
					if gy != nil {
						gy[yo] += gv * p.x.Data[xo]
					}
				}
			}
		}
	}
	if wantX {
		dx = &Tensor{DType: p.x.DType, Shape: slices.Clone(p.xOrig), Data: gx}
	}
	if wantY {
		dy = &Tensor{DType: p.y.DType, Shape: slices.Clone(p.yOrig), Data: gy}
	}
	return dx, dy, nil
}

func matmulCommon(op *ir.Op, in Args, tx, ty string, alpha float64) (*mm, error) {
	x, err := one(op, in, "X")
	if err != nil {
		return nil, err
	}
	y, err := one(op, in, "Y")
	if err != nil {
		return nil, err
	}
	return planMatmul(op, x, y, attrBool(op, tx, false), attrBool(op, ty, false))
}

func matmulV2(op *ir.Op, in Args) (Args, error) {
	p, err := matmulCommon(op, in, "trans_x", "trans_y", 1)
	if err != nil {
		return nil, err
	}
	return out1("Out", p.forward(1)), nil
}

func matmulGradArgs(op *ir.Op, in Args, p *mm, alpha float64) (Args, error) {
	g, err := one(op, in, "Out@GRAD")
	if err != nil {
		return nil, err
	}
	dx, dy, err := p.backward(op, g, alpha, wants(op, "X@GRAD"), wants(op, "Y@GRAD"))
	if err != nil {
		return nil, err
	}
	out := Args{}
	if dx != nil {
		out["X@GRAD"] = []*Tensor{dx}
	}
	if dy != nil {
		out["Y@GRAD"] = []*Tensor{dy}
	}
	return out, nil
}

func matmulV2Grad(op *ir.Op, in Args) (Args, error) {
	p, err := matmulCommon(op, in, "trans_x", "trans_y", 1)
	if err != nil {
		return nil, err
	}
	return matmulGradArgs(op, in, p, 1)
}

// matmulV1Fusions are the attrs of a oneDNN matmul with a reshape or
// transpose fused in, which the kernel does not support.
var matmulV1Fusions = []string{"fused_reshape_X", "fused_reshape_Y", "fused_reshape_Out",
	"fused_transpose_X", "fused_transpose_Y", "fused_transpose_Out"}

// matmulV1Plan plans Paddle 1.x's matmul, which differs from matmul_v2:
// a 1-D X is the row [1, K] and a 1-D Y the column [K, 1] before
// transpose_X and transpose_Y apply (a transposed 1-D X is a column),
// Out drops such a lifted dim only when it is 1, and batches do not
// broadcast but need as many matrices (X's batch dims name Out's).
func matmulV1Plan(op *ir.Op, in Args) (*mm, error) {
	for _, a := range matmulV1Fusions {
		if v, _ := attrInts(op, a); len(v) > 0 {
			return nil, errf(op, "attr %s %v: a fused reshape or transpose is not supported", a, v)
		}
	}
	if h := attrInt(op, "head_number", 1); h > 1 {
		return nil, errf(op, "attr head_number %d: a multi-head matmul is not supported", h)
	}
	x, err := one(op, in, "X")
	if err != nil {
		return nil, err
	}
	y, err := one(op, in, "Y")
	if err != nil {
		return nil, err
	}
	if x.Rank() == 0 || y.Rank() == 0 {
		return nil, errf(op, "matmul of shapes %v and %v: scalars not allowed", x.Shape, y.Shape)
	}
	x2, y2 := x, y
	if x.Rank() == 1 {
		x2 = reshaped(x, []int64{1, x.Shape[0]})
	}
	if y.Rank() == 1 {
		y2 = reshaped(y, []int64{y.Shape[0], 1})
	}
	bx, by := x2.Shape[:x2.Rank()-2], y2.Shape[:y2.Rank()-2]
	if len(bx) > 0 && len(by) > 0 && !slices.Equal(bx, by) {
		if numel(bx) != numel(by) {
			return nil, errf(op, "matmul of shapes %v and %v: batches of %d and %d matrices", x.Shape, y.Shape, numel(bx), numel(by))
		}
		y2 = reshaped(y2, slices.Concat(bx, y2.Shape[y2.Rank()-2:]))
	}
	p, err := planMatmul(op, x2, y2, attrBool(op, "transpose_X", false), attrBool(op, "transpose_Y", false))
	if err != nil {
		return nil, err
	}
	p.xOrig, p.yOrig = x.Shape, y.Shape
	final := slices.Clone(p.outShape)
	if r := len(final); x.Rank() == 1 && final[r-2] == 1 {
		final = append(final[:r-2], final[r-1])
	}
	if r := len(final); y.Rank() == 1 && final[r-1] == 1 {
		final = final[:r-1]
	}
	p.final = final
	return p, nil
}

func matmulV1(op *ir.Op, in Args) (Args, error) {
	p, err := matmulV1Plan(op, in)
	if err != nil {
		return nil, err
	}
	return out1("Out", p.forward(attrFloat(op, "alpha", 1))), nil
}

func matmulV1Grad(op *ir.Op, in Args) (Args, error) {
	p, err := matmulV1Plan(op, in)
	if err != nil {
		return nil, err
	}
	return matmulGradArgs(op, in, p, attrFloat(op, "alpha", 1))
}

// mulPlan flattens mul's operands to matrices.
func mulPlan(op *ir.Op, in Args) (*mm, []int64, []int64, error) {
	x, err := one(op, in, "X")
	if err != nil {
		return nil, nil, nil, err
	}
	y, err := one(op, in, "Y")
	if err != nil {
		return nil, nil, nil, err
	}
	xn, yn := attrInt(op, "x_num_col_dims", 1), attrInt(op, "y_num_col_dims", 1)
	if xn < 1 || xn >= int64(x.Rank()) || yn < 1 || yn >= int64(y.Rank()) {
		return nil, nil, nil, errf(op, "mul of shapes %v and %v: x_num_col_dims %d, y_num_col_dims %d out of range", x.Shape, y.Shape, xn, yn)
	}
	x2 := reshaped(x, []int64{numel(x.Shape[:xn]), numel(x.Shape[xn:])})
	y2 := reshaped(y, []int64{numel(y.Shape[:yn]), numel(y.Shape[yn:])})
	if x2.Shape[1] != y2.Shape[0] {
		return nil, nil, nil, errf(op, "mul of shapes %v and %v: flattened %v and %v do not multiply", x.Shape, y.Shape, x2.Shape, y2.Shape)
	}
	p, err := planMatmul(op, x2, y2, false, false)
	if err != nil {
		return nil, nil, nil, err
	}
	outShape := append(slices.Clone(x.Shape[:xn]), y.Shape[yn:]...)
	return p, outShape, nil, nil
}

func mul(op *ir.Op, in Args) (Args, error) {
	p, outShape, _, err := mulPlan(op, in)
	if err != nil {
		return nil, err
	}
	o := p.forward(1)
	return out1("Out", reshaped(o, outShape)), nil
}

func mulGrad(op *ir.Op, in Args) (Args, error) {
	p, outShape, _, err := mulPlan(op, in)
	if err != nil {
		return nil, err
	}
	g, err := one(op, in, "Out@GRAD")
	if err != nil {
		return nil, err
	}
	if !slices.Equal(g.Shape, outShape) {
		return nil, errf(op, "Out@GRAD shape %v, want %v", g.Shape, outShape)
	}
	dx, dy, err := p.backward(op, reshaped(g, p.final), 1, wants(op, "X@GRAD"), wants(op, "Y@GRAD"))
	if err != nil {
		return nil, err
	}
	out := Args{}
	if dx != nil {
		out["X@GRAD"] = []*Tensor{reshaped(dx, slices.Clone(in["X"][0].Shape))}
	}
	if dy != nil {
		out["Y@GRAD"] = []*Tensor{reshaped(dy, slices.Clone(in["Y"][0].Shape))}
	}
	return out, nil
}

// matmulKernels are the kernels of this file, by op type.
func matmulKernels() Kernels {
	return Kernels{
		"matmul_v2": matmulV2, "matmul_v2_grad": matmulV2Grad,
		"matmul": matmulV1, "matmul_grad": matmulV1Grad,
		"mul": mul, "mul_grad": mulGrad,
	}
}
