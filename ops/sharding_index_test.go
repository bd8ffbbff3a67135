package ops_test

import "testing"

// TestPaddleArgMaxRule: test_argmax_rule.py, TestArgMaxSPMDRule, on a
// 2×3 mesh with X [64, 32, 48]; arg_min has the same rule.
func TestPaddleArgMaxRule(t *testing.T) {
	x := "var x : f32[64, 32, 48]\n"
	am := func(typ, attrs string) string { return "op 1 " + typ + "(X: x) -> (Out: o) {" + attrs + "}" }
	var cases []shardCase
	// test_infer_spmd.
	cases = append(cases, onMesh(mesh2x3,
		pfw("axis 1", x+"var o : i64[64, 48]", am("arg_max", "axis = long(1)"), ms("[0, 1, -1]"), ms("[0, -1, -1]"), ms("[0, -1]"), ms("")),
		pfw("axis -1", x+"var o : i64[64, 32]", am("arg_max", "axis = long(-1)"), ms("[0, 1, -1]"), ms("[0, 1, -1]"), ms("[0, 1]"), ms("")),
		pfw("axis -1 keepdims", x+"var o : i64[64, 32, 1]", am("arg_max", "axis = long(-1), keepdims = true"), ms("[0, 1, -1]"), ms("[0, 1, -1]"), ms("[0, 1, -1]"), ms("")),
		// Out is a scalar here, declared [1] as Paddle's [-1] has it.
		pfw("flatten", x+"var o : i64[1]", am("arg_max", "axis = long(-1), flatten = true"), ms("[0, 1, -1]"), ms("[-1, -1, -1]"), ms("[-1]"), ms("")),
	)...)
	// test_infer_spmd_reverse.
	cases = append(cases, onMesh(mesh2x3,
		pbw("reverse axis 1", x+"var o : i64[64, 48]", am("arg_max", "axis = long(1)"), ms("[0, -1]"), ms("[0, -1, -1]"), ms("[0, -1]")),
		pbw("reverse axis -1", x+"var o : i64[64, 32]", am("arg_max", "axis = long(-1)"), ms("[0, 1]"), ms("[0, 1, -1]"), ms("[0, 1]")),
		pbw("reverse flatten keepdims", x+"var o : i64[1, 1, 1]", am("arg_max", "axis = long(-1), flatten = true, keepdims = true"),
			ms("[0, 1, -1]"), ms("[-1, -1, -1]"), ms("[-1, -1, -1]")),
	)...)
	// The branches the tests leave out: keepdims reverse, flatten
	// without keepdims reverse, arg_min.
	cases = append(cases, onMesh(mesh2x3,
		// deviation: Paddle keeps Out's mapping as given; a size-1 dim is
		// never split here.
		pbw("reverse keepdims", x+"var o : i64[64, 1, 48]", am("arg_max", "axis = long(1), keepdims = true"), ms("[0, 1, -1]"), ms("[0, -1, -1]"), ms("[0, -1, -1]")),
		pbw("reverse flatten", x+"var o : i64[]", am("arg_max", "flatten = true"), ms("[]"), ms("[-1, -1, -1]"), ms("[]")),
		pfw("arg_min axis 0", x+"var o : i64[32, 48]", am("arg_min", "axis = long(0)"), ms("[0, 1, -1]"), ms("[-1, 1, -1]"), ms("[1, -1]"), ms("")),
	)...)
	runShardCases(t, cases)
}

