package sim

func init() {
	inferCases = append(inferCases,
		inferCase{Name: "matmul_v2", Src: `program main { block 0 {
 var x : f32[2, 3]
 var y : f32[3, 4]
 var o : f32[-1, -1]
 op 1 matmul_v2(X: x, Y: y) -> (Out: o)
}}`},
		inferCase{Name: "matmul_v2/trans_batch", Src: `program main { block 0 {
 var x : f32[5, 3, 2]
 var y : f32[4, 3]
 var o : f32[-1, -1, -1]
 op 1 matmul_v2(X: x, Y: y) -> (Out: o) {trans_x = true, trans_y = true}
}}`},
		inferCase{Name: "matmul/alpha_trans", Src: `program main { block 0 {
 var x : f32[3, 2]
 var y : f32[4, 3]
 var o : f32[-1, -1]
 op 1 matmul(X: x, Y: y) -> (Out: o) {transpose_X = true, transpose_Y = true, alpha = 0.5}
}}`},
		inferCase{Name: "matmul/batch_x", Src: `program main { block 0 {
 var x : f32[2, 3, 4, 5]
 var y : f32[5, 6]
 var o : f32[-1, -1, -1, -1]
 op 1 matmul(X: x, Y: y) -> (Out: o)
}}`},
		inferCase{Name: "matmul/vec_vec", Src: `program main { block 0 {
 var x : f32[5]
 var y : f32[5]
 var o : f32[1]
 op 1 matmul(X: x, Y: y) -> (Out: o)
}}`},
		inferCase{Name: "matmul_grad", Src: `program main { block 0 {
 var x : f32[2, 4, 3]
 var y : f32[3, 5]
 var og : f32[2, 4, 5]
 var xg : f32[-1, -1, -1]
 var yg : f32[-1, -1]
 op 1 matmul_grad(X: x, Y: y, Out@GRAD: og) -> (X@GRAD: xg, Y@GRAD: yg) {alpha = 2.0}
}}`},
		inferCase{Name: "matmul_v2_grad", Src: `program main { block 0 {
 var x : f32[4, 3]
 var y : f32[5, 3]
 var og : f32[4, 5]
 var xg : f32[-1, -1]
 var yg : f32[-1, -1]
 op 1 matmul_v2_grad(X: x, Y: y, Out@GRAD: og) -> (X@GRAD: xg, Y@GRAD: yg) {trans_y = true}
}}`},
		inferCase{Name: "mul_grad", Src: `program main { block 0 {
 var x : f32[2, 3, 4]
 var y : f32[12, 5]
 var og : f32[2, 5]
 var xg : f32[-1, -1, -1]
 var yg : f32[-1, -1]
 op 1 mul_grad(X: x, Y: y, Out@GRAD: og) -> (X@GRAD: xg, Y@GRAD: yg) {x_num_col_dims = 1}
}}`},
		inferCase{Name: "mul", Src: `program main { block 0 {
 var x : f32[2, 3, 4]
 var y : f32[12, 5]
 var o : f32[-1, -1]
 op 1 mul(X: x, Y: y) -> (Out: o) {x_num_col_dims = 1}
}}`},
	)
}
