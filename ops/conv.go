package ops

import (
	"strconv"

	"github.com/distpass/distpass/ir"
)

// convDefs: the convolution, pooling and per-channel normalisation ops of
// Paddle's vision models, with Paddle's InferMeta shape rules
// (ConvInferMeta, Pool2DInferMeta, BatchNormInferMeta, affine_channel's
// InferShape).
//
// The convolutions, pool2d and batch_norm have a Grad (Paddle's grad
// ops' slots). An op without one has no grad kernel in the simulator
// yet, and a grad def would let append-backward emit ops that nothing
// runs; append-backward refuses it instead.
//
// is_test may be a bool or an int (Paddle's attr loader casts an int to
// a bool, and its Python binding wrote ints): a bool attr accepts both.
// The oneDNN fusion attrs the slim models
// carry (fuse_activation, fuse_residual_connection, Scale_in...) change
// values, not shapes, and are not listed either: nothing here computes
// a convolution.
func convDefs() []*Def {
	convAttrs := func() []Attr {
		return []Attr{
			intsAttr("strides", 1, 1), intsAttr("paddings", 0, 0), intsAttr("dilations", 1, 1),
			stringAttr("padding_algorithm", "EXPLICIT", "EXPLICIT", "SAME", "VALID"),
			intAttr("groups", 1),
			stringAttr("data_format", "NCHW", "NCHW", "NHWC", "AnyLayout"),
		}
	}
	const convShape = "Output = [N, M, o(H), o(W)] for Filter [M, C/groups, kh, kw], o(i) = (i + pads - dilation*(k-1) - 1) / stride + 1"
	conv := func(t, doc string, depthwise bool) *Def {
		return &Def{
			Type: t, Doc: doc,
			Inputs: slots("Input", "Filter", opt("Bias"), opt("ResidualData")), Outputs: in("Output"),
			Attrs:       convAttrs(),
			Shape:       convShape,
			Infer:       inferConv(depthwise),
			Sharding:    convRule,
			ShardingDoc: convDoc,
			Grad: &Grad{
				Reads:       []string{"Input", "Filter", "Bias", "Output@GRAD"},
				Diff:        []string{"Input", "Filter", "Bias"},
				Unsupported: convGradUnsupported,
			},
		}
	}
	defs := []*Def{
		conv("conv2d", "2-D convolution of Input by Filter, in groups", false),
		conv("depthwise_conv2d", "2-D convolution of each input channel by its own filters (groups = input channels)", true),
		{
			Type: "pool2d", Doc: "max or average over 2-D windows of X, or over all of it (global), or into ksize bins (adaptive)",
			Inputs: in("X"), Outputs: in("Out"),
			Attrs: []Attr{
				{Name: "pooling_type", Type: ir.KindString, Allowed: []ir.Value{ir.String("max"), ir.String("avg")}},
				intsAttr("ksize"),
				intsAttr("strides", 1, 1), intsAttr("paddings", 0, 0),
				boolAttr("global_pooling", false), boolAttr("adaptive", false),
				boolAttr("ceil_mode", false), boolAttr("exclusive", true),
				stringAttr("padding_algorithm", "EXPLICIT", "EXPLICIT", "SAME", "VALID"),
				stringAttr("data_format", "NCHW", "NCHW", "NHWC", "AnyLayout"),
			},
			Shape:       "Out = [N, C, o(H), o(W)], o(i) = (i + pads - k) / stride + 1, rounded up with ceil_mode; global: 1; adaptive: ksize",
			Infer:       inferPool,
			Sharding:    poolRule,
			ShardingDoc: poolDoc,
			// Paddle's pool2d_grad: max routes Out@GRAD to the window's
			// first element equal to Out, avg spreads it by the divisor.
			Grad: &Grad{Reads: []string{"X", "Out", "Out@GRAD"}, Diff: []string{"X"}},
		},
		{
			Type: "batch_norm", Doc: "X normalised per channel by batch (training) or running (is_test) statistics, then scaled and shifted",
			Inputs: slots("X", opt("Scale"), opt("Bias"), "Mean", "Variance", opt("MomentumTensor")),
			// MeanOut and VarianceOut are Mean and Variance updated in
			// place (the same vars, which ir.Verify allows).
			Outputs: slots("Y", "MeanOut", "VarianceOut", "SavedMean", "SavedVariance", opt("ReserveSpace")),
			Attrs: []Attr{
				floatAttr("epsilon", 1e-5), floatAttr("momentum", 0.9),
				stringAttr("data_layout", "NCHW", "NCHW", "NHWC"),
				boolAttr("use_global_stats", false), boolAttr("trainable_statistics", false),
				boolAttr("is_test", false),
			},
			Shape:       "Y = X; MeanOut, VarianceOut, SavedMean, SavedVariance = [C]",
			Infer:       inferBatchNorm,
			Sharding:    batchNormRule,
			ShardingDoc: batchNormDoc,
			// Paddle's batch_norm_grad slots: training reads the saved
			// batch mean and inverse std, is_test and use_global_stats
			// the running Mean and Variance. The running statistics get
			// no gradient.
			Grad: &Grad{
				Reads: []string{"X", "Scale", "Bias", "Mean", "Variance", "SavedMean", "SavedVariance", "Y@GRAD"},
				Diff:  []string{"X", "Scale", "Bias"},
			},
		},
		{
			Type: "affine_channel", Doc: "X * Scale + Bias, per channel",
			Inputs: in("X", "Scale", "Bias"), Outputs: in("Out"),
			// Paddle's default is AnyLayout, which it reads as channel-last.
			Attrs:       []Attr{stringAttr("data_layout", "AnyLayout", "NCHW", "NHWC", "AnyLayout")},
			Shape:       "Out = X; Scale, Bias = [C]",
			Infer:       inferAffineChannel,
			Sharding:    affineChannelRule,
			ShardingDoc: channelDoc,
			// Paddle's affine_channel_grad: Bias is not read, its gradient
			// is Out@GRAD summed per channel.
			Grad: &Grad{Reads: []string{"X", "Scale", "Out@GRAD"}, Diff: []string{"X", "Scale", "Bias"},
				Infer: inferAffineChannelGrad, Shape: "X@GRAD = X; Scale@GRAD, Bias@GRAD = Scale"},
		},
	}
	return append(defs, syncBatchNorm(defs))
}

