package ops_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// The cases of Paddle's own unit tests of its phi SPMD rules, one test per
// rule, ported row by row (repo PaddlePaddle/Paddle: the Python tests
// test/auto_parallel/spmd_rules/test_*_rule.py and the C++ test
// test/cpp/auto_parallel/spmd_rule_test.cc). Each group of rows names the
// file and the test method it comes from; every case of the method is a
// row, in its order, with Paddle's shapes, mappings, attrs and expected
// mappings and partial mesh dims.
//
// Translations, the same throughout:
//   - Paddle's input order is the op's slot order here (lookup_table_v2
//     reads W before Ids; Paddle's embedding rule takes ids first).
//   - A shape Paddle's test leaves inconsistent with the op (the rule does
//     not read it: trans_x without swapping X's dims, a split's outputs
//     of the input's shape) is made consistent; a shape the rule reads
//     (size-1 dims, concat's sizes) is kept.
//   - A partial of a reduce_max is written "0:max" (Paddle's tests check
//     only the partial mesh dims, {0}).
//   - An input partial (add_n's, matmul's InferBackward of a partial
//     output) cannot be given: single-op rules here do not propagate
//     input partials (see the deviation rows).
//   - Paddle's "grad" rules (XxxGradInferSpmd), which some methods named
//     infer_backward call, are not reverse rules: they are listed at their
//     place and not ported here (the derived grad ops' rules, which came
//     later, are another rule: gradSharding).
//
// A row whose result differs from Paddle's says why in a "deviation:"
// comment; every other row is Paddle's expected result.

// ms is the mappings of a row.
func ms(s ...string) []string { return s }

// pfw is a Forward row: mappings given, then the inputs and outputs
// wanted, and each output's partial mesh dims.
func pfw(name, vars, op string, given, in, out, partial []string) shardCase {
	return shardCase{name: name, vars: vars, op: op, forward: true, given: given, wantIn: in, wantOut: out, partial: partial}
}

// pbw is a Backward (reverse) row: the outputs' mappings given.
func pbw(name, vars, op string, given, in, out []string) shardCase {
	return shardCase{name: name, vars: vars, op: op, given: given, wantIn: in, wantOut: out}
}

// perr is a row Paddle refuses: the rule must refuse too, with err.
func perr(name, vars, op string, forward bool, given []string, err string) shardCase {
	return shardCase{name: name, vars: vars, op: op, forward: forward, given: given, err: err}
}

// onMesh gives rows the mesh of Paddle's test.
func onMesh(mesh []int, cs ...shardCase) []shardCase {
	for i := range cs {
		cs[i].mesh = mesh
	}
	return cs
}

var (
	mesh4   = []int{4}    // ProcessMesh([0, 1, 2, 3])
	mesh2x2 = []int{2, 2} // [[0, 1], [2, 3]]
	mesh2x3 = []int{2, 3} // [[0, 1, 2], [3, 4, 5]]
	mesh2x4 = []int{2, 4} // [[0, 1, 2, 3], [4, 5, 6, 7]]
)

func TestPaddleMatmulRule(t *testing.T) {
	v2 := "var x : f32[64, 32]\nvar y : f32[32, 48]\nvar o : f32[64, 48]"
	v4 := "var x : f32[512, 48, 64, 32]\nvar y : f32[32, 48]\nvar o : f32[512, 48, 64, 48]"
	v4tx := "var x : f32[512, 48, 32, 64]\nvar y : f32[32, 48]\nvar o : f32[512, 48, 64, 48]"
	v4ty := "var x : f32[512, 48, 64, 32]\nvar y : f32[48, 32]\nvar o : f32[512, 48, 64, 48]"
	v4txy := "var x : f32[512, 48, 32, 64]\nvar y : f32[48, 32]\nvar o : f32[512, 48, 64, 48]"
	mm := "op 1 matmul_v2(X: x, Y: y) -> (Out: o)"
	mmTX := "op 1 matmul_v2(X: x, Y: y) -> (Out: o) {trans_x = true}"
	mmTY := "op 1 matmul_v2(X: x, Y: y) -> (Out: o) {trans_y = true}"
	mmTXY := "op 1 matmul_v2(X: x, Y: y) -> (Out: o) {trans_x = true, trans_y = true}"
	var cases []shardCase
	// test_matmul_rule.py, TestMatmulSPMDRule.test_matmul_infer_forward.
	cases = append(cases, onMesh(mesh2x3,
		pfw("py fwd mk[1,0] kn[0,-1]", v2, mm, ms("[1, 0]", "[0, -1]"), ms("[1, 0]", "[0, -1]"), ms("[1, -1]"), ms("0")),
		pfw("py fwd row mk[1,-1]", v2, mm, ms("[1, -1]", "[-1, -1]"), ms("[1, -1]", "[-1, -1]"), ms("[1, -1]"), ms("")),
		pfw("py fwd row mk[1,-1] again", v2, mm, ms("[1, -1]", "[-1, -1]"), ms("[1, -1]", "[-1, -1]"), ms("[1, -1]"), ms("")),
		pfw("py fwd n parallel", v2, mm, ms("[-1, -1]", "[-1, 0]"), ms("[-1, -1]", "[-1, 0]"), ms("[-1, 0]"), ms("")),
		pfw("py fwd k from X", v2, mm, ms("[1, 0]", "[-1, -1]"), ms("[1, 0]", "[0, -1]"), ms("[1, -1]"), ms("0")),
		pfw("py fwd k from Y", v2, mm, ms("[-1, -1]", "[1, 0]"), ms("[-1, 1]", "[1, 0]"), ms("[-1, 0]"), ms("1")),
		pfw("py fwd batch", v4, mm, ms("[0, 1, -1, -1]", "[-1, -1]"), ms("[0, 1, -1, -1]", "[-1, -1]"), ms("[0, 1, -1, -1]"), ms("")),
		pfw("py fwd batch and k", v4, mm, ms("[1, -1, -1, 0]", "[-1, -1]"), ms("[1, -1, -1, 0]", "[0, -1]"), ms("[1, -1, -1, -1]"), ms("0")),
		pfw("py fwd trans_x", v4tx, mmTX, ms("[1, -1, -1, 0]", "[-1, -1]"), ms("[1, -1, -1, 0]", "[-1, -1]"), ms("[1, -1, 0, -1]"), ms("")),
		pfw("py fwd trans_y", v4ty, mmTY, ms("[-1, -1, -1, -1]", "[1, 0]"), ms("[-1, -1, -1, 0]", "[1, 0]"), ms("[-1, -1, -1, 1]"), ms("0")),
		pfw("py fwd trans both, mesh dim 1 on m and n", v4txy, mmTXY, ms("[-1, -1, 0, 1]", "[1, 0]"), ms("[-1, -1, 0, 1]", "[-1, 0]"), ms("[-1, -1, 1, -1]"), ms("0")),
		perr("py fwd trans both, k on two mesh dims", v4txy, mmTXY, true, ms("[-1, -1, 1, -1]", "[-1, 0]"), `dim "k" is sharded along two mesh dims, 1 and 0`),
	)...)
	// test_matmul_rule.py, TestMatmulSPMDRule.test_matmul_infer_backward.
	cases = append(cases, onMesh(mesh2x3,
		pbw("py bwd mn[1,0]", v2, mm, ms("[1, 0]"), ms("[1, -1]", "[-1, 0]"), ms("[1, 0]")),
		pbw("py bwd broadcast x", "var x : f32[1, 64, 32]\nvar y : f32[512, 48, 32, 48]\nvar o : f32[512, 48, 64, 48]", mm,
			ms("[1, 0, -1, -1]"), ms("[-1, -1, -1]", "[1, 0, -1, -1]"), ms("[1, 0, -1, -1]")),
		pbw("py bwd broadcast y", "var x : f32[512, 48, 64, 32]\nvar y : f32[512, 1, 32, 48]\nvar o : f32[512, 48, 64, 48]", mm,
			ms("[-1, 0, -1, 1]"), ms("[-1, 0, -1, -1]", "[-1, -1, -1, 1]"), ms("[-1, 0, -1, 1]")),
		pbw("py bwd trans both", "var x : f32[512, 48, 32, 64]\nvar y : f32[512, 1, 48, 32]\nvar o : f32[512, 48, 64, 48]", mmTXY,
			ms("[-1, -1, 0, 1]"), ms("[-1, -1, -1, 0]", "[-1, -1, 1, -1]"), ms("[-1, -1, 0, 1]")),
		perr("py bwd mesh dim 1 on two dims of out", "var x : f32[512, 48, 32, 64]\nvar y : f32[512, 1, 48, 32]\nvar o : f32[512, 48, 64, 48]", mmTXY, false,
			ms("[-1, 1, 0, 1]"), `mesh dim 1 shards dims "b" and "n"`),
	)...)
	// spmd_rule_test.cc, TEST(MatmulSPMDRule, Ctor), test1 to test11
	// (test1 to test10 are also TestMatmulShardingRule's).
	cases = append(cases, onMesh(mesh2x3,
		pfw("cc test1", v2, mm, ms("[1, -1]", "[-1, -1]"), ms("[1, -1]", "[-1, -1]"), ms("[1, -1]"), ms("")),
		pfw("cc test2", v2, mm, ms("[-1, -1]", "[-1, 0]"), ms("[-1, -1]", "[-1, 0]"), ms("[-1, 0]"), ms("")),
		pfw("cc test3", v2, mm, ms("[1, 0]", "[-1, -1]"), ms("[1, 0]", "[0, -1]"), ms("[1, -1]"), ms("0")),
		pfw("cc test4", v2, mm, ms("[-1, -1]", "[1, 0]"), ms("[-1, 1]", "[1, 0]"), ms("[-1, 0]"), ms("1")),
		pfw("cc test5", v4, mm, ms("[0, 1, -1, -1]", "[-1, -1]"), ms("[0, 1, -1, -1]", "[-1, -1]"), ms("[0, 1, -1, -1]"), ms("")),
		pfw("cc test6", v4, mm, ms("[1, -1, -1, 0]", "[-1, -1]"), ms("[1, -1, -1, 0]", "[0, -1]"), ms("[1, -1, -1, -1]"), ms("0")),
		pfw("cc test7", v4tx, mmTX, ms("[1, -1, -1, 0]", "[-1, -1]"), ms("[1, -1, -1, 0]", "[-1, -1]"), ms("[1, -1, 0, -1]"), ms("")),
		pfw("cc test8", v4ty, mmTY, ms("[-1, -1, -1, -1]", "[1, 0]"), ms("[-1, -1, -1, 0]", "[1, 0]"), ms("[-1, -1, -1, 1]"), ms("0")),
		pfw("cc test9", v4txy, mmTXY, ms("[-1, -1, 0, 1]", "[1, 0]"), ms("[-1, -1, 0, 1]", "[-1, 0]"), ms("[-1, -1, 1, -1]"), ms("0")),
		perr("cc test10", v4txy, mmTXY, true, ms("[-1, -1, 1, 0]", "[1, 0]"), `dim "k" is sharded along two mesh dims, 1 and 0`),
		pfw("cc test11", v4txy, mmTXY, ms("[-1, -1, 0, 1]", "[1, 0]"), ms("[-1, -1, 0, 1]", "[-1, 0]"), ms("[-1, -1, 1, -1]"), ms("0")),
	)...)
	// spmd_rule_test.cc, TEST(MatmulSPMDRuleInferBackward, Ctor): Out
	// [-1, -1, 1, -1] partial on 0. Paddle returns Out with its partial;
	// deviation: Backward takes mappings only and gives no partial (the
	// dims agree).
	cases = append(cases, onMesh(mesh2x3,
		pbw("cc infer backward", "var x : f32[512, 1024, 64, 32]\nvar y : f32[512, 1, 32, 48]\nvar o : f32[512, 1024, 64, 48]", mm,
			ms("[-1, -1, 1, -1]"), ms("[-1, -1, 1, -1]", "[-1, -1, -1, -1]"), ms("[-1, -1, 1, -1]")),
	)...)
	runShardCases(t, cases)
}

