package sim

// Cases for the convolutions, forward and grad: the kernels' output
// shapes against ConvInferMeta's (strides, paddings, SAME, VALID,
// dilations, groups) and the grads' against their inputs'.
func init() {
	inferCases = append(inferCases,
		inferCase{Name: "conv2d", Src: `program main { block 0 {
 var x : f32[2, 3, 9, 8]
 var w : f32[4, 3, 3, 2]
 var o : f32[-1, -1, -1, -1]
 op 1 conv2d(Input: x, Filter: w) -> (Output: o) {strides = [2, 3], paddings = [1, 0, 2, 1], dilations = [2, 1], data_format = "AnyLayout"}
}}`},
		inferCase{Name: "conv2d/same", Src: `program main { block 0 {
 var x : f64[1, 2, 7, 6]
 var w : f64[3, 2, 3, 3]
 var o : f64[-1, -1, -1, -1]
 op 1 conv2d(Input: x, Filter: w) -> (Output: o) {strides = [2, 2], paddings = [4, 4], dilations = [3, 3], padding_algorithm = "SAME"}
}}`},
		inferCase{Name: "conv2d/valid-groups-bias", Src: `program main { block 0 {
 var x : f32[2, 4, 6, 6]
 var w : f32[6, 2, 3, 3]
 var b : f32[6]
 var o : f32[-1, -1, -1, -1]
 op 1 conv2d(Input: x, Filter: w, Bias: b, ResidualData: []) -> (Output: o) {groups = 2, paddings = [1, 1], padding_algorithm = "VALID", fuse_activation = "relu"}
}}`},
		inferCase{Name: "depthwise_conv2d", Src: `program main { block 0 {
 var x : f32[2, 3, 8, 8]
 var w : f32[6, 1, 3, 3]
 var o : f32[-1, -1, -1, -1]
 op 1 depthwise_conv2d(Input: x, Filter: w) -> (Output: o) {groups = 3, strides = [2, 2], paddings = [1, 1]}
}}`},
		inferCase{Name: "conv2d_grad", Src: `program main { block 0 {
 var x : f32[2, 3, 9, 8]
 var w : f32[4, 3, 3, 2]
 var b : f32[4]
 var g : f32[2, 4, 3, 4]
 var dx : f32[-1, -1, -1, -1]
 var dw : f32[-1, -1, -1, -1]
 var db : f32[-1]
 op 1 conv2d_grad(Input: x, Filter: w, Bias: b, Output@GRAD: g) -> (Input@GRAD: dx, Filter@GRAD: dw, Bias@GRAD: db) {strides = [2, 3], paddings = [1, 0, 2, 1], dilations = [2, 1]}
}}`},
		inferCase{Name: "depthwise_conv2d_grad", Src: `program main { block 0 {
 var x : f64[2, 3, 8, 8]
 var w : f64[3, 1, 3, 3]
 var g : f64[2, 3, 4, 4]
 var dx : f64[-1, -1, -1, -1]
 var dw : f64[-1, -1, -1, -1]
 op 1 depthwise_conv2d_grad(Input: x, Filter: w, Output@GRAD: g) -> (Input@GRAD: dx, Filter@GRAD: dw) {groups = 3, padding_algorithm = "SAME", strides = [2, 2]}
}}`},
	)
}
