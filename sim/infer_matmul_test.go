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
		inferCase{Name: "mul", Src: `program main { block 0 {
 var x : f32[2, 3, 4]
 var y : f32[12, 5]
 var o : f32[-1, -1]
 op 1 mul(X: x, Y: y) -> (Out: o) {x_num_col_dims = 1}
}}`},
	)
}
