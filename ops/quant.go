package ops

import "github.com/distpass/distpass/ir"

// quantDefs: the fake-quantisation ops of Paddle's quantisation-aware
// training and of the models PaddleSlim exports (fake_quantize_op.cc,
// fake_dequantize_op.cc, quantize_linear_op.cc). Each keeps X's shape
// and dtype (its values are rounded to 2^(bit_length-1)-1 levels but
// stay floats); the scales are one value, or one per channel along
// quant_axis. The moving-average and range variants also carry their
// running state in and out.
//
// None is elementwise in training: the scale is a max over all of X (or
// over each channel), which a shard of X does not see (their sharding
// rules keep X whole where they compute a scale). At test (is_test) the
// moving-average ops and quantize_linear read their stored scale and
// are elementwise. The quantise-dequantise ops and the scale observer
// have Paddle's straight-through gradient (X@GRAD = Out@GRAD, the
// rounding taken as the identity): quantisation-aware training; the
// others have none in Paddle either.
func quantDefs() []*Def {
	bits := intAttr("bit_length", 8)
	round := intAttr("round_type", 0, 0, 1)
	axis01 := intAttr("quant_axis", 0, 0, 1)
	rate := floatAttr("moving_rate", 0.9)
	absMax := func(t, doc string) *Def {
		return &Def{
			Type: t, Doc: doc,
			Inputs: in("X"), Outputs: in("Out", "OutScale"),
			Attrs:    []Attr{bits, round},
			Shape:    "Out = X; OutScale = [1]",
			Infer:    inferFakeQuant(false),
			Sharding: quantRule("", always), ShardingDoc: quantComputeDoc,
		}
	}
	channelWise := func(t, doc string) *Def {
		return &Def{
			Type: t, Doc: doc,
			Inputs: in("X"), Outputs: in("Out", "OutScale"),
			Attrs:    []Attr{axis01, bits, round},
			Shape:    "Out = X; OutScale = [X[quant_axis]]",
			Infer:    inferFakeQuant(true),
			Sharding: quantRule("quant_axis", always, "OutScale"), ShardingDoc: quantComputeDoc,
		}
	}
	movingAverage := func(t, doc string) *Def {
		return &Def{
			Type: t, Doc: doc,
			Inputs:   slots("X", "InScale", opt("InAccum"), opt("InState")),
			Outputs:  slots("Out", "OutScale", opt("OutState"), opt("OutAccum")),
			Attrs:    []Attr{rate, bits, round},
			Shape:    "Out = X; OutScale, OutState, OutAccum = [1]",
			Infer:    inferFakeQuant(false),
			Sharding: quantRule("", notTest), ShardingDoc: quantMovingDoc,
		}
	}
	linear := func(t, doc string) *Def {
		return &Def{
			Type: t, Doc: doc,
			Inputs:  slots("X", "Scale", "ZeroPoint", opt("InAccum"), opt("InState")),
			Outputs: slots("Y", opt("OutScale"), opt("OutState"), opt("OutAccum")),
			Attrs: []Attr{
				intAttr("quant_axis", 0, -1, 0, 1), bits,
				intAttr("qmin", -128), intAttr("qmax", 127), round,
				boolAttr("only_observer", false),
			},
			Shape: "Y = X; OutScale = [1] (quant_axis -1) or [X[quant_axis]]; OutState, OutAccum = [1]",
			Infer: inferQuantLinear,
			// quantize_linear computes its scale in training (OutScale),
			// and reads it otherwise, as dequantize_linear always does.
			Sharding: quantRule("quant_axis", linearComputes, "Scale", "ZeroPoint", "OutScale"), ShardingDoc: quantReadDoc,
		}
	}
	moving := movingAverage("moving_average_abs_max_scale", "the moving average of max(abs(X)) as the scale; Out = X")
	moving.Inputs = slots("X", opt("InAccum"), opt("InState"))
	moving.Outputs = slots(opt("Out"), "OutScale", opt("OutState"), opt("OutAccum"))
	moving.Attrs = []Attr{rate}
	rangeMax := absMax("fake_quantize_range_abs_max", "X quantised by the max of max(abs(X)) and the last window_size scales")
	rangeMax.Inputs = slots("X", "InScale", opt("Iter"))
	rangeMax.Outputs = slots("Out", "OutScale", opt("OutScales"))
	rangeMax.Attrs = []Attr{intAttr("window_size", 10000), bits, round}
	rangeMax.Shape = "Out = X; OutScale = [1]; OutScales = [window_size]"
	moving.Grad = ste()
	return []*Def{
		absMax("fake_quantize_abs_max", "round(X / max(abs(X)) * range), range = 2^(bit_length-1) - 1"),
		withSTE(absMax("fake_quantize_dequantize_abs_max", "X quantised by max(abs(X)) and dequantised again")),
		channelWise("fake_channel_wise_quantize_abs_max", "X quantised by the max(abs) of each channel along quant_axis"),
		withSTE(channelWise("fake_channel_wise_quantize_dequantize_abs_max", "X quantised per channel along quant_axis and dequantised again")),
		rangeMax,
		movingAverage("fake_quantize_moving_average_abs_max", "X quantised by the moving average of max(abs(X))"),
		withSTE(movingAverage("fake_quantize_dequantize_moving_average_abs_max", "X quantised by the moving average of max(abs(X)) and dequantised again")),
		moving,
		{
			Type: STEGradType, Doc: "the straight-through gradient of a fake quantisation: X@GRAD = Out@GRAD",
			Inputs: in("Out@GRAD"), Outputs: in("X@GRAD"),
			Traits:   Elementwise | LinearUnary | BackwardOnly,
			Shape:    "X@GRAD = Out@GRAD",
			Infer:    sameAs("Out@GRAD", "X@GRAD"),
			Sharding: unaryOf("Out@GRAD"), ShardingDoc: unaryDoc,
		},
		{
			Type: "fake_dequantize_max_abs", Doc: "X * Scale / max_range",
			Inputs: in("X", "Scale"), Outputs: in("Out"),
			Attrs:    []Attr{{Name: "max_range", Type: ir.KindFloat}},
			Shape:    "Out = X",
			Infer:    sameAs("X", "Out"),
			Sharding: quantRule("", never), ShardingDoc: quantReadDoc,
		},
		{
			Type: "fake_channel_wise_dequantize_max_abs", Doc: "X times its channel's scales over the product of the quantisation ranges",
			Inputs: slots("X", many("Scales")), Outputs: in("Out"),
			Attrs:    []Attr{intsAttr("quant_bits", 8), axis01, intAttr("x_num_col_dims", 1)},
			Shape:    "Out = X; Scales[0] = [X[quant_axis]] (with two scales: [X[1]], and Scales[1] = [1])",
			Infer:    inferChannelDequant,
			Sharding: channelDequantRule, ShardingDoc: quantReadDoc,
		},
		linear("quantize_linear", "X quantised by Scale (one, or one per channel along quant_axis) and ZeroPoint"),
		linear("dequantize_linear", "X dequantised by Scale (one, or one per channel along quant_axis) and ZeroPoint"),
	}
}