// convGradUnsupported refuses what the simulator's conv kernels do not
// compute: channel-last data and the oneDNN fusions other than a relu
// (which the grad recomputes from Input, Filter and Bias).
func convGradUnsupported(fwd *ir.Op) string {
	if f, _ := fwd.Attrs.String("data_format"); f == "NHWC" {
		return "data_format NHWC is not supported (NCHW only)"
	}
	for _, a := range [...]string{"fuse_residual_connection", "fuse_brelu", "fuse_relu_before_depthwise_conv"} {
		switch v := fwd.Attrs.Get(a).(type) {
		case ir.Bool, ir.Int: // Paddle's older programs write bools as ints
			if v != ir.Bool(false) && v != ir.Int(0) {
				return "attr " + a + " = true is not supported"
			}
		}
	}
	act, _ := fwd.Attrs.String("fuse_activation")
	if act != "" && act != "relu" {
		return "attr fuse_activation " + strconv.Quote(act) + " is not supported (only \"\" and \"relu\")"
	}
	if a, _ := fwd.Attrs.Float("fuse_alpha"); act == "relu" && a != 0 {
		return "attr fuse_alpha " + strconv.FormatFloat(a, 'g', -1, 64) + " with fuse_activation \"relu\" (a leaky relu) is not supported"
	}
	return ""
}

// operand describes input slot's arg for a message: "Filter w [8, 3, 3, 3]".
func operand(c *Infer, slot string, shape []int64) string {
	return slot + " " + c.Name(slot) + " " + ir.FormatShape(shape)
}

