package ops_test

import "testing"

func TestMoEInfer(t *testing.T) {
	runInferCases(t, "", []inferCase{
		{"top_k_v2/k_tensor", "var x : f32[3, 5]\nvar k : i32[1]\nvar o : f32[3, -1]\nvar i : i64[3, -1]\nop 1 top_k_v2(X: x, K: k) -> (Out: o, Indices: i) {k = 1}",
			[]string{"Out[0] f32[3, -1]", "Indices[0] i64[3, -1]"}},
		{"gather/axis1", "var x : f32[3, 5, 2]\nvar i : i64[4]\nvar o : f32[3, 4, 2]\nop 1 gather(X: x, Index: i) -> (Out: o) {axis = 1}",
			[]string{"Out[0] f32[3, 4, 2]"}},
		{"gather/scalar_index", "var x : f32[3, 5]\nvar i : i64[]\nvar o : f32[5]\nop 1 gather(X: x, Index: i)  -> (Out: o)",
			[]string{"Out[0] f32[5]"}},
		{"global_scatter", "var x : f32[-1, 8]\nvar lc : i64[4]\nvar gc : i64[4]\nvar o : f32[-1, 8]\nop 1 global_scatter(X: x, local_count: lc, global_count: gc) -> (Out: o) {ring_id = 1}",
			[]string{"Out[0] f32[-1, 8]"}},
		{"assign_pos", "var x : i64[4, 2]\nvar c : i64[3]\nvar o : i64[-1]\nop 1 assign_pos(X: x, cum_count: c) -> (Out: o)",
			[]string{"Out[0] i64[-1]"}},
	})
}

func TestMoEErrors(t *testing.T) {
	runOpCases(t, "", []opCase{
		{"top_k_v2/k", "var x : f32[3, 5]\nvar o : f32[3, 6]\nvar i : i64[3, 6]\nop 1 top_k_v2(X: x) -> (Out: o, Indices: i) {k = 6}",
			[]string{"op 1 top_k_v2: inconsistent inputs: X x [3, 5]: k 6 out of range [1, 5] along axis 1"}},
		{"top_k_v2/indices_dtype", "var x : f32[3, 5]\nvar o : f32[3, 2]\nvar i : i32[3, 2]\nop 1 top_k_v2(X: x) -> (Out: o, Indices: i) {k = 2}",
			[]string{"op 1 top_k_v2: output Indices i: declared i32[3, 2], inferred dtype i64 from X f32[3, 5]"}},
		{"gather/index", "var x : f32[5, 3]\nvar i : i64[4, 2]\nvar o : f32[4, 3]\nop 1 gather(X: x, Index: i) -> (Out: o)",
			[]string{"op 1 gather: inconsistent inputs: X x [5, 3] and Index i [4, 2]: Index must be [M] or [M, 1]"}},
		{"gather/declared", "var x : f32[5, 3]\nvar i : i64[4]\nvar o : f32[5, 3]\nop 1 gather(X: x, Index: i) -> (Out: o)",
			[]string{"op 1 gather: output Out o: declared f32[5, 3], inferred [4, 3] from X f32[5, 3], Index i64[4]"}},
		{"scatter/updates", "var x : f32[5, 3]\nvar ids : i64[2]\nvar u : f32[3, 3]\nvar o : f32[5, 3]\nop 1 scatter(X: x, Ids: ids, Updates: u) -> (Out: o)",
			[]string{"op 1 scatter: inconsistent inputs: X x [5, 3], Ids ids [2] and Updates u [3, 3]: want Updates = [len(Ids)] + X[1:]"}},
		{"scatter_grad/updates", "var ids : i64[2]\nvar u : f32[2, 4]\nvar g : f32[5, 3]\nvar dx : f32[5, 3]\nop 1 scatter_grad(Ids: ids, Updates: u, Out@GRAD: g) -> (X@GRAD: dx)",
			[]string{"op 1 scatter_grad: inconsistent inputs: Out@GRAD g [5, 3], Ids ids [2] and Updates u [2, 4]: want Updates = [len(Ids)] + Out@GRAD[1:]"}},
		{"scatter_grad/declared", "var ids : i64[2]\nvar u : f32[2, 3]\nvar g : f32[5, 3]\nvar dx : f32[2, 3]\nop 1 scatter_grad(Ids: ids, Updates: u, Out@GRAD: g) -> (X@GRAD: dx)",
			[]string{"op 1 scatter_grad: output X@GRAD dx: declared f32[2, 3], inferred [5, 3] from Ids i64[2], Updates f32[2, 3], Out@GRAD f32[5, 3]"}},
		{"grouped_matmul/k", "var x : f32[5, 3]\nvar w : f32[2, 4, 6]\nvar ec : i64[2]\nvar o : f32[5, 6]\nop 1 grouped_matmul(X: x, W: w, ExpertCount: ec) -> (Out: o)",
			[]string{"op 1 grouped_matmul: inconsistent inputs: X x [5, 3] and W w [2, 4, 6]: contracted dims 3 and 4 differ"}},
		{"grouped_matmul/rank", "var x : f32[5, 3]\nvar w : f32[3, 6]\nvar ec : i64[2]\nvar o : f32[5, 6]\nop 1 grouped_matmul(X: x, W: w, ExpertCount: ec) -> (Out: o)",
			[]string{"op 1 grouped_matmul: inconsistent inputs: X x [5, 3] and W w [3, 6]: want X [M, K] and W [E, K, P]"}},
		{"number_count/declared", "var n : i64[8, 2]\nvar o : i64[8]\nop 1 number_count(numbers: n) -> (Out: o) {upper_range = 4}",
			[]string{"op 1 number_count: output Out o: declared i64[8], inferred [4] from numbers i64[8, 2]"}},
		{"cumsum/axis", "var x : f32[3]\nvar o : f32[3]\nop 1 cumsum(X: x) -> (Out: o) {axis = 1}",
			[]string{"op 1 cumsum: inconsistent inputs: X x [3]: axis 1 out of range"}},
		{"limit_by_capacity", "var ec : i64[6]\nvar cap : i64[2]\nvar o : i64[6]\nop 1 limit_by_capacity(expert_count: ec, capacity: cap) -> (Out: o) {n_worker = 2}",
			[]string{"op 1 limit_by_capacity: inconsistent inputs: expert_count ec [6] and capacity cap [2]: want n_worker 2 times as many counts as capacities"}},
		{"prune_gate_by_capacity", "var g : i64[3, 2]\nvar ec : i64[4]\nvar o : i64[3, 2]\nop 1 prune_gate_by_capacity(GateIdx: g, ExpertCount: ec) -> (NewGateIdx: o) {n_expert = 2, n_worker = 1}",
			[]string{"op 1 prune_gate_by_capacity: inconsistent inputs: ExpertCount ec [4]: want n_expert 2 × n_worker 1 = 2 counts"}},
		{"global_gather/features", "var x : f32[-1, 8]\nvar lc : i64[4]\nvar gc : i64[4]\nvar o : f32[-1, 4]\nop 1 global_gather(X: x, local_count: lc, global_count: gc) -> (Out: o)",
			[]string{"op 1 global_gather: output Out o: declared f32[-1, 4], inferred [-1, 8] from X f32[-1, 8], local_count i64[4], global_count i64[4]"}},
	})
}
