package complete_test

import (
	"slices"
	"testing"

	"github.com/distpass/distpass/complete"
)

// TestConflictTwoRuleConsumers: bias is wanted
// on mesh dim 0 by op 1 (from x) and on mesh dim 1 by op 2 (from y), both
// rule-based. Today op 2's rule refuses ("dim "a" is sharded along two
// mesh dims, 1 and 0"): a rule error, op 2 reads everything replicated,
// and Conflicts is empty. Item 7: the loser is a Conflict naming op,
// var, dim, both mesh dims and both origins.
func TestConflictTwoRuleConsumers(t *testing.T) {
	m := parseModule(t, "conflict2.dpir", `module conflict2
mesh world shape [2, 2] dims [a, b] ranks [0, 1, 2, 3]
program main {
  block 0 {
    var x : f64[4, 8] @world[0, -1] {is_data, stop_gradient}
    var y : f64[4, 8] @world[1, -1] {is_data, stop_gradient}
    param bias : f64[4, 8] {trainable}
    var s : f64[4, 8]
    var t : f64[4, 8]
    op 1 elementwise_add(X: x, Y: bias) -> (Out: s) {axis = -1} role forward
    op 2 elementwise_add(X: y, Y: bias) -> (Out: t) {axis = -1} role forward
  }
}
`)
	rep, err := complete.Complete(m, complete.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := complete.Conflict{Op: 2, OpType: "elementwise_add", Var: "bias", Dim: 0,
		Kept: 0, KeptFrom: "var x", Lost: 1, LostFrom: "var y"}
	if !slices.Contains(rep.Conflicts, want) {
		t.Errorf("conflicts %+v, want %+v among them\n%s", rep.Conflicts, want, reportText(t, rep))
	}
}

// TestConflictBackwardDropped: p gets mesh dim
// 0 on its dim 0 from op 1 (from a); op 2's rule, run backward from its
// annotated output t (@world[1, -1]), wants mesh dim 1 there. joinReq
// keeps the forward's and drops the backward's silently: Conflicts is
// empty, only op 2's output reshard of t is listed. The loser should be
// a Conflict.
func TestConflictBackwardDropped(t *testing.T) {
	m := parseModule(t, "conflict3.dpir", `module conflict3
mesh world shape [2, 2] dims [a, b] ranks [0, 1, 2, 3]
program main {
  block 0 {
    var a : f64[4, 8] @world[0, -1] {is_data, stop_gradient}
    param p : f64[4, 8] {trainable}
    var s : f64[4, 8]
    var t : f64[4, 8] @world[1, -1]
    op 1 elementwise_add(X: a, Y: p) -> (Out: s) {axis = -1} role forward
    op 2 relu(X: p) -> (Out: t) role forward
  }
}
`)
	rep, err := complete.Complete(m, complete.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := complete.Conflict{Op: 2, OpType: "relu", Var: "p", Dim: 0,
		Kept: 0, KeptFrom: "var a", Lost: 1, LostFrom: "var t"}
	if !slices.Contains(rep.Conflicts, want) {
		t.Errorf("conflicts %+v, want %+v among them\n%s", rep.Conflicts, want, reportText(t, rep))
	}
}
