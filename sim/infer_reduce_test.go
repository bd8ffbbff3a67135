package sim

// Cases for the reduce family: every way dim, keep_dim and reduce_all
// combine, and the grad ops.
func init() {
	red := func(typ, name, attrs, out string) inferCase {
		return inferCase{Name: typ + name, Src: `program main { block 0 {
 var x : f32[2, 3, 4]
 var o : ` + out + `
 op 1 ` + typ + `(X: x) -> (Out: o) ` + attrs + `
}}`}
	}
	for _, typ := range []string{"reduce_sum", "reduce_mean"} {
		inferCases = append(inferCases,
			red(typ, "", "{dim = [1]}", "f32[-1, -1]"),
			red(typ, "/neg_keep", "{dim = [-1, 0], keep_dim = true}", "f32[-1, -1, -1]"),
			red(typ, "/default_dim", "", "f32[-1, -1]"),
			red(typ, "/longs", "{dim = longs[2]}", "f32[-1, -1]"),
			red(typ, "/all", "{dim = [1], reduce_all = true}", "f32[]"),
			red(typ, "/all_keep", "{reduce_all = true, keep_dim = true}", "f32[-1, -1, -1]"),
			red(typ, "/empty_dim", "{dim = []}", "f32[]"),
			red(typ, "/every_dim", "{dim = [0, 1, 2]}", "f32[]"),
		)
		inferCases = append(inferCases, inferCase{Name: typ + "_grad", Src: `program main { block 0 {
 var x : f64[2, 3, 4]
 var g : f64[2, 1, 4]
 var dx : f64[-1, -1, -1]
 op 1 ` + typ + `_grad(X: x, Out@GRAD: g) -> (X@GRAD: dx) {dim = [1], keep_dim = true}
}}`})
	}
	inferCases = append(inferCases,
		inferCase{Name: "mean", Src: `program main { block 0 {
 var x : f16[2, 3]
 var o : f16[]
 op 1 mean(X: x) -> (Out: o)
}}`},
		inferCase{Name: "mean_grad", Src: `program main { block 0 {
 var x : f32[2, 3]
 var g : f32[1]
 var dx : f32[-1, -1]
 op 1 mean_grad(X: x, Out@GRAD: g) -> (X@GRAD: dx)
}}`},
		inferCase{Name: "sum", Src: `program main { block 0 {
 var a : f32[2, 3]
 var b : f32[2, 3]
 var c : f32[2, 3]
 var o : f32[-1, -1]
 op 1 sum(X: [a, b, c]) -> (Out: o)
}}`},
		inferCase{Name: "sum/one", Src: `program main { block 0 {
 var a : i64[4]
 var o : i64[-1]
 op 1 sum(X: [a]) -> (Out: o)
}}`},
	)
}

// Cases for reduce_sum's dtype: out_dtype, and int64 for int32 and bool.
func init() {
	inferCases = append(inferCases,
		inferCase{Name: "reduce_sum/out_dtype", Src: `program main { block 0 {
 var x : f32[2, 3]
 var o : f64[-1]
 op 1 reduce_sum(X: x) -> (Out: o) {dim = [1], out_dtype = 6}
}}`},
		inferCase{Name: "reduce_sum/i32", IntHigh: 9, Src: `program main { block 0 {
 var x : i32[2, 3]
 var o : i64[-1]
 op 1 reduce_sum(X: x) -> (Out: o) {dim = [0]}
}}`},
		inferCase{Name: "reduce_sum/bool", Src: `program main { block 0 {
 var x : bool[4]
 var o : i64[]
 op 1 reduce_sum(X: x) -> (Out: o) {reduce_all = true}
}}`},
		inferCase{Name: "reduce_mean/i64", IntHigh: 9, Src: `program main { block 0 {
 var x : i64[2, 3]
 var o : i64[-1]
 op 1 reduce_mean(X: x) -> (Out: o) {dim = [0], out_dtype = 5}
}}`},
	)
}
