package sim

import (
	"slices"

	"github.com/distpass/distpass/ir"
)

// channels returns, for affine_channel's data_layout, the number of
// channels of x and the channel of each element (NCHW: dim 1; NHWC and
// Paddle's default AnyLayout, which its kernel reads as NHWC: the last).
func channels(op *ir.Op, x *Tensor) (int64, func(i int64) int64, error) {
	if x.Rank() < 2 {
		return 0, nil, errf(op, "X %v: want 2 or more dims", x.Shape)
	}
	switch l := attrString(op, "data_layout", "AnyLayout"); l {
	case "NCHW":
		c, inner := x.Shape[1], numel(x.Shape[2:])
		return c, func(i int64) int64 { return i / inner % c }, nil
	case "NHWC", "AnyLayout":
		c := x.Shape[x.Rank()-1]
		return c, func(i int64) int64 { return i % c }, nil
	default:
		return 0, nil, errf(op, "attr data_layout %q is not supported (NCHW, NHWC or AnyLayout)", l)
	}
}

// perChannelIn reads input slot name, which must be [c].
func perChannelIn(op *ir.Op, in Args, name string, c int64) (*Tensor, error) {
	t, err := one(op, in, name)
	if err != nil {
		return nil, err
	}
	if !slices.Equal(t.Shape, []int64{c}) {
		return nil, errf(op, "%s %v: want [%d], one value per channel", name, t.Shape, c)
	}
	return t, nil
}

// affineChannel is Out = X * Scale[c] + Bias[c], c each element's channel.
func affineChannel(op *ir.Op, in Args) (Args, error) {
	x, err := one(op, in, "X")
	if err != nil {
		return nil, err
	}
	c, ch, err := channels(op, x)
	if err != nil {
		return nil, err
	}
	s, err := perChannelIn(op, in, "Scale", c)
	if err != nil {
		return nil, err
	}
	b, err := perChannelIn(op, in, "Bias", c)
	if err != nil {
		return nil, err
	}
	out := like(x)
	for i, v := range x.Data {
		k := ch(int64(i))
		out.Data[i] = v*s.Data[k] + b.Data[k]
	}
	return out1("Out", out), nil
}

// affineChannelGrad reads X, Scale and Out@GRAD, as Paddle's:
// X@GRAD = Out@GRAD * Scale[c], Scale@GRAD[c] = sum of Out@GRAD * X over
// channel c, Bias@GRAD[c] = sum of Out@GRAD over it.
func affineChannelGrad(op *ir.Op, in Args) (Args, error) {
	x, err := one(op, in, "X")
	if err != nil {
		return nil, err
	}
	c, ch, err := channels(op, x)
	if err != nil {
		return nil, err
	}
	s, err := perChannelIn(op, in, "Scale", c)
	if err != nil {
		return nil, err
	}
	g, err := one(op, in, "Out@GRAD")
	if err != nil {
		return nil, err
	}
	if !slices.Equal(g.Shape, x.Shape) {
		return nil, errf(op, "Out@GRAD %v and X %v differ", g.Shape, x.Shape)
	}
	dx, ds, db := like(x), like(s), like(s)
	for i, gv := range g.Data {
		k := ch(int64(i))
		dx.Data[i] = gv * s.Data[k]
		ds.Data[k] += gv * x.Data[i]
		db.Data[k] += gv
	}
	out := Args{}
	for _, r := range []struct {
		slot string
		t    *Tensor
	}{{"X@GRAD", dx}, {"Scale@GRAD", ds}, {"Bias@GRAD", db}} {
		if wants(op, r.slot) {
			out[r.slot] = []*Tensor{r.t}
		}
	}
	return out, nil
}

// affineChannelKernels are the kernels of this file, by op type.
func affineChannelKernels() Kernels {
	return Kernels{
		"affine_channel": affineChannel, "affine_channel_grad": affineChannelGrad,
	}
}