// checkBits checks attr bit_length, which Paddle bounds to [1, 16].
func checkBits(c *Infer) error {
	if b := c.Int("bit_length"); b < 1 || b > 16 {
		return c.Errorf("attr bit_length %d is not in [1, 16]", b)
	}
	return nil
}

// quantAxis returns attr quant_axis, checked against X's rank; -1 (per
// tensor) passes when perTensor does.
func quantAxis(c *Infer, x []int64, perTensor bool) (int, error) {
	a := c.Int("quant_axis")
	if a >= int64(len(x)) || a < -1 || a == -1 && !perTensor {
		return 0, c.Errorf("%s: attr quant_axis %d is not a dim of it", operand(c, "X", x), a)
	}
	return int(a), nil
}

// inferFakeQuant infers the fake_quantize family: Out = X, the scale
// per channel along quant_axis or one, and the running state one value.
func inferFakeQuant(perChannel bool) func(c *Infer) error {
	return func(c *Infer) error {
		x, ok := c.In("X")
		if !ok {
			return nil
		}
		if c.attr("bit_length") != nil { // moving_average_abs_max_scale has none
			if err := checkBits(c); err != nil {
				return err
			}
		}
		one := [1]int64{1}
		scale := one
		if perChannel {
			a, err := quantAxis(c, x.Shape, false)
			if err != nil {
				return err
			}
			scale[0] = x.Shape[a]
		}
		if c.NumOut("Out") > 0 {
			c.Set("Out", x.DType, x.Shape)
		}
		c.Set("OutScale", x.DType, scale[:])
		for _, s := range [...]string{"OutState", "OutAccum"} {
			if c.NumOut(s) > 0 {
				c.Set(s, x.DType, one[:])
			}
		}
		if c.NumOut("OutScales") > 0 {
			w := [1]int64{c.Int("window_size")}
			if w[0] < 1 {
				return c.Errorf("attr window_size %d is not positive", w[0])
			}
			c.Set("OutScales", x.DType, w[:])
		}
		return nil
	}
}