// window2d reads an attr of one value per spatial dim (strides,
// dilations, ksize), which a 2-D op must have two of.
func window2d(c *Infer, name string) ([2]int64, error) {
	var w [2]int64
	v, ok := c.Ints(name)
	if !ok {
		return w, c.Errorf("attr %s is missing", name)
	}
	if len(v) != 2 {
		return w, c.Errorf("attr %s %s has %d values; a 2-D op takes 2", name, ir.FormatShape(v), len(v))
	}
	copy(w[:], v)
	return w, nil
}

// pads2d reads a 2-D op's paddings: 2 values (each dim padded the same on
// both sides) or 4 (before and after H, then before and after W), as
// [top, bottom, left, right].
func pads2d(c *Infer) ([4]int64, error) {
	var p [4]int64
	v, _ := c.Ints("paddings")
	switch len(v) {
	case 2:
		p = [4]int64{v[0], v[0], v[1], v[1]}
	case 4:
		copy(p[:], v)
	default:
		return p, c.Errorf("attr paddings %s has %d values; a 2-D op takes 2 or 4", ir.FormatShape(v), len(v))
	}
	for _, x := range p {
		if x < 0 {
			return p, c.Errorf("attr paddings %s has a negative value", ir.FormatShape(v))
		}
	}
	return p, nil
}

// samePads returns the padding before and after a dim of size in that
// Paddle's "SAME" gives a window k with stride s: the output is
// ceil(in/s), the padding split with the odd one after.
func samePads(in, k, s int64) (int64, int64) {
	out := (in + s - 1) / s
	sum := max((out-1)*s+k-in, 0)
	return sum / 2, sum - sum/2
}

func inferConv(depthwise bool) func(c *Infer) error {
	return func(c *Infer) error {
		x, okx := c.In("Input")
		w, okw := c.In("Filter")
		if !okx || !okw {
			return nil
		}
		xs, ws := x.Shape, w.Shape
		if len(xs) != 4 || len(ws) != 4 {
			return c.Errorf("%s and %s: a 2-D convolution takes a 4-D input and filter", operand(c, "Input", xs), operand(c, "Filter", ws))
		}
		strides, err := window2d(c, "strides")
		if err != nil {
			return err
		}
		dil, err := window2d(c, "dilations")
		if err != nil {
			return err
		}
		for i := range 2 {
			if strides[i] < 1 || dil[i] < 1 {
				return c.Errorf("attrs strides %s and dilations %s must be positive", ir.FormatShape(strides[:]), ir.FormatShape(dil[:]))
			}
		}
		pads, err := pads2d(c)
		if err != nil {
			return err
		}
		groups := c.Int("groups")
		if groups < 1 {
			return c.Errorf("attr groups %d is not positive", groups)
		}
		format := c.String("data_format")
		ch, sp := 1, 2 // NCHW, and AnyLayout, which Paddle reads as NCHW
		if format == "NHWC" {
			ch, sp = 3, 1
		}
		cin, m, cf := xs[ch], ws[0], ws[1]
		if cin >= 0 && cf >= 0 && cin != cf*groups {
			return c.Errorf("%s and %s: input channels %d are not filter channels %d times groups %d (data_format %s)",
				operand(c, "Input", xs), operand(c, "Filter", ws), cin, cf, groups, format)
		}
		if m >= 0 && (m == 0 || m%groups != 0) {
			return c.Errorf("%s: output channels %d are not a positive multiple of groups %d", operand(c, "Filter", ws), m, groups)
		}
		// Paddle's depthwise kernel reads one filter channel per group
		// whatever the filter says.
		if depthwise && cf >= 0 && cf != 1 {
			return c.Errorf("%s and %s: depthwise_conv2d takes one filter channel per group (groups = input channels), not %d",
				operand(c, "Input", xs), operand(c, "Filter", ws), cf)
		}
		algo := c.String("padding_algorithm")
		var buf [4]int64
		out := buf[:]
		out[0], out[ch] = xs[0], m
		for i := range 2 {
			in, k, s, d := xs[sp+i], ws[2+i], strides[i], dil[i]
			p0, p1 := pads[2*i], pads[2*i+1]
			if k == 0 {
				return c.Errorf("%s: a filter dim of 0", operand(c, "Filter", ws))
			}
			if in < 0 || k < 0 {
				out[sp+i] = -1
				continue
			}
			switch algo {
			case "SAME":
				p0, p1 = samePads(in, k, s)
				d = 1 // Paddle's SAME ignores dilations
			case "VALID":
				p0, p1 = 0, 0
			}
			dk := d*(k-1) + 1
			if in+p0+p1 < dk {
				return c.Errorf("%s and %s: dim %d of size %d, padded by %d+%d, is smaller than the dilated filter %d",
					operand(c, "Input", xs), operand(c, "Filter", ws), sp+i, in, p0, p1, dk)
			}
			out[sp+i] = (in+p0+p1-dk)/s + 1
		}
		if b, ok := c.In("Bias"); ok {
			if len(b.Shape) != 1 || b.Shape[0] >= 0 && m >= 0 && b.Shape[0] != m {
				return c.Errorf("%s and %s: Bias must be [%d], one value per output channel", operand(c, "Bias", b.Shape), operand(c, "Filter", ws), m)
			}
		}
		if r, ok := c.In("ResidualData"); ok && !Compatible(r.Shape, out) {
			return c.Errorf("%s: the residual added to the output must have its shape %s", operand(c, "ResidualData", r.Shape), ir.FormatShape(out))
		}
		c.Set("Output", x.DType, out)
		return nil
	}
}

