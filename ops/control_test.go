package ops_test

import (
	"strconv"
	"strings"
	"testing"
)

func TestControlInfer(t *testing.T) {
	runInferCases(t, "", []inferCase{
		{"pd_op.full", "var o : i64[]\nop 1 pd_op.full() -> (out0: o) {dtype = \"int64\", shape = [], value = 1.0}",
			[]string{"out0[0] i64[]"}},
		{"pd_op.data", "var o : f32[-1, 3]\nop 1 pd_op.data() -> (out0: o) {dtype = \"float32\", name = \"x\", shape = [-1, 3]}",
			[]string{"out0[0] f32[-1, 3]"}},
		{"pd_op.equal", "var a : i64[]\nvar b : i64[3]\nvar o : bool[3]\nop 1 pd_op.equal(in0: a, in1: b) -> (out0: o)",
			[]string{"out0[0] bool[3]"}},
		{"pd_op.scale", "var a : i64[2]\nvar s : f32[1]\nvar o : i64[2]\nop 1 pd_op.scale(in0: a, in1: s) -> (out0: o) {bias = 0.0}",
			[]string{"out0[0] i64[2]"}},
	})
}

func TestControlErrors(t *testing.T) {
	var yield strings.Builder
	yield.WriteString("var v : f32[1]\nop 1 cf.yield(")
	for i := range 65 {
		if i > 0 {
			yield.WriteString(", ")
		}
		yield.WriteString("in" + strconv.Itoa(i) + ": v")
	}
	yield.WriteString(") -> ()")
	var in64 []string
	for i := range 64 {
		in64 = append(in64, "in"+strconv.Itoa(i))
	}
	const body = "\n}\nblock 1 parent 0 {\nop 2 increment(X: i) -> (Out: i) {step = 1.0}"
	runOpCases(t, "", []opCase{
		{"while", "var x : f32[4, 8]\nvar i : i64[1]\nvar c : bool[1]\nvar sc : step_scopes\n" +
			"op 1 while(X: [x, i], Condition: c) -> (Out: [x, i], StepScopes: sc) {is_test = false, sub_block = ^1}" + body, nil},
		{"while/condition", "var x : f32[4, 8]\nvar i : i64[1]\nvar sc : step_scopes\n" +
			"op 1 while(X: x) -> (Out: x, StepScopes: sc) {sub_block = ^1}" + body,
			[]string{"op 1 while: input slot Condition required, not given"}},
		{"while/sub_block_kind", "var c : bool[1]\nvar sc : step_scopes\n" +
			"op 1 while(Condition: c) -> (StepScopes: sc) {sub_block = 1}",
			[]string{"op 1 while: attr sub_block is int, want block"}},
		{"pd_op.full/dtype", "var o : f32[]\nop 1 pd_op.full() -> (out0: o) {dtype = \"int64\", shape = [], value = 1.0}",
			[]string{"op 1 pd_op.full: output out0 o: declared f32[], inferred dtype i64 from its attrs"}},
		{"pd_op.full/unknown_dtype", "var o : f32[]\nop 1 pd_op.full() -> (out0: o) {dtype = \"complex64\", shape = [], value = 1.0}", nil},
		{"pd_op.equal/broadcast", "var a : i64[2]\nvar b : i64[3]\nvar o : bool[3]\nop 1 pd_op.equal(in0: a, in1: b) -> (out0: o)",
			[]string{"op 1 pd_op.equal: inconsistent inputs: in0 a [2] and in1 b [3]: dim 0: 2 and 3 do not broadcast"}},
		{"pd_op.fetch/declared", "var a : f32[2]\nvar o : f32[3]\nop 1 pd_op.fetch(in0: a) -> (out0: o) {col = 0, name = \"f\"}",
			[]string{"op 1 pd_op.fetch: output out0 o: declared f32[3], inferred [2] from in0 f32[2]"}},
		// PIR's positional slots: any number, each named by its position.
		{"cf.yield/65", yield.String(), nil},
		{"cf.yield/misnamed", "var v : f32[2]\nop 1 cf.yield(in0: v, in01: v) -> ()",
			[]string{"op 1 cf.yield: input slot in01 (v) is not a slot of cf.yield (slots: in0, in1, ...)"}},
	})
}
