package complete_test

import (
	"context"
	"strings"
	"testing"

	"github.com/distpass/distpass/check"
	"github.com/distpass/distpass/complete"
	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/passes"
)

// TestLazyPartial: a row-parallel matmul's Out is whole by default (its
// impl all-reduces it) and partial with Lazy (no collective: whoever
// needs it whole pays); both partition and check.
func TestLazyPartial(t *testing.T) {
	const text = `module row
mesh world shape [2] dims [mp] ranks [0, 1]
program main {
  block 0 {
    var x : f64[4, 8] @world[-1, 0] {is_data, stop_gradient}
    param w : f64[8, 6] @world[0, -1] {trainable}
    var y : f64[4, 6]
    op 1 matmul_v2(X: x, Y: w) -> (Out: y) {trans_x = false, trans_y = false} role forward
  }
}
`
	for _, lazy := range []bool{false, true} {
		m, err := ir.Parse("row.dpir", []byte(text))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := complete.Complete(m, complete.Options{Lazy: lazy}); err != nil {
			t.Fatal(err)
		}
		op, y := m.Main.Global().Ops[0], m.Main.Global().Var("y")
		if op.Dist.ImplType != "matmul_v2" || op.Dist.ImplIndex != 1 {
			t.Errorf("lazy %v: impl %s:%d, want matmul_v2:1", lazy, op.Dist.ImplType, op.Dist.ImplIndex)
		}
		if y.Dist.IsPartial() != lazy {
			t.Errorf("lazy %v: y is %+v", lazy, y.Dist)
		}
		ranks, err := passes.PartitionAll(context.Background(), m, nil)
		if err != nil {
			t.Fatal(err)
		}
		allreduce := strings.Contains(string(ir.Print(ranks[0])), "c_allreduce_sum")
		if allreduce == lazy {
			t.Errorf("lazy %v: rank 0 has a c_allreduce_sum: %v", lazy, allreduce)
		}
		cr, err := check.Run(context.Background(), m, check.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := cr.Err(); err != nil {
			t.Errorf("lazy %v: %v", lazy, err)
		}
	}
}
