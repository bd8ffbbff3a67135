package sim

import (
	"math"

	"github.com/distpass/distpass/ir"
)

// The fake quantisations of Paddle's quantisation-aware training, as its
// CPU kernels compute them: X is scaled to bin = 2^(bit_length-1) - 1
// levels of its scale s, rounded and scaled back. round_type 0 rounds
// half to even and clamps to [-bin-1, bin]; 1 clips X to [-s, s] first
// and rounds half away from zero. A scale of (almost) zero is divided as
// s + 1e-6, as Paddle's inverse does.

func quantInverse(s float64) float64 {
	if s <= 1e-30 {
		return 1 / (s + 1e-6)
	}
	return 1 / s
}

// quantDequant is one value quantised by scale s and dequantised.
func quantDequant(x, s, bin float64, roundType int64) float64 {
	inv := quantInverse(s)
	if roundType == 0 {
		v := math.RoundToEven(bin * inv * x)
		v = min(max(v, -bin-1), bin)
		return v * s / bin
	}
	c := min(max(x, -s), s)
	return math.Round(bin*inv*c) * s / bin
}

// quantParams reads bit_length (as bin) and round_type.
func quantParams(op *ir.Op) (bin float64, roundType int64, err error) {
	bits := attrInt(op, "bit_length", 8)
	if bits < 1 || bits > 16 {
		return 0, 0, errf(op, "attr bit_length %d is not in [1, 16]", bits)
	}
	return float64(int64(1)<<(bits-1) - 1), attrInt(op, "round_type", 0), nil
}

// quantInput reads a fake quantisation's X, bit_length (as bin) and
// round_type.
func quantInput(op *ir.Op, in Args) (x *Tensor, bin float64, roundType int64, err error) {
	if x, err = one(op, in, "X"); err != nil {
		return nil, 0, 0, err
	}
	bin, roundType, err = quantParams(op)
	return x, bin, roundType, err
}

func absMax(data []float64) float64 {
	m := 0.0
	for _, v := range data {
		m = max(m, math.Abs(v))
	}
	return m
}

// fakeQuantDequantAbsMax quantises X by max(abs(X)).
func fakeQuantDequantAbsMax(op *ir.Op, in Args) (Args, error) {
	x, bin, rt, err := quantInput(op, in)
	if err != nil {
		return nil, err
	}
	s := absMax(x.Data)
	return Args{"Out": {mapUnary(x, func(v float64) float64 { return quantDequant(v, s, bin, rt) })},
		"OutScale": {Full(x.DType, s, 1)}}, nil
}

// fakeChannelQuantDequant quantises each channel of X along quant_axis
// (0 or 1) by its own max(abs).
func fakeChannelQuantDequant(op *ir.Op, in Args) (Args, error) {
	x, bin, rt, err := quantInput(op, in)
	if err != nil {
		return nil, err
	}
	ax := attrInt(op, "quant_axis", 0)
	if ax != 0 && ax != 1 || int(ax) >= x.Rank() {
		return nil, errf(op, "attr quant_axis %d: want 0 or 1, a dim of X %v", ax, x.Shape)
	}
	c := x.Shape[ax]
	inner := numel(x.Shape[ax+1:])
	channel := func(i int64) int64 { return i / inner % c }
	scales := Zeros(x.DType, c)
	for i, v := range x.Data {
		k := channel(int64(i))
		scales.Data[k] = max(scales.Data[k], math.Abs(v))
	}
	out := like(x)
	for i, v := range x.Data {
		out.Data[i] = quantDequant(v, scales.Data[channel(int64(i))], bin, rt)
	}
	return Args{"Out": {out}, "OutScale": {scales}}, nil
}

// movingScale is the scale of the moving-average ops in training: the
// state and accumulator decay by moving_rate, the accumulator adds
// max(abs(X)), the scale is their ratio; OutState and OutAccum are the
// new state and accumulator.
func movingScale(op *ir.Op, in Args, x *Tensor) (s float64, out Args, err error) {
	st, acc := opt(in, "InState"), opt(in, "InAccum")
	if st == nil || acc == nil || st.Numel() != 1 || acc.Numel() != 1 {
		return 0, nil, errf(op, "training needs one-value InState and InAccum, the running state")
	}
	rate := attrFloat(op, "moving_rate", 0.9)
	state := rate*st.Data[0] + 1
	accum := rate*acc.Data[0] + absMax(x.Data)
	s = accum / state
	out = Args{"OutScale": {Full(x.DType, s, 1)}}
	if wants(op, "OutState") {
		out["OutState"] = []*Tensor{Full(st.DType, state, 1)}
	}
	if wants(op, "OutAccum") {
		out["OutAccum"] = []*Tensor{Full(acc.DType, accum, 1)}
	}
	return s, out, nil
}

// fakeQuantDequantMovingAverage quantises X by the moving average of
// max(abs(X)) in training, by InScale at test (the state then kept).
func fakeQuantDequantMovingAverage(op *ir.Op, in Args) (Args, error) {
	x, bin, rt, err := quantInput(op, in)
	if err != nil {
		return nil, err
	}
	var s float64
	var out Args
	if attrBool(op, "is_test", false) {
		sc, err := one(op, in, "InScale")
		if err != nil {
			return nil, err
		}
		s = sc.Data[0]
		out = Args{"OutScale": {sc.Clone()}}
		for _, p := range [][2]string{{"InState", "OutState"}, {"InAccum", "OutAccum"}} {
			if t := opt(in, p[0]); t != nil && wants(op, p[1]) {
				out[p[1]] = []*Tensor{t.Clone()}
			}
		}
	} else if s, out, err = movingScale(op, in, x); err != nil {
		return nil, err
	}
	out["Out"] = []*Tensor{mapUnary(x, func(v float64) float64 { return quantDequant(v, s, bin, rt) })}
	return out, nil
}

// movingAverageAbsMaxScale observes X's scale (training only) and passes
// X on unchanged.
func movingAverageAbsMaxScale(op *ir.Op, in Args) (Args, error) {
	x, err := one(op, in, "X")
	if err != nil {
		return nil, err
	}
	if attrBool(op, "is_test", false) {
		return nil, errf(op, "at test the op keeps its stored scale, which the simulator does not hold: run it in training (is_test false)")
	}
	_, out, err := movingScale(op, in, x)
	if err != nil {
		return nil, err
	}
	if wants(op, "Out") {
		out["Out"] = []*Tensor{x.Clone()}
	}
	return out, nil
}

// steGrad is the straight-through estimator: X@GRAD = Out@GRAD.
func steGrad(op *ir.Op, in Args) (Args, error) {
	g, err := one(op, in, "Out@GRAD")
	if err != nil {
		return nil, err
	}
	return out1("X@GRAD", g.Clone()), nil
}

// quantKernels are the kernels of this file, by op type.
func quantKernels() Kernels {
	return Kernels{
		"fake_quantize_dequantize_abs_max":                fakeQuantDequantAbsMax,
		"fake_channel_wise_quantize_dequantize_abs_max":   fakeChannelQuantDequant,
		"fake_quantize_dequantize_moving_average_abs_max": fakeQuantDequantMovingAverage,
		"moving_average_abs_max_scale":                    movingAverageAbsMaxScale,
		"straight_through_estimator_grad":                 steGrad,
	}
}