func TestPaddleElementwiseRule(t *testing.T) {
	v2 := "var x : f32[64, 36]\nvar y : f32[64, 36]\nvar o : f32[64, 36]"
	vb := "var x : f32[64, 36, 12]\nvar y : f32[12]\nvar o : f32[64, 36, 12]"
	vb1 := "var x : f32[64, 36, 12]\nvar y : f32[1, 12]\nvar o : f32[64, 36, 12]"
	v4 := "var x : f32[64, 1, 1, 12]\nvar y : f32[64, 32, 12]\nvar o : f32[64, 64, 32, 12]"
	v3 := "var x : f32[96, 24, 48]\nvar y : f32[96, 24, 48]\nvar o : f32[96, 24, 48]"
	v3b := "var x : f32[96, 24, 48]\nvar y : f32[48]\nvar o : f32[96, 24, 48]"
	v4m := "var x : f32[96, 1, 1, 48]\nvar y : f32[96, 24, 48]\nvar o : f32[96, 96, 24, 48]"
	relu := "var x : f32[64, 36]\nvar o : f32[64, 36]"
	add := "op 1 elementwise_add(X: x, Y: y) -> (Out: o)"
	gt := "op 1 greater_than(X: x, Y: y) -> (Out: o)"
	lt := "op 1 less_than(X: x, Y: y) -> (Out: o)"
	cmp := "var x : f32[64, 36]\nvar y : f32[64, 36]\nvar o : bool[64, 36]"
	cmpb := "var x : f32[1, 64]\nvar y : f32[64]\nvar o : bool[1, 64]"
	var cases []shardCase
	// test_elementwise_rule.py, TestElementwiseSPMDRule.test_single_mesh_dim.
	cases = append(cases, onMesh(mesh4,
		pfw("single [0,-1] [-1,-1]", v2, add, ms("[0, -1]", "[-1, -1]"), ms("[0, -1]", "[0, -1]"), ms("[0, -1]"), ms("")),
		pfw("single [0,-1] [-1,0]", v2, add, ms("[0, -1]", "[-1, 0]"), ms("[0, -1]", "[0, -1]"), ms("[0, -1]"), ms("")),
		pfw("single replicated", v2, add, ms("[-1, -1]", "[-1, -1]"), ms("[-1, -1]", "[-1, -1]"), ms("[-1, -1]"), ms("")),
		pfw("single relu", relu, "op 1 relu(X: x) -> (Out: o)", ms("[-1, 0]"), ms("[-1, 0]"), ms("[-1, 0]"), ms("")),
	)...)
	// test_single_mesh_dim_broadcast.
	cases = append(cases, onMesh(mesh4,
		pfw("bcast [0,-1,-1] [-1]", vb, add, ms("[0, -1, -1]", "[-1]"), ms("[0, -1, -1]", "[-1]"), ms("[0, -1, -1]"), ms("")),
		pfw("bcast [-1,0,-1] [-1]", vb, add, ms("[-1, 0, -1]", "[-1]"), ms("[-1, 0, -1]", "[-1]"), ms("[-1, 0, -1]"), ms("")),
		pfw("bcast [-1,-1,0] [-1]", vb, add, ms("[-1, -1, 0]", "[-1]"), ms("[-1, -1, 0]", "[0]"), ms("[-1, -1, 0]"), ms("")),
		pfw("bcast [-1,-1,-1] [0]", vb, add, ms("[-1, -1, -1]", "[0]"), ms("[-1, -1, 0]", "[0]"), ms("[-1, -1, 0]"), ms("")),
		pfw("bcast y [1, 12]", vb1, add, ms("[-1, 0, -1]", "[-1, -1]"), ms("[-1, 0, -1]", "[-1, -1]"), ms("[-1, 0, -1]"), ms("")),
		pfw("bcast x [64,1,1,12] sharded", v4, add, ms("[0, -1, -1, -1]", "[-1, -1, -1]"), ms("[0, -1, -1, -1]", "[-1, -1, -1]"), ms("[0, -1, -1, -1]"), ms("")),
		pfw("bcast y [64,32,12] sharded", v4, add, ms("[-1, -1, -1, -1]", "[0, -1, -1]"), ms("[-1, -1, -1, -1]", "[0, -1, -1]"), ms("[-1, 0, -1, -1]"), ms("")),
	)...)
	// test_multi_mesh_dim and test_multi_mesh_dim_broadcast.
	cases = append(cases, onMesh(mesh2x3,
		pfw("multi [0,1,-1] [-1,-1,-1]", v3, add, ms("[0, 1, -1]", "[-1, -1, -1]"), ms("[0, 1, -1]", "[0, 1, -1]"), ms("[0, 1, -1]"), ms("")),
		pfw("multi [0,-1,-1] [-1,1,0]", v3, add, ms("[0, -1, -1]", "[-1, 1, 0]"), ms("[0, 1, -1]", "[0, 1, -1]"), ms("[0, 1, -1]"), ms("")),
		pfw("multi bcast [0,-1,-1] [1]", v3b, add, ms("[0, -1, -1]", "[1]"), ms("[0, -1, 1]", "[1]"), ms("[0, -1, 1]"), ms("")),
		pfw("multi bcast [0,1,-1] [0]", v3b, add, ms("[0, 1, -1]", "[0]"), ms("[0, 1, -1]", "[-1]"), ms("[0, 1, -1]"), ms("")),
		pfw("multi bcast 4-d", v4m, add, ms("[-1, -1, -1, 1]", "[0, -1, 1]"), ms("[-1, -1, -1, 1]", "[0, -1, 1]"), ms("[-1, 0, -1, 1]"), ms("")),
	)...)
	// test_backward_single_mesh_dim and test_backward_single_mesh_dim_broadcast.
	cases = append(cases, onMesh(mesh4,
		pbw("bwd [0,-1]", v2, add, ms("[0, -1]"), ms("[0, -1]", "[0, -1]"), ms("[0, -1]")),
		pbw("bwd replicated", v2, add, ms("[-1, -1]"), ms("[-1, -1]", "[-1, -1]"), ms("[-1, -1]")),
		pbw("bwd relu", relu, "op 1 relu(X: x) -> (Out: o)", ms("[-1, 0]"), ms("[-1, 0]"), ms("[-1, 0]")),
		pbw("bwd bcast [0,-1,-1]", vb, add, ms("[0, -1, -1]"), ms("[0, -1, -1]", "[-1]"), ms("[0, -1, -1]")),
		pbw("bwd bcast [-1,0,-1]", vb, add, ms("[-1, 0, -1]"), ms("[-1, 0, -1]", "[-1]"), ms("[-1, 0, -1]")),
		pbw("bwd bcast [-1,-1,0]", vb, add, ms("[-1, -1, 0]"), ms("[-1, -1, 0]", "[0]"), ms("[-1, -1, 0]")),
		pbw("bwd bcast y [1, 12]", vb1, add, ms("[-1, 0, -1]"), ms("[-1, 0, -1]", "[-1, -1]"), ms("[-1, 0, -1]")),
		pbw("bwd bcast 4-d [0,-1,-1,-1]", v4, add, ms("[0, -1, -1, -1]"), ms("[0, -1, -1, -1]", "[-1, -1, -1]"), ms("[0, -1, -1, -1]")),
		pbw("bwd bcast 4-d [-1,0,-1,-1]", v4, add, ms("[-1, 0, -1, -1]"), ms("[-1, -1, -1, -1]", "[0, -1, -1]"), ms("[-1, 0, -1, -1]")),
	)...)
	// test_backward_multi_mesh_dim and test_backward_multi_mesh_dim_broadcast.
	cases = append(cases, onMesh(mesh2x3,
		pbw("bwd multi", v3, add, ms("[0, 1, -1]"), ms("[0, 1, -1]", "[0, 1, -1]"), ms("[0, 1, -1]")),
		pbw("bwd multi bcast [0,-1,1]", v3b, add, ms("[0, -1, 1]"), ms("[0, -1, 1]", "[1]"), ms("[0, -1, 1]")),
		pbw("bwd multi bcast [0,1,-1]", v3b, add, ms("[0, 1, -1]"), ms("[0, 1, -1]", "[-1]"), ms("[0, 1, -1]")),
		pbw("bwd multi bcast 4-d", v4m, add, ms("[-1, 0, -1, 1]"), ms("[-1, -1, -1, 1]", "[0, -1, 1]"), ms("[-1, 0, -1, 1]")),
	)...)
	// test_single_mesh_dim_greater_than, test_single_mesh_dim_broadcast_greater_than
	// and the same for less_than.
	cases = append(cases, onMesh(mesh4,
		pfw("greater_than [0,-1] [-1,-1]", cmp, gt, ms("[0, -1]", "[-1, -1]"), ms("[0, -1]", "[0, -1]"), ms("[0, -1]"), ms("")),
		pfw("greater_than [0,-1] [-1,0]", cmp, gt, ms("[0, -1]", "[-1, 0]"), ms("[0, -1]", "[0, -1]"), ms("[0, -1]"), ms("")),
		pfw("greater_than bcast", cmpb, gt, ms("[-1, 0]", "[-1]"), ms("[-1, 0]", "[0]"), ms("[-1, 0]"), ms("")),
		pfw("less_than [0,-1] [-1,-1]", cmp, lt, ms("[0, -1]", "[-1, -1]"), ms("[0, -1]", "[0, -1]"), ms("[0, -1]"), ms("")),
		pfw("less_than [0,-1] [-1,0]", cmp, lt, ms("[0, -1]", "[-1, 0]"), ms("[0, -1]", "[0, -1]"), ms("[0, -1]"), ms("")),
		pfw("less_than bcast", cmpb, lt, ms("[-1, 0]", "[-1]"), ms("[-1, 0]", "[0]"), ms("[-1, 0]"), ms("")),
	)...)
	// The merge's order (Paddle's ShardingMergeForTensors, no test of its
	// own): mesh dim 0 is on b in X first, then on a from Y; b keeps it.
	cases = append(cases, onMesh(mesh2x3,
		pfw("merge order", v2, add, ms("[-1, 0]", "[0, -1]"), ms("[-1, 0]", "[-1, 0]"), ms("[-1, 0]"), ms("")),
	)...)
	runShardCases(t, cases)
}

