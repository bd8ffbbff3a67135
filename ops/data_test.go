package ops_test

import (
	"strings"
	"testing"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/ops"
)

// opCase is a block of vars and ops to verify, and what verify says:
// the error lines after "main block 0: ", or none.
type opCase struct {
	name, src string
	want      []string
}

func parseBlock(t *testing.T, head, src string) *ir.Module {
	t.Helper()
	m, err := ir.Parse("case", []byte(head+"program main { block 0 {\n"+src+"\n}}"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// runOpCases verifies each case (under module header head) and compares
// verify's error lines with the case's.
func runOpCases(t *testing.T, head string, cases []opCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := parseBlock(t, head, c.src)
			if err := ir.Verify(m); err != nil {
				t.Fatalf("the case is not a valid module: %v", err)
			}
			_, err := ops.Verify(m, ops.Options{})
			var got []string
			if err != nil {
				for _, l := range strings.Split(err.Error(), "\n") {
					got = append(got, strings.TrimPrefix(l, "main block 0: "))
				}
			}
			if strings.Join(got, "\n") != strings.Join(c.want, "\n") {
				t.Errorf("verify:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(c.want, "\n"))
			}
		})
	}
}

// inferCase is one op and the output types inference gives it, as
// "Slot[i] type" (a scalar as "Slot[i] scalar dtype").
type inferCase struct {
	name, src string
	want      []string
}

func runInferCases(t *testing.T, head string, cases []inferCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := parseBlock(t, head, c.src)
			b := m.Main.Global()
			res, err := ops.InferOp(b.Ops[len(b.Ops)-1], b.Var)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range res {
				s := r.Slot + "[" + itoa(r.Index) + "] "
				if r.Scalar {
					s += "scalar " + r.Type.DType.String()
				} else {
					s += r.Type.String()
				}
				got = append(got, s)
			}
			if strings.Join(got, "; ") != strings.Join(c.want, "; ") {
				t.Errorf("inferred %s\nwant     %s", strings.Join(got, "; "), strings.Join(c.want, "; "))
			}
		})
	}
}

