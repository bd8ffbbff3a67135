package sim

import (
	"math"
	"slices"

	"github.com/distpass/distpass/ir"
)

// optIn fetches an optimizer's tensors and checks that those after the
// first share its shape.
func optIn(op *ir.Op, in Args, names ...string) ([]*Tensor, error) {
	ts := make([]*Tensor, len(names))
	for i, n := range names {
		t, err := one(op, in, n)
		if err != nil {
			return nil, err
		}
		if i > 0 && !slices.Equal(t.Shape, ts[0].Shape) {
			return nil, errf(op, "%s shape %v, %s shape %v", names[0], ts[0].Shape, n, t.Shape)
		}
		ts[i] = t
	}
	return ts, nil
}

func scalarIn(op *ir.Op, in Args, name string) (float64, error) {
	t, err := one(op, in, name)
	if err != nil {
		return 0, err
	}
	if t.Numel() != 1 {
		return 0, errf(op, "%s shape %v, want one element", name, t.Shape)
	}
	return t.Data[0], nil
}

// noMaster refuses an optimizer op with a MasterParam: the f32 master
// copy of a half-precision param (multi_precision) is not simulated, and
// updating Param alone would leave MasterParamOut stale.
func noMaster(op *ir.Op, in Args) error {
	if len(in["MasterParam"]) > 0 {
		return errf(op, "a MasterParam input (multi_precision) is not supported")
	}
	return nil
}

// optScalar returns the value of optional one-element input name, or def
// when the op has none.
func optScalar(op *ir.Op, in Args, name string, def float64) (float64, error) {
	if len(in[name]) == 0 {
		return def, nil
	}
	return scalarIn(op, in, name)
}

// sgd: ParamOut = Param - LearningRate*Grad.
func sgd(op *ir.Op, in Args) (Args, error) {
	if err := noMaster(op, in); err != nil {
		return nil, err
	}
	ts, err := optIn(op, in, "Param", "Grad")
	if err != nil {
		return nil, err
	}
	lr, err := scalarIn(op, in, "LearningRate")
	if err != nil {
		return nil, err
	}
	out, _ := map2(op, ts[1], ts[0], func(g, p float64) float64 { return p - lr*g })
	return out1("ParamOut", out), nil
}

// momentum: VelocityOut = mu*Velocity + g; ParamOut = Param - lr*VelocityOut,
// or Param - lr*(g + mu*VelocityOut) with use_nesterov; g is
// rescale_grad*Grad, plus regularization_coeff*Param when
// regularization_method is "l2_decay".
func momentum(op *ir.Op, in Args) (Args, error) {
	if err := noMaster(op, in); err != nil {
		return nil, err
	}
	ts, err := optIn(op, in, "Param", "Grad", "Velocity")
	if err != nil {
		return nil, err
	}
	lr, err := scalarIn(op, in, "LearningRate")
	if err != nil {
		return nil, err
	}
	mu := attrFloat(op, "mu", 0.9)
	nesterov := attrBool(op, "use_nesterov", false)
	l2 := 0.0
	if attrString(op, "regularization_method", "") == "l2_decay" {
		l2 = attrFloat(op, "regularization_coeff", 0)
	}
	rescale := attrFloat(op, "rescale_grad", 1)
	p, g, v := ts[0], ts[1], ts[2]
	po, vo := like(p), like(v)
	for i := range p.Data {
		gi := rescale*g.Data[i] + l2*p.Data[i]
		vo.Data[i] = mu*v.Data[i] + gi
		if nesterov {
			po.Data[i] = p.Data[i] - lr*(gi+mu*vo.Data[i])
		} else {
			po.Data[i] = p.Data[i] - lr*vo.Data[i]
		}
	}
	return Args{"ParamOut": {po}, "VelocityOut": {vo}}, nil
}