func TestPaddleUnaryRules(t *testing.T) {
	v := "var x : f32[16, 16, 16]\nvar o : f32[16, 16, 16]"
	var cases []shardCase
	// spmd_rule_test.cc, TEST(ElementwiseUnaryLike, Ctor): the forward
	// rules of the ops here (full_like, stanh and logit have no op here;
	// the grad rules it also checks are not ported).
	for _, op := range []string{
		"cast(X: x) -> (Out: o) {out_dtype = 5}",
		"pow(X: x) -> (Out: o) {factor = 2}",
		"scale(X: x) -> (Out: o) {scale = 1, bias = 1}",
		"round(X: x) -> (Out: o)",
		"mish(X: x) -> (Out: o)",
		"elu(X: x) -> (Out: o) {alpha = 1}",
		"selu(X: x) -> (Out: o)",
		"celu(X: x) -> (Out: o) {alpha = 1}",
		"softplus(X: x) -> (Out: o)",
		"softshrink(X: x) -> (Out: o)",
		"thresholded_relu(X: x) -> (Out: o)",
	} {
		cases = append(cases, onMesh(mesh2x2,
			pfw("cc "+op[:strings.IndexByte(op, '(')], v, "op 1 "+op, ms("[0, -1, 1]"), ms("[0, -1, 1]"), ms("[0, -1, 1]"), ms("")))...)
	}
	// spmd_rule_test.cc, TEST(Dropout, Ctor): forward (Seed absent; the
	// grad rule is not ported).
	cases = append(cases, onMesh(mesh2x2,
		pfw("cc dropout", "var x : f32[4, 6, 8]\nvar o : f32[4, 6, 8]\nvar mk : u8[4, 6, 8]", "op 1 dropout(X: x) -> (Out: o, Mask: mk)",
			ms("[0, -1, -1]"), ms("[0, -1, -1]"), ms("[0, -1, -1]", "[0, -1, -1]"), ms("", "")),
	)...)
	// test_gelu_rule.py, TestGeluSPMDRule.test_infer_forward and
	// test_infer_backward.
	g := "var x : f32[64, 36]\nvar o : f32[64, 36]"
	cases = append(cases, onMesh(mesh2x2,
		pfw("gelu fwd", g, "op 1 gelu(X: x) -> (Out: o)", ms("[-1, 0]"), ms("[-1, 0]"), ms("[-1, 0]"), ms("")),
		pbw("gelu bwd", g, "op 1 gelu(X: x) -> (Out: o)", ms("[-1, 0]"), ms("[-1, 0]"), ms("[-1, 0]")),
	)...)
	runShardCases(t, cases)
}

func TestPaddleReductionRule(t *testing.T) {
	x2 := "var x : f32[64, 32]\n"
	x3 := "var x : f32[96, 24, 48]\n"
	rm := func(dims string, keep bool) string {
		return fmt.Sprintf("op 1 reduce_max(X: x) -> (Out: o) {dim = %s, keep_dim = %v}", dims, keep)
	}
	var cases []shardCase
	// test_reduction_rule.py, TestReductionSPMDRule (kernel "max")
	// .test_single_mesh_dim.
	cases = append(cases, onMesh(mesh4,
		pfw("dim 0", x2+"var o : f32[32]", rm("[0]", false), ms("[0, -1]"), ms("[0, -1]"), ms("[-1]"), ms("0:max")),
		pfw("dim 0 keep", x2+"var o : f32[1, 32]", rm("[0]", true), ms("[0, -1]"), ms("[0, -1]"), ms("[-1, -1]"), ms("0:max")),
		pfw("dim 1", x2+"var o : f32[64]", rm("[1]", false), ms("[0, -1]"), ms("[0, -1]"), ms("[0]"), ms("")),
		pfw("dim 1 keep", x2+"var o : f32[64, 1]", rm("[1]", true), ms("[0, -1]"), ms("[0, -1]"), ms("[0, -1]"), ms("")),
		pfw("dims 0 1", x2+"var o : f32[]", rm("[0, 1]", false), ms("[0, -1]"), ms("[0, -1]"), ms("[]"), ms("0:max")),
		pfw("dims 0 1 keep", x2+"var o : f32[1, 1]", rm("[0, 1]", true), ms("[0, -1]"), ms("[0, -1]"), ms("[-1, -1]"), ms("0:max")),
	)...)
	// test_multi_mesh_dim.
	cases = append(cases, onMesh(mesh2x3,
		pfw("multi [0,-1,-1]", x3+"var o : f32[96]", rm("[1, 2]", false), ms("[0, -1, -1]"), ms("[0, -1, -1]"), ms("[0]"), ms("")),
		pfw("multi [-1,0,1]", x3+"var o : f32[96]", rm("[1, 2]", false), ms("[-1, 0, 1]"), ms("[-1, 0, 1]"), ms("[-1]"), ms("0:max,1:max")),
		pfw("multi [1,-1,-1]", x3+"var o : f32[96]", rm("[1, 2]", false), ms("[1, -1, -1]"), ms("[1, -1, -1]"), ms("[1]"), ms("")),
		pfw("multi [0,1,-1]", x3+"var o : f32[96]", rm("[1, 2]", false), ms("[0, 1, -1]"), ms("[0, 1, -1]"), ms("[0]"), ms("1:max")),
		pfw("multi [0,1,-1] keep", x3+"var o : f32[96, 1, 1]", rm("[1, 2]", true), ms("[0, 1, -1]"), ms("[0, 1, -1]"), ms("[0, -1, -1]"), ms("1:max")),
	)...)
	// test_backward_single_mesh_dim.
	cases = append(cases, onMesh(mesh4,
		pbw("bwd dim 0", x2+"var o : f32[32]", rm("[0]", false), ms("[-1]"), ms("[-1, -1]"), ms("[-1]")),
		pbw("bwd dim 0 keep", x2+"var o : f32[1, 32]", rm("[0]", true), ms("[-1, -1]"), ms("[-1, -1]"), ms("[-1, -1]")),
		pbw("bwd dim 1", x2+"var o : f32[64]", rm("[1]", false), ms("[0]"), ms("[0, -1]"), ms("[0]")),
		pbw("bwd dim 1 keep", x2+"var o : f32[64, 1]", rm("[1]", true), ms("[0, -1]"), ms("[0, -1]"), ms("[0, -1]")),
		pbw("bwd dims 0 1", x2+"var o : f32[]", rm("[0, 1]", false), ms("[]"), ms("[-1, -1]"), ms("[]")),
		pbw("bwd dims 0 1 keep", x2+"var o : f32[1, 1]", rm("[0, 1]", true), ms("[-1, -1]"), ms("[-1, -1]"), ms("[-1, -1]")),
	)...)
	// test_backward_multi_mesh_dim, and test_backward_multi_mesh_dim_parital
	// (Out partial on 1, which a Backward does not take: Paddle's input
	// comes out non-partial, as here).
	cases = append(cases, onMesh(mesh2x3,
		pbw("bwd multi [0]", x3+"var o : f32[96]", rm("[1, 2]", false), ms("[0]"), ms("[0, -1, -1]"), ms("[0]")),
		pbw("bwd multi [-1]", x3+"var o : f32[96]", rm("[1, 2]", false), ms("[-1]"), ms("[-1, -1, -1]"), ms("[-1]")),
		pbw("bwd multi [1]", x3+"var o : f32[96]", rm("[1, 2]", false), ms("[1]"), ms("[1, -1, -1]"), ms("[1]")),
		pbw("bwd multi keep", x3+"var o : f32[96, 1, 1]", rm("[1, 2]", true), ms("[0, -1, -1]"), ms("[0, -1, -1]"), ms("[0, -1, -1]")),
		pbw("bwd multi partial", x3+"var o : f32[96, 1, 1]", rm("[1, 2]", true), ms("[0, -1, -1]"), ms("[0, -1, -1]"), ms("[0, -1, -1]")),
	)...)
	// TestSquaredL2NormSPMDRule reruns the above for squared_l2_norm, which
	// has no op here.
	//
	// spmd_rule_test.cc, TEST(ReduceMaxRule, Ctor) and TEST(ReduceMinRule,
	// Ctor), forward (their grad rules are not ported; reduce_all, of
	// TEST(ReduceAllRule, Ctor), has no op here).
	x := "var x : f32[4, 6, 8]\nvar o : f32[4, 8]"
	cases = append(cases, onMesh([]int{2},
		pfw("cc reduce_max", x, "op 1 reduce_max(X: x) -> (Out: o) {dim = [1]}", ms("[-1, 0, -1]"), ms("[-1, 0, -1]"), ms("[-1, -1]"), ms("0:max")),
		pfw("cc reduce_min", x, "op 1 reduce_min(X: x) -> (Out: o) {dim = [1]}", ms("[-1, 0, -1]"), ms("[-1, 0, -1]"), ms("[-1, -1]"), ms("0:min")),
	)...)
	// spmd_rule_test.cc, TEST(MeanAll, Ctor), and test_mean_all_rule.py,
	// TestMeanAllSPMDRule: forward; their "backward" is MeanAllGradInferSpmd,
	// whose X mapping is the reverse's.
	m := "var x : f32[4, 8]\nvar o : f32[]"
	cases = append(cases, onMesh(mesh2x2,
		pfw("cc mean", m, "op 1 mean(X: x) -> (Out: o)", ms("[0, -1]"), ms("[0, -1]"), ms("[]"), ms("0:avg")),
		pfw("py mean", m, "op 1 mean(X: x) -> (Out: o)", ms("[0, -1]"), ms("[0, -1]"), ms("[]"), ms("0:avg")),
		pbw("py mean bwd", m, "op 1 mean(X: x) -> (Out: o)", ms("[]"), ms("[-1, -1]"), ms("[]")),
	)...)
	runShardCases(t, cases)
}

