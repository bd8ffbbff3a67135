package sim

import (
	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/ops"
)

// The 2-D resizes, as Paddle's CPU kernels compute them: each output
// index along H (and W) reads one or two source indices (lo, hi) with
// weights 1-frac and frac; the grads scatter Out@GRAD back by the same
// weights.

// interpAxis is, for each of out indices, its source indices and the
// weight of hi, along one axis of in indices. A positive scale (the
// attr's) sets the ratio when corners are not aligned.
func interpAxis(in, out int64, alignCorners bool, alignMode int64, scale float64, nearest bool) (lo, hi []int64, frac []float64) {
	ratio := 0.0
	if out > 1 {
		r := float64(in) / float64(out)
		if scale > 0 {
			r = 1 / scale
		}
		if alignCorners {
			r = float64(in-1) / float64(out-1)
		}
		ratio = r
	}
	lo, hi, frac = make([]int64, out), make([]int64, out), make([]float64, out)
	alignFlag := alignMode == 0 && !alignCorners
	for k := range out {
		fk := float64(k)
		if nearest {
			src := ratio * fk
			if alignCorners {
				src += 0.5
			}
			lo[k] = min(int64(src), in-1)
			hi[k] = lo[k]
			continue
		}
		var n int64
		if alignFlag {
			n = int64(ratio*(fk+0.5) - 0.5) // truncated toward zero, as Paddle's cast
		} else {
			n = int64(ratio * fk)
		}
		n = max(n, 0)
		lo[k], hi[k] = n, min(n+1, in-1)
		if alignFlag {
			frac[k] = max(ratio*(fk+0.5)-0.5, 0) - float64(n)
		} else {
			frac[k] = ratio*fk - float64(n)
		}
	}
	return lo, hi, frac
}

// interpPlan is an interp op's H and W plans and X's layout.
type interpPlan struct {
	n, c, h, w, oh, ow int64
	nhwc               bool
	hlo, hhi, wlo, whi []int64
	hfrac, wfrac       []float64
}

func (p *interpPlan) xAt(n, c, y, x int64) int64 {
	if p.nhwc {
		return ((n*p.h+y)*p.w+x)*p.c + c
	}
	return ((n*p.c+c)*p.h+y)*p.w + x
}

func (p *interpPlan) outAt(n, c, y, x int64) int64 {
	if p.nhwc {
		return ((n*p.oh+y)*p.ow+x)*p.c + c
	}
	return ((n*p.c+c)*p.oh+y)*p.ow + x
}

// each calls f for every output element and each of its (up to four)
// sources with its weight.
func (p *interpPlan) each(f func(out, src int64, wt float64)) {
	for n := range p.n {
		for c := range p.c {
			for i := range p.oh {
				ys := [2]int64{p.hlo[i], p.hhi[i]}
				wy := [2]float64{1 - p.hfrac[i], p.hfrac[i]}
				for j := range p.ow {
					xs := [2]int64{p.wlo[j], p.whi[j]}
					wx := [2]float64{1 - p.wfrac[j], p.wfrac[j]}
					o := p.outAt(n, c, i, j)
					for a := range 2 {
						for b := range 2 {
							if wt := wy[a] * wx[b]; wt != 0 {
								f(o, p.xAt(n, c, ys[a], xs[b]), wt)
							}
						}
					}
				}
			}
		}
	}
}

