package sim

import "github.com/distpass/distpass/ir"

// Cases of the MoE family: gating, routing, dispatch and the experts.
func init() {
	i64 := func(shape []int64, data ...float64) *Tensor { return MustFromData(ir.I64, shape, data) }
	// How many slots assign_pos fills is what the gate chose.
	dataDependent["assign_pos"] = true
	inferCases = append(inferCases,
		inferCase{Name: "top_k_v2", Src: `program main { block 0 {
 var x : f32[3, 5]
 var o : f32[-1, -1]
 var i : i64[-1, -1]
 op 1 top_k_v2(X: x) -> (Out: o, Indices: i) {k = 2, axis = -1, largest = true, sorted = true}
}}`},
		inferCase{Name: "top_k_v2/axis0_smallest", Src: `program main { block 0 {
 var x : f64[4, 2, 3]
 var o : f64[-1, -1, -1]
 var i : i64[-1, -1, -1]
 op 1 top_k_v2(X: x) -> (Out: o, Indices: i) {k = 3, axis = 0, largest = false}
}}`},
		inferCase{Name: "top_k_v2_grad", IntHigh: 5, Src: `program main { block 0 {
 var x : f32[3, 5]
 var i : i64[3, 2]
 var g : f32[3, 2]
 var dx : f32[-1, -1]
 op 1 top_k_v2_grad(X: x, Indices: i, Out@GRAD: g) -> (X@GRAD: dx) {k = 2, axis = -1}
}}`},
		inferCase{Name: "gather", IntHigh: 5, Src: `program main { block 0 {
 var x : f32[5, 3]
 var i : i64[4]
 var o : f32[-1, -1]
 op 1 gather(X: x, Index: i) -> (Out: o) {axis = 0}
}}`},
		inferCase{Name: "gather/index_column", IntHigh: 5, Src: `program main { block 0 {
 var x : f32[5, 2, 3]
 var i : i32[2, 1]
 var o : f32[-1, -1, -1]
 op 1 gather(X: x, Index: i) -> (Out: o)
}}`},
		inferCase{Name: "gather_grad", IntHigh: 5, Src: `program main { block 0 {
 var x : f32[5, 3]
 var i : i64[4]
 var g : f32[4, 3]
 var dx : f32[-1, -1]
 op 1 gather_grad(X: x, Index: i, Out@GRAD: g) -> (X@GRAD: dx) {axis = 0}
}}`},
		inferCase{Name: "scatter", Values: map[string]*Tensor{"ids": i64([]int64{2}, 1, 3)}, Src: `program main { block 0 {
 var x : f32[5, 3]
 var ids : i64[2]
 var u : f32[2, 3]
 var o : f32[-1, -1]
 op 1 scatter(X: x, Ids: ids, Updates: u) -> (Out: o) {overwrite = false}
}}`},
		inferCase{Name: "scatter_grad", Values: map[string]*Tensor{"ids": i64([]int64{2}, 4, 0)}, Src: `program main { block 0 {
 var ids : i64[2]
 var u : f32[2, 3]
 var g : f32[5, 3]
 var dx : f32[-1, -1]
 var du : f32[-1, -1]
 op 1 scatter_grad(Ids: ids, Updates: u, Out@GRAD: g) -> (X@GRAD: dx, Updates@GRAD: du) {overwrite = true}
}}`},
		inferCase{Name: "grouped_matmul", Values: map[string]*Tensor{"ec": i64([]int64{2}, 2, 3)}, Src: `program main { block 0 {
 var x : f32[5, 3]
 var w : f32[2, 3, 4]
 var ec : i64[2]
 var o : f32[-1, -1]
 op 1 grouped_matmul(X: x, W: w, ExpertCount: ec) -> (Out: o)
}}`},
		inferCase{Name: "grouped_matmul_grad", Values: map[string]*Tensor{"ec": i64([]int64{4}, 1, 0, 3, 1)}, Src: `program main { block 0 {
 var x : f32[5, 3]
 var w : f32[2, 3, 4]
 var ec : i64[4]
 var g : f32[5, 4]
 var dx : f32[-1, -1]
 var dw : f32[-1, -1, -1]
 op 1 grouped_matmul_grad(X: x, W: w, ExpertCount: ec, Out@GRAD: g) -> (X@GRAD: dx, W@GRAD: dw)
}}`},
		inferCase{Name: "number_count", IntHigh: 4, Src: `program main { block 0 {
 var n : i64[3, 2]
 var o : i64[-1]
 op 1 number_count(numbers: n) -> (Out: o) {upper_range = 4}
}}`},
		inferCase{Name: "cumsum", Src: `program main { block 0 {
 var x : f32[3, 4]
 var o : f32[-1, -1]
 op 1 cumsum(X: x) -> (Out: o) {axis = 0, exclusive = true}
}}`},
		inferCase{Name: "cumsum/flatten", Src: `program main { block 0 {
 var x : i64[3, 4]
 var o : i64[-1]
 op 1 cumsum(X: x) -> (Out: o) {flatten = true, reverse = true}
}}`},
		inferCase{Name: "assign_pos", Values: map[string]*Tensor{
			"x": i64([]int64{3, 2}, 0, 1, 1, 2, 0, 1), "cc": i64([]int64{3}, 2, 5, 6)}, Src: `program main { block 0 {
 var x : i64[3, 2]
 var cc : i64[3]
 var o : i64[-1]
 op 1 assign_pos(X: x, cum_count: cc) -> (Out: o)
}}`},
		// The routing's pos // k (its kernel is MoE's; its def elementwise's).
		inferCase{Name: "elementwise_floordiv/moe_routing", IntHigh: 9, Values: map[string]*Tensor{"k": i64([]int64{1}, 2)}, Src: `program main { block 0 {
 var pos : i64[6]
 var k : i64[1]
 var o : i64[-1]
 op 1 elementwise_floordiv(X: pos, Y: k) -> (Out: o) {axis = -1}
}}`},
		inferCase{Name: "limit_by_capacity", IntHigh: 5, Src: `program main { block 0 {
 var ec : i64[4]
 var cap : i64[2]
 var o : i64[-1]
 op 1 limit_by_capacity(expert_count: ec, capacity: cap) -> (Out: o) {n_worker = 2}
}}`},
		inferCase{Name: "prune_gate_by_capacity", IntHigh: 4, Src: `program main { block 0 {
 var gi : i64[3, 2]
 var ec : i64[4]
 var o : i64[-1, -1]
 op 1 prune_gate_by_capacity(GateIdx: gi, ExpertCount: ec) -> (NewGateIdx: o) {n_expert = 4, n_worker = 1}
}}`},
	)
}
