package sim

// Cases for the optimizer family: each update, in place as programs
// write them or into fresh outputs, and the loss-scaling pair.
func init() {
	inferCases = append(inferCases,
		inferCase{Name: "sgd", Src: `program main { block 0 {
 var p : f32[3, 2]
 var lr : f32[1]
 var g : f32[3, 2]
 var po : f32[-1, -1]
 op 1 sgd(Param: p, LearningRate: lr, Grad: g) -> (ParamOut: po)
}}`},
		inferCase{Name: "momentum", Src: `program main { block 0 {
 var p : f64[4]
 var g : f64[4]
 var v : f64[4]
 var lr : f64[]
 var po : f64[-1]
 var vo : f64[-1]
 op 1 momentum(Param: p, Grad: g, Velocity: v, LearningRate: lr) -> (ParamOut: po, VelocityOut: vo) {mu = 0.9, use_nesterov = true, regularization_method = "l2_decay", regularization_coeff = 0.1}
}}`},
		inferCase{Name: "adam", Src: `program main { block 0 {
 var p : f32[2, 3]
 var g : f32[2, 3]
 var lr : f32[1]
 var m1 : f32[2, 3]
 var m2 : f32[2, 3]
 var b1 : f32[1]
 var b2 : f32[1]
 var po : f32[-1, -1]
 var m1o : f32[-1, -1]
 var m2o : f32[-1, -1]
 var b1o : f32[-1]
 var b2o : f32[-1]
 op 1 adam(Param: p, Grad: g, LearningRate: lr, Moment1: m1, Moment2: m2, Beta1Pow: b1, Beta2Pow: b2) -> (ParamOut: po, Moment1Out: m1o, Moment2Out: m2o, Beta1PowOut: b1o, Beta2PowOut: b2o) {beta1 = 0.9, beta2 = 0.999, epsilon = 1e-08}
}}`},
		inferCase{Name: "check_finite_and_unscale", Src: `program main { block 0 {
 var a : f32[2, 3]
 var b : f16[4]
 var s : f32[1]
 var ao : f32[-1, -1]
 var bo : f16[-1]
 var found : bool[-1]
 op 1 check_finite_and_unscale(X: [a, b], Scale: s) -> (Out: [ao, bo], FoundInfinite: found)
}}`},
		inferCase{Name: "update_loss_scaling", Src: `program main { block 0 {
 var a : f32[2, 3]
 var b : f32[4]
 var found : bool[1]
 var sc : f32[1]
 var good : i32[1]
 var bad : i32[1]
 var ao : f32[-1, -1]
 var bo : f32[-1]
 var sco : f32[-1]
 var goodo : i32[-1]
 var bado : i32[-1]
 op 1 update_loss_scaling(X: [a, b], FoundInfinite: found, PrevLossScaling: sc, InGoodSteps: good, InBadSteps: bad) -> (Out: [ao, bo], LossScaling: sco, OutGoodSteps: goodo, OutBadSteps: bado) {incr_every_n_steps = 2, decr_every_n_nan_or_inf = 1, incr_ratio = 2.0, decr_ratio = 0.5}
}}`},
	)
}