func TestPaddleSoftmaxRule(t *testing.T) {
	v := "var x : f32[8, 16, 48]\nvar o : f32[8, 16, 48]"
	sm := func(axis int) string { return fmt.Sprintf("op 1 softmax(X: x) -> (Out: o) {axis = %d}", axis) }
	// test_softmax_rule.py, TestEmbeddingSPMDRule (sic).test_softmax_infer_forward.
	runShardCases(t, onMesh(mesh2x4,
		pfw("batch axis I", v, sm(-1), ms("[1, -1, -1]"), ms("[1, -1, -1]"), ms("[1, -1, -1]"), ms("")),
		pfw("batch axis II", v, sm(-1), ms("[-1, 1, -1]"), ms("[-1, 1, -1]"), ms("[-1, 1, -1]"), ms("")),
		pfw("softmax axis", v, sm(-1), ms("[1, -1, 0]"), ms("[1, -1, -1]"), ms("[1, -1, -1]"), ms("")),
		pfw("axis 1", v, sm(1), ms("[-1, 1, 0]"), ms("[-1, -1, 0]"), ms("[-1, -1, 0]"), ms("")),
		pfw("axis -2", v, sm(-2), ms("[-1, 1, 0]"), ms("[-1, -1, 0]"), ms("[-1, -1, 0]"), ms("")),
	))
	// The same file at a later commit (2dab1c54, TestSoftmaxSPMDRule):
	// the same forward rows, and test_softmax_infer_backward.
	runShardCases(t, onMesh(mesh2x4,
		pbw("bwd batch axis I", v, sm(-1), ms("[1, -1, -1]"), ms("[1, -1, -1]"), ms("[1, -1, -1]")),
		pbw("bwd batch axis II", v, sm(-1), ms("[-1, 1, -1]"), ms("[-1, 1, -1]"), ms("[-1, 1, -1]")),
		pbw("bwd softmax axis", v, sm(-1), ms("[1, -1, 0]"), ms("[1, -1, -1]"), ms("[1, -1, -1]")),
		pbw("bwd axis 1", v, sm(1), ms("[-1, 1, 0]"), ms("[-1, -1, 0]"), ms("[-1, -1, 0]")),
		pbw("bwd axis -2", v, sm(-2), ms("[-1, 1, 0]"), ms("[-1, -1, 0]"), ms("[-1, -1, 0]")),
	))
}

func TestPaddleTransposeRule(t *testing.T) {
	v2 := "var x : f32[64, 36]\nvar o : f32[36, 64]"
	v2s := "var x : f32[64, 36]\nvar o : f32[64, 36]"
	v4 := "var x : f32[64, 48, 36, 24]\nvar o : f32[64, 36, 24, 48]"
	v4n := "var x : f32[64, 48, 36, 24]\nvar o : f32[24, 64, 36, 48]"
	tr := func(perm string) string { return "op 1 transpose2(X: x) -> (Out: o) {axis = " + perm + "}" }
	var cases []shardCase
	// test_transpose_rule.py, TestTransposeSPMDRule.test_single_mesh_dim.
	cases = append(cases, onMesh(mesh4,
		pfw("perm [1,0]", v2, tr("[1, 0]"), ms("[0, -1]"), ms("[0, -1]"), ms("[-1, 0]"), ms("")),
		pfw("perm [0,1]", v2s, tr("[0, 1]"), ms("[0, -1]"), ms("[0, -1]"), ms("[0, -1]"), ms("")),
		pfw("perm [0,2,3,1]", v4, tr("[0, 2, 3, 1]"), ms("[-1, -1, 0, -1]"), ms("[-1, -1, 0, -1]"), ms("[-1, 0, -1, -1]"), ms("")),
	)...)
	// test_multi_mesh_dim.
	cases = append(cases, onMesh(mesh2x3,
		pfw("multi [0,2,3,1]", v4, tr("[0, 2, 3, 1]"), ms("[-1, 0, 1, -1]"), ms("[-1, 0, 1, -1]"), ms("[-1, 1, -1, 0]"), ms("")),
		pfw("multi replicated", v4, tr("[0, 2, 3, 1]"), ms("[-1, -1, -1, -1]"), ms("[-1, -1, -1, -1]"), ms("[-1, -1, -1, -1]"), ms("")),
		pfw("multi negative perm", v4n, tr("[-1, 0, -2, 1]"), ms("[-1, -1, 0, 1]"), ms("[-1, -1, 0, 1]"), ms("[1, -1, 0, -1]"), ms("")),
	)...)
	// test_backward_single_mesh_dim.
	cases = append(cases, onMesh(mesh4,
		pbw("bwd perm [1,0]", v2, tr("[1, 0]"), ms("[-1, 0]"), ms("[0, -1]"), ms("[-1, 0]")),
		pbw("bwd perm [0,1]", v2s, tr("[0, 1]"), ms("[0, -1]"), ms("[0, -1]"), ms("[0, -1]")),
		pbw("bwd perm [0,2,3,1]", v4, tr("[0, 2, 3, 1]"), ms("[-1, 0, -1, -1]"), ms("[-1, -1, 0, -1]"), ms("[-1, 0, -1, -1]")),
	)...)
	// test_backward_multi_mesh_dim.
	cases = append(cases, onMesh(mesh2x3,
		pbw("bwd multi", v4, tr("[0, 2, 3, 1]"), ms("[-1, 1, -1, 0]"), ms("[-1, 0, 1, -1]"), ms("[-1, 1, -1, 0]")),
		pbw("bwd multi replicated", v4, tr("[0, 2, 3, 1]"), ms("[-1, -1, -1, -1]"), ms("[-1, -1, -1, -1]"), ms("[-1, -1, -1, -1]")),
		pbw("bwd multi negative perm", v4n, tr("[-1, 0, -2, 1]"), ms("[1, -1, 0, -1]"), ms("[-1, -1, 0, 1]"), ms("[1, -1, 0, -1]")),
	)...)
	// spmd_rule_test.cc, TEST(Transpose, Ctor): forward (its grad rule is
	// not ported).
	cases = append(cases, onMesh(mesh2x2,
		pfw("cc perm [1,2,-3]", "var x : f32[6, 8, 10]\nvar o : f32[8, 10, 6]", tr("[1, 2, -3]"), ms("[0, -1, 1]"), ms("[0, -1, 1]"), ms("[-1, 1, 0]"), ms("")),
	)...)
	runShardCases(t, cases)
}