// adam: m1 = b1*m1 + (1-b1)*g, m2 = b2*m2 + (1-b2)*g², lr' = lr *
// sqrt(1-b2pow)/(1-b1pow), ParamOut = Param - lr' * m1/(sqrt(m2) +
// eps*sqrt(1-b2pow)); Beta1PowOut = b1pow*b1, Beta2PowOut = b2pow*b2
// (kept as they are with use_global_beta_pow). Beta1Tensor, Beta2Tensor
// and EpsilonTensor, when given, override their attrs; a true SkipUpdate
// leaves every state as it was, as Paddle's kernel does.
func adam(op *ir.Op, in Args) (Args, error) {
	if err := noMaster(op, in); err != nil {
		return nil, err
	}
	if len(in["Moment2Max"]) > 0 || attrBool(op, "amsgrad", false) {
		return nil, errf(op, "amsgrad (Moment2Max) is not supported")
	}
	ts, err := optIn(op, in, "Param", "Grad", "Moment1", "Moment2")
	if err != nil {
		return nil, err
	}
	var s [3]float64
	for i, n := range []string{"LearningRate", "Beta1Pow", "Beta2Pow"} {
		if s[i], err = scalarIn(op, in, n); err != nil {
			return nil, err
		}
	}
	lr, b1p, b2p := s[0], s[1], s[2]
	var hp [4]float64
	for i, a := range [...]struct {
		slot, attr string
		def        float64
	}{{"Beta1Tensor", "beta1", 0.9}, {"Beta2Tensor", "beta2", 0.999}, {"EpsilonTensor", "epsilon", 1e-8}, {"SkipUpdate", "", 0}} {
		if hp[i], err = optScalar(op, in, a.slot, attrFloat(op, a.attr, a.def)); err != nil {
			return nil, err
		}
	}
	b1, b2, eps, skip := hp[0], hp[1], hp[2], hp[3] != 0
	p, g, m1, m2 := ts[0], ts[1], ts[2], ts[3]
	b1t, b2t := in["Beta1Pow"][0], in["Beta2Pow"][0]
	if skip {
		return Args{
			"ParamOut": {p.Clone()}, "Moment1Out": {m1.Clone()}, "Moment2Out": {m2.Clone()},
			"Beta1PowOut": {b1t.Clone()}, "Beta2PowOut": {b2t.Clone()},
		}, nil
	}
	po, m1o, m2o := like(p), like(m1), like(m2)
	lrt := lr * math.Sqrt(1-b2p) / (1 - b1p)
	for i := range p.Data {
		m1o.Data[i] = b1*m1.Data[i] + (1-b1)*g.Data[i]
		m2o.Data[i] = b2*m2.Data[i] + (1-b2)*g.Data[i]*g.Data[i]
		po.Data[i] = p.Data[i] - lrt*m1o.Data[i]/(math.Sqrt(m2o.Data[i])+eps*math.Sqrt(1-b2p))
	}
	b1o, b2o := b1p*b1, b2p*b2
	if attrBool(op, "use_global_beta_pow", false) {
		b1o, b2o = b1p, b2p
	}
	return Args{
		"ParamOut": {po}, "Moment1Out": {m1o}, "Moment2Out": {m2o},
		"Beta1PowOut": {Full(b1t.DType, b1o, b1t.Shape...)},
		"Beta2PowOut": {Full(b2t.DType, b2o, b2t.Shape...)},
	}, nil
}

// checkFiniteAndUnscale divides each X by Scale; FoundInfinite (bool[1])
// says whether any element of any X was Inf or NaN.
func checkFiniteAndUnscale(op *ir.Op, in Args) (Args, error) {
	s, err := scalarIn(op, in, "Scale")
	if err != nil {
		return nil, err
	}
	found := Zeros(ir.Boolean, 1)
	var outs []*Tensor
	for _, x := range in["X"] {
		o := mapUnary(x, func(v float64) float64 {
			if math.IsInf(v, 0) || math.IsNaN(v) {
				found.Data[0] = 1
			}
			return v / s
		})
		outs = append(outs, o)
	}
	return Args{"Out": outs, "FoundInfinite": {found}}, nil
}

// updateLossScaling zeroes the Xs and counts a bad step when FoundInfinite,
// decreasing the scale by decr_ratio (not below 1) after
// decr_every_n_nan_or_inf bad steps in a row; otherwise it counts a good
// step and multiplies the scale by incr_ratio after incr_every_n_steps.
func updateLossScaling(op *ir.Op, in Args) (Args, error) {
	var v [4]float64
	var err error
	for i, n := range []string{"FoundInfinite", "PrevLossScaling", "InGoodSteps", "InBadSteps"} {
		if v[i], err = scalarIn(op, in, n); err != nil {
			return nil, err
		}
	}
	found, sc, good, bad := v[0] != 0, v[1], v[2], v[3]
	// A StopUpdate input takes precedence over the stop_update attr.
	stop := attrBool(op, "stop_update", false)
	if len(in["StopUpdate"]) > 0 {
		st, err := scalarIn(op, in, "StopUpdate")
		if err != nil {
			return nil, err
		}
		stop = st != 0
	}
	var outs []*Tensor
	for _, x := range in["X"] {
		if found {
			outs = append(outs, like(x))
		} else {
			outs = append(outs, x.Clone())
		}
	}
	if !stop {
		if found {
			good, bad = 0, bad+1
			if bad >= float64(attrInt(op, "decr_every_n_nan_or_inf", 2)) {
				sc, bad = max(sc*attrFloat(op, "decr_ratio", 0.5), 1), 0
			}
		} else {
			good, bad = good+1, 0
			if good >= float64(attrInt(op, "incr_every_n_steps", 1000)) {
				if n := sc * attrFloat(op, "incr_ratio", 2); !math.IsInf(n, 0) {
					sc = n
				}
				good = 0
			}
		}
	}
	ref := func(n string, val float64) []*Tensor {
		t := in[n][0]
		return []*Tensor{Full(t.DType, val, t.Shape...)}
	}
	return Args{
		"Out": outs, "LossScaling": ref("PrevLossScaling", sc),
		"OutGoodSteps": ref("InGoodSteps", good), "OutBadSteps": ref("InBadSteps", bad),
	}, nil
}

// optimKernels are the kernels of this file, by op type.
func optimKernels() Kernels {
	return Kernels{
		"sgd": sgd, "momentum": momentum, "adam": adam,
		"check_finite_and_unscale": checkFiniteAndUnscale, "update_loss_scaling": updateLossScaling,
	}
}
