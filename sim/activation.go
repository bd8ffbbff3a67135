package sim

import (
	"math"
	"slices"

	"github.com/distpass/distpass/ir"
)

// unaryGrad builds a grad kernel reading slot src (X or Out) and
// Out@GRAD, with d the derivative expressed in src's value.
func unaryGrad(src string, d func(v float64) float64) Kernel {
	return func(op *ir.Op, in Args) (Args, error) {
		v, err := one(op, in, src)
		if err != nil {
			return nil, err
		}
		g, err := one(op, in, "Out@GRAD")
		if err != nil {
			return nil, err
		}
		dx, err := map2(op, v, g, func(a, b float64) float64 { return b * d(a) })
		if err != nil {
			return nil, err
		}
		return out1("X@GRAD", dx), nil
	}
}

func unary(f func(float64) float64) Kernel {
	return func(op *ir.Op, in Args) (Args, error) {
		x, err := one(op, in, "X")
		if err != nil {
			return nil, err
		}
		return out1("Out", mapUnary(x, f)), nil
	}
}

var (
	relu     = unary(func(v float64) float64 { return max(v, 0) })
	reluGrad = unaryGrad("Out", func(o float64) float64 {
		if o > 0 {
			return 1
		}
		return 0
	})
	tanhK       = unary(math.Tanh)
	tanhGrad    = unaryGrad("Out", func(o float64) float64 { return 1 - o*o })
	sigmoid     = unary(func(v float64) float64 { return 1 / (1 + math.Exp(-v)) })
	sigmoidGrad = unaryGrad("Out", func(o float64) float64 { return o * (1 - o) })
)

// gelu is the exact form x·Φ(x) unless approximate is set (tanh form).
func gelu(op *ir.Op, in Args) (Args, error) {
	f := geluExact
	if attrBool(op, "approximate", false) {
		f = geluTanh
	}
	return unary(f)(op, in)
}

func geluGrad(op *ir.Op, in Args) (Args, error) {
	d := geluExactGrad
	if attrBool(op, "approximate", false) {
		d = geluTanhGrad
	}
	return unaryGrad("X", d)(op, in)
}

func geluExact(x float64) float64 { return 0.5 * x * (1 + math.Erf(x/math.Sqrt2)) }

func geluExactGrad(x float64) float64 {
	return 0.5*(1+math.Erf(x/math.Sqrt2)) + x*math.Exp(-x*x/2)/math.Sqrt(2*math.Pi)
}

const geluC = 0.044715

func geluTanh(x float64) float64 {
	return 0.5 * x * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(x+geluC*x*x*x)))
}

func geluTanhGrad(x float64) float64 {
	k := math.Sqrt(2 / math.Pi)
	t := math.Tanh(k * (x + geluC*x*x*x))
	return 0.5*(1+t) + 0.5*x*(1-t*t)*k*(1+3*geluC*x*x)
}

// scale computes scale*x + bias, or scale*(x + bias) when bias_after_scale
// is false. A ScaleTensor input, when given, overrides the scale attr.
func scale(op *ir.Op, in Args) (Args, error) {
	x, err := one(op, in, "X")
	if err != nil {
		return nil, err
	}
	s, b := attrFloat(op, "scale", 1), attrFloat(op, "bias", 0)
	if st := opt(in, "ScaleTensor"); st != nil && st.Numel() > 0 {
		s = st.Data[0]
	}
	after := attrBool(op, "bias_after_scale", true)
	return out1("Out", mapUnary(x, func(v float64) float64 {
		if after {
			return s*v + b
		}
		return s * (v + b)
	})), nil
}

// scaleGrad is X@GRAD = scale * Out@GRAD (Paddle emits a scale op with
// bias 0 instead; both are accepted).
func scaleGrad(op *ir.Op, in Args) (Args, error) {
	g, err := one(op, in, "Out@GRAD")
	if err != nil {
		return nil, err
	}
	s := attrFloat(op, "scale", 1)
	return out1("X@GRAD", mapUnary(g, func(v float64) float64 { return s * v })), nil
}

// lanes calls f for each 1-D lane of shape along axis: the offset of its
// first element and the stride between its elements.
func lanes(shape []int64, axis int, f func(base, stride int64)) {
	outer := numel(shape[:axis])
	inner := numel(shape[axis+1:])
	n := shape[axis]
	for o := range outer {
		for i := range inner {
			f(o*n*inner+i, inner)
		}
	}
}

func softmax(op *ir.Op, in Args) (Args, error) {
	x, err := one(op, in, "X")
	if err != nil {
		return nil, err
	}
	if x.Rank() == 0 {
		return out1("Out", Full(x.DType, 1)), nil
	}
	ax, err := normAxis(op, attrInt(op, "axis", -1), x.Rank())
	if err != nil {
		return nil, err
	}
	out := like(x)
	softmaxInto(x.Data, out.Data, x.Shape, ax)
	return out1("Out", out), nil
}

func softmaxInto(x, out []float64, shape []int64, ax int) {
	n := shape[ax]
	lanes(shape, ax, func(base, st int64) {
		m := math.Inf(-1)
		for j := range n {
			m = max(m, x[base+j*st])
		}
		s := 0.0
		for j := range n {
			e := math.Exp(x[base+j*st] - m)
			out[base+j*st] = e
			s += e
		}
		for j := range n {
			out[base+j*st] /= s
		}
	})
}

