package sim

import (
	"math/rand/v2"
	"testing"

	"github.com/distpass/distpass/ir"
)

// convOp builds a conv op of type typ reading Input x, Filter w and,
// when bias, Bias b.
func convOp(typ string, bias bool, attrs ...ir.Attr) *ir.Op {
	ins := Sl("Input", "x", "Filter", "w")
	if bias {
		ins = append(ins, S("Bias", "b"))
	}
	return mkOp(typ, ins, Sl("Output", "o"), attrs...)
}

// x33 is a 1x1x3x3 image of 1..9, x44 a 1x1x4x4 one of 1..16.
var (
	x33 = td(sh(1, 1, 3, 3), 1, 2, 3, 4, 5, 6, 7, 8, 9)
	x44 = td(sh(1, 1, 4, 4), 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16)
)

// TestConvValues checks the forward kernels on inputs small enough to
// convolve by hand.
func TestConvValues(t *testing.T) {
	diag := td(sh(1, 1, 2, 2), 1, 0, 0, 1) // x[i][j] + x[i+1][j+1]
	ones22 := td(sh(1, 1, 2, 2), 1, 1, 1, 1)
	ones33 := td(sh(1, 1, 3, 3), 1, 1, 1, 1, 1, 1, 1, 1, 1)
	pads := func(p ...int64) ir.Attr { return A("paddings", ir.Ints(p)) }
	cases := []struct {
		name string
		op   *ir.Op
		in   Args
		want *Tensor
	}{
		{"plain", convOp("conv2d", false), Args{"Input": {x33}, "Filter": {diag}},
			td(sh(1, 1, 2, 2), 6, 8, 12, 14)},
		// Windows at rows {-1,0},{1,2} and columns {-1,0},{1,2}: the
		// padding contributes nothing.
		{"stride2-pad1", convOp("conv2d", false, A("strides", ir.Ints{2, 2}), pads(1, 1)),
			Args{"Input": {x33}, "Filter": {ones22}}, td(sh(1, 1, 2, 2), 1, 5, 11, 28)},
		// Padded by one row on top and one column on the right.
		{"pads4", convOp("conv2d", false, pads(1, 0, 0, 1)), Args{"Input": {x33}, "Filter": {ones22}},
			td(sh(1, 1, 3, 3), 3, 5, 3, 12, 16, 9, 24, 28, 15)},
		// A 2x2 filter dilated by 2 reads the corners of the 3x3 image.
		{"dilation", convOp("conv2d", false, A("dilations", ir.Ints{2, 2})), Args{"Input": {x33}, "Filter": {ones22}},
			td(sh(1, 1, 1, 1), 1+3+7+9)},
		// SAME, stride 2 on 4x4 by 3x3: out 2x2, padding 0 before and 1
		// after; Paddle's SAME ignores the dilations.
		{"same", convOp("conv2d", false, A("padding_algorithm", ir.String("SAME")), A("strides", ir.Ints{2, 2}),
			A("dilations", ir.Ints{2, 2}), pads(5, 5)), Args{"Input": {x44}, "Filter": {ones33}},
			td(sh(1, 1, 2, 2), 54, 45, 72, 54)},
		// VALID ignores the paddings.
		{"valid", convOp("conv2d", false, A("padding_algorithm", ir.String("VALID")), pads(1, 1)),
			Args{"Input": {x33}, "Filter": {diag}}, td(sh(1, 1, 2, 2), 6, 8, 12, 14)},
		{"channels", convOp("conv2d", false), Args{"Input": {td(sh(1, 2, 2, 2), 1, 2, 3, 4, 5, 6, 7, 8)},
			"Filter": {td(sh(1, 2, 1, 1), 1, -1)}}, td(sh(1, 1, 2, 2), -4, -4, -4, -4)},
		{"batch-outchannels", convOp("conv2d", false), Args{"Input": {td(sh(2, 1, 1, 2), 1, 2, 3, 4)},
			"Filter": {td(sh(2, 1, 1, 1), 1, 10)}}, td(sh(2, 2, 1, 2), 1, 2, 10, 20, 3, 4, 30, 40)},
		{"groups-bias", convOp("conv2d", true, A("groups", ir.Int(2))),
			Args{"Input": {td(sh(1, 2, 1, 1), 2, 3)}, "Filter": {td(sh(2, 1, 1, 1), 10, 100)}, "Bias": {td(sh(2), 1, -1)}},
			td(sh(1, 2, 1, 1), 21, 299)},
		// Two filters per input channel, channel 0's first.
		{"depthwise-multiplier", convOp("depthwise_conv2d", false, A("groups", ir.Int(2))),
			Args{"Input": {td(sh(1, 2, 1, 2), 1, 2, 3, 4)}, "Filter": {td(sh(4, 1, 1, 1), 1, 2, 3, 4)}},
			td(sh(1, 4, 1, 2), 1, 2, 2, 4, 9, 12, 12, 16)},
		{"depthwise-3x3", convOp("depthwise_conv2d", false, A("groups", ir.Int(2)), pads(1, 1)),
			Args{"Input": {td(sh(1, 2, 1, 3), 1, 2, 3, 4, 5, 6)}, "Filter": {td(sh(2, 1, 3, 3), 0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 0, 0, 1, 0, -1, 0, 0, 0)}},
			td(sh(1, 2, 1, 3), 3, 6, 5, -5, -2, 5)},
		{"fused-relu", convOp("conv2d", true, A("fuse_activation", ir.String("relu"))),
			Args{"Input": {td(sh(1, 1, 1, 2), 1, -3)}, "Filter": {td(sh(1, 1, 1, 1), 2)}, "Bias": {td(sh(1), 1)}},
			td(sh(1, 1, 1, 2), 3, 0)},
		{"fuse_relu", convOp("conv2d", false, A("fuse_relu", ir.Bool(true))),
			Args{"Input": {td(sh(1, 1, 1, 2), 1, -3)}, "Filter": {td(sh(1, 1, 1, 1), 2)}}, td(sh(1, 1, 1, 2), 2, 0)},
		{"f32", convOp("conv2d", false), Args{"Input": {tf(sh(1, 1, 1, 1), 3)}, "Filter": {tf(sh(1, 1, 1, 1), 1.0/3)}},
			tf(sh(1, 1, 1, 1), 1)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			wantT(t, "Output", run(t, c.op, c.in)["Output"][0], c.want)
		})
	}
}

