package sim

import (
	"slices"

	"github.com/distpass/distpass/ir"
)

// convPlan is the geometry of one conv2d or depthwise_conv2d (NCHW), as
// Paddle's kernels read it from the op's attrs and its Input and Filter.
//
// The kernels go through a transposed im2col: for one image and one
// group, col holds a row of k = cg*kh*kw input values (zero where the
// window overlaps the padding) for each of the p = oh*ow output points,
// so that the forward, Input@GRAD and Filter@GRAD are each a product over
// contiguous rows of length k. That keeps the inner loops long even
// where the output is a pixel or two wide (a ResNet's last layers on
// small images), which a loop over output pixels would make short.
type convPlan struct {
	x, w, bias     *Tensor
	n, c, h, wd    int64 // Input: batch, channels, height, width
	m, cg, kh, kw  int64 // Filter: out channels, in channels per group, window
	groups, mg     int64 // groups, out channels per group
	oh, ow         int64
	sh, sw, dh, dw int64 // strides and dilations
	pt, pl         int64 // padding before H and before W
	relu           bool  // a fused relu on the output (oneDNN's fuse_activation)
}

// k is the length of a col row: one group's window over its channels.
func (p *convPlan) k() int64 { return p.cg * p.kh * p.kw }

// outShape is Output's shape.
func (p *convPlan) outShape() []int64 { return []int64{p.n, p.m, p.oh, p.ow} }

// twoInts reads an attr of two values, def when the op omits it.
func twoInts(op *ir.Op, name string, def int64) ([2]int64, error) {
	v, ok := attrInts(op, name)
	if !ok {
		return [2]int64{def, def}, nil
	}
	if len(v) != 2 {
		return [2]int64{}, errf(op, "attr %s %v has %d values; a 2-D convolution takes 2", name, v, len(v))
	}
	return [2]int64{v[0], v[1]}, nil
}

// samePad returns the padding before and after a dim that Paddle's SAME
// gives it: an output of ceil(in/stride), the odd pixel after.
func samePad(in, k, s int64) (int64, int64) {
	out := (in + s - 1) / s
	sum := max((out-1)*s+k-in, 0)
	return sum / 2, sum - sum/2
}

// convFused refuses the oneDNN fusions the simulator does not compute
// and reports whether the output is fused with a relu. Paddle runs Bias
// and these fusions only in its oneDNN kernel, but the passes that write
// them (conv_bias_mkldnn_fuse_pass, conv_activation_mkldnn_fuse_pass)
// mean them whatever the target: the simulator computes them always.
func convFused(op *ir.Op) (bool, error) {
	for _, a := range [...]string{"fuse_residual_connection", "fuse_brelu", "fuse_relu_before_depthwise_conv"} {
		if attrBool(op, a, false) {
			return false, errf(op, "attr %s = true is not supported", a)
		}
	}
	switch act := attrString(op, "fuse_activation", ""); act {
	case "":
		return attrBool(op, "fuse_relu", false), nil
	case "relu":
		// oneDNN's relu post-op takes fuse_alpha as a negative slope.
		if a := attrFloat(op, "fuse_alpha", 0); a != 0 {
			return false, errf(op, "attr fuse_alpha %g with fuse_activation \"relu\" (a leaky relu) is not supported", a)
		}
		return true, nil
	default:
		return false, errf(op, "attr fuse_activation %q is not supported (only \"\" and \"relu\")", act)
	}
}