func inferPool(c *Infer) error {
	x, ok := c.In("X")
	if !ok {
		return nil
	}
	xs := x.Shape
	if len(xs) != 4 {
		return c.Errorf("%s: pool2d takes a 4-D input", operand(c, "X", xs))
	}
	ksize, err := window2d(c, "ksize")
	if err != nil {
		return err
	}
	strides, err := window2d(c, "strides")
	if err != nil {
		return err
	}
	pads, err := pads2d(c)
	if err != nil {
		return err
	}
	global, adaptive, ceil := c.Bool("global_pooling"), c.Bool("adaptive"), c.Bool("ceil_mode")
	algo := c.String("padding_algorithm")
	ch, sp := 1, 2
	if c.String("data_format") == "NHWC" {
		ch, sp = 3, 1
	}
	var buf [4]int64
	out := buf[:]
	out[0], out[ch] = xs[0], xs[ch]
	for i := range 2 {
		in, k, s := xs[sp+i], ksize[i], strides[i]
		// Global and adaptive pooling ignore paddings and strides.
		switch {
		case global && adaptive:
			out[sp+i] = in // the bins are the input's own dims
			continue
		case global:
			out[sp+i] = 1 // (in - in) / stride + 1, known or not
			continue
		}
		if k < 1 {
			return c.Errorf("attr ksize %s must be positive", ir.FormatShape(ksize[:]))
		}
		if adaptive {
			out[sp+i] = k
			continue
		}
		if s < 1 {
			return c.Errorf("attr strides %s must be positive", ir.FormatShape(strides[:]))
		}
		p0, p1 := pads[2*i], pads[2*i+1]
		switch {
		case algo == "SAME" && in >= 0:
			p0, p1 = samePads(in, k, s)
		case algo == "VALID":
			p0, p1 = 0, 0
		}
		switch {
		case in < 0:
			out[sp+i] = -1
		case in+p0+p1 < k:
			return c.Errorf("%s: dim %d of size %d, padded by %d+%d, is smaller than the window %d", operand(c, "X", xs), sp+i, in, p0, p1, k)
		case ceil:
			out[sp+i] = (in-k+p0+p1+s-1)/s + 1
		default:
			out[sp+i] = (in-k+p0+p1)/s + 1
		}
	}
	c.Set("Out", x.DType, out)
	return nil
}

