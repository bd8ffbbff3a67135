package sim

import (
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"github.com/distpass/distpass/ir"
)

// withProcs runs f with GOMAXPROCS set to n, restoring it after.
func withProcs(n int, f func()) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(n))
	f()
}

// randMat returns an r x c matrix at random offsets of a fresh buffer,
// its rows and columns laid out in a random one of four ways (row- or
// column-major, either padded), as the conv operands are.
func randMat(rng *rand.Rand, r, c int) mat {
	pad := rng.IntN(3)
	var row, col []int
	if rng.IntN(2) == 0 {
		row, col = strided(r, pad, c+pad), strided(c, 0, 1)
	} else {
		row, col = strided(r, pad, 1), strided(c, 0, r+pad)
	}
	data := make([]float64, (r+pad)*(c+pad)+pad)
	for i := range data {
		data[i] = rng.Float64()*2 - 1
	}
	return mat{data, row, col}
}

// TestGemmMatchesNaive checks gemm against the plain triple loop it
// promises to equal bit for bit (each sum in order over l, from C or
// zero), on shapes beyond every block size and with both GOMAXPROCS 1
// and 2.
func TestGemmMatchesNaive(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 8))
	for _, s := range [][3]int{{1, 1, 1}, {3, 5, 7}, {2, 4, 0}, {65, 9, 300}, {7, 1030, 20}, {130, 70, 513}, {1, 600, 33}, {97, 3, 260}} {
		m, n, k := s[0], s[1], s[2]
		for _, acc := range []bool{false, true} {
			a, b, c := randMat(rng, m, k), randMat(rng, k, n), randMat(rng, m, n)
			want := slices.Clone(c.data)
			for i := range m {
				for j := range n {
					v := 0.0
					if acc {
						v = c.data[c.row[i]+c.col[j]]
					}
					for l := range k {
						v += a.data[a.row[i]+a.col[l]] * b.data[b.row[l]+b.col[j]]
					}
					want[c.row[i]+c.col[j]] = v
				}
			}
			for _, procs := range []int{1, 2} {
				got := mat{slices.Clone(c.data), c.row, c.col}
				withProcs(procs, func() { gemm(m, n, k, a, b, got, acc) })
				for i, v := range got.data {
					if math.Float64bits(v) != math.Float64bits(want[i]) {
						t.Fatalf("%dx%dx%d acc=%v GOMAXPROCS=%d: element %d is %v, want %v", m, n, k, acc, procs, i, v, want[i])
					}
				}
			}
		}
	}
}

// TestParallelRanges checks that parallel covers [0, n) once, in ranges
// that start on a tile, on as many goroutines as GOMAXPROCS allows.
func TestParallelRanges(t *testing.T) {
	withProcs(2, func() {
		for _, c := range []struct {
			n, tile int
			work    int64
			ranges  int
		}{{10, 4, 1 << 30, 2}, {3, 4, 1 << 30, 1}, {1000, 2, 1 << 30, 2}, {1000, 2, 10, 1}} {
			seen := make([]int, c.n)
			var got [][2]int
			ch := make(chan [2]int, 8)
			parallel(c.n, c.tile, c.work, func(lo, hi int) { ch <- [2]int{lo, hi} })
			close(ch)
			for r := range ch {
				got = append(got, r)
				if r[0]%c.tile != 0 {
					t.Errorf("n=%d tile=%d: range %v starts off a tile", c.n, c.tile, r)
				}
				for i := r[0]; i < r[1]; i++ {
					seen[i]++
				}
			}
			if len(got) != c.ranges {
				t.Errorf("n=%d tile=%d work=%d: ranges %v, want %d of them", c.n, c.tile, c.work, got, c.ranges)
			}
			for i, v := range seen {
				if v != 1 {
					t.Fatalf("n=%d tile=%d: index %d covered %d times", c.n, c.tile, i, v)
				}
			}
		}
	})
}

