package sim

import (
	"math"

	"github.com/distpass/distpass/ir"
)

// The elementary functions and the smooth activations, with their grad
// kernels: each grad reads the slot Paddle's grad op reads (Out where the
// derivative is simplest in it, X elsewhere).

var (
	expK        = unary(math.Exp)
	expGrad     = unaryGrad("Out", func(o float64) float64 { return o })
	logK        = unary(math.Log)
	logGrad     = unaryGrad("X", func(x float64) float64 { return 1 / x })
	sqrtK       = unary(math.Sqrt)
	sqrtGrad    = unaryGrad("Out", func(o float64) float64 { return 0.5 / o })
	rsqrtK      = unary(func(x float64) float64 { return 1 / math.Sqrt(x) })
	rsqrtGrad   = unaryGrad("Out", func(o float64) float64 { return -0.5 * o * o * o })
	squareK     = unary(func(x float64) float64 { return x * x })
	squareGrad  = unaryGrad("X", func(x float64) float64 { return 2 * x })
	absK        = unary(math.Abs)
	absGrad     = unaryGrad("X", sign)
	reciprocalK = unary(func(x float64) float64 { return 1 / x })
	// d(1/x) = -1/x² = -Out².
	reciprocalGrad = unaryGrad("Out", func(o float64) float64 { return -o * o })
	sinK           = unary(math.Sin)
	sinGrad        = unaryGrad("X", math.Cos)
	cosK           = unary(math.Cos)
	cosGrad        = unaryGrad("X", func(x float64) float64 { return -math.Sin(x) })
	erfK           = unary(math.Erf)
	erfGrad        = unaryGrad("X", func(x float64) float64 { return 2 / math.Sqrt(math.Pi) * math.Exp(-x*x) })
	softsignK      = unary(func(x float64) float64 { return x / (1 + math.Abs(x)) })
	softsignGrad   = unaryGrad("X", func(x float64) float64 { d := 1 + math.Abs(x); return 1 / (d * d) })
	// log(sigmoid(x)) = -softplus(-x), written to stay finite for large |x|.
	logsigmoidK    = unary(func(x float64) float64 { return min(x, 0) - math.Log1p(math.Exp(-math.Abs(x))) })
	logsigmoidGrad = unaryGrad("X", func(x float64) float64 { return 1 / (1 + math.Exp(x)) })
	tanhShrinkK    = unary(func(x float64) float64 { return x - math.Tanh(x) })
	tanhShrinkGrad = unaryGrad("X", func(x float64) float64 { t := math.Tanh(x); return t * t })
)

func sign(x float64) float64 {
	switch {
	case x > 0:
		return 1
	case x < 0:
		return -1
	}
	return 0
}

// leakyRelu is X where X >= 0, alpha * X elsewhere; its grad reads X as
// Paddle's does (alpha may be negative, so Out does not tell the side).
func leakyRelu(op *ir.Op, in Args) (Args, error) {
	a := attrFloat(op, "alpha", 0.02)
	return unary(func(x float64) float64 {
		if x >= 0 {
			return x
		}
		return a * x
	})(op, in)
}

func leakyReluGrad(op *ir.Op, in Args) (Args, error) {
	a := attrFloat(op, "alpha", 0.02)
	return unaryGrad("X", func(x float64) float64 {
		if x > 0 {
			return 1
		}
		return a
	})(op, in)
}

// softplusOf is log(1 + exp(beta*x)) / beta, x itself where beta*x
// exceeds threshold (Paddle's cut-off against overflow), and its
// derivative, sigmoid(beta*x) (1 past the cut-off).
func softplusOf(op *ir.Op) (f, d func(float64) float64) {
	beta, t := attrFloat(op, "beta", 1), attrFloat(op, "threshold", 20)
	f = func(x float64) float64 {
		if beta*x > t {
			return x
		}
		return math.Log1p(math.Exp(beta*x)) / beta
	}
	d = func(x float64) float64 {
		if beta*x > t {
			return 1
		}
		return 1 / (1 + math.Exp(-beta*x))
	}
	return f, d
}

func softplus(op *ir.Op, in Args) (Args, error) {
	f, _ := softplusOf(op)
	return unary(f)(op, in)
}

func softplusGrad(op *ir.Op, in Args) (Args, error) {
	_, d := softplusOf(op)
	return unaryGrad("X", d)(op, in)
}

// mishOf is x * tanh(softplus(x)), softplus cut off at threshold as
// Paddle's, and its derivative tanh(sp) + x * (1 - tanh²(sp)) * sp'.
func mishOf(op *ir.Op) (f, d func(float64) float64) {
	t := attrFloat(op, "threshold", 20)
	sp := func(x float64) float64 {
		if x > t {
			return x
		}
		return math.Log1p(math.Exp(x))
	}
	dsp := func(x float64) float64 {
		if x > t {
			return 1
		}
		return 1 / (1 + math.Exp(-x))
	}
	f = func(x float64) float64 { return x * math.Tanh(sp(x)) }
	d = func(x float64) float64 { th := math.Tanh(sp(x)); return th + x*(1-th*th)*dsp(x) }
	return f, d
}

func mish(op *ir.Op, in Args) (Args, error) {
	f, _ := mishOf(op)
	return unary(f)(op, in)
}

func mishGrad(op *ir.Op, in Args) (Args, error) {
	_, d := mishOf(op)
	return unaryGrad("X", d)(op, in)
}

// pow is X ** factor, the factor from FactorTensor when one is given; its
// grad, factor * X ** (factor - 1), reads the attr only (append-backward
// refuses a pow with a FactorTensor).
func pow(op *ir.Op, in Args) (Args, error) {
	p := attrFloat(op, "factor", 1)
	if ft := opt(in, "FactorTensor"); ft != nil && ft.Numel() > 0 {
		p = ft.Data[0]
	}
	return unary(func(x float64) float64 { return math.Pow(x, p) })(op, in)
}

func powGrad(op *ir.Op, in Args) (Args, error) {
	p := attrFloat(op, "factor", 1)
	return unaryGrad("X", func(x float64) float64 { return p * math.Pow(x, p-1) })(op, in)
}

// elementaryKernels are the kernels of this file, by op type.
func elementaryKernels() Kernels {
	return Kernels{
		"exp": expK, "exp_grad": expGrad, "log": logK, "log_grad": logGrad,
		"sqrt": sqrtK, "sqrt_grad": sqrtGrad, "rsqrt": rsqrtK, "rsqrt_grad": rsqrtGrad,
		"square": squareK, "square_grad": squareGrad, "abs": absK, "abs_grad": absGrad,
		"reciprocal": reciprocalK, "reciprocal_grad": reciprocalGrad,
		"sin": sinK, "sin_grad": sinGrad, "cos": cosK, "cos_grad": cosGrad,
		"erf": erfK, "erf_grad": erfGrad, "softsign": softsignK, "softsign_grad": softsignGrad,
		"logsigmoid": logsigmoidK, "logsigmoid_grad": logsigmoidGrad,
		"tanh_shrink": tanhShrinkK, "tanh_shrink_grad": tanhShrinkGrad,
		"leaky_relu": leakyRelu, "leaky_relu_grad": leakyReluGrad,
		"softplus": softplus, "softplus_grad": softplusGrad,
		"mish": mish, "mish_grad": mishGrad, "pow": pow, "pow_grad": powGrad,
	}
}