// TestPaddleScatterRule: test_scatter_rule.py, TestScatterSPMDRule: X
// [64, 32, 48], Index [16], Updates [32, 32, 48] (made [16, 32, 48],
// Index's length).
func TestPaddleScatterRule(t *testing.T) {
	v := "var x : f32[64, 32, 48]\nvar i : i64[16]\nvar u : f32[16, 32, 48]\nvar o : f32[64, 32, 48]"
	sc := "op 1 scatter(X: x, Ids: i, Updates: u) -> (Out: o) {overwrite = true}"
	var cases []shardCase
	// test_single_mesh_dim.
	cases = append(cases, onMesh(mesh4,
		pfw("single updates split", v, sc, ms("[-1, -1, -1]", "[-1]", "[-1, 0, -1]"), ms("[-1, 0, -1]", "[-1]", "[-1, 0, -1]"), ms("[-1, 0, -1]"), ms("")),
		// deviation: Paddle wants Ids [0], Updates [0, -1, -1] and makes
		// Out partial on 0; but each rank scatters into a whole X, which
		// the sum would count four times. Ids and Updates' rows are
		// replicated instead.
		pfw("single rows split", v, sc, ms("[0, -1, -1]", "[-1]", "[0, -1, -1]"), ms("[-1, -1, -1]", "[-1]", "[-1, -1, -1]"), ms("[-1, -1, -1]"), ms("")),
		pfw("single x split", v, sc, ms("[-1, 0, -1]", "[-1]", "[-1, -1, -1]"), ms("[-1, -1, -1]", "[-1]", "[-1, -1, -1]"), ms("[-1, -1, -1]"), ms("")),
	)...)
	// test_multi_mesh_dim.
	cases = append(cases, onMesh(mesh2x3,
		pfw("multi", v, sc, ms("[1, -1, 0]", "[-1]", "[-1, 0, -1]"), ms("[-1, 0, -1]", "[-1]", "[-1, 0, -1]"), ms("[-1, 0, -1]"), ms("")),
		// deviation: Paddle gives Ids [0], Updates [0, 1, -1] and Out
		// partial on 0 (as above).
		pfw("multi ids split", v, sc, ms("[-1, -1, -1]", "[0]", "[-1, 1, -1]"), ms("[-1, 1, -1]", "[-1]", "[-1, 1, -1]"), ms("[-1, 1, -1]"), ms("")),
	)...)
	// test_reverse_multi_mesh_dim.
	cases = append(cases, onMesh(mesh2x3,
		pbw("reverse", v, sc, ms("[1, 0, -1]"), ms("[-1, 0, -1]", "[-1]", "[-1, 0, -1]"), ms("[-1, 0, -1]")),
	)...)
	// The grad (derived): Out@GRAD's rows replicated, its other dims to
	// X@GRAD and Updates@GRAD; no partial.
	cases = append(cases, onMesh(mesh2x3,
		pfw("scatter_grad", "var i : i64[16]\nvar u : f32[16, 32, 48]\nvar g : f32[64, 32, 48]\nvar dx : f32[64, 32, 48]\nvar du : f32[16, 32, 48]",
			"op 1 scatter_grad(Ids: i, Updates: u, Out@GRAD: g) -> (X@GRAD: dx, Updates@GRAD: du) {overwrite = true} role backward",
			ms("[0]", "[-1, -1, -1]", "[1, -1, 0]"), ms("[-1]", "[-1, -1, 0]", "[-1, -1, 0]"), ms("[-1, -1, 0]", "[-1, -1, 0]"), ms("", "")),
	)...)
	runShardCases(t, cases)
}

