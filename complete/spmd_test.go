package complete_test

import (
	"context"
	"testing"

	"github.com/distpass/distpass/check"
	"github.com/distpass/distpass/complete"
	"github.com/distpass/distpass/ir"
)

// TestGenericImplFromCompletion: mappings no Paddle-flavoured impl lowers
// (2-D tensor parallelism: X's k and Y's n both split) complete to the
// rule-based impl, whose partial Out check reduces and compares; the
// activation after it is whole by its own rule (relu reads a partial: a
// reshard is needed, and the report says so).
func TestGenericImplFromCompletion(t *testing.T) {
	m, err := ir.Parse("tp2d.dpir", []byte(`module tp2d
mesh world shape [2, 2] dims [a, b] ranks [0, 1, 2, 3]
program main {
  block 0 {
    var x : f64[4, 8] @world[-1, 0] {is_data, stop_gradient}
    param w : f64[8, 4] @world[0, 1] {trainable}
    var y : f64[4, 4]
    var z : f64[4, 4]
    op 1 matmul_v2(X: x, Y: w) -> (Out: y) {trans_x = false, trans_y = false} role forward
    op 2 relu(X: y) -> (Out: z) role forward
  }
}
`))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := complete.Complete(m, complete.Options{})
	if err != nil {
		t.Fatal(err)
	}
	g := m.Main.Global()
	if d := g.Ops[0].Dist; d.ImplType != "spmd" {
		t.Errorf("matmul_v2 got impl %s:%d, want spmd:0", d.ImplType, d.ImplIndex)
	}
	if y := g.Var("y").Dist; !y.IsPartial() || y.Partial[0].Dim != 0 || ir.FormatInts(y.DimsMapping) != "[-1, 1]" {
		t.Errorf("y: %+v, want [-1, 1] partial [0]", y)
	}
	if len(rep.Reshards) != 1 || rep.Reshards[0].Var != "y" || rep.Reshards[0].Op != 2 {
		t.Fatalf("reshards %+v, want relu's y", rep.Reshards)
	}
	// The matmul alone (no consumer needing a reshard) is proven by check.
	g.Ops = g.Ops[:1]
	g.RemoveVar("z")
	cr, err := check.Run(context.Background(), m, check.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := cr.Err(); err != nil {
		t.Fatal(err)
	}
	if cr.Count("activation") == 0 {
		t.Error("check compared no activation")
	}
}
