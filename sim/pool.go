package sim

import (
	"math"
	"slices"

	"github.com/distpass/distpass/ir"
)

// poolPlan is a pool2d op's geometry, as Paddle's CPU kernel reads it.
type poolPlan struct {
	n, c, h, w int64 // X's batch, channels and spatial dims
	oh, ow     int64 // Out's spatial dims
	chLast     bool  // NHWC
	max        bool  // max, else avg
	adaptive   bool
	exclusive  bool
	k, s, p    [2]int64 // window, stride and the padding before each dim
}

// planPool reads pool2d's attrs against X. Global pooling is a window of
// the whole input without padding; adaptive pooling splits each dim into
// ksize bins and ignores strides and paddings.
func planPool(op *ir.Op, x *Tensor) (*poolPlan, error) {
	pl := &poolPlan{}
	switch t := attrString(op, "pooling_type", ""); t {
	case "max", "avg":
		pl.max = t == "max"
	default:
		return nil, errf(op, "attr pooling_type %q: pool2d takes max or avg", t)
	}
	switch f := attrString(op, "data_format", "NCHW"); f {
	case "NCHW", "AnyLayout": // Paddle reads AnyLayout as NCHW here
	case "NHWC":
		pl.chLast = true
	default:
		return nil, errf(op, "attr data_format %q: pool2d takes NCHW, NHWC or AnyLayout", f)
	}
	algo := attrString(op, "padding_algorithm", "EXPLICIT")
	if algo != "EXPLICIT" && algo != "SAME" && algo != "VALID" {
		return nil, errf(op, "attr padding_algorithm %q: pool2d takes EXPLICIT, SAME or VALID", algo)
	}
	if x.Rank() != 4 {
		return nil, errf(op, "X %v: pool2d takes a 4-D input", x.Shape)
	}
	pl.n, pl.c, pl.h, pl.w = x.Shape[0], x.Shape[1], x.Shape[2], x.Shape[3]
	if pl.chLast {
		pl.c, pl.h, pl.w = x.Shape[3], x.Shape[1], x.Shape[2]
	}
	if pl.h < 1 || pl.w < 1 {
		return nil, errf(op, "X %v: pool2d takes spatial dims of 1 or more", x.Shape)
	}
	pair := func(name string, def ...int64) ([2]int64, error) {
		v, ok := attrInts(op, name)
		if !ok {
			v = def
		}
		if len(v) != 2 {
			return [2]int64{}, errf(op, "attr %s %v: pool2d takes 2 values", name, v)
		}
		return [2]int64{v[0], v[1]}, nil
	}
	k, err := pair("ksize")
	if err != nil {
		return nil, err
	}
	s, err := pair("strides", 1, 1)
	if err != nil {
		return nil, err
	}
	var pads [4]int64 // before and after H, then W
	switch v, _ := attrInts(op, "paddings"); len(v) {
	case 0:
	case 2:
		pads = [4]int64{v[0], v[0], v[1], v[1]}
	case 4:
		copy(pads[:], v)
	default:
		return nil, errf(op, "attr paddings %v: pool2d takes 2 or 4 values", v)
	}
	if slices.Min(pads[:]) < 0 {
		return nil, errf(op, "attr paddings %v has a negative value", pads)
	}
	in := [2]int64{pl.h, pl.w}
	global := attrBool(op, "global_pooling", false)
	pl.adaptive = attrBool(op, "adaptive", false)
	pl.exclusive = attrBool(op, "exclusive", true)
	ceil := attrBool(op, "ceil_mode", false)
	var out [2]int64
	for i := range 2 {
		ki, si := k[i], s[i]
		if global {
			ki = in[i]
		}
		if ki < 1 {
			return nil, errf(op, "attr ksize %v must be positive", k)
		}
		if pl.adaptive {
			pl.k[i], out[i] = ki, ki // ki bins
			continue
		}
		if si < 1 {
			return nil, errf(op, "attr strides %v must be positive", s)
		}
		p0, p1 := pads[2*i], pads[2*i+1]
		switch {
		case global || algo == "VALID":
			p0, p1 = 0, 0
		case algo == "SAME":
			o := (in[i] + si - 1) / si
			sum := max((o-1)*si+k[i]-in[i], 0) // from ksize, as Paddle does
			p0, p1 = sum/2, sum-sum/2
		}
		span := in[i] + p0 + p1 - ki
		if span < 0 {
			return nil, errf(op, "X %v: dim %d of size %d, padded by %d+%d, is smaller than the window %d", x.Shape, i, in[i], p0, p1, ki)
		}
		if ceil {
			out[i] = (span+si-1)/si + 1
		} else {
			out[i] = span/si + 1
		}
		// Paddle's kernel keeps only the padding before a dim and clips
		// the last window at the input plus that padding.
		pl.k[i], pl.s[i], pl.p[i] = ki, si, p0
	}
	pl.oh, pl.ow = out[0], out[1]
	// A window wholly in the padding (paddings of the window's size, or
	// ceil_mode's last window) averages to 0 when the padding counts;
	// Paddle's max (-FLT_MAX) and exclusive average (0/0) are no value.
	// The first and the last window of a dim are the only ones that can be.
	for i, o := range out {
		if pl.adaptive {
			break
		}
		for _, j := range [...]int64{0, o - 1} {
			lo, hi, padded := pl.window(i, j)
			if lo >= hi && (pl.max || pl.exclusive || padded <= 0) {
				return nil, errf(op, "X %v: window %d of dim %d lies wholly in the padding (ksize %v, strides %v, paddings %v, ceil_mode %v, exclusive %v)",
					x.Shape, j, i, k, s, pads, ceil, pl.exclusive)
			}
		}
	}
	return pl, nil
}