// convCase is a convolution large enough that its kernels split their
// work over goroutines, and beyond the blocks of gemm.
type convCase struct {
	name     string
	typ      string
	x, w     []int64
	bias     bool
	attrs    []ir.Attr
	stride   [2]int64
	pad, dil [2]int64
	groups   int64
}

var bigConvs = []convCase{
	{name: "3x3-bias-relu", typ: "conv2d", x: sh(3, 20, 13, 11), w: sh(70, 20, 3, 3), bias: true,
		attrs: []ir.Attr{A("fuse_activation", ir.String("relu"))}, stride: [2]int64{1, 1}, pad: [2]int64{1, 1}, dil: [2]int64{1, 1}, groups: 1},
	{name: "pointwise", typ: "conv2d", x: sh(2, 64, 9, 30), w: sh(72, 64, 1, 1), stride: [2]int64{1, 1}, dil: [2]int64{1, 1}, groups: 1},
	{name: "stride2-dilated-groups", typ: "conv2d", x: sh(4, 12, 17, 15), w: sh(36, 6, 3, 2), stride: [2]int64{2, 1}, pad: [2]int64{2, 1},
		dil: [2]int64{2, 3}, groups: 2},
	{name: "small-images", typ: "conv2d", x: sh(9, 16, 2, 2), w: sh(130, 16, 3, 3), stride: [2]int64{1, 1}, pad: [2]int64{1, 1}, dil: [2]int64{1, 1}, groups: 1},
	{name: "depthwise", typ: "depthwise_conv2d", x: sh(3, 24, 30, 31), w: sh(48, 1, 3, 3), bias: true, stride: [2]int64{2, 1},
		pad: [2]int64{1, 1}, dil: [2]int64{1, 1}, groups: 24},
}

// run returns the case's Output, then Input@GRAD, Filter@GRAD and (with
// a Bias) Bias@GRAD for the Output@GRAD that grad makes of Output.
func (c convCase) run(t *testing.T, x, w, b *Tensor, grad func(o *Tensor) *Tensor) []*Tensor {
	t.Helper()
	attrs := append(slices.Clone(c.attrs), A("strides", ir.Ints(c.stride[:])), A("paddings", ir.Ints(c.pad[:])),
		A("dilations", ir.Ints(c.dil[:])), A("groups", ir.Int(c.groups)))
	in := Args{"Input": {x}, "Filter": {w}}
	gins := Sl("Input", "x", "Filter", "w", "Output@GRAD", "g")
	outs := Sl("Input@GRAD", "dx", "Filter@GRAD", "dw")
	if b != nil {
		in["Bias"] = []*Tensor{b}
		gins = append(gins, S("Bias", "b"))
		outs = append(outs, S("Bias@GRAD", "db"))
	}
	o := run(t, convOp(c.typ, b != nil, attrs...), in)["Output"][0]
	in["Output@GRAD"] = []*Tensor{grad(o)}
	gr := run(t, mkOp(c.typ+"_grad", gins, outs, attrs...), in)
	r := []*Tensor{o, gr["Input@GRAD"][0], gr["Filter@GRAD"][0]}
	if b != nil {
		r = append(r, gr["Bias@GRAD"][0])
	}
	return r
}

// inputs returns random Input, Filter and (when the case has one) Bias.
func (c convCase) inputs(r *rand.Rand) (x, w, b *Tensor) {
	x, w = randT(r, -1, 1, c.x...), randT(r, -1, 1, c.w...)
	if c.bias {
		b = randT(r, -1, 1, c.w[0])
	}
	return x, w, b
}

