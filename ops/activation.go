package ops

import "github.com/distpass/distpass/ir"

// activationDefs: unary elementwise ops, scale and softmax.
func activationDefs() []*Def {
	// unary is an activation without a gradient (the simulator has no
	// grad kernel for it, and a Grad would make autodiff emit one).
	unary := func(t, doc string, attrs ...Attr) *Def {
		return &Def{
			Type: t, Doc: doc,
			Inputs: in("X"), Outputs: in("Out"),
			Attrs:  attrs,
			Traits: Elementwise,
			Shape:  "Out = X",
			Infer:  sameAs("X", "Out"),
			// ScaleTensor and FactorTensor, which scale and pow may read,
			// are not sharded.
			Sharding:    unaryRule,
			ShardingDoc: unaryDoc,
		}
	}
	// withGrad gives d the grad op that reads src (X or Out) and Out@GRAD.
	withGrad := func(d *Def, src string) *Def {
		d.Grad = &Grad{Reads: []string{src, "Out@GRAD"}, Diff: []string{"X"}}
		return d
	}
	softmax := withGrad(unary("softmax", "exp(X) / sum(exp(X)) along axis", intAttr("axis", -1)), "Out")
	softmax.Traits = 0
	softmax.Shape = "Out = X, axis in [-rank, rank)"
	softmax.Infer = inferSoftmax
	softmax.Sharding = softmaxRule
	softmax.ShardingDoc = softmaxDoc
	// X@GRAD has Out's type: the derived rule, which reads X, finds none.
	softmax.Grad.Infer, softmax.Grad.Shape = gradFrom("Out"), "X@GRAD = Out"
	logSoftmax := unary("log_softmax", "log(softmax(X)) along axis", intAttr("axis", -1))
	logSoftmax.Traits = 0
	logSoftmax.Shape = softmax.Shape
	logSoftmax.Infer = inferSoftmax
	logSoftmax.Sharding = softmaxRule
	logSoftmax.ShardingDoc = softmaxDoc
	scale := unary("scale", "scale * X + bias, or scale * (X + bias)",
		floatAttr("scale", 1), floatAttr("bias", 0), boolAttr("bias_after_scale", true))
	scale.Traits |= KeepsIndex | LinearUnary
	scale.PartialIf = func(op *ir.Op) bool { // linear only without a bias (absent: 0)
		b, ok := ir.AsFloat(op.Attrs.Get("bias"))
		return !ok || b == 0
	}
	scale.Inputs = slots("X", Slot{Name: "ScaleTensor", Optional: true, NoGrad: true})
	scale.Grad = &Grad{
		Reads: []string{"Out@GRAD"}, Diff: []string{"X"},
		Unsupported: func(fwd *ir.Op) string {
			if len(fwd.Input("ScaleTensor")) > 0 {
				return "a ScaleTensor input is not supported (the grad reads the scale attr)"
			}
			return ""
		},
	}
	leakyRelu := unary("leaky_relu", "X where X >= 0, alpha * X elsewhere", floatAttr("alpha", 0.02))
	withGrad(leakyRelu, "X")
	leakyRelu.Traits |= Monotone
	leakyRelu.PartialIf = func(op *ir.Op) bool { // non-decreasing only for alpha >= 0 (absent: 0.02)
		a, ok := ir.AsFloat(op.Attrs.Get("alpha"))
		return !ok || a >= 0
	}
	pow := unary("pow", "X ** factor", floatAttr("factor", 1))
	pow.Inputs = slots("X", Slot{Name: "FactorTensor", Optional: true, NoGrad: true})
	withGrad(pow, "X")
	pow.Grad.Unsupported = func(fwd *ir.Op) string {
		if len(fwd.Input("FactorTensor")) > 0 {
			return "a FactorTensor input is not supported (the grad reads the factor attr)"
		}
		return ""
	}
	return []*Def{
		monotone(withGrad(unary("relu", "max(X, 0)"), "Out")),
		monotone(withGrad(unary("tanh", "tanh(X)"), "Out")),
		monotone(withGrad(unary("sigmoid", "1 / (1 + exp(-X))"), "Out")),
		withGrad(unary("gelu", "X * Phi(X), exact or tanh-approximated", boolAttr("approximate", false)), "X"),
		softmax, logSoftmax, scale, pow,
		monotone(withGrad(unary("relu6", "min(max(X, 0), threshold)", floatAttr("threshold", 6)), "Out")),
		leakyRelu,
		unary("elu", "X where X > 0, alpha * (exp(X) - 1) elsewhere", floatAttr("alpha", 1)),
		unary("celu", "max(0, X) + min(0, alpha * (exp(X / alpha) - 1))", floatAttr("alpha", 1)),
		unary("selu", "scale * (X where X > 0, alpha * (exp(X) - 1) elsewhere)",
			floatAttr("scale", 1.0507009873554805), floatAttr("alpha", 1.6732632423543772)),
		unary("brelu", "min(max(X, t_min), t_max)", floatAttr("t_min", 0), floatAttr("t_max", 24)),
		unary("thresholded_relu", "X where X > threshold, value elsewhere", floatAttr("threshold", 1), floatAttr("value", 0)),
		withGrad(unary("hard_swish", "X * min(max(X + offset, 0), threshold) / scale",
			floatAttr("threshold", 6), floatAttr("scale", 6), floatAttr("offset", 3)), "X"),
		withGrad(unary("hard_sigmoid", "min(max(slope * X + offset, 0), 1)", floatAttr("slope", 0.2), floatAttr("offset", 0.5)), "Out"),
		unary("hard_shrink", "X where |X| > threshold, 0 elsewhere", floatAttr("threshold", 0.5)),
		unary("softshrink", "X - lambda where X > lambda, X + lambda where X < -lambda, 0 elsewhere", floatAttr("lambda", 0.5)),
		withGrad(unary("swish", "X * sigmoid(beta * X)", floatAttr("beta", 1)), "X"),
		withGrad(unary("silu", "X * sigmoid(X)"), "X"),
		withGrad(unary("mish", "X * tanh(softplus(X))", floatAttr("threshold", 20)), "X"),
		monotone(withGrad(unary("softplus", "log(1 + exp(beta * X)) / beta, X where beta * X > threshold",
			floatAttr("beta", 1), floatAttr("threshold", 20)), "X")),
		withGrad(unary("softsign", "X / (1 + |X|)"), "X"),
		withGrad(unary("logsigmoid", "log(sigmoid(X))"), "X"),
		withGrad(unary("tanh_shrink", "X - tanh(X)"), "X"),
		monotone(withGrad(unary("exp", "exp(X)"), "Out")),
		monotone(withGrad(unary("log", "ln(X)"), "X")),
		monotone(withGrad(unary("sqrt", "sqrt(X)"), "Out")),
		withGrad(unary("rsqrt", "1 / sqrt(X)"), "Out"),
		withGrad(unary("square", "X * X"), "X"),
		withGrad(unary("abs", "|X|"), "X"),
		withGrad(unary("reciprocal", "1 / X"), "Out"),
		withGrad(unary("sin", "sin(X)"), "X"),
		withGrad(unary("cos", "cos(X)"), "X"),
		withGrad(unary("erf", "erf(X)"), "X"),
		unary("floor", "X rounded down"),
		unary("ceil", "X rounded up"),
		unary("round", "X rounded half away from zero"),
	}
}