// TestIndexAndLossShardingRules: cross_entropy and cross_entropy2 keep
// the class axis whole; logical ops broadcast numpy-style (no axis
// attr); reduce_prod replicates what it reduces.
func TestIndexAndLossShardingRules(t *testing.T) {
	ce := "var x : f32[8, 16, 10]\nvar l : i64[8, 16, 1]\nvar y : f32[8, 16, 1]"
	ceLow := "var x : f32[8, 10]\nvar l : i64[8]\nvar y : f32[8]"
	ce2 := "var x : f32[8, 10]\nvar l : i64[8, 1]\nvar y : f32[8, 1]\nvar mx : f32[8, 1]\nvar xs : f32[8, 10, 0]"
	ce2Op := "op 1 cross_entropy2(X: x, Label: l) -> (Y: y, MatchX: mx, XShape: xs)"
	soft := "var x : f32[8, 10]\nvar l : f32[8, 10]\nvar y : f32[8, 1]"
	logic := "var x : bool[8, 16]\nvar y : bool[16]\nvar o : bool[8, 16]"
	prod := "var x : f32[8, 16, 4]\nvar o : f32[8, 4]"
	prodOp := "op 1 reduce_prod(X: x) -> (Out: o) {dim = [1]}"
	runShardCases(t, []shardCase{
		// Strict, as softmax_with_cross_entropy: a mesh dim on two dims
		// is an error.
		{name: "cross_entropy strict", vars: ce, op: "op 1 cross_entropy(X: x, Label: l) -> (Y: y)", forward: true,
			given: []string{"[0, -1, -1]", "[-1, 0, -1]"}, err: `mesh dim 0 shards dims "a" and "b"`},
		{name: "cross_entropy class split", vars: ce, op: "op 1 cross_entropy(X: x, Label: l) -> (Y: y)", forward: true,
			given: []string{"[0, -1, 1]", "[-1, 1, -1]"}, wantIn: []string{"[0, 1, -1]", "[0, 1, -1]"}, wantOut: []string{"[0, 1, -1]"}, partial: []string{""}},
		{name: "cross_entropy label without class dim", vars: ceLow, op: "op 1 cross_entropy(X: x, Label: l) -> (Y: y)", forward: true,
			given: []string{"[-1, 0]", "[1]"}, wantIn: []string{"[1, -1]", "[1]"}, wantOut: []string{"[1]"}, partial: []string{""}},
		{name: "cross_entropy soft label", vars: soft, op: "op 1 cross_entropy(X: x, Label: l) -> (Y: y) {soft_label = true}", forward: true,
			given: []string{"[0, -1]", "[-1, 1]"}, wantIn: []string{"[0, -1]", "[0, -1]"}, wantOut: []string{"[0, -1]"}, partial: []string{""}},
		{name: "cross_entropy reverse", vars: ce, op: "op 1 cross_entropy(X: x, Label: l) -> (Y: y)",
			given: []string{"[1, 0, -1]"}, wantIn: []string{"[1, 0, -1]", "[1, 0, -1]"}, wantOut: []string{"[1, 0, -1]"}},
		{name: "cross_entropy2", vars: ce2, op: ce2Op, forward: true,
			given: []string{"[0, 1]", "[-1, -1]"}, wantIn: []string{"[0, -1]", "[0, -1]"},
			wantOut: []string{"[0, -1]", "[0, -1]", "[0, -1, -1]"}, partial: []string{"", "", ""}},
		{name: "cross_entropy2 reverse", vars: ce2, op: ce2Op,
			given: []string{"[1, -1]", "[-1, -1]", "[-1, -1, -1]"}, wantIn: []string{"[1, -1]", "[1, -1]"},
			wantOut: []string{"[1, -1]", "[1, -1]", "[1, -1, -1]"}},
		{name: "logical_and", vars: logic, op: "op 1 logical_and(X: x, Y: y) -> (Out: o)", forward: true,
			given: []string{"[0, -1]", "[1]"}, wantIn: []string{"[0, 1]", "[1]"}, wantOut: []string{"[0, 1]"}, partial: []string{""}},
		{name: "logical_or reverse", vars: logic, op: "op 1 logical_or(X: x, Y: y) -> (Out: o)",
			given: []string{"[1, 0]"}, wantIn: []string{"[1, 0]", "[0]"}, wantOut: []string{"[1, 0]"}},
		{name: "logical_xor conflict", vars: "var x : bool[8, 16]\nvar y : bool[8, 16]\nvar o : bool[8, 16]", op: "op 1 logical_xor(X: x, Y: y) -> (Out: o)", forward: true,
			given: []string{"[0, -1]", "[1, -1]"}, err: `dim "a" is sharded along two mesh dims, 0 and 1`},
		{name: "logical_and size-1", vars: "var x : bool[8, 1]\nvar y : bool[8, 16]\nvar o : bool[8, 16]", op: "op 1 logical_and(X: x, Y: y) -> (Out: o)", forward: true,
			given: []string{"[0, 1]", "[-1, -1]"}, wantIn: []string{"[0, -1]", "[0, -1]"}, wantOut: []string{"[0, -1]"}, partial: []string{""}},
		{name: "logical_not", vars: "var x : bool[8, 16]\nvar o : bool[8, 16]", op: "op 1 logical_not(X: x) -> (Out: o)", forward: true,
			given: []string{"[1, 0]"}, wantIn: []string{"[1, 0]"}, wantOut: []string{"[1, 0]"}, partial: []string{""}},
		{name: "reduce_prod", vars: prod, op: prodOp, forward: true,
			given: []string{"[0, 1, -1]"}, wantIn: []string{"[0, -1, -1]"}, wantOut: []string{"[0, -1]"}, partial: []string{""}},
		{name: "reduce_prod keep_dim", vars: "var x : f32[8, 16, 4]\nvar o : f32[8, 1, 4]", op: "op 1 reduce_prod(X: x) -> (Out: o) {dim = [-2], keep_dim = true}", forward: true,
			given: []string{"[-1, 1, 0]"}, wantIn: []string{"[-1, -1, 0]"}, wantOut: []string{"[-1, -1, 0]"}, partial: []string{""}},
		{name: "reduce_prod all", vars: "var x : f32[8, 16]\nvar o : f32[]", op: "op 1 reduce_prod(X: x) -> (Out: o) {reduce_all = true}", forward: true,
			given: []string{"[1, 0]"}, wantIn: []string{"[-1, -1]"}, wantOut: []string{"[]"}, partial: []string{""}},
		{name: "reduce_prod reverse", vars: prod, op: prodOp,
			given: []string{"[0, 1]"}, wantIn: []string{"[0, -1, 1]"}, wantOut: []string{"[0, 1]"}},
	})
}

