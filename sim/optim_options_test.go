package sim

import (
	"testing"

	"github.com/distpass/distpass/ir"
)

// TestWideAttrs: an attr written as a long or a float64, as Paddle writes
// its int64 and double attrs and an import keeps them, is read like an
// int or a float, not taken for absent.
func TestWideAttrs(t *testing.T) {
	ids := MustFromData(ir.I64, sh(3), []float64{0, 1, 2})
	w := tf(sh(3, 1), 4, 5, 6)
	lt := mkOp("lookup_table_v2", Sl("Ids", "i", "W", "w"), Sl("Out", "o"), A("padding_idx", ir.Long(1)))
	wantT(t, "lookup_table_v2 Out", run(t, lt, Args{"Ids": {ids}, "W": {w}})["Out"][0], tf(sh(3, 1), 4, 0, 6))
	ce := mkOp("c_embedding", Sl("Ids", "i", "W", "w"), Sl("Out", "o"), A("start_index", ir.Long(1)))
	wantT(t, "c_embedding Out", run(t, ce, Args{"Ids": {ids}, "W": {w}})["Out"][0], tf(sh(3, 1), 0, 4, 5))
	sc := mkOp("scale", Sl("X", "x"), Sl("Out", "o"), A("scale", ir.Float64(3)), A("bias", ir.Float64(0.5)))
	wantT(t, "scale Out", run(t, sc, Args{"X": {td(sh(2), 1, 2)}})["Out"][0], td(sh(2), 3.5, 6.5))
	rs := mkOp("reduce_sum", Sl("X", "x"), Sl("Out", "o"), A("dim", ir.Longs{1}))
	wantT(t, "reduce_sum Out", run(t, rs, Args{"X": {td(sh(2, 2), 1, 2, 3, 4)}})["Out"][0], td(sh(2), 3, 7))
}

// TestMomentumRescaleGrad: the grad is scaled by rescale_grad before the
// l2 decay term and the velocity (Paddle's DenseMomentumFunctor).
func TestMomentumRescaleGrad(t *testing.T) {
	op := mkOp("momentum", Sl("Param", "p", "Grad", "g", "Velocity", "v", "LearningRate", "lr"), Sl("ParamOut", "p", "VelocityOut", "v"),
		A("mu", ir.Float(0.5)), A("rescale_grad", ir.Float(0.25)), A("regularization_method", ir.String("l2_decay")), A("regularization_coeff", ir.Float(1)))
	out := run(t, op, Args{"Param": {td(sh(1), 1)}, "Grad": {td(sh(1), 8)}, "Velocity": {td(sh(1), 4)}, "LearningRate": {td(sh(1), 0.5)}})
	// g = 0.25*8 + 1*1 = 3, v = 0.5*4 + 3 = 5, p = 1 - 0.5*5
	wantT(t, "VelocityOut", out["VelocityOut"][0], td(sh(1), 5))
	wantT(t, "ParamOut", out["ParamOut"][0], td(sh(1), -1.5))
}

