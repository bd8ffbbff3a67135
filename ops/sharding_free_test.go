package ops_test

import (
	"testing"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/ops"
)

// TestSourceSinkShardingRules: feed and fetch constrain nothing; the
// fills leave Out free unless its shape is a tensor; the *_like fills
// follow their input; shape reads only Input's global dims.
func TestSourceSinkShardingRules(t *testing.T) {
	feedVars := "persist feed : feed_list\npersist fetch : fetch_list\nvar x : f32[8, 16]"
	fill := "var o : f32[8, 16]"
	fillST := "var st : i64[2]\nvar o : f32[-1, -1]"
	fillVT := "var v : f32[1]\nvar o : f32[8, 16]"
	bsl := "var x : f32[8, 16, 4]\nvar o : f32[3, 8, 5]"
	bslOp := "op 1 fill_constant_batch_size_like(Input: x) -> (Out: o) {shape = [3, -1, 5], input_dim_idx = 0, output_dim_idx = 1}"
	runShardCases(t, []shardCase{
		{name: "feed", vars: feedVars, op: "op 1 feed(X: feed) -> (Out: x) {col = 0}", forward: true,
			given: []string{""}, wantIn: []string{""}, wantOut: []string{""}, partial: []string{""}},
		{name: "feed reverse", vars: feedVars, op: "op 1 feed(X: feed) -> (Out: x) {col = 0}",
			given: []string{"[0, 1]"}, wantIn: []string{""}, wantOut: []string{""}},
		{name: "fetch", vars: feedVars, op: "op 1 fetch(X: x) -> (Out: fetch) {col = 0}", forward: true,
			given: []string{"[0, -1]"}, wantIn: []string{""}, wantOut: []string{""}, partial: []string{""}},
		{name: "fetch_v2 reverse", vars: feedVars, op: "op 1 fetch_v2(X: x) -> (Out: fetch) {col = 0}",
			given: []string{""}, wantIn: []string{""}, wantOut: []string{""}},
		{name: "fill_constant", vars: fill, op: "op 1 fill_constant() -> (Out: o) {shape = [8, 16], dtype = 5, value = 1.0}", forward: true,
			given: []string{}, wantIn: []string{}, wantOut: []string{""}, partial: []string{""}},
		// Out's consumers decide: the rule hands nothing back.
		{name: "fill_constant reverse", vars: fill, op: "op 1 fill_constant() -> (Out: o) {shape = [8, 16], dtype = 5, value = 1.0}",
			given: []string{"[0, 1]"}, wantIn: []string{}, wantOut: []string{""}},
		{name: "fill_constant ValueTensor replicated", vars: fillVT, op: "op 1 fill_constant(ValueTensor: v) -> (Out: o) {shape = [8, 16], dtype = 5}", forward: true,
			given: []string{"[0]"}, wantIn: []string{"[-1]"}, wantOut: []string{""}, partial: []string{""}},
		// A shape from a tensor is data: no impl divides it.
		{name: "fill_constant ShapeTensor", vars: fillST, op: "op 1 fill_constant(ShapeTensor: st) -> (Out: o) {dtype = 5}", forward: true,
			given: []string{"[0]"}, wantIn: []string{"[-1]"}, wantOut: []string{"[-1, -1]"}, partial: []string{""}},
		{name: "fill_constant ShapeTensor reverse", vars: fillST, op: "op 1 fill_constant(ShapeTensor: st) -> (Out: o) {dtype = 5}",
			given: []string{"[0, -1]"}, wantIn: []string{"[-1]"}, wantOut: []string{"[-1, -1]"}},
		{name: "uniform_random", vars: fill, op: "op 1 uniform_random() -> (Out: o) {shape = [8, 16]}", forward: true,
			given: []string{}, wantIn: []string{}, wantOut: []string{""}, partial: []string{""}},
		{name: "gaussian_random ShapeTensorList", vars: "var a : i64[1]\nvar b : i64[1]\nvar o : f32[-1, -1]",
			op:    "op 1 gaussian_random(ShapeTensorList: [a, b]) -> (Out: o)",
			given: []string{"[-1, 0]"}, wantIn: []string{"[-1]", "[-1]"}, wantOut: []string{"[-1, -1]"}},
		{name: "pd_op.full", vars: "var o : f32[8, 16]", op: "op 1 pd_op.full() -> (out0: o) {shape = [8, 16]}", forward: true,
			given: []string{}, wantIn: []string{}, wantOut: []string{""}, partial: []string{""}},
		{name: "pd_op.data reverse", vars: "var o : f32[8, 16]", op: "op 1 pd_op.data() -> (out0: o) {name = \"x\", shape = [8, 16]}",
			given: []string{"[0, -1]"}, wantIn: []string{}, wantOut: []string{""}},
		{name: "pd_op.fetch", vars: "var x : f32[8, 16]\nvar o : f32[8, 16]", op: "op 1 pd_op.fetch(in0: x) -> (out0: o) {name = \"o\"}", forward: true,
			given: []string{"[0, 1]"}, wantIn: []string{""}, wantOut: []string{""}, partial: []string{""}},
		// Paddle's FullLikeInferSpmd: Out as X.
		{name: "fill_any_like", vars: "var x : f32[8, 16]\nvar o : f32[8, 16]", op: "op 1 fill_any_like(X: x) -> (Out: o) {value = 0.0}", forward: true,
			given: []string{"[1, 0]"}, wantIn: []string{"[1, 0]"}, wantOut: []string{"[1, 0]"}, partial: []string{""}},
		{name: "fill_any_like reverse", vars: "var x : f32[8, 16]\nvar o : f32[8, 16]", op: "op 1 fill_any_like(X: x) -> (Out: o) {value = 0.0}",
			given: []string{"[-1, 0]"}, wantIn: []string{"[-1, 0]"}, wantOut: []string{"[-1, 0]"}},
		// Out[1] is Input[0]; Input's other dims stay, no partial; Out's
		// other dims are replicated.
		{name: "fill_constant_batch_size_like", vars: bsl, op: bslOp, forward: true,
			given: []string{"[0, -1, 1]"}, wantIn: []string{"[0, -1, 1]"}, wantOut: []string{"[-1, 0, -1]"}, partial: []string{""}},
		// Backward keeps what Out's consumers split, and gives Input the
		// batch.
		{name: "fill_constant_batch_size_like reverse", vars: bsl, op: bslOp,
			given: []string{"[1, 0, -1]"}, wantIn: []string{"[0, -1, -1]"}, wantOut: []string{"[1, 0, -1]"}},
		{name: "shape", vars: "var x : f32[8, 16]\nvar o : i32[2]", op: "op 1 shape(Input: x) -> (Out: o)", forward: true,
			given: []string{"[0, 1]"}, wantIn: []string{""}, wantOut: []string{"[-1]"}, partial: []string{""}},
		{name: "shape reverse", vars: "var x : f32[8, 16]\nvar o : i32[2]", op: "op 1 shape(Input: x) -> (Out: o)",
			given: []string{"[0]"}, wantIn: []string{""}, wantOut: []string{"[-1]"}},
		{name: "increment", vars: "var x : i64[1]\nvar o : i64[1]", op: "op 1 increment(X: x) -> (Out: o) {step = 1.0}", forward: true,
			given: []string{"[0]"}, wantIn: []string{"[0]"}, wantOut: []string{"[0]"}, partial: []string{""}},
		{name: "pd_op.scale", vars: "var x : f32[8, 16]\nvar s : f32[1]\nvar o : f32[8, 16]", op: "op 1 pd_op.scale(in0: x, in1: s) -> (out0: o)", forward: true,
			given: []string{"[0, 1]", "[0]"}, wantIn: []string{"[0, 1]", "[-1]"}, wantOut: []string{"[0, 1]"}, partial: []string{""}},
		{name: "pd_op.scale reverse", vars: "var x : f32[8, 16]\nvar s : f32[1]\nvar o : f32[8, 16]", op: "op 1 pd_op.scale(in0: x, in1: s) -> (out0: o)",
			given: []string{"[-1, 1]"}, wantIn: []string{"[-1, 1]", "[-1]"}, wantOut: []string{"[-1, 1]"}},
		// PIR's equal broadcasts right-aligned, as numpy.
		{name: "pd_op.equal", vars: "var x : f32[8, 16]\nvar y : f32[16]\nvar o : bool[8, 16]", op: "op 1 pd_op.equal(in0: x, in1: y) -> (out0: o)", forward: true,
			given: []string{"[0, -1]", "[1]"}, wantIn: []string{"[0, 1]", "[1]"}, wantOut: []string{"[0, 1]"}, partial: []string{""}},
		{name: "pd_op.equal reverse", vars: "var x : f32[8, 16]\nvar y : f32[16]\nvar o : bool[8, 16]", op: "op 1 pd_op.equal(in0: x, in1: y) -> (out0: o)",
			given: []string{"[1, 0]"}, wantIn: []string{"[1, 0]", "[0]"}, wantOut: []string{"[1, 0]"}},
		{name: "pd_op.thresholded_relu", vars: "var x : f32[8, 16]\nvar o : f32[8, 16]", op: "op 1 pd_op.thresholded_relu(in0: x) -> (out0: o)", forward: true,
			given: []string{"[-1, 0]"}, wantIn: []string{"[-1, 0]"}, wantOut: []string{"[-1, 0]"}, partial: []string{""}},
	})
}

