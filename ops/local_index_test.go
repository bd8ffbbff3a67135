package ops_test

import (
	"fmt"
	"testing"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/ops"
	"github.com/distpass/distpass/spmd"
)

// TestLocalIndexRule: a gather or scatter by positions into each rank's
// own rows split along mesh dim 1 keeps the rows it indexes split along
// it both ways (another dim of theirs split along it yields), gives the
// gathered rows unsplit, and nothing partial; other ops have none.
func TestLocalIndexRule(t *testing.T) {
	src := `program main {
 block 0 {
  var u : f64[8, 4]
  var tok : i64[-1]
  var xs : f64[-1, 4]
  var zero : f64[16, 4]
  var yb : f64[-1, 4]
  var ys : f64[16, 4]
  op 1 gather(X: u, Index: tok) -> (Out: xs) {axis = 0}
  op 2 scatter(X: zero, Ids: tok, Updates: yb) -> (Out: ys) {overwrite = true}
  op 3 relu(X: u) -> (Out: u)
 }
}
`
	m, err := ir.Parse("local", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	b := m.Main.Global()
	mesh := []int{2, 2}
	run := func(op *ir.Op, forward bool, given ...[]int) string {
		t.Helper()
		r, err := ops.LocalIndexRule(op, b.Var, 1)
		if err != nil || r == nil {
			t.Fatalf("%s: rule %v, %v", op, r, err)
		}
		var s spmd.Sharding
		if forward {
			s, err = r.Forward(mesh, given)
		} else {
			s, err = r.Backward(mesh, given)
		}
		if err != nil {
			t.Fatalf("%s: %v", op, err)
		}
		return fmt.Sprint(s.Inputs, s.Outputs, s.Partial)
	}
	for _, c := range []struct {
		op      int
		forward bool
		given   [][]int
		want    string
	}{
		{0, true, [][]int{{-1, -1}, {-1}}, "[[1 -1] []] [[-1 -1]] [[]]"},
		{0, true, [][]int{{-1, 1}, {-1}}, "[[1 -1] []] [[-1 -1]] [[]]"},
		{0, true, [][]int{{0, -1}, {-1}}, "[[1 -1] []] [[-1 -1]] [[]]"},
		{0, false, [][]int{{-1, 0}}, "[[1 0] []] [[-1 0]] [[]]"},
		{1, true, [][]int{{-1, -1}, {-1}, {-1, -1}}, "[[1 -1] [] [-1 -1]] [[1 -1]] [[]]"},
		{1, false, [][]int{{-1, -1}}, "[[1 -1] [] [-1 -1]] [[1 -1]] [[]]"},
	} {
		if got := run(b.Ops[c.op], c.forward, c.given...); got != c.want {
			t.Errorf("%s forward %v given %v: %s, want %s", b.Ops[c.op], c.forward, c.given, got, c.want)
		}
	}
	if r, err := ops.LocalIndexRule(b.Ops[2], b.Var, 1); r != nil || err != nil {
		t.Errorf("relu: %v, %v; want no rule", r, err)
	}
}