// planConv checks a convolution's inputs and attrs. Filter is
// [M, C/groups, kh, kw]; depthwise_conv2d has one filter channel per
// group, so groups = C and M = C times a channel multiplier.
func planConv(op *ir.Op, in Args) (*convPlan, error) {
	x, err := one(op, in, "Input")
	if err != nil {
		return nil, err
	}
	w, err := one(op, in, "Filter")
	if err != nil {
		return nil, err
	}
	switch f := attrString(op, "data_format", "NCHW"); f {
	case "NCHW", "AnyLayout": // Paddle reads AnyLayout as NCHW
	default:
		return nil, errf(op, "attr data_format %q is not supported (NCHW only)", f)
	}
	relu, err := convFused(op)
	if err != nil {
		return nil, err
	}
	if x.Rank() != 4 || w.Rank() != 4 {
		return nil, errf(op, "Input %v and Filter %v: a 2-D convolution takes a 4-D input and filter", x.Shape, w.Shape)
	}
	p := &convPlan{x: x, w: w, relu: relu,
		n: x.Shape[0], c: x.Shape[1], h: x.Shape[2], wd: x.Shape[3],
		m: w.Shape[0], cg: w.Shape[1], kh: w.Shape[2], kw: w.Shape[3]}
	p.groups = attrInt(op, "groups", 1)
	if p.groups < 1 {
		return nil, errf(op, "attr groups %d is not positive", p.groups)
	}
	if p.c != p.cg*p.groups {
		return nil, errf(op, "Input %v and Filter %v: input channels %d are not filter channels %d times groups %d", x.Shape, w.Shape, p.c, p.cg, p.groups)
	}
	if p.m == 0 || p.m%p.groups != 0 {
		return nil, errf(op, "Filter %v: output channels %d are not a positive multiple of groups %d", w.Shape, p.m, p.groups)
	}
	if op.Type == "depthwise_conv2d" && p.cg != 1 {
		return nil, errf(op, "Input %v and Filter %v: depthwise_conv2d takes one filter channel per group, not %d", x.Shape, w.Shape, p.cg)
	}
	p.mg = p.m / p.groups
	st, err := twoInts(op, "strides", 1)
	if err != nil {
		return nil, err
	}
	dil, err := twoInts(op, "dilations", 1)
	if err != nil {
		return nil, err
	}
	if st[0] < 1 || st[1] < 1 || dil[0] < 1 || dil[1] < 1 {
		return nil, errf(op, "attrs strides %v and dilations %v must be positive", st, dil)
	}
	var pads [4]int64 // top, bottom, left, right
	switch v, _ := attrInts(op, "paddings"); len(v) {
	case 0:
	case 2:
		pads = [4]int64{v[0], v[0], v[1], v[1]}
	case 4:
		copy(pads[:], v)
	default:
		return nil, errf(op, "attr paddings %v has %d values; a 2-D convolution takes 2 or 4", v, len(v))
	}
	if slices.Min(pads[:]) < 0 {
		return nil, errf(op, "attr paddings %v has a negative value", pads)
	}
	switch algo := attrString(op, "padding_algorithm", "EXPLICIT"); algo {
	case "EXPLICIT":
	case "SAME": // Paddle's SAME ignores dilations
		pads[0], pads[1] = samePad(p.h, p.kh, st[0])
		pads[2], pads[3] = samePad(p.wd, p.kw, st[1])
		dil = [2]int64{1, 1}
	case "VALID":
		pads = [4]int64{}
	default:
		return nil, errf(op, "attr padding_algorithm %q is not EXPLICIT, SAME or VALID", algo)
	}
	p.sh, p.sw, p.dh, p.dw = st[0], st[1], dil[0], dil[1]
	p.pt, p.pl = pads[0], pads[2]
	ekh, ekw := p.dh*(p.kh-1)+1, p.dw*(p.kw-1)+1
	if p.kh < 1 || p.kw < 1 || p.h+pads[0]+pads[1] < ekh || p.wd+pads[2]+pads[3] < ekw {
		return nil, errf(op, "Input %v padded by %v is smaller than Filter %v dilated by %v", x.Shape, pads, w.Shape, dil)
	}
	p.oh = (p.h+pads[0]+pads[1]-ekh)/p.sh + 1
	p.ow = (p.wd+pads[2]+pads[3]-ekw)/p.sw + 1
	if b := opt(in, "Bias"); b != nil {
		if !slices.Equal(b.Shape, []int64{p.m}) {
			return nil, errf(op, "Bias %v: want [%d], one value per output channel", b.Shape, p.m)
		}
		p.bias = b
	}
	if err := checkShape([]int64{p.oh * p.ow, p.k()}); err != nil {
		return nil, errf(op, "the im2col buffer: %v", err)
	}
	return p, nil
}

// im2col fills col ([oh*ow, k]) with image n's window rows of group g.
func (p *convPlan) im2col(n, g int64, col []float64) {
	k, hw := p.k(), p.h*p.wd
	x := p.x.Data[(n*p.c+g*p.cg)*hw : (n*p.c+(g+1)*p.cg)*hw]
	clear(col)
	for c := range p.cg {
		plane := x[c*hw : (c+1)*hw]
		for i := range p.kh {
			for j := range p.kw {
				kk := (c*p.kh+i)*p.kw + j
				for oy := range p.oh {
					iy := oy*p.sh - p.pt + i*p.dh
					if iy < 0 || iy >= p.h {
						continue
					}
					row := plane[iy*p.wd : (iy+1)*p.wd]
					lo, hi := p.validOX(j)
					for ox := lo; ox < hi; ox++ {
						col[(oy*p.ow+ox)*k+kk] = row[ox*p.sw-p.pl+j*p.dw]
					}
				}
			}
		}
	}
}

// col2im adds col ([oh*ow, k]) into image n's channels of group g of dx,
// the transpose of im2col.
func (p *convPlan) col2im(n, g int64, col, dx []float64) {
	k, hw := p.k(), p.h*p.wd
	x := dx[(n*p.c+g*p.cg)*hw : (n*p.c+(g+1)*p.cg)*hw]
	for c := range p.cg {
		plane := x[c*hw : (c+1)*hw]
		for i := range p.kh {
			for j := range p.kw {
				kk := (c*p.kh+i)*p.kw + j
				for oy := range p.oh {
					iy := oy*p.sh - p.pt + i*p.dh
					if iy < 0 || iy >= p.h {
						continue
					}
					row := plane[iy*p.wd : (iy+1)*p.wd]
					lo, hi := p.validOX(j)
					for ox := lo; ox < hi; ox++ {
						row[ox*p.sw-p.pl+j*p.dw] += col[(oy*p.ow+ox)*k+kk]
					}
				}
			}
		}
	}
}

