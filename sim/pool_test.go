package sim

import (
	"math/rand/v2"
	"testing"

	"github.com/distpass/distpass/ir"
)

func poolOp(typ string, at ...ir.Attr) *ir.Op {
	return mkOp("pool2d", Sl("X", "x"), Sl("Out", "o"), append(at, A("pooling_type", ir.String(typ)))...)
}

func iota1(shape ...int64) *Tensor {
	t := Zeros(ir.F64, shape...)
	for i := range t.Data {
		t.Data[i] = float64(i + 1)
	}
	return t
}

// TestPool2dForward checks the kernel on inputs small enough to pool by
// hand.
func TestPool2dForward(t *testing.T) {
	k := func(a, b int64) ir.Attr { return A("ksize", ir.Ints{a, b}) }
	st := func(a, b int64) ir.Attr { return A("strides", ir.Ints{a, b}) }
	pads := func(p ...int64) ir.Attr { return A("paddings", ir.Ints(p)) }
	incl := A("exclusive", ir.Bool(false))
	row := iota1(1, 1, 1, 5) // 1 2 3 4 5
	for _, c := range []struct {
		name string
		op   *ir.Op
		x    *Tensor
		want *Tensor
	}{
		{"max", poolOp("max", k(2, 2), st(2, 2)), iota1(1, 1, 4, 4), td(sh(1, 1, 2, 2), 6, 8, 14, 16)},
		// Windows [0,2) and [1,3) of each dim of 1..9 once clipped.
		{"avg/exclusive", poolOp("avg", k(3, 3), st(2, 2), pads(1, 1)), iota1(1, 1, 3, 3), td(sh(1, 1, 2, 2), 3, 4, 6, 7)},
		{"avg/inclusive", poolOp("avg", k(3, 3), st(2, 2), pads(1, 1), incl), iota1(1, 1, 3, 3), td(sh(1, 1, 2, 2), 12.0/9, 16.0/9, 24.0/9, 28.0/9)},
		// Paddle clips the last window at the input plus the padding
		// before: [2, 3) of width 1, not 2, though 1 is padded after.
		{"avg/inclusive-asymmetric", poolOp("avg", k(1, 2), st(1, 2), pads(0, 0, 0, 1), incl), iota1(1, 1, 1, 3), td(sh(1, 1, 1, 2), 1.5, 3)},
		{"max/floor", poolOp("max", k(1, 2), st(1, 2)), row, td(sh(1, 1, 1, 2), 2, 4)},
		{"max/ceil", poolOp("max", k(1, 2), st(1, 2), A("ceil_mode", ir.Bool(true))), row, td(sh(1, 1, 1, 3), 2, 4, 5)},
		// The last window of ceil_mode lies in the padding: 0 over 2.
		{"avg/inclusive-ceil-padding", poolOp("avg", k(1, 2), st(1, 2), pads(0, 1), incl, A("ceil_mode", ir.Bool(true))), row, td(sh(1, 1, 1, 4), 0.5, 2.5, 4.5, 0)},
		// Bins [0, 3) and [2, 5).
		{"avg/adaptive", poolOp("avg", k(1, 2), A("adaptive", ir.Bool(true))), row, td(sh(1, 1, 1, 2), 2, 4)},
		{"max/adaptive", poolOp("max", k(1, 3), A("adaptive", ir.Bool(true))), td(sh(1, 1, 1, 5), 5, 1, 4, 2, 3), td(sh(1, 1, 1, 3), 5, 4, 3)},
		{"max/global", poolOp("max", k(1, 1), A("global_pooling", ir.Bool(true))), td(sh(1, 2, 2, 2), 1, 7, 3, 2, -1, -4, -2, -3), td(sh(1, 2, 1, 1), 7, -1)},
		{"avg/global", poolOp("avg", k(1, 1), A("global_pooling", ir.Bool(true)), pads(1, 1)), iota1(1, 2, 2, 2), td(sh(1, 2, 1, 1), 2.5, 6.5)},
		// SAME: ceil(4/2) outputs, the one padding after: [0,3), [2,4).
		{"max/same", poolOp("max", k(1, 3), st(1, 2), A("padding_algorithm", ir.String("SAME"))), iota1(1, 1, 1, 4), td(sh(1, 1, 1, 2), 3, 4)},
		{"avg/same", poolOp("avg", k(1, 3), st(1, 2), A("padding_algorithm", ir.String("SAME"))), iota1(1, 1, 1, 4), td(sh(1, 1, 1, 2), 2, 3.5)},
		{"avg/valid", poolOp("avg", k(1, 2), st(1, 2), pads(3, 3), A("padding_algorithm", ir.String("VALID"))), row, td(sh(1, 1, 1, 2), 1.5, 3.5)},
		// Channels last: channel 0 is 1 3 5 7, channel 1 is 2 4 6 8.
		{"max/nhwc", poolOp("max", k(2, 2), A("data_format", ir.String("NHWC"))), iota1(1, 2, 2, 2), td(sh(1, 1, 1, 2), 7, 8)},
	} {
		t.Run(c.name, func(t *testing.T) {
			wantT(t, "Out", run(t, c.op, Args{"X": {c.x}})["Out"][0], c.want)
		})
	}
}