func inferChannelDequant(c *Infer) error {
	x, ok := c.In("X")
	if !ok {
		return nil
	}
	a, err := quantAxis(c, x.Shape, false)
	if err != nil {
		return err
	}
	n := c.NumIn("Scales")
	if bitsOf, _ := c.Ints("quant_bits"); len(bitsOf) != n {
		return c.Errorf("attr quant_bits %s has %d values for %d Scales; it takes one per scale", ir.FormatShape(bitsOf), len(bitsOf), n)
	}
	// One scale dequantises a weight along quant_axis; two, an
	// activation: per channel of dim 1, then by one value.
	var want [2]int64
	switch n {
	case 1:
		want[0] = x.Shape[a]
	case 2:
		if len(x.Shape) < 2 {
			return c.Errorf("%s: two Scales dequantise along dim 1, which X lacks", operand(c, "X", x.Shape))
		}
		want = [2]int64{x.Shape[1], 1}
	default:
		return c.Errorf("%d Scales; fake_channel_wise_dequantize_max_abs takes one or two", n)
	}
	for i := range n {
		s, ok := c.InAt("Scales", i)
		if !ok {
			continue
		}
		if len(s.Shape) != 1 || s.Shape[0] >= 0 && want[i] >= 0 && s.Shape[0] != want[i] {
			return c.Errorf("Scales %s %s and %s: Scales[%d] must be [%d]", c.Op().Input("Scales")[i], ir.FormatShape(s.Shape), operand(c, "X", x.Shape), i, want[i])
		}
	}
	c.Set("Out", x.DType, x.Shape)
	return nil
}

func inferQuantLinear(c *Infer) error {
	x, ok := c.In("X")
	if !ok {
		return nil
	}
	if err := checkBits(c); err != nil {
		return err
	}
	a, err := quantAxis(c, x.Shape, true)
	if err != nil {
		return err
	}
	one := [1]int64{1}
	scale := one
	if a >= 0 {
		scale[0] = x.Shape[a]
	}
	if s, ok := c.In("Scale"); ok {
		n, known := s.Numel()
		if a >= 0 && (len(s.Shape) != 1 || s.Shape[0] >= 0 && scale[0] >= 0 && s.Shape[0] != scale[0]) ||
			a < 0 && known && n != 1 {
			return c.Errorf("%s and %s: Scale must be %s for quant_axis %d", operand(c, "Scale", s.Shape), operand(c, "X", x.Shape), ir.FormatShape(scale[:]), a)
		}
	}
	// dequantize_linear turns int8 values back to floats of the scale's
	// kind: an integer X leaves Y's dtype to the program.
	dt := x.DType
	if c.Op().Type == "dequantize_linear" && dt.IsInteger() {
		dt = ir.DTypeInvalid
	}
	c.Set("Y", dt, x.Shape)
	if c.NumOut("OutScale") > 0 {
		c.Set("OutScale", dt, scale[:])
	}
	for _, s := range [...]string{"OutState", "OutAccum"} {
		if c.NumOut(s) > 0 {
			c.Set(s, dt, one[:])
		}
	}
	return nil
}

// STEGradType is the grad op of Paddle's quantisation-aware training ops,
// shared by them all: the straight-through estimator.
const STEGradType = "straight_through_estimator_grad"

// ste is the Grad of a fake quantisation that trains: Paddle's
// straight-through estimator, which reads Out@GRAD alone (the op's attrs
// copied, as Paddle's maker does).
func ste() *Grad {
	return &Grad{Type: STEGradType, Reads: []string{"Out@GRAD"}, Diff: []string{"X"},
		Emit: func(fwd *ir.Op, _ *ir.Var, outGrads []string, inGrad string) *ir.Op {
			return &ir.Op{Type: STEGradType, Inputs: ir.Slots("Out@GRAD", outGrads[0]), Outputs: ir.Slots("X@GRAD", inGrad), Attrs: fwd.Attrs.Clone()}
		}}
}

func withSTE(d *Def) *Def {
	d.Grad = ste()
	return d
}