func TestPaddleSplitRule(t *testing.T) {
	x3 := "var x : f32[64, 32, 48]\n"
	x4 := "var x : f32[96, 32, 48, 24]\n"
	two := x3 + "var a : f32[64, 16, 48]\nvar b : f32[64, 16, 48]"
	three := x3 + "var a : f32[64, 32, 15]\nvar b : f32[64, 32, 16]\nvar c : f32[64, 32, 17]"
	num2 := func(axis int) string {
		return fmt.Sprintf("op 1 split(X: x) -> (Out: [a, b]) {axis = %d, num = 2}", axis)
	}
	secs := "op 1 split(X: x) -> (Out: [a, b, c]) {axis = 2, sections = [15, 16, 17]}"
	last3 := x4 + "var a : f32[96, 32, 48, 8]\nvar b : f32[96, 32, 48, 8]\nvar c : f32[96, 32, 48, 8]"
	num3 := "op 1 split(X: x) -> (Out: [a, b, c]) {axis = -1, num = 3}"
	first3 := x4 + "var a : f32[32, 32, 48, 24]\nvar b : f32[32, 32, 48, 24]\nvar c : f32[32, 32, 48, 24]"
	secs0 := "op 1 split(X: x) -> (Out: [a, b, c]) {axis = 0, sections = [32, 32, 32]}"
	third3 := x4 + "var a : f32[96, 32, 16, 24]\nvar b : f32[96, 32, 16, 24]\nvar c : f32[96, 32, 16, 24]"
	secs2 := "op 1 split(X: x) -> (Out: [a, b, c]) {axis = 2, sections = [16, 16, 16]}"
	var cases []shardCase
	// test_split_rule.py, TestReductionSPMDRule (sic).test_single_mesh_dim.
	cases = append(cases, onMesh(mesh4,
		pfw("num 2 axis 1", two, num2(1), ms("[0, -1, -1]"), ms("[0, -1, -1]"), ms("[0, -1, -1]", "[0, -1, -1]"), ms("", "")),
		pfw("sections axis 2", three, secs, ms("[0, -1, -1]"), ms("[0, -1, -1]"), ms("[0, -1, -1]", "[0, -1, -1]", "[0, -1, -1]"), ms("", "", "")),
		pfw("sections axis 2 sharded", three, secs, ms("[-1, -1, 0]"), ms("[-1, -1, -1]"), ms("[-1, -1, -1]", "[-1, -1, -1]", "[-1, -1, -1]"), ms("", "", "")),
		pfw("num 2 axis -2", two, num2(-2), ms("[0, -1, -1]"), ms("[0, -1, -1]"), ms("[0, -1, -1]", "[0, -1, -1]"), ms("", "")),
	)...)
	// test_multi_mesh_dim.
	cases = append(cases, onMesh(mesh2x3,
		pfw("multi num 3 axis -1", last3, num3, ms("[0, 1, -1, -1]"), ms("[0, 1, -1, -1]"), ms("[0, 1, -1, -1]", "[0, 1, -1, -1]", "[0, 1, -1, -1]"), ms("", "", "")),
		pfw("multi sections axis 0", first3, secs0, ms("[0, 1, -1, -1]"), ms("[-1, 1, -1, -1]"), ms("[-1, 1, -1, -1]", "[-1, 1, -1, -1]", "[-1, 1, -1, -1]"), ms("", "", "")),
	)...)
	// test_backward_single_mesh_dim.
	cases = append(cases, onMesh(mesh4,
		pbw("bwd num 2 axis 1", two, num2(1), ms("[0, -1, -1]", "[0, -1, -1]"), ms("[0, -1, -1]"), ms("[0, -1, -1]", "[0, -1, -1]")),
		pbw("bwd sections", three, secs, ms("[0, -1, -1]", "[0, -1, -1]", "[0, -1, -1]"), ms("[0, -1, -1]"), ms("[0, -1, -1]", "[0, -1, -1]", "[0, -1, -1]")),
		pbw("bwd sections replicated", three, secs, ms("[-1, -1, -1]", "[-1, -1, -1]", "[-1, -1, -1]"), ms("[-1, -1, -1]"), ms("[-1, -1, -1]", "[-1, -1, -1]", "[-1, -1, -1]")),
		pbw("bwd num 2 axis -2", two, num2(-2), ms("[0, -1, -1]", "[0, -1, -1]"), ms("[0, -1, -1]"), ms("[0, -1, -1]", "[0, -1, -1]")),
		pbw("bwd num 2 axis -2 sharded", two, num2(-2), ms("[-1, 0, -1]", "[-1, -1, -1]"), ms("[-1, -1, -1]"), ms("[-1, -1, -1]", "[-1, -1, -1]")),
	)...)
	// test_backward_multi_mesh_dim.
	cases = append(cases, onMesh(mesh2x3,
		pbw("bwd multi num 3", last3, num3, ms("[0, 1, -1, -1]", "[0, 1, -1, -1]", "[0, 1, -1, -1]"), ms("[0, 1, -1, -1]"), ms("[0, 1, -1, -1]", "[0, 1, -1, -1]", "[0, 1, -1, -1]")),
		pbw("bwd multi sections axis 0", first3, secs0, ms("[-1, 1, -1, -1]", "[-1, 1, -1, -1]", "[-1, 1, -1, -1]"), ms("[-1, 1, -1, -1]"), ms("[-1, 1, -1, -1]", "[-1, 1, -1, -1]", "[-1, 1, -1, -1]")),
		// Mesh dim 1 on the split axis of the first output and on dim 1 of
		// the second: the split axis, merged first, keeps it, and is then
		// replicated.
		pbw("bwd multi sections axis 2", third3, secs2, ms("[0, -1, 1, -1]", "[-1, 1, -1, -1]", "[-1, -1, -1, -1]"), ms("[0, -1, -1, -1]"), ms("[0, -1, -1, -1]", "[0, -1, -1, -1]", "[0, -1, -1, -1]")),
	)...)
	runShardCases(t, cases)
}

func TestPaddleConcatRule(t *testing.T) {
	v := "var a : f32[16, 16, 16]\nvar b : f32[4, 16, 16]\nvar c : f32[2, 16, 16]\n"
	cat := func(axis int) string { return fmt.Sprintf("op 1 concat(X: [a, b, c]) -> (Out: o) {axis = %d}", axis) }
	in := ms("[-1, 0, 1]", "[-1, 1, 0]", "[-1, -1, 0]")
	var cases []shardCase
	// test_concat_rule.py, TestConcatSPMDRule.test_infer_forward and
	// test_infer_backward (its Out shape [4, 16, 16] is made [22, 16, 16]).
	cases = append(cases, onMesh(mesh2x2,
		pfw("py fwd axis 0", v+"var o : f32[22, 16, 16]", cat(0), in, ms("[-1, 1, 0]", "[-1, 1, 0]", "[-1, 1, 0]"), ms("[-1, 1, 0]"), ms("")),
		pbw("py bwd axis 0", v+"var o : f32[22, 16, 16]", cat(0), ms("[-1, 1, 0]"), ms("[-1, 1, 0]", "[-1, 1, 0]", "[-1, 1, 0]"), ms("[-1, 1, 0]")),
	)...)
	// spmd_rule_test.cc, TEST(ConcatRule, Ctor): test 1 and its reverse
	// (its grad rule is not ported), test 2 along axis 1 (Paddle's shapes,
	// which differ on dim 0: the cost reads them), test 3 of 1-D inputs.
	cases = append(cases, onMesh(mesh2x2,
		pfw("cc test1", v+"var o : f32[22, 16, 16]", cat(0), in, ms("[-1, 1, 0]", "[-1, 1, 0]", "[-1, 1, 0]"), ms("[-1, 1, 0]"), ms("")),
		pbw("cc test1 reverse", v+"var o : f32[22, 16, 16]", cat(0), ms("[-1, 1, 0]"), ms("[-1, 1, 0]", "[-1, 1, 0]", "[-1, 1, 0]"), ms("[-1, 1, 0]")),
		pfw("cc test2 axis 1", v+"var o : f32[16, 48, 16]", cat(1), in, ms("[1, -1, 0]", "[1, -1, 0]", "[1, -1, 0]"), ms("[1, -1, 0]"), ms("")),
		pfw("cc test3 1-d", "var a : f32[16]\nvar b : f32[32]\nvar c : f32[64]\nvar o : f32[112]", cat(0),
			ms("[0]", "[1]", "[-1]"), ms("[-1]", "[-1]", "[-1]"), ms("[-1]"), ms("")),
	)...)
	runShardCases(t, cases)
}

func TestPaddleSliceRule(t *testing.T) {
	x := "var x : f32[8, 8, 16, 16]\n"
	sl := func(axes, starts, ends string) string {
		return "op 1 slice(Input: x) -> (Out: o) {axes = " + axes + ", starts = " + starts + ", ends = " + ends + ", infer_flags = [0]}"
	}
	last := sl("[-1]", "[4]", "[8]")
	lastM1 := sl("[-1]", "[4]", "[-1]")
	mid := sl("[1, 2]", "[4, 4]", "[-1, 32]")
	all := sl("[0, 1, 2, 3]", "[0, 0, 4, 4]", "[4, 4, -1, 32]")
	// test_slice_rule.py, TestSliceSPMDRule.test_slice_infer_forward and
	// test_slice_infer_backward. Its decrease_axis [0] is left out: axis 0
	// is not sliced, and the rule Paddle's test runs keeps every dim in
	// Out (its outputs are 4-D).
	runShardCases(t, onMesh(mesh2x4,
		pfw("axes [-1]", x+"var o : f32[8, 8, 16, 4]", last, ms("[-1, 0, 1, -1]"), ms("[-1, 0, 1, -1]"), ms("[-1, 0, 1, -1]"), ms("")),
		pfw("axes [-1] sharded", x+"var o : f32[8, 8, 16, 11]", lastM1, ms("[-1, -1, 1, 0]"), ms("[-1, -1, 1, -1]"), ms("[-1, -1, 1, -1]"), ms("")),
		pfw("axes [1,2]", x+"var o : f32[8, 3, 12, 16]", mid, ms("[0, -1, -1, 1]"), ms("[0, -1, -1, 1]"), ms("[0, -1, -1, 1]"), ms("")),
		pfw("axes [1,2] sharded", x+"var o : f32[8, 3, 12, 16]", mid, ms("[-1, 1, 0, -1]"), ms("[-1, -1, -1, -1]"), ms("[-1, -1, -1, -1]"), ms("")),
		pfw("all axes", x+"var o : f32[4, 4, 11, 12]", all, ms("[0, 1, -1, -1]"), ms("[-1, -1, -1, -1]"), ms("[-1, -1, -1, -1]"), ms("")),
		pbw("bwd axes [-1]", x+"var o : f32[8, 8, 16, 4]", last, ms("[-1, -1, 0, 1]"), ms("[-1, -1, 0, -1]"), ms("[-1, -1, 0, -1]")),
		pbw("bwd axes [-1] kept", x+"var o : f32[8, 8, 16, 11]", lastM1, ms("[-1, 1, 0, -1]"), ms("[-1, 1, 0, -1]"), ms("[-1, 1, 0, -1]")),
		pbw("bwd axes [1,2] sharded", x+"var o : f32[8, 3, 12, 16]", mid, ms("[-1, 1, 0, -1]"), ms("[-1, -1, -1, -1]"), ms("[-1, -1, -1, -1]")),
		pbw("bwd axes [1,2]", x+"var o : f32[8, 3, 12, 16]", mid, ms("[0, -1, -1, 1]"), ms("[0, -1, -1, 1]"), ms("[0, -1, -1, 1]")),
		pbw("bwd all axes", x+"var o : f32[4, 4, 11, 12]", all, ms("[0, 1, -1, -1]"), ms("[-1, -1, -1, -1]"), ms("[-1, -1, -1, -1]")),
	))
}