// planInterp reads the op: X's dims, the out size (from OutSize,
// SizeTensor or Scale when given, else the attrs; outHW when the caller
// knows it, as a grad does from Out@GRAD) and the attrs.
func planInterp(op *ir.Op, in Args, x *Tensor, outHW []int64) (*interpPlan, error) {
	if x.Rank() != 4 {
		return nil, errf(op, "X %v: a 2-D interp reads [N, C, H, W] (or NHWC)", x.Shape)
	}
	p := &interpPlan{nhwc: attrString(op, "data_layout", "NCHW") == "NHWC"}
	p.n, p.c, p.h, p.w = x.Shape[0], x.Shape[1], x.Shape[2], x.Shape[3]
	if p.nhwc {
		p.c, p.h, p.w = x.Shape[3], x.Shape[1], x.Shape[2]
	}
	var sh, sw float64
	if s, ok := op.Attrs.Get("scale").(ir.Floats); ok && len(s) > 0 {
		sh, sw = s[0], s[0]
		if len(s) > 1 {
			sw = s[1]
		}
	}
	if t := opt(in, "Scale"); t != nil && t.Numel() > 0 {
		sh, sw = t.Data[0], t.Data[0]
		if t.Numel() > 1 {
			sw = t.Data[1]
		}
	}
	switch {
	case outHW != nil:
		p.oh, p.ow = outHW[0], outHW[1]
	case opt(in, "OutSize") != nil:
		t := opt(in, "OutSize")
		if t.Numel() != 2 {
			return nil, errf(op, "OutSize has %d values, want H and W", t.Numel())
		}
		p.oh, p.ow = int64(t.Data[0]), int64(t.Data[1])
	case len(in["SizeTensor"]) == 2:
		p.oh, p.ow = int64(in["SizeTensor"][0].Data[0]), int64(in["SizeTensor"][1].Data[0])
	case sh > 0 && sw > 0:
		p.oh, p.ow = int64(float64(p.h)*sh), int64(float64(p.w)*sw)
	default:
		oh, ow, ok := ops.InterpSize(op, p.h, p.w)
		if !ok {
			return nil, errf(op, "no out size: OutSize, SizeTensor, Scale, a scale attr or out_h and out_w")
		}
		p.oh, p.ow = oh, ow
	}
	if p.oh <= 0 || p.ow <= 0 {
		return nil, errf(op, "out size %dx%d", p.oh, p.ow)
	}
	nearest := op.Type == "nearest_interp_v2" || op.Type == "nearest_interp_v2_grad"
	ac, am := attrBool(op, "align_corners", true), attrInt(op, "align_mode", 1)
	p.hlo, p.hhi, p.hfrac = interpAxis(p.h, p.oh, ac, am, sh, nearest)
	p.wlo, p.whi, p.wfrac = interpAxis(p.w, p.ow, ac, am, sw, nearest)
	return p, nil
}

func interp(op *ir.Op, in Args) (Args, error) {
	x, err := one(op, in, "X")
	if err != nil {
		return nil, err
	}
	p, err := planInterp(op, in, x, nil)
	if err != nil {
		return nil, err
	}
	shape := []int64{p.n, p.c, p.oh, p.ow}
	if p.nhwc {
		shape = []int64{p.n, p.oh, p.ow, p.c}
	}
	out := Zeros(x.DType, shape...)
	p.each(func(o, s int64, wt float64) { out.Data[o] += wt * x.Data[s] })
	return out1("Out", out), nil
}

func interpGrad(op *ir.Op, in Args) (Args, error) {
	x, err := one(op, in, "X")
	if err != nil {
		return nil, err
	}
	g, err := one(op, in, "Out@GRAD")
	if err != nil {
		return nil, err
	}
	if g.Rank() != 4 {
		return nil, errf(op, "Out@GRAD %v is not 4-D", g.Shape)
	}
	hw := []int64{g.Shape[2], g.Shape[3]}
	if attrString(op, "data_layout", "NCHW") == "NHWC" {
		hw = []int64{g.Shape[1], g.Shape[2]}
	}
	p, err := planInterp(op, in, x, hw)
	if err != nil {
		return nil, err
	}
	dx := Zeros(g.DType, x.Shape...)
	p.each(func(o, s int64, wt float64) { dx.Data[s] += wt * g.Data[o] })
	return out1("X@GRAD", dx), nil
}

// clipBounds reads clip's bounds: Min and Max when given, else the attrs.
func clipBounds(op *ir.Op, in Args) (lo, hi float64) {
	lo, hi = attrFloat(op, "min", -3.4028234663852886e+38), attrFloat(op, "max", 3.4028234663852886e+38)
	if t := opt(in, "Min"); t != nil && t.Numel() > 0 {
		lo = t.Data[0]
	}
	if t := opt(in, "Max"); t != nil && t.Numel() > 0 {
		hi = t.Data[0]
	}
	return lo, hi
}

func clip(op *ir.Op, in Args) (Args, error) {
	lo, hi := clipBounds(op, in)
	return unary(func(v float64) float64 { return min(max(v, lo), hi) })(op, in)
}

// clipGrad passes Out@GRAD where X is strictly inside (min, max), as
// Paddle's does.
func clipGrad(op *ir.Op, in Args) (Args, error) {
	lo, hi := clipBounds(op, in)
	return unaryGrad("X", func(v float64) float64 {
		if v > lo && v < hi {
			return 1
		}
		return 0
	})(op, in)
}

// interpKernels are the kernels of this file, by op type.
func interpKernels() Kernels {
	return Kernels{
		"bilinear_interp_v2": interp, "bilinear_interp_v2_grad": interpGrad,
		"nearest_interp_v2": interp, "nearest_interp_v2_grad": interpGrad,
		"clip": clip, "clip_grad": clipGrad,
	}
}