// TestConvGradValues checks conv2d_grad on the plain case by hand: with
// Output@GRAD all ones, each input pixel's gradient counts the windows
// (and taps) that read it, and each tap's the sum of what it read.
func TestConvGradValues(t *testing.T) {
	op := mkOp("conv2d_grad", Sl("Input", "x", "Filter", "w", "Output@GRAD", "g"), Sl("Input@GRAD", "dx", "Filter@GRAD", "dw"))
	out := run(t, op, Args{"Input": {x33}, "Filter": {td(sh(1, 1, 2, 2), 1, 0, 0, 1)}, "Output@GRAD": {td(sh(1, 1, 2, 2), 1, 1, 1, 1)}})
	wantT(t, "Input@GRAD", out["Input@GRAD"][0], td(sh(1, 1, 3, 3), 1, 1, 0, 1, 2, 1, 0, 1, 1))
	wantT(t, "Filter@GRAD", out["Filter@GRAD"][0], td(sh(1, 1, 2, 2), 12, 16, 24, 28))

	op = mkOp("conv2d_grad", Sl("Input", "x", "Filter", "w", "Bias", "b", "Output@GRAD", "g"),
		[]ir.Slot{S("Input@GRAD"), S("Filter@GRAD"), S("Bias@GRAD", "db")}, A("fuse_activation", ir.String("relu")))
	out = run(t, op, Args{"Input": {td(sh(2, 1, 1, 2), 1, -3, 2, 2)}, "Filter": {td(sh(1, 1, 1, 1), 2)}, "Bias": {td(sh(1), 1)},
		"Output@GRAD": {td(sh(2, 1, 1, 2), 10, 20, 30, 40)}})
	if len(out["Input@GRAD"]) != 0 || len(out["Filter@GRAD"]) != 0 {
		t.Error("computed a gradient the op declares empty")
	}
	// The relu cuts the second pixel of image 0 (2*-3+1 < 0).
	wantT(t, "Bias@GRAD", out["Bias@GRAD"][0], td(sh(1), 10+30+40))
}

