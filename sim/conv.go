package sim

import (
	"slices"

	"github.com/distpass/distpass/ir"
)

// convPlan is the geometry of one conv2d or depthwise_conv2d (NCHW), as
// Paddle's kernels read it from the op's attrs and its Input and Filter.
//
// The kernels are products of matrices (gemm) over an im2col matrix:
// for a group, row (c, i, j) of it holds the input value tap (i, j) of
// channel c reads at each output point, zero in the padding, and its
// columns are the output points of a chunk of images side by side, so
// that the products stay wide where an image is a pixel or two (a
// ResNet's last layers on small images). A 1x1 filter at stride 1
// without padding reads Input in place; a depthwise convolution, whose
// rows would be one filter each, runs direct loops instead.
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

// depthwise reports whether the convolution takes one input channel per
// group: then each output plane reads one input plane, and direct loops
// beat a product whose rows are a single filter.
func (p *convPlan) depthwise() bool { return p.cg == 1 && p.groups > 1 }

// direct reports whether an image's im2col matrix is the image itself
// (a 1x1 filter at stride 1 without padding), which the products then
// read in place.
func (p *convPlan) direct() bool {
	return p.kh == 1 && p.kw == 1 && p.sh == 1 && p.sw == 1 && p.pt == 0 && p.pl == 0 && p.oh == p.h && p.ow == p.wd
}

// colLimit bounds the elements of an im2col buffer of several images.
const colLimit = 1 << 20

// chunk is how many images one im2col buffer holds: enough for gemm's
// column blocks to be full when the images are small (a ResNet's last
// layers have a pixel or four), one when they are not.
func (p *convPlan) chunk() int64 {
	np := max(1, p.oh*p.ow)
	want := (gemmNC + np - 1) / np
	return max(1, min(p.n, want, colLimit/max(1, p.k()*np)))
}

// im2col fills col ([k, oh*ow]) with image n's windows over group g's
// channels: row (c*kh+i)*kw+j holds tap (i, j) of channel c at each
// output point, zero where the tap falls in the padding.
func (p *convPlan) im2col(n, g int64, col []float64) {
	np, hw := p.oh*p.ow, p.h*p.wd
	x := p.x.Data[(n*p.c+g*p.cg)*hw : (n*p.c+(g+1)*p.cg)*hw]
	for c := range p.cg {
		plane := x[c*hw : (c+1)*hw]
		for i := range p.kh {
			for j := range p.kw {
				kk := (c*p.kh+i)*p.kw + j
				dst := col[kk*np : (kk+1)*np]
				clear(dst)
				lo, hi := p.validOX(j)
				off := j*p.dw - p.pl
				for oy := range p.oh {
					iy := oy*p.sh - p.pt + i*p.dh
					if iy < 0 || iy >= p.h || lo == hi {
						continue
					}
					row, d := plane[iy*p.wd:(iy+1)*p.wd], dst[oy*p.ow:(oy+1)*p.ow]
					if p.sw == 1 {
						copy(d[lo:hi], row[lo+off:hi+off])
						continue
					}
					for ox := lo; ox < hi; ox++ {
						d[ox] = row[ox*p.sw+off]
					}
				}
			}
		}
	}
}

// col2im adds col ([k, oh*ow]) into image n's channels of group g of dx,
// the transpose of im2col.
func (p *convPlan) col2im(n, g int64, col, dx []float64) {
	np, hw := p.oh*p.ow, p.h*p.wd
	x := dx[(n*p.c+g*p.cg)*hw : (n*p.c+(g+1)*p.cg)*hw]
	for c := range p.cg {
		plane := x[c*hw : (c+1)*hw]
		for i := range p.kh {
			for j := range p.kw {
				kk := (c*p.kh+i)*p.kw + j
				src := col[kk*np : (kk+1)*np]
				lo, hi := p.validOX(j)
				off := j*p.dw - p.pl
				for oy := range p.oh {
					iy := oy*p.sh - p.pt + i*p.dh
					if iy < 0 || iy >= p.h {
						continue
					}
					row, s := plane[iy*p.wd:(iy+1)*p.wd], src[oy*p.ow:(oy+1)*p.ow]
					for ox := lo; ox < hi; ox++ {
						row[ox*p.sw+off] += s[ox]
					}
				}
			}
		}
	}
}