func TestPaddleEmbeddingRule(t *testing.T) {
	v := "var w : f32[512, 768]\nvar ids : i64[4, 1024]\nvar o : f32[4, 1024, 768]"
	emb := "op 1 lookup_table_v2(W: w, Ids: ids) -> (Out: o)"
	// test_embedding_rule.py, TestEmbeddingSPMDRule.test_embedding_infer_forward
	// and test_embedding_infer_backward; W comes first here.
	runShardCases(t, onMesh(mesh2x4,
		pfw("data parallel", v, emb, ms("[-1, -1]", "[1, -1]"), ms("[-1, -1]", "[1, -1]"), ms("[1, -1, -1]"), ms("")),
		pfw("col-wise and dp", v, emb, ms("[-1, 0]", "[1, -1]"), ms("[-1, 0]", "[1, -1]"), ms("[1, -1, 0]"), ms("")),
		pfw("row-wise and dp", v, emb, ms("[0, -1]", "[1, -1]"), ms("[0, -1]", "[1, -1]"), ms("[1, -1, -1]"), ms("0")),
		// deviation: Paddle refuses a sharded vocabulary with padding_idx
		// or is_sparse (ValueError); the rule requires it replicated
		// (embeddingRule's doc).
		pfw("row-wise and padding_idx", v, "op 1 lookup_table_v2(W: w, Ids: ids) -> (Out: o) {padding_idx = 128}",
			ms("[0, -1]", "[1, -1]"), ms("[-1, -1]", "[1, -1]"), ms("[1, -1, -1]"), ms("")),
		pfw("row-wise and sparse", v, "op 1 lookup_table_v2(W: w, Ids: ids) -> (Out: o) {is_sparse = true}",
			ms("[0, -1]", "[1, -1]"), ms("[-1, -1]", "[1, -1]"), ms("[1, -1, -1]"), ms("")),
		pbw("bwd data parallel", v, emb, ms("[1, -1, -1]"), ms("[-1, -1]", "[1, -1]"), ms("[1, -1, -1]")),
		pbw("bwd col-wise and dp", v, emb, ms("[-1, 0, 1]"), ms("[-1, 1]", "[-1, 0]"), ms("[-1, 0, 1]")),
		pbw("bwd two broadcast axes", v, emb, ms("[1, 0, -1]"), ms("[-1, -1]", "[1, 0]"), ms("[1, 0, -1]")),
	))
	// spmd_rule_test.cc, TEST(EmbeddingGradInferSpmd, Ctor) tests the grad
	// rule: not ported.
}

func TestPaddleLayerNormRule(t *testing.T) {
	v := "var x : f32[64, 32, 1024]\nvar s : f32[1024]\nvar b : f32[1024]\nvar y : f32[64, 32, 1024]\nvar mu : f32[64, 32]\nvar va : f32[64, 32]"
	v1 := "var x : f32[64, 32, 1024]\nvar s : f32[32768]\nvar b : f32[32768]\nvar y : f32[64, 32, 1024]\nvar mu : f32[64]\nvar va : f32[64]"
	ln := "op 1 layer_norm(X: x, Scale: s, Bias: b) -> (Y: y, Mean: mu, Variance: va) {epsilon = 0.001, begin_norm_axis = 2}"
	ln1 := "op 1 layer_norm(X: x, Scale: s, Bias: b) -> (Y: y, Mean: mu, Variance: va) {epsilon = 0.001, begin_norm_axis = 1}"
	noBias := "op 1 layer_norm(X: x, Scale: s) -> (Y: y, Mean: mu, Variance: va) {epsilon = 0.001, begin_norm_axis = 2}"
	noScale := "op 1 layer_norm(X: x, Bias: b) -> (Y: y, Mean: mu, Variance: va) {epsilon = 0.001, begin_norm_axis = 2}"
	var cases []shardCase
	// test_layer_norm_rule.py, TestLayerNormSPMDRule.test_infer_forward.
	cases = append(cases, onMesh(mesh2x3,
		pfw("py fwd [1,-1,-1]", v, ln, ms("[1, -1, -1]", "[-1]", "[-1]"), ms("[1, -1, -1]", "[-1]", "[-1]"), ms("[1, -1, -1]", "[1, -1]", "[1, -1]"), ms("", "", "")),
		pfw("py fwd [1,0,-1]", v, ln, ms("[1, 0, -1]", "[0]", "[0]"), ms("[1, 0, -1]", "[-1]", "[-1]"), ms("[1, 0, -1]", "[1, 0]", "[1, 0]"), ms("", "", "")),
		pfw("py fwd begin_norm_axis 1", v1, ln1, ms("[0, -1, -1]", "[-1]", "[1]"), ms("[0, -1, -1]", "[-1]", "[-1]"), ms("[0, -1, -1]", "[0]", "[0]"), ms("", "", "")),
	)...)
	// test_infer_forward_without_bias: Paddle passes an empty tensor where
	// the op here has no arg.
	cases = append(cases, onMesh(mesh2x3,
		pfw("py fwd no bias", v, noBias, ms("[1, -1, -1]", "[-1]"), ms("[1, -1, -1]", "[-1]"), ms("[1, -1, -1]", "[1, -1]", "[1, -1]"), ms("", "", "")),
		pfw("py fwd no scale", v, noScale, ms("[1, 0, -1]", "[0]"), ms("[1, 0, -1]", "[-1]"), ms("[1, 0, -1]", "[1, 0]", "[1, 0]"), ms("", "", "")),
	)...)
	// test_infer_backward.
	outs := func(y, mu, va string) []string { return ms(y, mu, va) }
	cases = append(cases, onMesh(mesh2x3,
		pbw("py bwd [1,-1,-1]", v, ln, outs("[1, -1, -1]", "[1, -1]", "[1, -1]"), ms("[1, -1, -1]", "[-1]", "[-1]"), ms("[1, -1, -1]", "[1, -1]", "[1, -1]")),
		pbw("py bwd [0,-1,-1]", v, ln, outs("[0, -1, -1]", "[0, -1]", "[0, -1]"), ms("[0, -1, -1]", "[-1]", "[-1]"), ms("[0, -1, -1]", "[0, -1]", "[0, -1]")),
		pbw("py bwd mean and var", v, ln, outs("[-1, -1, -1]", "[0, -1]", "[-1, 1]"), ms("[0, 1, -1]", "[-1]", "[-1]"), ms("[0, 1, -1]", "[0, 1]", "[0, 1]")),
		pbw("py bwd [-1,1,-1]", v, ln, outs("[-1, 1, -1]", "[-1, -1]", "[-1, -1]"), ms("[-1, 1, -1]", "[-1]", "[-1]"), ms("[-1, 1, -1]", "[-1, 1]", "[-1, 1]")),
		perr("py bwd conflict", v, ln, false, outs("[1, -1, -1]", "[0, -1]", "[-1, -1]"), `dim "a" is sharded along two mesh dims, 1 and 0`),
		pbw("py bwd y and mean", v, ln, outs("[-1, 1, -1]", "[0, -1]", "[-1, -1]"), ms("[0, 1, -1]", "[-1]", "[-1]"), ms("[0, 1, -1]", "[0, 1]", "[0, 1]")),
		pbw("py bwd y only", v, ln, outs("[0, 1, -1]", "[-1, -1]", "[-1, -1]"), ms("[0, 1, -1]", "[-1]", "[-1]"), ms("[0, 1, -1]", "[0, 1]", "[0, 1]")),
		pbw("py bwd y and mean dim 1", v, ln, outs("[0, -1, -1]", "[-1, 1]", "[-1, -1]"), ms("[0, 1, -1]", "[-1]", "[-1]"), ms("[0, 1, -1]", "[0, 1]", "[0, 1]")),
	)...)
	// spmd_rule_test.cc, TEST(LayerNormSPMDRule, Ctor), test1 to test3
	// (TEST(LayerNorm, Ctor) tests the grad rule: not ported).
	cases = append(cases, onMesh(mesh2x3,
		pfw("cc test1", v, ln, ms("[1, -1, -1]", "[-1]", "[-1]"), ms("[1, -1, -1]", "[-1]", "[-1]"), ms("[1, -1, -1]", "[1, -1]", "[1, -1]"), ms("", "", "")),
		pfw("cc test2", v, ln, ms("[1, 0, -1]", "[0]", "[0]"), ms("[1, 0, -1]", "[-1]", "[-1]"), ms("[1, 0, -1]", "[1, 0]", "[1, 0]"), ms("", "", "")),
		pfw("cc test3", v1, ln1, ms("[0, -1, -1]", "[-1]", "[1]"), ms("[0, -1, -1]", "[-1]", "[-1]"), ms("[0, -1, -1]", "[0]", "[0]"), ms("", "", "")),
	)...)
	runShardCases(t, cases)
}