func TestConvErrors(t *testing.T) {
	in := Args{"Input": {x33}, "Filter": {td(sh(1, 1, 2, 2), 1, 0, 0, 1)}}
	for _, c := range []struct {
		name string
		op   *ir.Op
		in   Args
		want string
	}{
		{"nhwc", convOp("conv2d", false, A("data_format", ir.String("NHWC"))), in, `attr data_format "NHWC" is not supported`},
		{"fuse-act", convOp("conv2d", false, A("fuse_activation", ir.String("relu6"))), in, `attr fuse_activation "relu6" is not supported`},
		{"leaky", convOp("conv2d", false, A("fuse_activation", ir.String("relu")), A("fuse_alpha", ir.Float(0.1))), in,
			`attr fuse_alpha 0.1 with fuse_activation "relu" (a leaky relu) is not supported`},
		{"residual", convOp("conv2d", false, A("fuse_residual_connection", ir.Bool(true))), in, "attr fuse_residual_connection = true is not supported"},
		{"brelu", convOp("conv2d", false, A("fuse_brelu", ir.Int(1))), in, "attr fuse_brelu = true is not supported"},
		{"algo", convOp("conv2d", false, A("padding_algorithm", ir.String("FULL"))), in, `attr padding_algorithm "FULL" is not EXPLICIT, SAME or VALID`},
		{"pads3", convOp("conv2d", false, A("paddings", ir.Ints{1, 1, 1})), in, "attr paddings [1 1 1] has 3 values"},
		{"pads-neg", convOp("conv2d", false, A("paddings", ir.Ints{-1, 0})), in, "has a negative value"},
		{"strides1", convOp("conv2d", false, A("strides", ir.Ints{1})), in, "attr strides [1] has 1 values"},
		{"stride0", convOp("conv2d", false, A("strides", ir.Ints{0, 1})), in, "must be positive"},
		{"groups", convOp("conv2d", false, A("groups", ir.Int(2))), in, "input channels 1 are not filter channels 1 times groups 2"},
		{"too-small", convOp("conv2d", false, A("dilations", ir.Ints{3, 1})), in, "is smaller than Filter"},
		{"rank", convOp("conv2d", false), Args{"Input": {td(sh(3, 3), x33.Data...)}, "Filter": in["Filter"]}, "takes a 4-D input and filter"},
		{"bias", convOp("conv2d", true), Args{"Input": in["Input"], "Filter": in["Filter"], "Bias": {td(sh(2), 1, 2)}}, "Bias [2]: want [1]"},
		{"depthwise", convOp("depthwise_conv2d", false), Args{"Input": {td(sh(1, 2, 1, 1), 1, 2)}, "Filter": {td(sh(1, 2, 1, 1), 1, 2)}},
			"depthwise_conv2d takes one filter channel per group, not 2"},
		{"grad-shape", mkOp("conv2d_grad", Sl("Input", "x", "Filter", "w", "Output@GRAD", "g"), Sl("Input@GRAD", "dx")),
			Args{"Input": in["Input"], "Filter": in["Filter"], "Output@GRAD": {td(sh(1, 1, 3, 3), x33.Data...)}},
			"Output@GRAD shape [1 1 3 3], want [1 1 2 2]"},
	} {
		t.Run(c.name, func(t *testing.T) { wantErr(t, c.op, c.in, c.want) })
	}
}