// TestAdamOptions: Beta1Tensor, Beta2Tensor and EpsilonTensor override
// their attrs, use_global_beta_pow leaves the powers alone, a true
// SkipUpdate leaves every state alone; what is not simulated is refused.
func TestAdamOptions(t *testing.T) {
	slots := func(extra ...string) []ir.Slot {
		return Sl(append([]string{"Param", "p", "Grad", "g", "LearningRate", "lr", "Moment1", "m1", "Moment2", "m2", "Beta1Pow", "b1", "Beta2Pow", "b2"}, extra...)...)
	}
	outs := Sl("ParamOut", "p", "Moment1Out", "m1", "Moment2Out", "m2", "Beta1PowOut", "b1", "Beta2PowOut", "b2")
	in := func() Args {
		return Args{"Param": {td(sh(1), 1)}, "Grad": {td(sh(1), 2)}, "LearningRate": {td(sh(1), 0.5)},
			"Moment1": {td(sh(1), 0)}, "Moment2": {td(sh(1), 0)}, "Beta1Pow": {td(sh(1), 0.5)}, "Beta2Pow": {td(sh(1), 0.75)}}
	}
	// The step of TestAdamStep, its betas and epsilon given as tensors
	// (the attrs say otherwise).
	op := mkOp("adam", slots("Beta1Tensor", "t1", "Beta2Tensor", "t2", "EpsilonTensor", "te"), outs,
		A("beta1", ir.Float(0.9)), A("beta2", ir.Float(0.9)), A("epsilon", ir.Float(1)), A("use_global_beta_pow", ir.Bool(true)))
	a := in()
	a["Beta1Tensor"], a["Beta2Tensor"], a["EpsilonTensor"] = []*Tensor{td(sh(1), 0.5)}, []*Tensor{td(sh(1), 0.75)}, []*Tensor{td(sh(1), 0)}
	out := run(t, op, a)
	wantT(t, "Moment1Out", out["Moment1Out"][0], td(sh(1), 1))
	wantT(t, "Moment2Out", out["Moment2Out"][0], td(sh(1), 1))
	wantT(t, "ParamOut", out["ParamOut"][0], td(sh(1), 0.5))
	wantT(t, "Beta1PowOut", out["Beta1PowOut"][0], td(sh(1), 0.5))
	wantT(t, "Beta2PowOut", out["Beta2PowOut"][0], td(sh(1), 0.75))

	skip := mkOp("adam", slots("SkipUpdate", "s"), outs)
	a = in()
	a["SkipUpdate"] = []*Tensor{MustFromData(ir.Boolean, sh(1), []float64{1})}
	out = run(t, skip, a)
	for _, s := range []string{"Param", "Moment1", "Moment2", "Beta1Pow", "Beta2Pow"} {
		wantT(t, s+"Out", out[s+"Out"][0], a[s][0])
	}

	master := mkOp("adam", slots("MasterParam", "mp"), outs)
	a = in()
	a["MasterParam"] = []*Tensor{td(sh(1), 1)}
	wantErr(t, master, a, "op 1 adam: a MasterParam input (multi_precision) is not supported")
	wantErr(t, mkOp("adam", slots(), outs, A("amsgrad", ir.Bool(true))), in(), "op 1 adam: amsgrad (Moment2Max) is not supported")
	sgd := mkOp("sgd", Sl("Param", "p", "Grad", "g", "LearningRate", "lr", "MasterParam", "mp"), Sl("ParamOut", "p"))
	wantErr(t, sgd, Args{"Param": {td(sh(1), 1)}, "Grad": {td(sh(1), 1)}, "LearningRate": {td(sh(1), 1)}, "MasterParam": {td(sh(1), 1)}},
		"op 1 sgd: a MasterParam input (multi_precision) is not supported")
}

// TestUpdateLossScalingStopUpdate: a StopUpdate input takes precedence
// over the stop_update attr, as in Paddle.
func TestUpdateLossScalingStopUpdate(t *testing.T) {
	op := mkOp("update_loss_scaling", Sl("X", "x", "FoundInfinite", "f", "PrevLossScaling", "s", "InGoodSteps", "g", "InBadSteps", "b", "StopUpdate", "st"),
		Sl("Out", "x", "LossScaling", "s", "OutGoodSteps", "g", "OutBadSteps", "b"),
		A("incr_every_n_steps", ir.Int(1)), A("decr_every_n_nan_or_inf", ir.Int(1)), A("incr_ratio", ir.Float(2)), A("decr_ratio", ir.Float(0.5)),
		A("stop_update", ir.Bool(false)))
	in := func(stop float64) Args {
		return Args{"X": {td(sh(2), 1, 2)}, "FoundInfinite": {MustFromData(ir.Boolean, sh(1), []float64{0})}, "PrevLossScaling": {td(sh(1), 8)},
			"InGoodSteps": {MustFromData(ir.I32, sh(1), []float64{0})}, "InBadSteps": {MustFromData(ir.I32, sh(1), []float64{0})},
			"StopUpdate": {MustFromData(ir.Boolean, sh(1), []float64{stop})}}
	}
	wantT(t, "LossScaling (stopped)", run(t, op, in(1))["LossScaling"][0], td(sh(1), 8))
	wantT(t, "LossScaling", run(t, op, in(0))["LossScaling"][0], td(sh(1), 16))
}

// TestXentUseSoftmax: softmax_with_cross_entropy without its softmax
// (Logits already probabilities) is refused, forward and grad, rather
// than run as if it had one.
func TestXentUseSoftmax(t *testing.T) {
	lab := MustFromData(ir.I64, sh(1, 1), []float64{1})
	fwd := mkOp("softmax_with_cross_entropy", Sl("Logits", "x", "Label", "l"), Sl("Softmax", "s", "Loss", "o"), A("use_softmax", ir.Bool(false)))
	wantErr(t, fwd, Args{"Logits": {td(sh(1, 2), 0.25, 0.75)}, "Label": {lab}}, "op 1 softmax_with_cross_entropy: use_softmax = false (Logits already probabilities) is not supported")
	grad := mkOp("softmax_with_cross_entropy_grad", Sl("Label", "l", "Softmax", "s", "Loss@GRAD", "g"), Sl("Logits@GRAD", "d"), A("use_softmax", ir.Bool(false)))
	wantErr(t, grad, Args{"Softmax": {td(sh(1, 2), 0.25, 0.75)}, "Label": {lab}, "Loss@GRAD": {td(sh(1, 1), 1)}}, "use_softmax = false")
}