// softmaxGrad is dX = Out * (dOut - sum(dOut*Out)) along axis.
func softmaxGrad(op *ir.Op, in Args) (Args, error) {
	o, err := one(op, in, "Out")
	if err != nil {
		return nil, err
	}
	g, err := one(op, in, "Out@GRAD")
	if err != nil {
		return nil, err
	}
	if !slices.Equal(o.Shape, g.Shape) {
		return nil, errf(op, "Out shape %v and Out@GRAD shape %v differ", o.Shape, g.Shape)
	}
	dx := like(g)
	if o.Rank() == 0 {
		return out1("X@GRAD", dx), nil
	}
	ax, err := normAxis(op, attrInt(op, "axis", -1), o.Rank())
	if err != nil {
		return nil, err
	}
	n := o.Shape[ax]
	lanes(o.Shape, ax, func(base, st int64) {
		dot := 0.0
		for j := range n {
			dot += o.Data[base+j*st] * g.Data[base+j*st]
		}
		for j := range n {
			k := base + j*st
			dx.Data[k] = o.Data[k] * (g.Data[k] - dot)
		}
	})
	return out1("X@GRAD", dx), nil
}

// relu6 clips X to [0, threshold].
func relu6(op *ir.Op, in Args) (Args, error) {
	t := attrFloat(op, "threshold", 6)
	return unary(func(v float64) float64 { return min(max(v, 0), t) })(op, in)
}

// relu6Grad passes Out@GRAD where Out is strictly inside (0, threshold),
// as Paddle's does.
func relu6Grad(op *ir.Op, in Args) (Args, error) {
	t := attrFloat(op, "threshold", 6)
	return unaryGrad("Out", func(o float64) float64 {
		if o > 0 && o < t {
			return 1
		}
		return 0
	})(op, in)
}

// hardSwish is X * min(max(X + offset, 0), threshold) / scale.
func hardSwish(op *ir.Op, in Args) (Args, error) {
	t, s, o, err := hardSwishAttrs(op)
	if err != nil {
		return nil, err
	}
	return unary(func(v float64) float64 { return v * min(max(v+o, 0), t) / s })(op, in)
}

// hardSwishGrad is the derivative in X: 0 below -offset, (2X + offset) /
// scale in the ramp, threshold / scale above it. Paddle's kernel writes 1
// above the ramp, which is the same for its threshold = scale defaults.
func hardSwishGrad(op *ir.Op, in Args) (Args, error) {
	t, s, o, err := hardSwishAttrs(op)
	if err != nil {
		return nil, err
	}
	return unaryGrad("X", func(v float64) float64 {
		switch {
		case v+o <= 0:
			return 0
		case v+o < t:
			return (2*v + o) / s
		}
		return t / s
	})(op, in)
}

// hardSwishAttrs reads hard_swish's attrs; a scale of 0 would divide by
// zero.
func hardSwishAttrs(op *ir.Op) (threshold, scale, offset float64, err error) {
	threshold, scale, offset = attrFloat(op, "threshold", 6), attrFloat(op, "scale", 6), attrFloat(op, "offset", 3)
	if scale == 0 {
		err = errf(op, "attr scale is 0")
	}
	return threshold, scale, offset, err
}

// swishOf is X * sigmoid(beta * X) and its derivative in X,
// sigmoid(bX) * (1 + bX * (1 - sigmoid(bX))); silu is beta 1.
func swishOf(beta float64) (f, d func(float64) float64) {
	sig := func(v float64) float64 { return 1 / (1 + math.Exp(-beta*v)) }
	f = func(v float64) float64 { return v * sig(v) }
	d = func(v float64) float64 { s := sig(v); return s * (1 + beta*v*(1-s)) }
	return f, d
}

func swish(op *ir.Op, in Args) (Args, error) {
	f, _ := swishOf(attrFloat(op, "beta", 1))
	return unary(f)(op, in)
}

func swishGrad(op *ir.Op, in Args) (Args, error) {
	_, d := swishOf(attrFloat(op, "beta", 1))
	return unaryGrad("X", d)(op, in)
}

var (
	siluF, siluD = swishOf(1)
	silu         = unary(siluF)
	siluGrad     = unaryGrad("X", siluD)
)

// hardSigmoid clips slope * X + offset to [0, 1].
func hardSigmoid(op *ir.Op, in Args) (Args, error) {
	k, b := attrFloat(op, "slope", 0.2), attrFloat(op, "offset", 0.5)
	return unary(func(v float64) float64 { return min(max(k*v+b, 0), 1) })(op, in)
}

// hardSigmoidGrad passes slope * Out@GRAD where Out is strictly inside
// (0, 1), as Paddle's does, reading Out.
func hardSigmoidGrad(op *ir.Op, in Args) (Args, error) {
	k := attrFloat(op, "slope", 0.2)
	return unaryGrad("Out", func(o float64) float64 {
		if o > 0 && o < 1 {
			return k
		}
		return 0
	})(op, in)
}

// activationKernels are the kernels of this file, by op type.
func activationKernels() Kernels {
	return Kernels{
		"relu": relu, "relu_grad": reluGrad,
		"gelu": gelu, "gelu_grad": geluGrad,
		"tanh": tanhK, "tanh_grad": tanhGrad,
		"sigmoid": sigmoid, "sigmoid_grad": sigmoidGrad,
		"scale": scale, "scale_grad": scaleGrad,
		"softmax": softmax, "softmax_grad": softmaxGrad,
		"relu6": relu6, "relu6_grad": relu6Grad,
		"hard_swish": hardSwish, "hard_swish_grad": hardSwishGrad,
		"swish": swish, "swish_grad": swishGrad,
		"silu": silu, "silu_grad": siluGrad,
		"hard_sigmoid": hardSigmoid, "hard_sigmoid_grad": hardSigmoidGrad,
	}
}