// validOX returns the output columns [lo, hi) whose window column j falls
// inside the input (not in the padding), 0 <= lo <= hi <= ow. When the
// column reads padding only (a padding wider than the input: a 5x5
// window on a 1x1 map), the range is empty, [0, 0): callers that slice
// the input row by it must skip an empty range first.
func (p *convPlan) validOX(j int64) (lo, hi int64) {
	off := j*p.dw - p.pl // ix = ox*sw + off
	if off < 0 {
		lo = (-off + p.sw - 1) / p.sw
	}
	if last := p.wd - 1 - off; last >= 0 {
		hi = min(last/p.sw+1, p.ow)
	}
	if lo >= hi {
		return 0, 0
	}
	return lo, hi
}

// eachImage runs f over the images [n0, n0+imgs), on several goroutines
// when work (per image) pays for them; f must touch only its image.
func eachImage(n0, imgs, work int64, f func(n int64)) {
	parallel(int(imgs), 1, imgs*work, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			f(n0 + int64(i))
		}
	})
}

// convMats are the operands of one group's products over a chunk of
// images, as gemm addresses them.
type convMats struct {
	w, wT mat // Filter [mg, k] and its transpose
	g     mat // Output (or its grad) [mg, imgs*np]
	col   mat // the im2col matrix [k, imgs*np]: the buffer, or Input in place
	colT  mat // its transpose
}

// mats returns group g's operands over images [n0, n0+imgs); col is the
// im2col buffer (nil when direct) and out Output or Output@GRAD.
func (p *convPlan) mats(n0, imgs, g int64, col, out, x []float64) convMats {
	k, np, hw := int(p.k()), int(p.oh*p.ow), int(p.h*p.wd)
	mg, gi, ni := int(p.mg), int(g), int(imgs)
	cols := planes(ni, np, int(p.m)*np)
	r := convMats{
		w:  mat{p.w.Data, strided(mg, gi*mg*k, k), strided(k, 0, 1)},
		wT: mat{p.w.Data, strided(k, 0, 1), strided(mg, gi*mg*k, k)},
		g:  mat{out[n0*p.m*p.oh*p.ow:], strided(mg, gi*mg*np, np), cols},
	}
	if col == nil {
		px := planes(ni, np, int(p.c)*hw)
		rows := strided(k, gi*int(p.cg)*hw, hw)
		xd := x[n0*p.c*p.h*p.wd:]
		r.col, r.colT = mat{xd, rows, px}, mat{xd, px, rows}
	} else {
		px := planes(ni, np, k*np)
		rows := strided(k, 0, np)
		r.col, r.colT = mat{col, rows, px}, mat{col, px, rows}
	}
	return r
}

// eachChunk calls f for each chunk of images and group, in order, with
// the im2col buffer of the chunk (nil when the conv reads Input
// directly), filled first when fill.
func (p *convPlan) eachChunk(fill bool, f func(n0, imgs, g int64, col []float64)) {
	k, np := p.k(), p.oh*p.ow
	nb := p.chunk()
	var col []float64
	if !p.direct() {
		col = make([]float64, nb*k*np)
	}
	for n0 := int64(0); n0 < p.n; n0 += nb {
		imgs := min(nb, p.n-n0)
		for g := range p.groups {
			if fill && col != nil {
				eachImage(n0, imgs, k*np, func(n int64) { p.im2col(n, g, col[(n-n0)*k*np:]) })
			}
			f(n0, imgs, g, col)
		}
	}
}