// window returns output index o's window [lo, hi) of the input in spatial
// dim i, and its extent before clipping to the input (padding included:
// the divisor of an average that counts the padding), as Paddle computes
// them.
func (pl *poolPlan) window(i int, o int64) (lo, hi, padded int64) {
	in := pl.h
	if i == 1 {
		in = pl.w
	}
	if pl.adaptive {
		bins := pl.k[i]
		lo = o * in / bins
		hi = ((o+1)*in + bins - 1) / bins
		return lo, hi, hi - lo
	}
	lo = o*pl.s[i] - pl.p[i]
	hi = min(lo+pl.k[i], in+pl.p[i])
	padded = hi - lo
	return max(lo, 0), min(hi, in), padded
}

// index returns the flat index of (n, c, h, w) in a tensor of spatial
// dims hh, ww laid out as the plan says.
func (pl *poolPlan) index(n, c, h, w, hh, ww int64) int64 {
	if pl.chLast {
		return ((n*hh+h)*ww+w)*pl.c + c
	}
	return ((n*pl.c+c)*hh+h)*ww + w
}

func (pl *poolPlan) outShape() []int64 {
	if pl.chLast {
		return []int64{pl.n, pl.oh, pl.ow, pl.c}
	}
	return []int64{pl.n, pl.c, pl.oh, pl.ow}
}

// each calls f for every output element with its flat index, its window
// and the avg divisor (the clipped window's size when exclusive or
// adaptive, the padded window's otherwise).
func (pl *poolPlan) each(f func(o, h0, h1, w0, w1 int64, div float64, n, c int64)) {
	for n := range pl.n {
		for c := range pl.c {
			for oh := range pl.oh {
				h0, h1, ph := pl.window(0, oh)
				for ow := range pl.ow {
					w0, w1, pw := pl.window(1, ow)
					div := ph * pw
					if pl.exclusive || pl.adaptive {
						div = (h1 - h0) * (w1 - w0)
					}
					f(pl.index(n, c, oh, ow, pl.oh, pl.ow), h0, h1, w0, w1, float64(div), n, c)
				}
			}
		}
	}
}

// pool2d computes Out as Paddle's CPU kernel does: the max or the average
// of each window of X, an average divided by the clipped window's size
// when exclusive (or adaptive) and by the padded window's otherwise.
func pool2d(op *ir.Op, in Args) (Args, error) {
	x, err := one(op, in, "X")
	if err != nil {
		return nil, err
	}
	pl, err := planPool(op, x)
	if err != nil {
		return nil, err
	}
	out := Zeros(x.DType, pl.outShape()...)
	pl.each(func(o, h0, h1, w0, w1 int64, div float64, n, c int64) {
		acc := 0.0
		if pl.max {
			acc = math.Inf(-1)
		}
		for h := h0; h < h1; h++ {
			for w := w0; w < w1; w++ {
				v := x.Data[pl.index(n, c, h, w, pl.h, pl.w)]
				if pl.max {
					acc = max(acc, v)
				} else {
					acc += v
				}
			}
		}
		if !pl.max {
			acc /= div
		}
		out.Data[o] = acc
	})
	return out1("Out", out), nil
}

// pool2dGrad(X, Out, Out@GRAD) -> X@GRAD. Max pooling gives each output's
// gradient to the first element of its window, in row-major order, equal
// to Out (Paddle's tie rule: one element gets it all); average pooling
// spreads it over the window, divided by the forward's divisor.
// Overlapping windows add up.
func pool2dGrad(op *ir.Op, in Args) (Args, error) {
	x, err := one(op, in, "X")
	if err != nil {
		return nil, err
	}
	y, err := one(op, in, "Out")
	if err != nil {
		return nil, err
	}
	g, err := one(op, in, "Out@GRAD")
	if err != nil {
		return nil, err
	}
	pl, err := planPool(op, x)
	if err != nil {
		return nil, err
	}
	if want := pl.outShape(); !slices.Equal(y.Shape, want) || !slices.Equal(g.Shape, want) {
		return nil, errf(op, "Out %v and Out@GRAD %v: X %v pools to %v", y.Shape, g.Shape, x.Shape, want)
	}
	dx := like(x)
	pl.each(func(o, h0, h1, w0, w1 int64, div float64, n, c int64) {
		for h := h0; h < h1; h++ {
			for w := w0; w < w1; w++ {
				i := pl.index(n, c, h, w, pl.h, pl.w)
				if !pl.max {
					dx.Data[i] += g.Data[o] / div
				} else if x.Data[i] == y.Data[o] {
					dx.Data[i] += g.Data[o]
					return
				}
			}
		}
	})
	return out1("X@GRAD", dx), nil
}

// poolKernels are the kernels of this file, by op type.
func poolKernels() Kernels {
	return Kernels{
		"pool2d": pool2d, "pool2d_grad": pool2dGrad,
	}
}