// inferSoftmax: Out has X's type; axis must name a dim of X (-1 or 0
// for a 0-D X).
func inferSoftmax(c *Infer) error {
	x, ok := c.In("X")
	if !ok {
		return nil
	}
	if _, err := axisOf(c, "axis", "X", x.Shape); err != nil {
		return err
	}
	c.Set("Out", x.DType, x.Shape)
	return nil
}

// axisOf returns int attr name as an index into shape (of input slot
// slot), counting a negative value from the end; a 0-D shape takes -1
// and 0, as Paddle's softmax does.
func axisOf(c *Infer, name, slot string, shape []int64) (int, error) {
	a, r := c.Int(name), int64(len(shape))
	if r == 0 && (a == 0 || a == -1) {
		return 0, nil
	}
	if a < -r || a >= r {
		return 0, c.Errorf("%s %d out of range for %s %s %s", name, a, slot, c.Name(slot), ir.FormatShape(shape))
	}
	if a < 0 {
		a += r
	}
	return int(a), nil
}

// gradFrom is a Grad.Infer for a one-input op: X@GRAD has the type of
// the grad op's input slot src (Out, Out@GRAD), when the grad op does
// not read X.
func gradFrom(src string) func(c *Infer) error {
	return func(c *Infer) error {
		fwd := c.def.of
		if fwd == nil || len(fwd.Grad.Diff) != 1 {
			return nil
		}
		if t, ok := c.In(src); ok {
			c.Set(fwd.Grad.Diff[0]+"@GRAD", t.DType, t.Shape)
		}
		return nil
	}
}

// monotone marks d's op as never decreasing in X (Monotone).
func monotone(d *Def) *Def {
	d.Traits |= Monotone
	return d
}
