package ops_test

import "testing"

func TestOptimizerInferErrors(t *testing.T) {
	sgd := func(p, lr, g, po string) string {
		return " var p : " + p + "\n var lr : " + lr + "\n var g : " + g + "\n var po : " + po +
			"\n op 1 sgd(Param: p, LearningRate: lr, Grad: g) -> (ParamOut: po)"
	}
	runDefCases(t, []defCase{
		{"sgd", sgd("f32[3, 2]", "f32[1]", "f32[3, 2]", "f32[3, 2]"), ""},
		{"sgd 0-D lr", sgd("f32[3, 2]", "f32[]", "f32[3, 2]", "f32[3, 2]"), ""},
		{"sgd lr", sgd("f32[3, 2]", "f32[2]", "f32[3, 2]", "f32[3, 2]"), "LearningRate lr [2]: want one element"},
		{"sgd grad", sgd("f32[3, 2]", "f32[1]", "f32[2, 3]", "f32[3, 2]"), "Param p [3, 2] and Grad g [2, 3]: want one shape"},
		{"sgd out", sgd("f32[3, 2]", "f32[1]", "f32[3, 2]", "f16[3, 2]"), "op 1 sgd: output ParamOut po: declared f16[3, 2], inferred dtype f32 from Param f32[3, 2], LearningRate f32[1], Grad f32[3, 2]"},
		{"momentum velocity", " var p : f32[4]\n var g : f32[4]\n var v : f32[5]\n var lr : f32[1]\n" +
			" op 1 momentum(Param: p, Grad: g, Velocity: v, LearningRate: lr) -> (ParamOut: p, VelocityOut: v) {mu = 0.9}",
			"Param p [4] and Velocity v [5]: want one shape"},
		{"momentum regularization", " var p : f32[4]\n var g : f32[4]\n var v : f32[4]\n var lr : f32[1]\n" +
			" op 1 momentum(Param: p, Grad: g, Velocity: v, LearningRate: lr) -> (ParamOut: p, VelocityOut: v) {mu = 0.9, regularization_method = \"l1\"}",
			`attr regularization_method = "l1" is not one of ["", "l2_decay"]`},
		{"adam", " var p : f32[4]\n var g : f32[4]\n var lr : f32[1]\n var m1 : f32[4]\n var m2 : f32[4]\n var b1 : f32[1]\n var b2 : f32[2]\n" +
			" op 1 adam(Param: p, Grad: g, LearningRate: lr, Moment1: m1, Moment2: m2, Beta1Pow: b1, Beta2Pow: b2) -> " +
			"(ParamOut: p, Moment1Out: m1, Moment2Out: m2, Beta1PowOut: b1, Beta2PowOut: b2)",
			"Beta2Pow b2 [2]: want one element"},
		{"adam missing state", " var p : f32[4]\n var g : f32[4]\n var lr : f32[1]\n var m1 : f32[4]\n var b1 : f32[1]\n var b2 : f32[1]\n" +
			" op 1 adam(Param: p, Grad: g, LearningRate: lr, Moment1: m1, Beta1Pow: b1, Beta2Pow: b2) -> " +
			"(ParamOut: p, Moment1Out: m1, Beta1PowOut: b1, Beta2PowOut: b2)",
			"op 1 adam: input slot Moment2 required, not given"},
		{"check_finite_and_unscale count", " var a : f32[2]\n var b : f32[3]\n var s : f32[1]\n var f : bool[1]\n" +
			" op 1 check_finite_and_unscale(X: [a, b], Scale: s) -> (Out: [a], FoundInfinite: f)",
			"X has 2 args and Out 1: want one Out per X"},
		{"check_finite_and_unscale found", " var a : f32[2]\n var s : f32[1]\n var f : bool[2]\n" +
			" op 1 check_finite_and_unscale(X: [a], Scale: s) -> (Out: [a], FoundInfinite: f)",
			"op 1 check_finite_and_unscale: output FoundInfinite f: declared bool[2], inferred [1] from X f32[2], Scale f32[1]"},
		{"check_finite_and_unscale out", " var a : f32[2]\n var ao : f32[3]\n var s : f32[1]\n var f : bool[1]\n" +
			" op 1 check_finite_and_unscale(X: [a], Scale: s) -> (Out: [ao], FoundInfinite: f)",
			"op 1 check_finite_and_unscale: output Out ao: declared f32[3], inferred [2] from X f32[2], Scale f32[1]"},
		{"update_loss_scaling", " var a : f32[2]\n var f : bool[1]\n var s : f32[1]\n var gs : i32[1]\n var bs : i32[1]\n var bso : i64[1]\n" +
			" op 1 update_loss_scaling(X: [a], FoundInfinite: f, PrevLossScaling: s, InGoodSteps: gs, InBadSteps: bs) -> " +
			"(Out: [a], LossScaling: s, OutGoodSteps: gs, OutBadSteps: bso) {incr_every_n_steps = 1000, decr_every_n_nan_or_inf = 2, incr_ratio = 2.0, decr_ratio = 0.5}",
			"op 1 update_loss_scaling: output OutBadSteps bso: declared i64[1], inferred dtype i32 from X f32[2], FoundInfinite bool[1], PrevLossScaling f32[1], InGoodSteps i32[1], ..."},
		{"update_loss_scaling attr", " var a : f32[2]\n var f : bool[1]\n var s : f32[1]\n var gs : i32[1]\n var bs : i32[1]\n" +
			" op 1 update_loss_scaling(X: [a], FoundInfinite: f, PrevLossScaling: s, InGoodSteps: gs, InBadSteps: bs) -> " +
			"(Out: [a], LossScaling: s, OutGoodSteps: gs, OutBadSteps: bs) {incr_every_n_steps = 1.5}",
			"op 1 update_loss_scaling: attr incr_every_n_steps is float, want int"},
	})
}
