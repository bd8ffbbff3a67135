package sim

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/distpass/distpass/ir"
)

// naiveConv is a convolution by its definition, term by term: Output,
// and for the Output@GRAD g, Input@GRAD and Filter@GRAD. pads is top,
// bottom, left, right.
func naiveConv(x, f, g *Tensor, groups int64, st, dil [2]int64, pads [4]int64) (out, dx, dw *Tensor) {
	n, c, h, w := x.Shape[0], x.Shape[1], x.Shape[2], x.Shape[3]
	m, cg, kh, kw := f.Shape[0], f.Shape[1], f.Shape[2], f.Shape[3]
	mg := m / groups
	oh := (h+pads[0]+pads[1]-dil[0]*(kh-1)-1)/st[0] + 1
	ow := (w+pads[2]+pads[3]-dil[1]*(kw-1)-1)/st[1] + 1
	out = Zeros(ir.F64, n, m, oh, ow)
	dx, dw = Zeros(ir.F64, x.Shape...), Zeros(ir.F64, f.Shape...)
	for nn := range n {
		for mm := range m {
			for oy := range oh {
				for ox := range ow {
					o := ((nn*m+mm)*oh+oy)*ow + ox
					for cc := range cg {
						ci := mm/mg*cg + cc
						for a := range kh {
							for e := range kw {
								iy, ix := oy*st[0]-pads[0]+a*dil[0], ox*st[1]-pads[2]+e*dil[1]
								if iy < 0 || iy >= h || ix < 0 || ix >= w {
									continue
								}
								xi := ((nn*c+ci)*h+iy)*w + ix
								fi := ((mm*cg+cc)*kh+a)*kw + e
								out.Data[o] += x.Data[xi] * f.Data[fi]
								if g != nil {
									dx.Data[xi] += g.Data[o] * f.Data[fi]
									dw.Data[fi] += g.Data[o] * x.Data[xi]
								}
							}
						}
					}
				}
			}
		}
	}
	return out, dx, dw
}

// TestConvPaddingWiderThanInput runs convolutions whose padding is wider
// than the input, so that whole rows and columns of taps read padding
// only (a 5x5 depthwise conv on a 1x1 map, as MnasNet has on 32x32
// images): plain, grouped and depthwise, at strides 1 and 2, forward and
// both grads against the definition. The kernels used to slice past an
// output row here and panic.
func TestConvPaddingWiderThanInput(t *testing.T) {
	r := rand.New(rand.NewPCG(37, 11))
	type geo struct {
		typ          string
		groups, cg   int64
		mg           int64
		h, w, kh, kw int64
		pads         [4]int64
		dil          [2]int64
	}
	geos := []geo{
		{"depthwise_conv2d", 4, 1, 1, 1, 1, 5, 5, [4]int64{2, 2, 2, 2}, [2]int64{1, 1}}, // MnasNet's
		{"depthwise_conv2d", 3, 1, 2, 1, 2, 5, 3, [4]int64{3, 1, 2, 2}, [2]int64{1, 1}},
		{"depthwise_conv2d", 2, 1, 1, 2, 1, 3, 3, [4]int64{4, 4, 3, 3}, [2]int64{1, 1}},
		{"depthwise_conv2d", 2, 1, 1, 1, 1, 3, 3, [4]int64{2, 2, 2, 2}, [2]int64{2, 2}},
		{"conv2d", 1, 2, 3, 1, 1, 5, 5, [4]int64{2, 2, 2, 2}, [2]int64{1, 1}},
		{"conv2d", 1, 3, 2, 2, 1, 3, 5, [4]int64{3, 2, 1, 4}, [2]int64{1, 1}},
		{"conv2d", 2, 2, 2, 1, 1, 5, 5, [4]int64{2, 2, 2, 2}, [2]int64{1, 1}},
		{"conv2d", 3, 1, 2, 1, 2, 3, 3, [4]int64{3, 3, 0, 4}, [2]int64{1, 1}},
		{"conv2d", 4, 1, 1, 1, 1, 5, 5, [4]int64{2, 2, 2, 2}, [2]int64{1, 1}}, // depthwise, as conv2d
		{"conv2d", 2, 2, 1, 2, 2, 3, 3, [4]int64{2, 2, 2, 2}, [2]int64{2, 1}},
	}
	ran := 0
	for _, gm := range geos {
		for _, s := range []int64{1, 2} {
			for _, n := range []int64{1, 3} {
				st := [2]int64{s, s}
				name := fmt.Sprintf("%s/g%d/cg%d/in%dx%d/k%dx%d/pad%v/dil%v/stride%d/n%d",
					gm.typ, gm.groups, gm.cg, gm.h, gm.w, gm.kh, gm.kw, gm.pads, gm.dil, s, n)
				x := randT(r, -1, 1, n, gm.cg*gm.groups, gm.h, gm.w)
				f := randT(r, -1, 1, gm.mg*gm.groups, gm.cg, gm.kh, gm.kw)
				attrs := []ir.Attr{A("groups", ir.Int(gm.groups)), A("strides", ir.Ints{st[0], st[1]}),
					A("dilations", ir.Ints{gm.dil[0], gm.dil[1]}), A("paddings", ir.Ints(gm.pads[:]))}
				in := Args{"Input": {x}, "Filter": {f}}
				want, _, _ := naiveConv(x, f, nil, gm.groups, st, gm.dil, gm.pads)
				got := run(t, convOp(gm.typ, false, attrs...), in)["Output"][0]
				if d, err := MaxAbsDiff(got, want); err != nil || d > 1e-12 {
					t.Errorf("%s: Output max diff %g, %v\ngot  %v\nwant %v", name, d, err, got, want)
					continue
				}
				g := randT(r, -1, 1, want.Shape...)
				_, wdx, wdw := naiveConv(x, f, g, gm.groups, st, gm.dil, gm.pads)
				gop := mkOp(gm.typ+"_grad", Sl("Input", "x", "Filter", "w", "Output@GRAD", "g"),
					Sl("Input@GRAD", "dx", "Filter@GRAD", "dw"), attrs...)
				gin := Args{"Input": {x}, "Filter": {f}, "Output@GRAD": {g}}
				gout := run(t, gop, gin)
				for _, c := range []struct {
					slot      string
					got, want *Tensor
				}{{"Input@GRAD", gout["Input@GRAD"][0], wdx}, {"Filter@GRAD", gout["Filter@GRAD"][0], wdw}} {
					if d, err := MaxAbsDiff(c.got, c.want); err != nil || d > 1e-12 {
						t.Errorf("%s: %s max diff %g, %v\ngot  %v\nwant %v", name, c.slot, d, err, c.got, c.want)
					}
				}
				ran++
			}
		}
	}
	t.Logf("%d geometries, forward and grads", ran)
}