// forward computes Output = act(conv(Input, Filter) + Bias).
func (p *convPlan) forward() *Tensor {
	out := Zeros(p.x.DType, p.outShape()...)
	if p.depthwise() {
		p.depthwiseForward(out.Data)
	} else {
		p.eachChunk(true, func(n0, imgs, g int64, col []float64) {
			m := p.mats(n0, imgs, g, col, out.Data, p.x.Data)
			gemm(int(p.mg), int(imgs*p.oh*p.ow), int(p.k()), m.w, m.col, m.g, false)
		})
	}
	if p.bias == nil && !p.relu {
		return out
	}
	np := p.oh * p.ow
	for pl := range p.n * p.m {
		b := 0.0
		if p.bias != nil {
			b = p.bias.Data[pl%p.m]
		}
		o := out.Data[pl*np : (pl+1)*np]
		for q, v := range o {
			v += b
			if p.relu && v < 0 {
				v = 0
			}
			o[q] = v
		}
	}
	return out
}

// inputGrad returns Input@GRAD for the Output@GRAD g.
func (p *convPlan) inputGrad(g *Tensor) *Tensor {
	dx := like(p.x)
	if p.depthwise() {
		p.depthwiseInputGrad(g.Data, dx.Data)
		return dx
	}
	k, np := p.k(), p.oh*p.ow
	p.eachChunk(false, func(n0, imgs, gr int64, col []float64) {
		m := p.mats(n0, imgs, gr, col, g.Data, dx.Data)
		gemm(int(k), int(imgs*np), int(p.mg), m.wT, m.g, m.col, false)
		if col != nil {
			eachImage(n0, imgs, k*np, func(n int64) { p.col2im(n, gr, col[(n-n0)*k*np:], dx.Data) })
		}
	})
	return dx
}

// filterGrad returns Filter@GRAD for the Output@GRAD g: each element
// sums over the images and output points in order.
func (p *convPlan) filterGrad(g *Tensor) *Tensor {
	dw := like(p.w)
	if p.depthwise() {
		p.depthwiseFilterGrad(g.Data, dw.Data)
		return dw
	}
	p.eachChunk(true, func(n0, imgs, gr int64, col []float64) {
		m := p.mats(n0, imgs, gr, col, g.Data, p.x.Data)
		dwm := mat{dw.Data, m.w.row, m.w.col}
		gemm(int(p.mg), int(p.k()), int(imgs*p.oh*p.ow), m.g, m.colT, dwm, true)
	})
	return dw
}

// depthwiseForward adds each output plane's convolution of its input
// plane into out (zero), the taps of a point in order, output rows
// outermost so that a row stays in cache over the taps.
func (p *convPlan) depthwiseForward(out []float64) {
	np, hw, kk := p.oh*p.ow, p.h*p.wd, p.kh*p.kw
	parallel(int(p.n*p.m), 1, np*kk, func(lo, hi int) {
		for pl := int64(lo); pl < int64(hi); pl++ {
			n, m := pl/p.m, pl%p.m
			x := p.x.Data[(n*p.c+m/p.mg)*hw : (n*p.c+m/p.mg+1)*hw]
			w := p.w.Data[m*kk : (m+1)*kk]
			o := out[pl*np : (pl+1)*np]
			for oy := range p.oh {
				orow := o[oy*p.ow : (oy+1)*p.ow]
				for i := range p.kh {
					iy := oy*p.sh - p.pt + i*p.dh
					if iy < 0 || iy >= p.h {
						continue
					}
					row := x[iy*p.wd : (iy+1)*p.wd]
					for j := range p.kw {
						wv, off := w[i*p.kw+j], j*p.dw-p.pl
						lo, hi := p.validOX(j)
						if lo == hi {
							continue
						}
						if p.sw == 1 {
							src := row[lo+off : hi+off]
							dst := orow[lo:hi]
							for t, v := range src {
								dst[t] += wv * v
							}
							continue
						}
						for ox := lo; ox < hi; ox++ {
							orow[ox] += wv * row[ox*p.sw+off]
						}
					}
				}
			}
		}
	})
}