// reference computes the case's forward and grads term by term from
// the definition of a convolution.
func (c convCase) reference(x, w, b, g *Tensor) []*Tensor {
	n, ch, h, wd := x.Shape[0], x.Shape[1], x.Shape[2], x.Shape[3]
	m, cg, kh, kw := w.Shape[0], w.Shape[1], w.Shape[2], w.Shape[3]
	mg := m / c.groups
	oh := (h+2*c.pad[0]-c.dil[0]*(kh-1)-1)/c.stride[0] + 1
	ow := (wd+2*c.pad[1]-c.dil[1]*(kw-1)-1)/c.stride[1] + 1
	relu := len(c.attrs) > 0
	out, dx, dw := Zeros(ir.F64, n, m, oh, ow), Zeros(ir.F64, x.Shape...), Zeros(ir.F64, w.Shape...)
	db := Zeros(ir.F64, m)
	// each visits every (output point, filter tap) pair that reads the input
	each := func(f func(o, xi, wi int64)) {
		for nn := range n {
			for mm := range m {
				for oy := range oh {
					for ox := range ow {
						o := ((nn*m+mm)*oh+oy)*ow + ox
						for cc := range cg {
							for i := range kh {
								for j := range kw {
									iy, ix := oy*c.stride[0]-c.pad[0]+i*c.dil[0], ox*c.stride[1]-c.pad[1]+j*c.dil[1]
									if iy >= 0 && iy < h && ix >= 0 && ix < wd {
										xi := ((nn*ch+mm/mg*cg+cc)*h+iy)*wd + ix
										f(o, xi, ((mm*cg+cc)*kh+i)*kw+j)
									}
								}
							}
						}
					}
				}
			}
		}
	}
	each(func(o, xi, wi int64) { out.Data[o] += x.Data[xi] * w.Data[wi] })
	gm := g.Clone()
	for o := range out.Data {
		if b != nil {
			out.Data[o] += b.Data[int64(o)/(oh*ow)%m]
		}
		if relu && out.Data[o] <= 0 {
			out.Data[o], gm.Data[o] = 0, 0
		}
		db.Data[int64(o)/(oh*ow)%m] += gm.Data[o]
	}
	each(func(o, xi, wi int64) {
		dx.Data[xi] += gm.Data[o] * w.Data[wi]
		dw.Data[wi] += gm.Data[o] * x.Data[xi]
	})
	r := []*Tensor{out, dx, dw}
	if b != nil {
		r = append(r, db)
	}
	return r
}

// TestConvLargeMatchesReference checks the forward and the grads of
// convolutions that take every path of the kernels (im2col over several
// images, 1x1 in place, groups, depthwise loops) against the definition.
func TestConvLargeMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	for _, c := range bigConvs {
		t.Run(c.name, func(t *testing.T) {
			x, w, b := c.inputs(r)
			var g *Tensor
			got := c.run(t, x, w, b, func(o *Tensor) *Tensor { g = randT(r, -1, 1, o.Shape...); return g })
			want := c.reference(x, w, b, g)
			for i, name := range []string{"Output", "Input@GRAD", "Filter@GRAD", "Bias@GRAD"}[:len(got)] {
				// sums of up to a few thousand products of values in [-1, 1],
				// taken in another order: a wrong term is off by far more
				if d, err := MaxAbsDiff(got[i], want[i]); err != nil || d > 1e-10 {
					t.Errorf("%s: max diff %g from the definition, %v", name, d, err)
				}
			}
		})
	}
}

// TestConvSameBitsWhateverProcs runs the forward and grads of each big
// convolution with GOMAXPROCS 1 and 2: the results must have the same
// bits, since the kernels split their work over output elements, never
// over a sum.
func TestConvSameBitsWhateverProcs(t *testing.T) {
	r := rand.New(rand.NewPCG(6, 6))
	for _, c := range bigConvs {
		t.Run(c.name, func(t *testing.T) {
			x, w, b := c.inputs(r)
			seed := r.Uint64()
			grad := func(o *Tensor) *Tensor { return randT(rand.New(rand.NewPCG(seed, 0)), -1, 1, o.Shape...) }
			var one, two []*Tensor
			withProcs(1, func() { one = c.run(t, x, w, b, grad) })
			withProcs(2, func() { two = c.run(t, x, w, b, grad) })
			for i := range one {
				if !Equal(one[i], two[i]) {
					d, _ := MaxAbsDiff(one[i], two[i])
					t.Errorf("result %d differs between GOMAXPROCS 1 and 2 by up to %g", i, d)
				}
			}
		})
	}
}