// channelOf returns the channel dim of x for a layout attr: dim 1 for
// NCHW, the last for any other (Paddle reads NHWC and AnyLayout so).
func channelOf(c *Infer, x []int64, layout string) int64 {
	if c.String(layout) == "NCHW" {
		return x[1]
	}
	return x[len(x)-1]
}

// perChannel checks that input slot, when present, is [C].
func perChannel(c *Infer, slot string, x []int64, ch int64) error {
	t, ok := c.In(slot)
	if !ok {
		return nil
	}
	if len(t.Shape) != 1 || t.Shape[0] >= 0 && ch >= 0 && t.Shape[0] != ch {
		return c.Errorf("%s and %s: %s must be [%d], one value per channel", operand(c, slot, t.Shape), operand(c, "X", x), slot, ch)
	}
	return nil
}

// bnStats are batch_norm's per-channel inputs.
var bnStats = [...]string{"Scale", "Bias", "Mean", "Variance"}

func inferBatchNorm(c *Infer) error {
	x, ok := c.In("X")
	if !ok {
		return nil
	}
	xs := x.Shape
	if len(xs) < 2 || len(xs) > 5 {
		return c.Errorf("%s: batch_norm takes a 2-D to 5-D input", operand(c, "X", xs))
	}
	for _, d := range xs {
		if d == 0 || d < -1 {
			return c.Errorf("%s: each dim must be positive or -1", operand(c, "X", xs))
		}
	}
	ch := channelOf(c, xs, "data_layout")
	for _, s := range bnStats {
		if err := perChannel(c, s, xs, ch); err != nil {
			return err
		}
	}
	if t, ok := c.In("MomentumTensor"); ok {
		if n, known := t.Numel(); known && n != 1 {
			return c.Errorf("%s: the momentum tensor holds one value", operand(c, "MomentumTensor", t.Shape))
		}
	}
	c.Set("Y", x.DType, xs)
	cs := [1]int64{ch}
	mean, _ := c.In("Mean")
	variance, _ := c.In("Variance")
	c.Set("MeanOut", mean.DType, cs[:])
	c.Set("VarianceOut", variance.DType, cs[:])
	saved := x.DType
	if saved == ir.F16 || saved == ir.BF16 {
		saved = ir.F32 // Paddle keeps half-precision statistics in f32
	}
	c.Set("SavedMean", saved, cs[:])
	c.Set("SavedVariance", saved, cs[:])
	// ReserveSpace is the kernel's workspace (cuDNN's), of its own size.
	return nil
}

func inferAffineChannel(c *Infer) error {
	x, ok := c.In("X")
	if !ok {
		return nil
	}
	if len(x.Shape) < 2 {
		return c.Errorf("%s: affine_channel takes an input of 2 or more dims", operand(c, "X", x.Shape))
	}
	ch := channelOf(c, x.Shape, "data_layout")
	for _, s := range bnStats[:2] {
		if err := perChannel(c, s, x.Shape, ch); err != nil {
			return err
		}
	}
	c.Set("Out", x.DType, x.Shape)
	return nil
}

// inferAffineChannelGrad: X@GRAD has X's type, Scale@GRAD and Bias@GRAD
// Scale's (the grad op does not read Bias).
func inferAffineChannelGrad(c *Infer) error {
	if x, ok := c.In("X"); ok && c.NumOut("X@GRAD") > 0 {
		c.Set("X@GRAD", x.DType, x.Shape)
	}
	if s, ok := c.In("Scale"); ok {
		for _, g := range [...]string{"Scale@GRAD", "Bias@GRAD"} {
			if c.NumOut(g) > 0 {
				c.Set(g, s.DType, s.Shape)
			}
		}
	}
	return nil
}