// TestControlFlowShardingRules: while, conditional_block, if and yield
// constrain no arg: their sub-blocks' ops carry the rules.
func TestControlFlowShardingRules(t *testing.T) {
	loop := "var x : f32[8, 16]\nvar i : i64[1]\nvar cond : bool[1]\nvar sc : step_scopes"
	runShardCases(t, []shardCase{
		{name: "while", vars: loop, op: "op 1 while(X: [x, i], Condition: cond) -> (Out: [x, i], StepScopes: sc)", forward: true,
			given: []string{"[0, 1]", "[-1]", "[-1]"}, wantIn: []string{"", "", ""}, wantOut: []string{"", "", ""}, partial: []string{"", "", ""}},
		{name: "while reverse", vars: loop, op: "op 1 while(X: [x, i], Condition: cond) -> (Out: [x, i], StepScopes: sc)",
			given: []string{"[0, 1]", "[-1]", ""}, wantIn: []string{"", "", ""}, wantOut: []string{"", "", ""}},
		{name: "conditional_block", vars: loop, op: "op 1 conditional_block(Cond: cond, Input: x) -> (Out: x, Scope: sc) {is_scalar_condition = true}", forward: true,
			given: []string{"[-1]", "[0, -1]"}, wantIn: []string{"", ""}, wantOut: []string{"", ""}, partial: []string{"", ""}},
		{name: "pd_op.if", vars: "var c : bool[1]\nvar a : f32[8]\nvar b : f32[8, 2]", op: "op 1 pd_op.if(in0: c) -> (out0: a, out1: b)",
			given: []string{"[0]", "[-1, 1]"}, wantIn: []string{""}, wantOut: []string{"", ""}},
		{name: "cf.yield", vars: "var a : f32[8]\nvar b : f32[8, 2]", op: "op 1 cf.yield(in0: a, in1: b) -> ()", forward: true,
			given: []string{"[0]", "[-1, 1]"}, wantIn: []string{"", ""}, wantOut: []string{}, partial: []string{}},
		{name: "while wrong arity", vars: loop, op: "op 1 while(X: [x, i], Condition: cond) -> (Out: [x, i], StepScopes: sc)", forward: true,
			given: []string{"[0, 1]"}, err: "1 input mappings for 3 inputs"},
	})
}

