package ops_test

import "testing"

func TestReduceInferErrors(t *testing.T) {
	red := func(attrs, out string) string {
		return " var x : f32[2, 3, 4]\n var o : " + out + "\n op 1 reduce_max(X: x) -> (Out: o) " + attrs
	}
	runDefCases(t, []defCase{
		{"dim", red("{dim = [1]}", "f32[2, 4]"), ""},
		{"default dim is 0", red("", "f32[3, 4]"), ""},
		{"default dim, declared as all", red("", "f32[]"), "op 1 reduce_max: output Out o: declared f32[], inferred [3, 4] from X f32[2, 3, 4]"},
		{"negative keep", red("{dim = [-1], keep_dim = true}", "f32[2, 3, 1]"), ""},
		{"every dim is a scalar", red("{dim = [2, 0, 1]}", "f32[1]"), ""},
		{"empty dim is a scalar", red("{dim = []}", "f32[]"), ""},
		{"reduce_all keep", red("{reduce_all = true, keep_dim = true}", "f32[1, 1, 1]"), ""},
		{"reduce_all not scalar", red("{dim = [0], reduce_all = true}", "f32[3, 4]"),
			"op 1 reduce_max: output Out o: declared f32[3, 4], inferred a scalar ([] or [1]) from X f32[2, 3, 4]"},
		{"dim out of range", red("{dim = [0, 3]}", "f32[3]"),
			"op 1 reduce_max: inconsistent inputs: dim [0, 3] out of range for X x [2, 3, 4]"},
		{"dim of a 0-D X", " var x : f32[]\n var o : f32[]\n op 1 reduce_sum(X: x) -> (Out: o) {dim = [1]}",
			"dim [1] out of range for 0-D X x"},
		{"out_dtype", " var x : f32[2]\n var o : f32[]\n op 1 reduce_sum(X: x) -> (Out: o) {dim = [0], out_dtype = 3}",
			"op 1 reduce_sum: output Out o: declared f32[], inferred dtype i64 from X f32[2]"},
		{"sum of int32 is int64", " var x : i32[2]\n var o : i32[]\n op 1 reduce_sum(X: x) -> (Out: o) {dim = [0]}",
			"op 1 reduce_sum: output Out o: declared i32[], inferred dtype i64 from X i32[2]"},
		{"max keeps int32", " var x : i32[2]\n var o : i32[]\n op 1 reduce_max(X: x) -> (Out: o) {dim = [0], out_dtype = 3}", ""},
		{"dim kind", red("{dim = 1}", "f32[2, 4]"), "op 1 reduce_max: attr dim is int, want ints"},
		{"mean", " var x : f32[2, 3]\n var o : f32[2]\n op 1 mean(X: x) -> (Out: o)",
			"op 1 mean: output Out o: declared f32[2], inferred a scalar ([] or [1]) from X f32[2, 3]"},
		{"sum ok", " var a : f32[2, -1]\n var b : f32[-1, 3]\n var o : f32[2, 3]\n op 1 sum(X: [a, b]) -> (Out: o)", ""},
		{"sum shapes", " var a : f32[2, 3]\n var b : f32[3, 2]\n var o : f32[2, 3]\n op 1 sum(X: [a, b]) -> (Out: o)",
			"op 1 sum: inconsistent inputs: X a [2, 3] and X b [3, 2]: sum needs one shape"},
		{"sum merges dims", " var a : f32[2, -1]\n var b : f32[-1, 3]\n var o : f32[2, 4]\n op 1 sum(X: [a, b]) -> (Out: o)",
			"op 1 sum: output Out o: declared f32[2, 4], inferred [2, 3] from X f32[2, -1], X f32[-1, 3]"},
	})
}
