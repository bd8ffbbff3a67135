package sim

// Cases for the activation family: each op and each grad op with a
// kernel, on a shape whose dims differ so that a transposed or dropped
// dim shows.
func init() {
	fwd := func(typ, attrs string) inferCase {
		return inferCase{Name: typ, Src: `program main { block 0 {
 var x : f32[2, 3, 4]
 var o : f32[-1, -1, -1]
 op 1 ` + typ + `(X: x) -> (Out: o) ` + attrs + `
}}`}
	}
	// grad reads src (X or Out) and Out@GRAD.
	grad := func(typ, src, attrs string) inferCase {
		return inferCase{Name: typ, Src: `program main { block 0 {
 var v : f64[3, 2]
 var g : f64[3, 2]
 var dx : f64[-1, -1]
 op 1 ` + typ + `(` + src + `: v, Out@GRAD: g) -> (X@GRAD: dx) ` + attrs + `
}}`}
	}
	inferCases = append(inferCases,
		fwd("relu", ""), grad("relu_grad", "Out", ""),
		fwd("tanh", ""), grad("tanh_grad", "Out", ""),
		fwd("sigmoid", ""), grad("sigmoid_grad", "Out", ""),
		fwd("gelu", "{approximate = true}"), grad("gelu_grad", "X", ""),
		fwd("softmax", "{axis = 1}"), grad("softmax_grad", "Out", "{axis = 0}"),
		inferCase{Name: "softmax/0-D", Src: `program main { block 0 {
 var x : f32[]
 var o : f32[]
 op 1 softmax(X: x) -> (Out: o) {axis = -1}
}}`},
		fwd("scale", "{scale = 2.0, bias = 1.0, bias_after_scale = false}"),
		inferCase{Name: "scale/tensor", Src: `program main { block 0 {
 var x : bf16[5]
 var s : f32[1]
 var o : bf16[-1]
 op 1 scale(X: x, ScaleTensor: s) -> (Out: o)
}}`},
		inferCase{Name: "scale_grad", Src: `program main { block 0 {
 var g : f16[4, 1]
 var dx : f16[-1, -1]
 op 1 scale_grad(Out@GRAD: g) -> (X@GRAD: dx) {scale = 3.0}
}}`},
	)
}
