package sim

// Cases for pool2d and batch_norm, forward and grad: the shapes the
// kernels compute are the ones the op table infers, across pooling modes,
// paddings and layouts.
func init() {
	pool := func(name, attrs string, x, out string) inferCase {
		return inferCase{Name: "pool2d/" + name, Src: `program main { block 0 {
 var x : f32` + x + `
 var o : f32` + out + `
 op 1 pool2d(X: x) -> (Out: o) {` + attrs + `}
}}`}
	}
	unknown := "[-1, -1, -1, -1]"
	inferCases = append(inferCases,
		pool("max/pads", `pooling_type = "max", ksize = [3, 3], strides = [2, 2], paddings = [1, 1]`, "[2, 3, 7, 6]", unknown),
		pool("max/ceil-4pads", `pooling_type = "max", ksize = [2, 3], strides = [2, 2], paddings = [0, 1, 1, 0], ceil_mode = true`, "[1, 2, 5, 5]", unknown),
		pool("avg/same", `pooling_type = "avg", ksize = [3, 2], strides = [2, 3], padding_algorithm = "SAME"`, "[1, 2, 5, 7]", unknown),
		pool("avg/valid", `pooling_type = "avg", ksize = [2, 2], strides = [2, 1], paddings = [1, 1], padding_algorithm = "VALID"`, "[1, 2, 6, 5]", unknown),
		pool("avg/global", `pooling_type = "avg", ksize = [7, 7], global_pooling = true`, "[2, 4, 5, 3]", unknown),
		pool("max/adaptive", `pooling_type = "max", ksize = [2, 3], adaptive = true`, "[1, 2, 5, 7]", unknown),
		pool("avg/global-adaptive", `pooling_type = "avg", ksize = [1, 1], global_pooling = true, adaptive = true`, "[1, 2, 3, 2]", unknown),
		pool("avg/nhwc", `pooling_type = "avg", ksize = [2, 2], strides = [2, 1], paddings = [1, 0], data_format = "NHWC", exclusive = false`, "[2, 5, 4, 3]", unknown),
		inferCase{Name: "pool2d_grad", Src: `program main { block 0 {
 var x : f32[2, 3, 7, 6]
 var o : f32[2, 3, 4, 3]
 var g : f32[2, 3, 4, 3]
 var dx : f32[-1, -1, -1, -1]
 op 1 pool2d_grad(X: x, Out: o, Out@GRAD: g) -> (X@GRAD: dx) {pooling_type = "max", ksize = [3, 3], strides = [2, 2], paddings = [1, 1]}
}}`},
		inferCase{Name: "batch_norm/train", Src: `program main { block 0 {
 var x : f32[2, 3, 4, 5]
 var s : f32[3]
 var b : f32[3]
 var m : f32[3]
 var v : f32[3]
 var y : f32[-1, -1, -1, -1]
 var sm : f32[-1]
 var sv : f32[-1]
 op 1 batch_norm(X: x, Scale: s, Bias: b, Mean: m, Variance: v) -> (Y: y, MeanOut: m, VarianceOut: v, SavedMean: sm, SavedVariance: sv) {epsilon = 1e-05, momentum = 0.9, is_test = false}
}}`},
		inferCase{Name: "batch_norm/f16-nhwc-is_test", Values: map[string]*Tensor{"v": tf(sh(4), 0.5, 1, 1.5, 2)}, Src: `program main { block 0 {
 var x : f16[2, 3, 4]
 var s : f32[4]
 var b : f32[4]
 var m : f32[4]
 var v : f32[4]
 var y : f16[-1, -1, -1]
 var mo : f32[-1]
 var vo : f32[-1]
 var sm : f32[-1]
 var sv : f32[-1]
 op 1 batch_norm(X: x, Scale: s, Bias: b, Mean: m, Variance: v) -> (Y: y, MeanOut: mo, VarianceOut: vo, SavedMean: sm, SavedVariance: sv) {data_layout = "NHWC", is_test = true}
}}`},
		inferCase{Name: "batch_norm_grad", Src: `program main { block 0 {
 var x : f32[2, 3, 4, 5]
 var s : f32[3]
 var b : f32[3]
 var m : f32[3]
 var v : f32[3]
 var sm : f32[3]
 var sv : f32[3]
 var g : f32[2, 3, 4, 5]
 var dx : f32[-1, -1, -1, -1]
 var ds : f32[-1]
 var db : f32[-1]
 op 1 batch_norm_grad(X: x, Scale: s, Bias: b, Mean: m, Variance: v, SavedMean: sm, SavedVariance: sv, Y@GRAD: g) -> (X@GRAD: dx, Scale@GRAD: ds, Bias@GRAD: db) {epsilon = 1e-05}
}}`},
	)
}