// TestConvMatchesDirectLoop compares the kernels with the convolution's
// definition, summed term by term, over random geometries: strides,
// paddings of 2 and 4 values, SAME and VALID, dilations, groups,
// depthwise multipliers, a Bias and a fused relu.
func TestConvMatchesDirectLoop(t *testing.T) {
	r := rand.New(rand.NewPCG(27, 27))
	pick := func(lo, hi int64) int64 { return lo + r.Int64N(hi-lo+1) }
	ran := 0
	for i := range 300 {
		typ := "conv2d"
		groups := pick(1, 3)
		cg, mg := pick(1, 3), pick(1, 3)
		if i%3 == 0 {
			typ, cg = "depthwise_conv2d", 1
		}
		n, h, w := pick(1, 2), pick(1, 7), pick(1, 7)
		kh, kw := pick(1, 3), pick(1, 3)
		st := []int64{pick(1, 3), pick(1, 3)}
		dil := []int64{pick(1, 2), pick(1, 2)}
		pads := []int64{pick(0, 2), pick(0, 2), pick(0, 2), pick(0, 2)}
		attrs := []ir.Attr{A("groups", ir.Int(groups)), A("strides", ir.Ints(st)), A("dilations", ir.Ints(dil))}
		if i%2 == 0 {
			pads[1], pads[3] = pads[0], pads[2]
			attrs = append(attrs, A("paddings", ir.Ints{pads[0], pads[2]}))
		} else {
			attrs = append(attrs, A("paddings", ir.Ints(pads)))
		}
		algo := []string{"EXPLICIT", "SAME", "VALID"}[i%5%3]
		attrs = append(attrs, A("padding_algorithm", ir.String(algo)))
		// The geometry as Paddle's UpdatePaddingAndDilation sets it.
		switch algo {
		case "SAME":
			dil = []int64{1, 1}
			for d, in := range []int64{h, w} {
				k := []int64{kh, kw}[d]
				out := (in + st[d] - 1) / st[d]
				total := max(0, (out-1)*st[d]+k-in)
				pads[2*d], pads[2*d+1] = total/2, total-total/2
			}
		case "VALID":
			pads = []int64{0, 0, 0, 0}
		}
		ph, pw := h+pads[0]+pads[1]-dil[0]*(kh-1)-1, w+pads[2]+pads[3]-dil[1]*(kw-1)-1
		if ph < 0 || pw < 0 {
			continue // the filter is larger than the padded image
		}
		oh, ow := ph/st[0]+1, pw/st[1]+1
		relu := i%4 == 1
		if relu {
			attrs = append(attrs, A("fuse_activation", ir.String("relu")))
		}
		x := randT(r, -1, 1, n, cg*groups, h, w)
		f := randT(r, -1, 1, mg*groups, cg, kh, kw)
		in := Args{"Input": {x}, "Filter": {f}}
		var b *Tensor
		if i%2 == 1 {
			b = randT(r, -1, 1, mg*groups)
			in["Bias"] = []*Tensor{b}
		}
		op := convOp(typ, b != nil, attrs...)
		want := Zeros(ir.F64, n, mg*groups, oh, ow)
		for q := range want.Data {
			ox := int64(q) % ow
			oy := int64(q) / ow % oh
			m := int64(q) / (ow * oh) % (mg * groups)
			nn := int64(q) / (ow * oh * mg * groups)
			s := 0.0
			if b != nil {
				s = b.Data[m]
			}
			for c := range cg {
				for a := range kh {
					for e := range kw {
						iy, ix := oy*st[0]-pads[0]+a*dil[0], ox*st[1]-pads[2]+e*dil[1]
						if iy >= 0 && iy < h && ix >= 0 && ix < w {
							s += x.At(nn, m/mg*cg+c, iy, ix) * f.At(m, c, a, e)
						}
					}
				}
			}
			if relu {
				s = max(s, 0)
			}
			want.Data[q] = s
		}
		got := run(t, op, in)["Output"][0]
		if d, err := MaxAbsDiff(got, want); err != nil || d > 1e-12 {
			t.Fatalf("case %d %s: max diff %g, %v\ngot  %v\nwant %v", i, op, d, err, got, want)
		}
		ran++
	}
	if ran < 200 {
		t.Errorf("only %d of the random geometries fit their filter", ran)
	}
	t.Logf("%d geometries", ran)
}

// BenchmarkConv2d runs the layers that dominate a ResNet's and a
// MobileNet's convolutions on small images: 3x3 convs of 64 channels, a
// 1x1 (pointwise) conv and a depthwise 3x3, each forward and grad
// (Input@GRAD and Filter@GRAD).
func BenchmarkConv2d(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	for _, c := range []struct {
		name      string
		typ       string
		x, w      []int64
		groups    int64
		pad, step int64
	}{
		{"resnet-3x3", "conv2d", sh(2, 64, 8, 8), sh(64, 64, 3, 3), 1, 1, 1},
		{"resnet-3x3-n8", "conv2d", sh(8, 64, 16, 16), sh(64, 64, 3, 3), 1, 1, 1},
		{"resnet-7x7-s2", "conv2d", sh(8, 3, 32, 32), sh(64, 3, 7, 7), 1, 3, 2},
		{"pointwise-1x1", "conv2d", sh(4, 128, 28, 28), sh(128, 128, 1, 1), 1, 0, 1},
		{"mobilenet-depthwise", "depthwise_conv2d", sh(2, 96, 16, 16), sh(96, 1, 3, 3), 96, 1, 1},
		{"depthwise-112", "depthwise_conv2d", sh(4, 32, 112, 112), sh(32, 1, 3, 3), 32, 1, 1},
	} {
		attrs := []ir.Attr{A("paddings", ir.Ints{c.pad, c.pad}), A("strides", ir.Ints{c.step, c.step}), A("groups", ir.Int(c.groups))}
		in := Args{"Input": {randT(r, -1, 1, c.x...)}, "Filter": {randT(r, -1, 1, c.w...)}}
		fwd := convOp(c.typ, false, attrs...)
		grad := mkOp(c.typ+"_grad", Sl("Input", "x", "Filter", "w", "Output@GRAD", "g"), Sl("Input@GRAD", "dx", "Filter@GRAD", "dw"), attrs...)
		k, kg := DefaultKernels()[c.typ], DefaultKernels()[c.typ+"_grad"]
		out, err := k(fwd, in)
		if err != nil {
			b.Fatal(err)
		}
		gin := Args{"Input": in["Input"], "Filter": in["Filter"], "Output@GRAD": out["Output"]}
		b.Run(c.name+"/forward", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := k(fwd, in); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(c.name+"/grad", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := kg(grad, gin); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
