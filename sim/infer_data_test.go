package sim

// Cases of the data family: constants, random fills, copies, casts,
// logical ops and views.
func init() {
	inferCases = append(inferCases,
		inferCase{Name: "fill_constant", Src: `program main { block 0 {
 var o : i64[-1, -1]
 op 1 fill_constant() -> (Out: o) {dtype = 3, shape = [2, 3], value = 1.0}
}}`},
		inferCase{Name: "fill_constant/default_dtype_longs", Src: `program main { block 0 {
 var o : f32[-1]
 op 1 fill_constant() -> (Out: o) {shape = longs[4], value = 0.5}
}}`},
		inferCase{Name: "fill_constant/value_tensor", Src: `program main { block 0 {
 var v : f32[1]
 var o : f64[-1, -1, -1]
 op 1 fill_constant(ValueTensor: v) -> (Out: o) {dtype = 6, shape = [1, 2, 3]}
}}`},
		inferCase{Name: "fill_any_like", Src: `program main { block 0 {
 var x : f32[3, 2]
 var o : f32[-1, -1]
 op 1 fill_any_like(X: x) -> (Out: o) {value = 1.0}
}}`},
		inferCase{Name: "fill_any_like/dtype", Src: `program main { block 0 {
 var x : f32[3, 2]
 var o : i32[-1, -1]
 op 1 fill_any_like(X: x) -> (Out: o) {dtype = 2, value = 1.0}
}}`},
		inferCase{Name: "uniform_random", Src: `program main { block 0 {
 var o : f32[-1, -1]
 op 1 uniform_random() -> (Out: o) {dtype = 5, shape = [4, 3], min = -0.5, max = 0.5, seed = 3}
}}`},
		inferCase{Name: "gaussian_random", Src: `program main { block 0 {
 var o : f64[-1]
 op 1 gaussian_random() -> (Out: o) {dtype = 6, shape = [5], mean = 0.0, std = 2.0, seed = 1}
}}`},
		inferCase{Name: "assign", Src: `program main { block 0 {
 var x : i64[2, 2]
 var o : i64[-1, -1]
 op 1 assign(X: x) -> (Out: o)
}}`},
		inferCase{Name: "reshard", Src: `mesh m shape [2] dims [x] ranks [0, 1]
program main { block 0 {
 var x : f32[2, 4] @m[-1, -1] partial [0]
 var o : f32[-1, -1] @m[0, -1]
 op 1 reshard(X: x) -> (Out: o) {origin = "op 2 relu X"}
}}`},
		inferCase{Name: "slice", Src: `program main { block 0 {
 var x : f32[4, 6, 2]
 var o : f32[-1, -1, -1]
 op 1 slice(Input: x) -> (Out: o) {axes = [0, 1], starts = [1, -4], ends = [3, 100], infer_flags = [1, 1], decrease_axis = []}
}}`},
		inferCase{Name: "slice/decrease_axis", Src: `program main { block 0 {
 var x : f32[4, 6]
 var o : f32[-1]
 op 1 slice(Input: x) -> (Out: o) {axes = [0], starts = [2], ends = [3], infer_flags = [1], decrease_axis = [0]}
}}`},
		inferCase{Name: "concat", Src: `program main { block 0 {
 var a : f64[2, 3]
 var b : f64[2, 1]
 var o : f64[-1, -1]
 op 1 concat(X: [a, b]) -> (Out: o) {axis = -1}
}}`},
		inferCase{Name: "split/num", Src: `program main { block 0 {
 var x : f32[6, 4]
 var o1 : f32[-1, -1]
 var o2 : f32[-1, -1]
 op 1 split(X: x) -> (Out: [o1, o2]) {axis = 1, num = 2}
}}`},
		inferCase{Name: "split/sections", Src: `program main { block 0 {
 var x : f32[6, 4]
 var o1 : f32[-1, -1]
 var o2 : f32[-1, -1]
 op 1 split(X: x) -> (Out: [o1, o2]) {axis = 0, sections = [2, -1]}
}}`},
		inferCase{Name: "increment", Src: `program main { block 0 {
 var x : i64[1]
 var o : i64[-1]
 op 1 increment(X: x) -> (Out: o) {step = 2.0}
}}`},
		inferCase{Name: "cast", Src: `program main { block 0 {
 var x : f32[2, 3]
 var o : f16[-1, -1]
 op 1 cast(X: x) -> (Out: o) {in_dtype = 5, out_dtype = 4}
}}`},
		inferCase{Name: "logical_not", Src: `program main { block 0 {
 var x : bool[3, 1]
 var o : bool[-1, -1]
 op 1 logical_not(X: x) -> (Out: o)
}}`},
		inferCase{Name: "reshape2", Src: `program main { block 0 {
 var x : f32[2, 3, 4]
 var o : f32[-1, -1]
 var xs : f32[-1, -1, -1, -1]
 op 1 reshape2(X: x) -> (Out: o, XShape: xs) {shape = [6, 4]}
}}`},
		inferCase{Name: "reshape2/copy_and_infer", Src: `program main { block 0 {
 var x : f32[2, 3, 4]
 var o : f32[-1, -1, -1]
 var xs : f32[-1, -1, -1, -1]
 op 1 reshape2(X: x) -> (Out: o, XShape: xs) {shape = [0, -1, 2]}
}}`},
		inferCase{Name: "reshape2/no_xshape", Src: `program main { block 0 {
 var x : i64[6]
 var o : i64[-1, -1, -1]
 op 1 reshape2(X: x) -> (Out: o) {shape = [-1, 1, 3]}
}}`},
		inferCase{Name: "reshape2_grad", Src: `program main { block 0 {
 var xs : f32[0, 2, 3, 4]
 var g : f32[6, 4]
 var dx : f32[-1, -1, -1]
 op 1 reshape2_grad(XShape: xs, Out@GRAD: g) -> (X@GRAD: dx) {shape = [6, 4]}
}}`},
		inferCase{Name: "reshape2_grad/x", Src: `program main { block 0 {
 var x : f32[2, 6]
 var g : f32[3, 4]
 var dx : f32[-1, -1]
 op 1 reshape2_grad(X: x, Out@GRAD: g) -> (X@GRAD: dx) {shape = [3, 4]}
}}`},
		inferCase{Name: "transpose2", Src: `program main { block 0 {
 var x : f32[2, 3, 4]
 var o : f32[-1, -1, -1]
 var xs : f32[-1, -1, -1, -1]
 op 1 transpose2(X: x) -> (Out: o, XShape: xs) {axis = [2, 0, 1]}
}}`},
		inferCase{Name: "transpose2_grad", Src: `program main { block 0 {
 var xs : f32[0, 2, 3, 4]
 var g : f32[4, 2, 3]
 var dx : f32[-1, -1, -1]
 op 1 transpose2_grad(XShape: xs, Out@GRAD: g) -> (X@GRAD: dx) {axis = [2, 0, 1]}
}}`},
		inferCase{Name: "transpose2_grad/no_xshape", Src: `program main { block 0 {
 var g : f32[4, 2, 3]
 var dx : f32[-1, -1, -1]
 op 1 transpose2_grad(Out@GRAD: g) -> (X@GRAD: dx) {axis = [2, 0, 1]}
}}`},
	)
}