func TestPaddleSoftmaxWithCrossEntropyRule(t *testing.T) {
	v := "var x : f32[8, 1024, 50304]\nvar l : i64[8, 1024, 1]\nvar s : f32[8, 1024, 50304]\nvar o : f32[8, 1024, 1]"
	vSoft := "var x : f32[8, 1024, 50304]\nvar l : f32[8, 1024, 50304]\nvar s : f32[8, 1024, 50304]\nvar o : f32[8, 1024, 1]"
	vAxis1 := "var x : f32[8, 1024, 50304]\nvar l : i64[8, 1, 50304]\nvar s : f32[8, 1024, 50304]\nvar o : f32[8, 1, 50304]"
	xe := "op 1 softmax_with_cross_entropy(Logits: x, Label: l) -> (Softmax: s, Loss: o) {ignore_index = -1}"
	xeSoft := "op 1 softmax_with_cross_entropy(Logits: x, Label: l) -> (Softmax: s, Loss: o) {ignore_index = -1, soft_label = true}"
	xeAxis1 := "op 1 softmax_with_cross_entropy(Logits: x, Label: l) -> (Softmax: s, Loss: o) {ignore_index = -1, axis = 1}"
	// test_cross_entropy_with_softmax_rule.py,
	// TestCrossEntropyWithSoftmaxSPMDRule.test_cross_entropy_with_softmax_infer_forward.
	// Its outputs are softmax then loss, as here. It runs Paddle's static
	// variant, which keeps a sharded class axis for the fused kernel; the
	// rule here is the dynamic one, which replicates it (softmaxXentRule's
	// doc): the deviation rows.
	runShardCases(t, onMesh(mesh2x4,
		pfw("GPT dp", v, xe, ms("[1, -1, -1]", "[-1, 0, -1]"), ms("[1, 0, -1]", "[1, 0, -1]"), ms("[1, 0, -1]", "[1, 0, -1]"), ms("", "")),
		// deviation: Paddle keeps x [-1, -1, 0] and softmax [-1, -1, 0].
		pfw("GPT mp, class axis sharded", v, xe, ms("[-1, -1, 0]", "[-1, -1, -1]"), ms("[-1, -1, -1]", "[-1, -1, -1]"), ms("[-1, -1, -1]", "[-1, -1, -1]"), ms("", "")),
		// deviation: Paddle keeps x [1, -1, 0] and softmax [1, -1, 0].
		pfw("GPT mp-dp", v, xe, ms("[-1, -1, 0]", "[1, -1, -1]"), ms("[1, -1, -1]", "[1, -1, -1]"), ms("[1, -1, -1]", "[1, -1, -1]"), ms("", "")),
		// deviation: Paddle refuses a sharded class axis with a soft label
		// (ValueError); the dynamic rule replicates it.
		pfw("soft label, class axis sharded", vSoft, xeSoft, ms("[-1, -1, 0]", "[1, -1, -1]"), ms("[1, -1, -1]", "[1, -1, -1]"), ms("[1, -1, -1]", "[1, -1, -1]"), ms("", "")),
		pfw("axis 1", vAxis1, xeAxis1, ms("[1, -1, 0]", "[-1, -1, -1]"), ms("[1, -1, 0]", "[1, -1, 0]"), ms("[1, -1, 0]", "[1, -1, 0]"), ms("", "")),
		// deviation: Paddle refuses a sharded class axis that is not the
		// last (ValueError); the dynamic rule replicates it.
		pfw("axis 1 sharded", vAxis1, xeAxis1, ms("[-1, 0, -1]", "[1, -1, -1]"), ms("[1, -1, -1]", "[1, -1, -1]"), ms("[1, -1, -1]", "[1, -1, -1]"), ms("", "")),
	))
	// The same file at a later commit (51333abf) runs the same forward
	// rows and adds one, and test_cross_entropy_with_softmax_infer_backward.
	vSoft1 := "var x : f32[8, 1024, 50304]\nvar l : f32[8, 1024, 50304]\nvar s : f32[8, 1024, 50304]\nvar o : f32[8, 1, 50304]"
	xeSoft1 := "op 1 softmax_with_cross_entropy(Logits: x, Label: l) -> (Softmax: s, Loss: o) {ignore_index = -1, soft_label = true, axis = 1}"
	runShardCases(t, onMesh(mesh2x4,
		// deviation: with use_softmax = false Paddle gives no Softmax ([]);
		// the op here has Softmax, which takes Logits' mapping.
		pfw("axis 1 no softmax", vAxis1, "op 1 softmax_with_cross_entropy(Logits: x, Label: l) -> (Softmax: s, Loss: o) {ignore_index = -1, axis = 1, use_softmax = false}",
			ms("[1, -1, 0]", "[-1, -1, -1]"), ms("[1, -1, 0]", "[1, -1, 0]"), ms("[1, -1, 0]", "[1, -1, 0]"), ms("", "")),
		pbw("bwd GPT dp", v, xe, ms("[1, 0, -1]", "[1, 0, -1]"), ms("[1, 0, -1]", "[1, 0, -1]"), ms("[1, 0, -1]", "[1, 0, -1]")),
		// deviation: Paddle keeps the class axis sharded: x and softmax
		// [-1, -1, 0].
		pbw("bwd GPT mp", v, xe, ms("[-1, -1, 0]", "[-1, -1, -1]"), ms("[-1, -1, -1]", "[-1, -1, -1]"), ms("[-1, -1, -1]", "[-1, -1, -1]")),
		// deviation: Paddle keeps x and softmax [1, -1, 0].
		pbw("bwd GPT mp-dp", v, xe, ms("[-1, -1, 0]", "[1, -1, -1]"), ms("[1, -1, -1]", "[1, -1, -1]"), ms("[1, -1, -1]", "[1, -1, -1]")),
		pbw("bwd soft label axis 1", vSoft1, xeSoft1, ms("[1, -1, 0]", "[1, -1, -1]"), ms("[1, -1, 0]", "[1, -1, 0]"), ms("[1, -1, 0]", "[1, -1, 0]")),
		pbw("bwd soft label axis 1 sharded", vSoft1, xeSoft1, ms("[1, 0, -1]", "[1, -1, -1]"), ms("[1, -1, -1]", "[1, -1, -1]"), ms("[1, -1, -1]", "[1, -1, -1]")),
		pbw("bwd soft label axis -1 sharded", vSoft, xeSoft, ms("[1, -1, -1]", "[1, -1, 0]"), ms("[1, -1, -1]", "[1, -1, -1]"), ms("[1, -1, -1]", "[1, -1, -1]")),
	))
}

func TestPaddleCumsumRule(t *testing.T) {
	v := "var x : f32[64, 32, 48]\nvar o : f32[64, 32, 48]"
	vf := "var x : f32[64, 32, 48]\nvar o : f32[98304]"
	cs := func(axis int) string { return fmt.Sprintf("op 1 cumsum(X: x) -> (Out: o) {axis = %d}", axis) }
	flat := "op 1 cumsum(X: x) -> (Out: o) {axis = -1, flatten = true}"
	// test_cumsum_rule.py, TestReductionSPMDRule (sic).test_infer_spmd and
	// test_infer_spmd_reverse (spmd_rule_test.cc, TEST(CumSumGradInferSpmd,
	// Ctor), tests the grad rule: not ported).
	runShardCases(t, onMesh(mesh2x4,
		pfw("axis 1", v, cs(1), ms("[-1, 0, 1]"), ms("[-1, -1, 1]"), ms("[-1, -1, 1]"), ms("")),
		pfw("axis 0", v, cs(0), ms("[-1, 0, 1]"), ms("[-1, 0, 1]"), ms("[-1, 0, 1]"), ms("")),
		pfw("flatten", vf, flat, ms("[-1, 0, 1]"), ms("[-1, -1, -1]"), ms("[-1]"), ms("")),
		pbw("reverse axis 1", v, cs(1), ms("[-1, -1, 1]"), ms("[-1, -1, 1]"), ms("[-1, -1, 1]")),
		pbw("reverse flatten", vf, flat, ms("[-1]"), ms("[-1, -1, -1]"), ms("[-1]")),
	))
}

func TestPaddleTopKRule(t *testing.T) {
	v := "var x : f32[16, 16, 16]\nvar o : f32[16, 2, 16]\nvar i : i64[16, 2, 16]"
	tk := "op 1 top_k_v2(X: x) -> (Out: o, Indices: i) {k = 2, axis = 1}"
	// test_topk_rule.py, TestTopkSPMDRule.test_topk_forward, and
	// spmd_rule_test.cc, TEST(Topk, Ctor), forward. Their backward is
	// TopkGradInferSpmd, a grad rule: not ported.
	runShardCases(t, onMesh(mesh2x2,
		pfw("py forward", v, tk, ms("[0, 1, -1]"), ms("[0, -1, -1]"), ms("[0, -1, -1]", "[0, -1, -1]"), ms("", "")),
		pfw("cc forward", v, tk, ms("[0, 1, -1]"), ms("[0, -1, -1]"), ms("[0, -1, -1]", "[0, -1, -1]"), ms("", "")),
	))
}