// validOX returns the output columns [lo, hi) whose window column j falls
// inside the input (not in the padding).
func (p *convPlan) validOX(j int64) (lo, hi int64) {
	off := j*p.dw - p.pl // ix = ox*sw + off
	if off < 0 {
		lo = (-off + p.sw - 1) / p.sw
	}
	if last := p.wd - 1 - off; last >= 0 {
		hi = min(last/p.sw+1, p.ow)
	}
	return lo, max(lo, hi)
}

// dot is the inner product of two rows of the same length.
func dot(a, b []float64) float64 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3)
}

// axpy adds a*x to y.
func axpy(a float64, x, y []float64) {
	y = y[:len(x)]
	i := 0
	for ; i+4 <= len(x); i += 4 {
		y[i] += a * x[i]
		y[i+1] += a * x[i+1]
		y[i+2] += a * x[i+2]
		y[i+3] += a * x[i+3]
	}
	for ; i < len(x); i++ {
		y[i] += a * x[i]
	}
}

// forward computes Output = act(conv(Input, Filter) + Bias).
func (p *convPlan) forward() *Tensor {
	out := Zeros(p.x.DType, p.outShape()...)
	k, np := p.k(), p.oh*p.ow
	col := make([]float64, np*k)
	for n := range p.n {
		for g := range p.groups {
			p.im2col(n, g, col)
			for mo := range p.mg {
				m := g*p.mg + mo
				wrow := p.w.Data[m*k : (m+1)*k]
				b := 0.0
				if p.bias != nil {
					b = p.bias.Data[m]
				}
				o := out.Data[(n*p.m+m)*np : (n*p.m+m+1)*np]
				for q := range np {
					v := dot(wrow, col[q*k:(q+1)*k]) + b
					if p.relu && v < 0 {
						v = 0
					}
					o[q] = v
				}
			}
		}
	}
	return out
}

func conv2d(op *ir.Op, in Args) (Args, error) {
	p, err := planConv(op, in)
	if err != nil {
		return nil, err
	}
	return out1("Output", p.forward()), nil
}

// conv2dGrad computes Input@GRAD (the transposed convolution of
// Output@GRAD by Filter), Filter@GRAD (Output@GRAD correlated with the
// input windows) and Bias@GRAD (Output@GRAD summed per channel), each
// when the op declares it. A fused relu's mask comes from recomputing
// the forward: conv2d_grad reads Input, Filter and Bias, not Output.
func conv2dGrad(op *ir.Op, in Args) (Args, error) {
	p, err := planConv(op, in)
	if err != nil {
		return nil, err
	}
	g, err := one(op, in, "Output@GRAD")
	if err != nil {
		return nil, err
	}
	if !slices.Equal(g.Shape, p.outShape()) {
		return nil, errf(op, "Output@GRAD shape %v, want %v", g.Shape, p.outShape())
	}
	if p.relu {
		y := p.forward()
		masked := g.Clone()
		for i, v := range y.Data {
			if v <= 0 {
				masked.Data[i] = 0
			}
		}
		g = masked
	}
	out := Args{}
	k, np := p.k(), p.oh*p.ow
	col := make([]float64, np*k)
	if wants(op, "Input@GRAD") {
		dx := like(p.x)
		for n := range p.n {
			for gr := range p.groups {
				clear(col)
				for mo := range p.mg {
					m := gr*p.mg + mo
					wrow := p.w.Data[m*k : (m+1)*k]
					gm := g.Data[(n*p.m+m)*np : (n*p.m+m+1)*np]
					for q := range np {
						if v := gm[q]; v != 0 {
							axpy(v, wrow, col[q*k:(q+1)*k])
						}
					}
				}
				p.col2im(n, gr, col, dx.Data)
			}
		}
		out["Input@GRAD"] = []*Tensor{dx}
	}
	if wants(op, "Filter@GRAD") {
		dw := like(p.w)
		for n := range p.n {
			for gr := range p.groups {
				p.im2col(n, gr, col)
				for mo := range p.mg {
					m := gr*p.mg + mo
					drow := dw.Data[m*k : (m+1)*k]
					gm := g.Data[(n*p.m+m)*np : (n*p.m+m+1)*np]
					for q := range np {
						if v := gm[q]; v != 0 {
							axpy(v, col[q*k:(q+1)*k], drow)
						}
					}
				}
			}
		}
		out["Filter@GRAD"] = []*Tensor{dw}
	}
	if wants(op, "Bias@GRAD") {
		if p.bias == nil {
			return nil, errf(op, "Bias@GRAD without a Bias input")
		}
		db := like(p.bias)
		for n := range p.n {
			for m := range p.m {
				s := 0.0
				for _, v := range g.Data[(n*p.m+m)*np : (n*p.m+m+1)*np] {
					s += v
				}
				db.Data[m] += s
			}
		}
		out["Bias@GRAD"] = []*Tensor{db}
	}
	return out, nil
}