// depthwiseInputGrad adds into each input plane of dx the transposed
// convolution of the grads of the planes it feeds.
func (p *convPlan) depthwiseInputGrad(g, dx []float64) {
	np, hw, kk := p.oh*p.ow, p.h*p.wd, p.kh*p.kw
	parallel(int(p.n*p.c), 1, p.mg*np*kk, func(lo, hi int) {
		for pl := int64(lo); pl < int64(hi); pl++ {
			n, c := pl/p.c, pl%p.c
			d := dx[pl*hw : (pl+1)*hw]
			for mo := range p.mg {
				m := c*p.mg + mo
				w := p.w.Data[m*kk : (m+1)*kk]
				gp := g[(n*p.m+m)*np : (n*p.m+m+1)*np]
				for oy := range p.oh {
					grow := gp[oy*p.ow : (oy+1)*p.ow]
					for i := range p.kh {
						iy := oy*p.sh - p.pt + i*p.dh
						if iy < 0 || iy >= p.h {
							continue
						}
						row := d[iy*p.wd : (iy+1)*p.wd]
						for j := range p.kw {
							wv, off := w[i*p.kw+j], j*p.dw-p.pl
							lo, hi := p.validOX(j)
							for ox := lo; ox < hi; ox++ {
								row[ox*p.sw+off] += wv * grow[ox]
							}
						}
					}
				}
			}
		}
	})
}

// depthwiseFilterGrad sums into each tap of dw the grads of its output
// plane times the input values the tap read, image by image and row by
// row (a row's products in four running sums, as dot does).
func (p *convPlan) depthwiseFilterGrad(g, dw []float64) {
	np, hw, kk := p.oh*p.ow, p.h*p.wd, p.kh*p.kw
	parallel(int(p.m), 1, p.n*np*kk, func(lo, hi int) {
		for m := int64(lo); m < int64(hi); m++ {
			d := dw[m*kk : (m+1)*kk]
			for n := range p.n {
				x := p.x.Data[(n*p.c+m/p.mg)*hw : (n*p.c+m/p.mg+1)*hw]
				gp := g[(n*p.m+m)*np : (n*p.m+m+1)*np]
				for oy := range p.oh {
					grow := gp[oy*p.ow : (oy+1)*p.ow]
					for i := range p.kh {
						iy := oy*p.sh - p.pt + i*p.dh
						if iy < 0 || iy >= p.h {
							continue
						}
						row := x[iy*p.wd : (iy+1)*p.wd]
						for j := range p.kw {
							off := j*p.dw - p.pl
							lo, hi := p.validOX(j)
							d[i*p.kw+j] += stridedDot(grow[lo:hi], row, lo*p.sw+off, p.sw)
						}
					}
				}
			}
		}
	})
}

// stridedDot is the sum of a[t]*b[at+t*step], in four running sums
// (t mod 4) added pairwise at the end.
func stridedDot(a, b []float64, at, step int64) float64 {
	var s0, s1, s2, s3 float64
	t := int64(0)
	n := int64(len(a))
	for ; t+4 <= n; t += 4 {
		i := at + t*step
		s0 += a[t] * b[i]
		s1 += a[t+1] * b[i+step]
		s2 += a[t+2] * b[i+2*step]
		s3 += a[t+3] * b[i+3*step]
	}
	for ; t < n; t++ {
		s0 += a[t] * b[at+t*step]
	}
	return (s0 + s1) + (s2 + s3)
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
	if wants(op, "Input@GRAD") {
		out["Input@GRAD"] = []*Tensor{p.inputGrad(g)}
	}
	if wants(op, "Filter@GRAD") {
		out["Filter@GRAD"] = []*Tensor{p.filterGrad(g)}
	}
	if wants(op, "Bias@GRAD") {
		if p.bias == nil {
			return nil, errf(op, "Bias@GRAD without a Bias input")
		}
		db, np := like(p.bias), p.oh*p.ow
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

// convKernels are the kernels of this file, by op type.
func convKernels() Kernels {
	return Kernels{
		"conv2d": conv2d, "conv2d_grad": conv2dGrad,
		"depthwise_conv2d": conv2d, "depthwise_conv2d_grad": conv2dGrad,
	}
}