func TestPaddleGatherRule(t *testing.T) {
	x := "var x : f32[64, 32, 48]\nvar i : i64[16]\n"
	g := func(axis int) string { return fmt.Sprintf("op 1 gather(X: x, Index: i) -> (Out: o) {axis = %d}", axis) }
	var cases []shardCase
	// test_gather_rule.py, TestScatterSPMDRule (sic).test_single_mesh_dim.
	cases = append(cases, onMesh(mesh4,
		pfw("axis 0 x sharded on it", x+"var o : f32[16, 32, 48]", g(0), ms("[0, -1, -1]", "[-1]"), ms("[-1, -1, -1]", "[-1]"), ms("[-1, -1, -1]"), ms("")),
		pfw("axis 0 x sharded on 1", x+"var o : f32[16, 32, 48]", g(0), ms("[-1, 0, -1]", "[-1]"), ms("[-1, 0, -1]", "[-1]"), ms("[-1, 0, -1]"), ms("")),
		pfw("axis 0 index sharded", x+"var o : f32[16, 32, 48]", g(0), ms("[0, -1, -1]", "[0]"), ms("[-1, -1, -1]", "[0]"), ms("[0, -1, -1]"), ms("")),
		// A 0-d Index: Paddle's test gives it the mapping [0] (a 0-d
		// tensor's, by its convention) and wants [-1]; here it is [].
		pfw("0-d index", "var x : f32[64, 32, 48]\nvar i : i64[]\nvar o : f32[64, 48]", g(1), ms("[-1, 0, -1]", "[]"), ms("[-1, -1, -1]", "[]"), ms("[-1, -1]"), ms("")),
	)...)
	// test_multi_mesh_dim and test_reverse_multi_mesh_dim.
	cases = append(cases, onMesh(mesh2x3,
		pfw("multi axis 1", x+"var o : f32[64, 16, 48]", g(1), ms("[0, 1, -1]", "[1]"), ms("[0, -1, -1]", "[1]"), ms("[0, 1, -1]"), ms("")),
		// deviation: mesh dim 0 on X's dim 0 and on Index: Out keeps X's, as
		// Paddle's; Paddle still wants Index [0], which contradicts Out
		// [0, -1, -1]; the rule replicates it (gatherRule's doc).
		pfw("multi axis 1 conflict", x+"var o : f32[64, 16, 48]", g(1), ms("[0, 1, -1]", "[0]"), ms("[0, -1, -1]", "[-1]"), ms("[0, -1, -1]"), ms("")),
		pbw("reverse axis 1", x+"var o : f32[64, 16, 48]", g(1), ms("[1, 0, -1]"), ms("[1, -1, -1]", "[0]"), ms("[1, 0, -1]")),
	)...)
	// spmd_rule_test.cc, TEST(GatherGradInferSpmd, Ctor) tests the grad
	// rule: not ported.
	runShardCases(t, cases)
}

func TestPaddleAddNRule(t *testing.T) {
	v := "var a : f32[16, 16, 16]\nvar b : f32[16, 16, 16]\nvar o : f32[16, 16, 16]"
	sum := "op 1 sum(X: [a, b]) -> (Out: o)"
	// test_add_n_rule.py, TestAddNSPMDRule.test_infer_forward.
	runShardCases(t, onMesh(mesh2x2,
		pfw("both [0,-1,-1]", v, sum, ms("[0, -1, -1]", "[0, -1, -1]"), ms("[0, -1, -1]", "[0, -1, -1]"), ms("[0, -1, -1]"), ms("")),
		// deviation: both inputs partial on 1 give Paddle an Out partial
		// on 1; input partials are not given to a single op's rule here.
		pfw("both partial on 1", v, sum, ms("[0, -1, -1]", "[-1, -1, -1]"), ms("[0, -1, -1]", "[0, -1, -1]"), ms("[0, -1, -1]"), ms("")),
		// Partial on 0 and on 1: Paddle clears both, and gives Out none,
		// as here (where the inputs carry none).
		pfw("partials differ", v, sum, ms("[0, -1, -1]", "[-1, -1, -1]"), ms("[0, -1, -1]", "[0, -1, -1]"), ms("[0, -1, -1]"), ms("")),
	))
}

func TestPaddleConv2dRule(t *testing.T) {
	v := "var x : f32[2, 4, 8, 8]\nvar w : f32[10, 4, 3, 3]\nvar o : f32[2, 10, 6, 6]"
	conv := "op 1 conv2d(Input: x, Filter: w) -> (Output: o)"
	mesh := []int{2, 2, 2} // dp, mp, pp
	// spmd_rule_test.cc, TEST(Conv2dSPMDRuleInferForward, Ctor), test 1 to
	// 5 (the C++ test checks only that Output is partial; the mesh dim is
	// the input channels', as the Python test checks), and
	// TEST(Conv2dSPMDRuleInferBackward, Ctor). TEST(Conv2dGradSPMDRule,
	// Ctor) tests the grad rule: not ported.
	cases := onMesh(mesh,
		pfw("cc test 1", v, conv, ms("[0, -1, -1, -1]", "[-1, -1, -1, -1]"), ms("[0, -1, -1, -1]", "[-1, -1, -1, -1]"), ms("[0, -1, -1, -1]"), ms("")),
		pfw("cc test 2", v, conv, ms("[-1, -1, -1, -1]", "[0, -1, -1, -1]"), ms("[-1, -1, -1, -1]", "[0, -1, -1, -1]"), ms("[-1, 0, -1, -1]"), ms("")),
		pfw("cc test 3", v, conv, ms("[0, -1, -1, -1]", "[1, -1, -1, -1]"), ms("[0, -1, -1, -1]", "[1, -1, -1, -1]"), ms("[0, 1, -1, -1]"), ms("")),
		pfw("cc test 4", v, conv, ms("[-1, 0, -1, -1]", "[-1, 0, -1, -1]"), ms("[-1, 0, -1, -1]", "[-1, 0, -1, -1]"), ms("[-1, -1, -1, -1]"), ms("0")),
		pfw("cc test 5", v, conv, ms("[0, 2, -1, -1]", "[1, 2, -1, -1]"), ms("[0, 2, -1, -1]", "[1, 2, -1, -1]"), ms("[0, 1, -1, -1]"), ms("2")),
		pbw("cc reverse", v, conv, ms("[0, 1, -1, -1]"), ms("[0, -1, -1, -1]", "[1, -1, -1, -1]"), ms("[0, 1, -1, -1]")),
	)
	// test_conv2d_rule.py, TestConv2dSPMDRule.test_conv2d_infer_forward
	// (cases 1 to 5) and test_conv2d_infer_backward: the same cases.
	for _, c := range slices.Clone(cases) {
		c.name = "py" + strings.TrimPrefix(c.name, "cc")
		cases = append(cases, c)
	}
	runShardCases(t, cases)
}

func TestPaddleDepthwiseConv2dRule(t *testing.T) {
	v := "var x : f32[2, 4, 8, 8]\nvar w : f32[8, 1, 3, 3]\nvar o : f32[2, 8, 6, 6]"
	vh := "var x : f32[2, 8, 8, 4]\nvar w : f32[8, 1, 3, 3]\nvar o : f32[2, 6, 6, 8]"
	dw := "op 1 depthwise_conv2d(Input: x, Filter: w) -> (Output: o) {groups = 4}"
	dwh := "op 1 depthwise_conv2d(Input: x, Filter: w) -> (Output: o) {groups = 4, data_format = \"NHWC\"}"
	// test_depthwise_conv2d_rule.py, TestDepthwiseConv2dSPMDRule
	// .test_depthwise_conv2d_nchw_infer_forward and
	// test_depthwise_conv2d_nhwc_infer_forward. test_depthwise_conv2d_infer_backward
	// checks the grad rule (3 inputs, 2 outputs): not ported.
	runShardCases(t, onMesh([]int{2, 2, 2},
		pfw("nchw case 1", v, dw, ms("[0, -1, -1, -1]", "[-1, -1, -1, -1]"), ms("[0, -1, -1, -1]", "[-1, -1, -1, -1]"), ms("[0, -1, -1, -1]"), ms("")),
		pfw("nchw case 2", v, dw, ms("[-1, -1, -1, -1]", "[0, -1, -1, -1]"), ms("[-1, -1, -1, -1]", "[0, -1, -1, -1]"), ms("[-1, 0, -1, -1]"), ms("")),
		pfw("nchw case 3", v, dw, ms("[0, -1, -1, -1]", "[1, -1, -1, -1]"), ms("[0, -1, -1, -1]", "[1, -1, -1, -1]"), ms("[0, 1, -1, -1]"), ms("")),
		pfw("nchw case 4", v, dw, ms("[-1, 0, -1, -1]", "[-1, -1, -1, -1]"), ms("[-1, -1, -1, -1]", "[-1, -1, -1, -1]"), ms("[-1, -1, -1, -1]"), ms("")),
		pfw("nchw case 5", v, dw, ms("[0, 2, -1, -1]", "[1, -1, -1, -1]"), ms("[0, -1, -1, -1]", "[1, -1, -1, -1]"), ms("[0, 1, -1, -1]"), ms("")),
		pfw("nhwc case 1", vh, dwh, ms("[0, -1, -1, -1]", "[-1, -1, -1, -1]"), ms("[0, -1, -1, -1]", "[-1, -1, -1, -1]"), ms("[0, -1, -1, -1]"), ms("")),
		// deviation: Paddle wants Output [-1, 0, -1, -1] and [0, 1, -1, -1]
		// in the next two rows, the channel mapping at NCHW's place in an
		// NHWC Output (its H): here the channels, Output's last dim, take it.
		pfw("nhwc case 2", vh, dwh, ms("[-1, -1, -1, -1]", "[0, -1, -1, -1]"), ms("[-1, -1, -1, -1]", "[0, -1, -1, -1]"), ms("[-1, -1, -1, 0]"), ms("")),
		pfw("nhwc case 3", vh, dwh, ms("[0, -1, -1, -1]", "[1, -1, -1, -1]"), ms("[0, -1, -1, -1]", "[1, -1, -1, -1]"), ms("[0, -1, -1, 1]"), ms("")),
		pfw("nhwc case 4", vh, dwh, ms("[-1, -1, -1, 0]", "[-1, -1, -1, -1]"), ms("[-1, -1, -1, -1]", "[-1, -1, -1, -1]"), ms("[-1, -1, -1, -1]"), ms("")),
	))
}