func TestDataInfer(t *testing.T) {
	runInferCases(t, "", []inferCase{
		{"fill_constant/shape_tensor", "var s : i32[3]\nvar o : f32[-1, -1, -1]\nop 1 fill_constant(ShapeTensor: s) -> (Out: o) {dtype = 5, shape = [1]}",
			[]string{"Out[0] f32[-1, -1, -1]"}},
		{"fill_constant/shape_list", "var a : i32[1]\nvar b : i32[1]\nvar o : f32[-1, -1]\nop 1 fill_constant(ShapeTensorList: [a, b]) -> (Out: o) {dtype = 5}",
			[]string{"Out[0] f32[-1, -1]"}},
		{"fill_constant/scalar", "var o : bool[]\nop 1 fill_constant() -> (Out: o) {dtype = 0, shape = [], value = 1.0}",
			[]string{"Out[0] bool[]"}},
		{"fill_constant_batch_size_like", "var x : f32[-1, 7]\nvar o : i64[-1, 3]\nop 1 fill_constant_batch_size_like(Input: x) -> (Out: o) {dtype = 3, shape = [1, 3]}",
			[]string{"Out[0] i64[-1, 3]"}},
		{"reshape2/unknown_dim", "var x : f32[-1, 4]\nvar o : f32[-1, 2, 2]\nop 1 reshape2(X: x) -> (Out: o) {shape = [-1, 2, 2]}",
			[]string{"Out[0] f32[-1, 2, 2]"}},
		{"reshape2/copy_unknown", "var x : f32[-1, 4]\nvar o : f32[-1, 2, 2]\nop 1 reshape2(X: x) -> (Out: o) {shape = [0, 2, -1]}",
			[]string{"Out[0] f32[-1, 2, -1]"}},
		{"reshape2/xshape", "var x : f32[-1, 4]\nvar o : f32[-1, 2, 2]\nvar xs : f32[0, -1, 4]\nop 1 reshape2(X: x) -> (Out: o, XShape: xs) {shape = [-1, 2, 2]}",
			[]string{"XShape[0] f32[0, -1, 4]", "Out[0] f32[-1, 2, 2]"}},
		{"reshape2/shape_input", "var x : f32[2, 4]\nvar s : i32[3]\nvar o : f32[-1, -1, -1]\nop 1 reshape2(X: x, Shape: s) -> (Out: o) {shape = [8]}",
			[]string{"Out[0] f32[-1, -1, -1]"}},
		{"squeeze2/all", "var x : f32[1, 3, 1, -1]\nvar o : f32[3, -1]\nop 1 squeeze2(X: x) -> (Out: o)",
			[]string{"Out[0] f32[3, -1]"}},
		{"squeeze2/axes", "var x : f32[1, 3, 1, 1]\nvar o : f32[3, 1]\nop 1 squeeze2(X: x) -> (Out: o) {axes = [0, -2, 1]}",
			[]string{"Out[0] f32[3, 1]"}},
		{"unsqueeze2", "var x : f32[3, 4]\nvar o : f32[1, 3, 4, 1]\nop 1 unsqueeze2(X: x) -> (Out: o) {axes = [0, -1]}",
			[]string{"Out[0] f32[1, 3, 4, 1]"}},
		{"unsqueeze2/middle", "var x : f32[3, 4]\nvar o : f32[3, 1, 1, 4]\nop 1 unsqueeze2(X: x) -> (Out: o) {axes = [1, 1]}",
			[]string{"Out[0] f32[3, 1, 1, 4]"}},
		{"flatten_contiguous_range", "var x : f32[2, 3, 4, 5]\nvar o : f32[2, 60]\nop 1 flatten_contiguous_range(X: x) -> (Out: o) {start_axis = 1, stop_axis = -1}",
			[]string{"Out[0] f32[2, 60]"}},
		{"flatten_contiguous_range/unknown", "var x : f32[-1, 3, 4]\nvar o : f32[-1, 4]\nop 1 flatten_contiguous_range(X: x) -> (Out: o) {start_axis = 0, stop_axis = 1}",
			[]string{"Out[0] f32[-1, 4]"}},
		{"concat", "var a : f32[2, 3]\nvar b : f32[2, -1]\nvar c : f32[2, 4]\nvar o : f32[2, -1]\nop 1 concat(X: [a, c]) -> (Out: o) {axis = -1}",
			[]string{"Out[0] f32[2, 7]"}},
		{"concat/unknown", "var a : f32[2, 3]\nvar b : f32[-1, -1]\nvar o : f32[-1, -1]\nop 1 concat(X: [a, b]) -> (Out: o) {axis = 0}",
			[]string{"Out[0] f32[-1, 3]"}},
		{"split/num", "var x : f32[6, 2]\nvar a : f32[3, 2]\nvar b : f32[3, 2]\nop 1 split(X: x) -> (Out: [a, b]) {axis = 0, num = 2}",
			[]string{"Out[0] f32[3, 2]", "Out[1] f32[3, 2]"}},
		{"split/unknown", "var x : f32[-1, 2]\nvar a : f32[-1, 2]\nvar b : f32[-1, 2]\nop 1 split(X: x) -> (Out: [a, b]) {axis = 0, num = 2}",
			[]string{"Out[0] f32[-1, 2]", "Out[1] f32[-1, 2]"}},
		{"split/sections", "var x : f32[2, 7]\nvar a : f32[2, 3]\nvar b : f32[2, 4]\nop 1 split(X: x) -> (Out: [a, b]) {axis = 1, sections = [3, -1]}",
			[]string{"Out[0] f32[2, 3]", "Out[1] f32[2, 4]"}},
		{"slice", "var x : f32[5, 6, 7]\nvar o : f32[2, 6, 5]\nop 1 slice(Input: x) -> (Out: o) {axes = [0, 2], starts = [1, -5], ends = [3, 100]}",
			[]string{"Out[0] f32[2, 6, 5]"}},
		{"slice/decrease", "var x : f32[5, 6]\nvar o : f32[6]\nop 1 slice(Input: x) -> (Out: o) {axes = [0], starts = [-1], ends = [10000], decrease_axis = [0]}",
			[]string{"Out[0] f32[6]"}},
		{"slice/to_scalar", "var x : f32[5]\nvar o : f32[1]\nop 1 slice(Input: x) -> (Out: o) {axes = [0], starts = [2], ends = [3], decrease_axis = [0]}",
			[]string{"Out[0] scalar f32"}},
		{"slice/tensor_bounds", "var x : f32[5, 6]\nvar s : i64[1]\nvar o : f32[-1, 6]\nop 1 slice(Input: x, StartsTensor: s) -> (Out: o) {axes = [0], ends = [3]}",
			[]string{"Out[0] f32[-1, 6]"}},
		{"arg_max", "var x : f32[3, 4]\nvar o : i64[3]\nop 1 arg_max(X: x) -> (Out: o) {axis = long(-1)}",
			[]string{"Out[0] i64[3]"}},
		{"arg_max/keepdims_i32", "var x : f32[3, 4]\nvar o : i32[1, 4]\nop 1 arg_max(X: x) -> (Out: o) {axis = 0, keepdims = true, dtype = 2}",
			[]string{"Out[0] i32[1, 4]"}},
		{"arg_min/flatten", "var x : f32[3, 4]\nvar o : i64[]\nop 1 arg_min(X: x) -> (Out: o) {flatten = true}",
			[]string{"Out[0] scalar i64"}},
		{"logical_and", "var x : bool[3, 1]\nvar y : bool[4]\nvar o : bool[3, 4]\nop 1 logical_and(X: x, Y: y) -> (Out: o)",
			[]string{"Out[0] bool[3, 4]"}},
		{"shape", "var x : f32[3, -1, 2]\nvar o : i32[3]\nop 1 shape(Input: x) -> (Out: o)",
			[]string{"Out[0] i32[3]"}},
	})
}