// TestPool2dNHWC checks that channels-last pooling is the NCHW pooling of
// the same values.
func TestPool2dNHWC(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	nchw := randT(r, -1, 1, 2, 3, 5, 4)
	nhwc := run(t, mkOp("transpose2", Sl("X", "x"), Sl("Out", "o"), A("axis", ir.Ints{0, 2, 3, 1})), Args{"X": {nchw}})["Out"][0]
	for _, typ := range []string{"max", "avg"} {
		at := []ir.Attr{A("ksize", ir.Ints{3, 2}), A("strides", ir.Ints{2, 1}), A("paddings", ir.Ints{1, 0, 1, 1}), A("ceil_mode", ir.Bool(true))}
		a := run(t, poolOp(typ, at...), Args{"X": {nchw}})["Out"][0]
		b := run(t, poolOp(typ, append(at, A("data_format", ir.String("NHWC")))...), Args{"X": {nhwc}})["Out"][0]
		back := run(t, mkOp("transpose2", Sl("X", "x"), Sl("Out", "o"), A("axis", ir.Ints{0, 3, 1, 2})), Args{"X": {b}})["Out"][0]
		wantT(t, typ, back, a)
	}
}

// TestPool2dGradTies: max pooling's gradient goes to the first element of
// the window equal to Out (row-major), once per window, as Paddle's CPU
// kernel gives it; overlapping windows add up.
func TestPool2dGradTies(t *testing.T) {
	grad := func(typ string, x, g *Tensor, at ...ir.Attr) *Tensor {
		op := poolOp(typ, at...)
		out := run(t, op, Args{"X": {x}})["Out"][0]
		gop := mkOp("pool2d_grad", Sl("X", "x", "Out", "o", "Out@GRAD", "g"), Sl("X@GRAD", "dx"), op.Attrs.Clone()...)
		return run(t, gop, Args{"X": {x}, "Out": {out}, "Out@GRAD": {g}})["X@GRAD"][0]
	}
	k2 := A("ksize", ir.Ints{2, 2})
	wantT(t, "all equal", grad("max", td(sh(1, 1, 2, 2), 1, 1, 1, 1), td(sh(1, 1, 1, 1), 5), k2), td(sh(1, 1, 2, 2), 5, 0, 0, 0))
	// Windows [0,2) and [1,3) of 1 3 3: both maxima are at index 1.
	wantT(t, "overlap", grad("max", td(sh(1, 1, 1, 3), 1, 3, 3), td(sh(1, 1, 1, 2), 1, 10), A("ksize", ir.Ints{1, 2})),
		td(sh(1, 1, 1, 3), 0, 11, 0))
	wantT(t, "avg", grad("avg", iota1(1, 1, 2, 2), td(sh(1, 1, 1, 1), 4), k2), td(sh(1, 1, 2, 2), 1, 1, 1, 1))
	// Inclusive: the one 3x3 window over the padded 2x2 input divides by 9.
	wantT(t, "avg/inclusive", grad("avg", iota1(1, 1, 2, 2), td(sh(1, 1, 1, 1), 9), A("ksize", ir.Ints{3, 3}), A("strides", ir.Ints{2, 2}), A("paddings", ir.Ints{1, 1}), A("exclusive", ir.Bool(false))),
		td(sh(1, 1, 2, 2), 1, 1, 1, 1))
}

func TestPool2dRefuses(t *testing.T) {
	x := iota1(1, 1, 1, 5)
	k := A("ksize", ir.Ints{1, 2})
	for _, c := range []struct {
		op  *ir.Op
		x   *Tensor
		sub string
	}{
		{poolOp("lp", k), x, `attr pooling_type "lp"`},
		{poolOp("max", k, A("data_format", ir.String("NDHWC"))), x, `attr data_format "NDHWC"`},
		{poolOp("max", k, A("padding_algorithm", ir.String("FULL"))), x, `attr padding_algorithm "FULL"`},
		{poolOp("max", A("ksize", ir.Ints{2})), x, "attr ksize [2]: pool2d takes 2 values"},
		{poolOp("max", k, A("paddings", ir.Ints{1, 1, 1})), x, "attr paddings [1 1 1]"},
		{poolOp("max", k, A("paddings", ir.Ints{0, -1})), x, "negative"},
		{poolOp("max", k, A("strides", ir.Ints{1, 0})), x, "strides"},
		{poolOp("max", k), iota1(1, 5, 5), "4-D"},
		{poolOp("max", A("ksize", ir.Ints{1, 7})), x, "smaller than the window 7"},
		// ceil_mode's last window [5, 7) lies in the padding after.
		{poolOp("max", k, A("strides", ir.Ints{1, 2}), A("paddings", ir.Ints{0, 1}), A("ceil_mode", ir.Bool(true))), x, "window 3 of dim 1 lies wholly in the padding"},
		{poolOp("avg", k, A("strides", ir.Ints{1, 2}), A("paddings", ir.Ints{0, 1}), A("ceil_mode", ir.Bool(true))), x, "lies wholly in the padding"},
		// A padding of the window's size makes a first window of padding.
		{poolOp("max", k, A("paddings", ir.Ints{0, 2})), x, "window 0 of dim 1 lies wholly in the padding"},
	} {
		wantErr(t, c.op, Args{"X": {c.x}}, c.sub)
	}
	g := mkOp("pool2d_grad", Sl("X", "x", "Out", "o", "Out@GRAD", "g"), Sl("X@GRAD", "dx"), A("pooling_type", ir.String("max")), k)
	wantErr(t, g, Args{"X": {x}, "Out": {td(sh(1, 1, 1, 3), 1, 2, 3)}, "Out@GRAD": {td(sh(1, 1, 1, 3), 1, 2, 3)}}, "pools to [1 1 1 4]")
}