// TestPaddleCEmbeddingRule: test_c_embedding_rule.py on a 2×4 mesh, W
// [512, 768] and Ids [4, 1024]; its infer_backward calls the grad rule
// (CEmbeddingGradInferSpmd): c_embedding_grad's Forward here.
func TestPaddleCEmbeddingRule(t *testing.T) {
	v := "var w : f32[512, 768]\nvar ids : i64[4, 1024]\nvar o : f32[4, 1024, 768]"
	ce := "op 1 c_embedding(W: w, Ids: ids) -> (Out: o) {start_index = 0}"
	g := "var w : f32[512, 768]\nvar ids : i64[4, 1024]\nvar g : f32[4, 1024, 768]\nvar dw : f32[512, 768]"
	ceg := "op 1 c_embedding_grad(W: w, Ids: ids, Out@GRAD: g) -> (W@GRAD: dw) {start_index = 0}"
	runShardCases(t, onMesh(mesh2x4,
		pfw("data parallel", v, ce, ms("[-1, -1]", "[1, -1]"), ms("[-1, -1]", "[1, -1]"), ms("[1, -1, -1]"), ms("")),
		pfw("row-wise", v, ce, ms("[1, -1]", "[-1, -1]"), ms("[1, -1]", "[-1, -1]"), ms("[-1, -1, -1]"), ms("1")),
		pfw("grad row-wise", g, ceg, ms("[1, -1]", "[-1, -1]", "[-1, -1, -1]"), ms("[1, -1]", "[-1, -1]", "[-1, -1, -1]"), ms("[1, -1]"), ms("")),
		pfw("grad data parallel", g, ceg, ms("[1, -1]", "[0, -1]", "[0, -1, -1]"), ms("[1, -1]", "[0, -1]", "[0, -1, -1]"), ms("[1, -1]"), ms("0")),
		// Not in Paddle's test: the merge refuses a mesh dim on two dims,
		// and the reverse.
		perr("strict", v, ce, true, ms("[1, -1]", "[1, -1]"), `mesh dim 1 shards dims "k" and "a"`),
		pbw("reverse", v, ce, ms("[0, -1, 1]"), ms("[-1, 1]", "[0, -1]"), ms("[0, -1, 1]")),
	))
}

// TestLookupTableV1ShardingRule: Paddle 1.x's lookup_table, whose Ids end
// in a dim of 1, as lookup_table_v2's rule.
func TestLookupTableV1ShardingRule(t *testing.T) {
	v := "var w : f32[1000, 64]\nvar ids : i64[8, 16, 1]\nvar o : f32[8, 16, 64]"
	lt := "op 1 lookup_table(W: w, Ids: ids) -> (Out: o)"
	runShardCases(t, []shardCase{
		{name: "vocab parallel", vars: v, op: lt, forward: true,
			given: []string{"[1, -1]", "[0, -1, -1]"}, wantIn: []string{"[1, -1]", "[0, -1, -1]"}, wantOut: []string{"[0, -1, -1]"}, partial: []string{"1"}},
		{name: "padding_idx", vars: v, op: "op 1 lookup_table(W: w, Ids: ids) -> (Out: o) {padding_idx = 0}", forward: true,
			given: []string{"[1, -1]", "[0, -1, 1]"}, wantIn: []string{"[-1, -1]", "[0, -1, -1]"}, wantOut: []string{"[0, -1, -1]"}, partial: []string{""}},
		{name: "reverse", vars: v, op: lt,
			given: []string{"[0, 1, -1]"}, wantIn: []string{"[-1, -1]", "[0, 1, -1]"}, wantOut: []string{"[0, 1, -1]"}},
	})
}