func TestDataErrors(t *testing.T) {
	const reshape = "(Out = shape with 0 = X's dim and -1 inferred; XShape = [0] + X)"
	runOpCases(t, "", []opCase{
		{"reshape2/local_shape", "var x : f32[2, 8]\nvar o : f32[2, 2, 4]\nvar xs : f32[0, 2, 8]\nop 1 reshape2(X: x) -> (Out: o, XShape: xs) {shape = [2, 2, 4]}", nil},
		{"reshape2/elements", "var x : f32[2, 3]\nvar o : f32[4, 2]\nop 1 reshape2(X: x) -> (Out: o) {shape = [4, 2]}",
			[]string{"op 1 reshape2: inconsistent inputs: X x [2, 3] (6 elements) does not reshape to [4, 2] (8 elements)"}},
		{"reshape2/two_unknown", "var x : f32[2, 3]\nvar o : f32[-1, -1]\nop 1 reshape2(X: x) -> (Out: o) {shape = [-1, -1]}",
			[]string{"op 1 reshape2: inconsistent inputs: X x [2, 3]: attr shape [-1, -1] has two -1 dims"}},
		{"reshape2/copy_beyond", "var x : f32[6]\nvar o : f32[6, 1]\nop 1 reshape2(X: x) -> (Out: o) {shape = [6, 0]}",
			[]string{"op 1 reshape2: inconsistent inputs: X x [6]: attr shape [6, 0] copies dim 1, which X does not have"}},
		{"reshape2/not_divisible", "var x : f32[2, 3]\nvar o : f32[-1, 4]\nop 1 reshape2(X: x) -> (Out: o) {shape = [-1, 4]}",
			[]string{"op 1 reshape2: inconsistent inputs: X x [2, 3] (6 elements) does not reshape to [-1, 4]"}},
		{"reshape2/declared", "var x : f32[2, 3]\nvar o : f32[3, 3]\nop 1 reshape2(X: x) -> (Out: o) {shape = [-1, 3]}",
			[]string{"op 1 reshape2: output Out o: declared f32[3, 3], inferred [2, 3] from X f32[2, 3]"}},
		{"reshape2/xshape", "var x : f32[2, 3]\nvar o : f32[6]\nvar xs : f32[2, 3]\nop 1 reshape2(X: x) -> (Out: o, XShape: xs) {shape = [6]}",
			[]string{"op 1 reshape2: output XShape xs: declared f32[2, 3], inferred [0, 2, 3] from X f32[2, 3]"}},
		{"reshape2_grad", "var xs : f32[0, 2, 3]\nvar g : f32[6]\nvar dx : f32[3, 2]\nop 1 reshape2_grad(XShape: xs, Out@GRAD: g) -> (X@GRAD: dx) {shape = [6]}",
			[]string{"op 1 reshape2_grad: output X@GRAD dx: declared f32[3, 2], inferred [2, 3] from XShape f32[0, 2, 3], Out@GRAD f32[6]"}},
		{"transpose2/perm", "var x : f32[2, 3]\nvar o : f32[3, 2]\nop 1 transpose2(X: x) -> (Out: o) {axis = [1, 1]}",
			[]string{"op 1 transpose2: inconsistent inputs: X x [2, 3]: attr axis [1, 1] is not a permutation of its dims"}},
		{"transpose2/rank", "var x : f32[2, 3]\nvar o : f32[3, 2]\nop 1 transpose2(X: x) -> (Out: o) {axis = [1, 0, 2]}",
			[]string{"op 1 transpose2: inconsistent inputs: X x [2, 3]: attr axis [1, 0, 2] has 3 dims, X 2"}},
		{"transpose2_grad/perm", "var g : f32[3, 2]\nvar dx : f32[2, 3]\nop 1 transpose2_grad(Out@GRAD: g) -> (X@GRAD: dx) {axis = [0, 0]}",
			[]string{"op 1 transpose2_grad: inconsistent inputs: Out@GRAD g [3, 2]: attr axis [0, 0] is not a permutation of its dims"}},
		{"transpose2_grad/declared", "var g : f32[3, 2]\nvar dx : f32[3, 2]\nop 1 transpose2_grad(Out@GRAD: g) -> (X@GRAD: dx) {axis = [1, 0]}",
			[]string{"op 1 transpose2_grad: output X@GRAD dx: declared f32[3, 2], inferred [2, 3] from Out@GRAD f32[3, 2]"}},
		{"squeeze2/range", "var x : f32[1, 3]\nvar o : f32[3]\nop 1 squeeze2(X: x) -> (Out: o) {axes = [2]}",
			[]string{"op 1 squeeze2: inconsistent inputs: X x [1, 3]: attr axes [2] names dim 2, out of range"}},
		{"squeeze2/kept", "var x : f32[2, 3]\nvar o : f32[3]\nop 1 squeeze2(X: x) -> (Out: o) {axes = [0]}",
			[]string{"op 1 squeeze2: output Out o: declared f32[3], inferred [2, 3] from X f32[2, 3]"}},
		{"unsqueeze2/range", "var x : f32[3]\nvar o : f32[3, 1]\nop 1 unsqueeze2(X: x) -> (Out: o) {axes = [3]}",
			[]string{"op 1 unsqueeze2: inconsistent inputs: X x [3]: attr axes [3]: axis out of range for 1 dims"}},
		{"flatten/range", "var x : f32[2, 3, 4]\nvar o : f32[24]\nop 1 flatten_contiguous_range(X: x) -> (Out: o) {start_axis = 2, stop_axis = 1}",
			[]string{"op 1 flatten_contiguous_range: inconsistent inputs: X x [2, 3, 4]: start_axis 2 and stop_axis 1 are not a range of its dims"}},
		{"concat/dims", "var a : f32[2, 3]\nvar b : f32[3, 3]\nvar o : f32[-1, 3]\nop 1 concat(X: [a, b]) -> (Out: o) {axis = 1}",
			[]string{"op 1 concat: inconsistent inputs: X a [2, 3] and X b [3, 3]: dim 0 differs off the concat axis 1"}},
		{"concat/rank", "var a : f32[2, 3]\nvar b : f32[3]\nvar o : f32[-1, 3]\nop 1 concat(X: [a, b]) -> (Out: o)",
			[]string{"op 1 concat: inconsistent inputs: X a [2, 3] and X b [3]: ranks differ"}},
		{"split/num", "var x : f32[5, 2]\nvar a : f32[-1, 2]\nvar b : f32[-1, 2]\nop 1 split(X: x) -> (Out: [a, b]) {num = 2}",
			[]string{"op 1 split: inconsistent inputs: X x [5, 2]: dim 0 (5) does not split into 2"}},
		{"split/sections", "var x : f32[5, 2]\nvar a : f32[-1, 2]\nvar b : f32[-1, 2]\nop 1 split(X: x) -> (Out: [a, b]) {sections = [2, 2]}",
			[]string{"op 1 split: inconsistent inputs: X x [5, 2]: sections [2, 2] do not sum to dim 0 (5)"}},
		{"slice/decrease", "var x : f32[5, 6]\nvar o : f32[6]\nop 1 slice(Input: x) -> (Out: o) {axes = [0], starts = [0], ends = [2], decrease_axis = [0]}",
			[]string{"op 1 slice: inconsistent inputs: Input x [5, 6]: decrease_axis [0] drops dim 0 of size 2, not 1"}},
		{"slice/lengths", "var x : f32[5, 6]\nvar o : f32[2, 6]\nop 1 slice(Input: x) -> (Out: o) {axes = [0], starts = [0, 1], ends = [2]}",
			[]string{"op 1 slice: inconsistent inputs: Input x [5, 6]: axes [0], starts [0, 1] and ends [2] differ in length"}},
		{"increment", "var x : i64[2]\nop 1 increment(X: x) -> (Out: x) {step = 1.0}",
			[]string{"op 1 increment: inconsistent inputs: X x [2]: increment needs one element, X has 2"}},
		{"fill_constant/dtype", "var o : f32[2]\nop 1 fill_constant() -> (Out: o) {dtype = 3, shape = [2], value = 0.0}",
			[]string{"op 1 fill_constant: output Out o: declared f32[2], inferred dtype i64 from its attrs"}},
		{"fill_constant/shape", "var o : f32[2]\nop 1 fill_constant() -> (Out: o) {shape = longs[2, 1]}",
			[]string{"op 1 fill_constant: output Out o: declared f32[2], inferred [2, 1] from its attrs"}},
		{"uniform_random/negative", "var o : f32[2]\nop 1 uniform_random() -> (Out: o) {shape = [2, -3]}",
			[]string{"op 1 uniform_random: inconsistent inputs: attr shape [2, -3]: dim 1 is -3"}},
		{"cast", "var x : f32[2]\nvar o : f32[2]\nop 1 cast(X: x) -> (Out: o) {in_dtype = 5, out_dtype = 2}",
			[]string{"op 1 cast: output Out o: declared f32[2], inferred dtype i32 from X f32[2]"}},
		{"arg_max/axis", "var x : f32[3, 4]\nvar o : i64[3]\nop 1 arg_max(X: x) -> (Out: o) {axis = long(2)}",
			[]string{"op 1 arg_max: inconsistent inputs: X x [3, 4]: axis 2 out of range"}},
		{"logical_or", "var x : bool[3]\nvar y : bool[4]\nvar o : bool[4]\nop 1 logical_or(X: x, Y: y) -> (Out: o)",
			[]string{"op 1 logical_or: inconsistent inputs: X x [3] and Y y [4]: dim 0: 3 and 4 do not broadcast"}},
	})
}