// TestShardingRuleBuildErrors: a rule that cannot be spelled for an op
// is an error naming the op and why, never a panic.
func TestShardingRuleBuildErrors(t *testing.T) {
	for _, c := range []struct{ name, vars, op, want string }{
		{"batch_size_like idx", "var x : f32[8, 16, 4]\nvar o : f32[3, 8, 5]",
			"op 1 fill_constant_batch_size_like(Input: x) -> (Out: o) {shape = [3, -1, 5], input_dim_idx = 3, output_dim_idx = 1}",
			"op 1 fill_constant_batch_size_like: sharding rule: input_dim_idx 3 or output_dim_idx 1 out of range for Input of 3 dims and Out of 3"},
		{"arg_max axis", "var x : f32[8, 16]\nvar o : i64[8]", "op 1 arg_max(X: x) -> (Out: o) {axis = long(2)}",
			"op 1 arg_max: sharding rule: axis 2 out of range for 2 dims"},
		{"too many dims", "var x : f32[1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1]\nvar o : f32[1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1]",
			"op 1 relu(X: x) -> (Out: o)",
			"op 1 relu: sharding rule: x has 24 dims; a rule spells at most 23"},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, err := ir.Parse(c.name, []byte("program main {\n block 0 {\n"+c.vars+"\n"+c.op+"\n }\n}\n"))
			if err != nil {
				t.Fatal(err)
			}
			b := m.Main.Global()
			r, err := ops.ShardingRuleOf(b.Ops[0], b.Var)
			if err == nil || err.Error() != c.want {
				t.Fatalf("rule %v, err %v; want %q", r, err, c.want)
			}
		})
	}
}
