package complete_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/distpass/distpass/check"
	"github.com/distpass/distpass/complete"
	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/passes"
)

// gatheredColumns is the shape of a sequence-parallel block: a, split
// on its rows, is read whole (all-gathered) by two column-parallel
// matmuls of the rule-based impl; their sum is read whole by the loss.
// Only the forward ops are annotated.
const gatheredColumns = `module cols
mesh world shape [2] dims [mp] ranks [0, 1]
program main {
  block 0 {
    var x : f64[4, 6] @world[0, -1] {is_data}
    var a : f64[4, 6] @world[0, -1]
    param wq : f64[6, 8] @world[-1, 0] {trainable}
    param wk : f64[6, 8] @world[-1, 0] {trainable}
    var yq : f64[4, 8] @world[-1, 0]
    var yk : f64[4, 8] @world[-1, 0]
    var s : f64[4, 8] @world[-1, 0]
    var loss : f64[] @world[]
    op 1 scale(X: x) -> (Out: a) {scale = 2.0, bias = 0.0, bias_after_scale = true} role forward
         dist @world impl spmd:0 [x: [0, -1] -> a: [0, -1]]
    op 2 matmul_v2(X: a, Y: wq) -> (Out: yq) {trans_x = false, trans_y = false} role forward
         dist @world impl spmd:0 [a: [-1, -1], wq: [-1, 0] -> yq: [-1, 0]]
    op 3 matmul_v2(X: a, Y: wk) -> (Out: yk) {trans_x = false, trans_y = false} role forward
         dist @world impl spmd:0 [a: [-1, -1], wk: [-1, 0] -> yk: [-1, 0]]
    op 4 elementwise_add(X: yq, Y: yk) -> (Out: s) {axis = -1} role forward
         dist @world impl spmd:0 [yq: [-1, 0], yk: [-1, 0] -> s: [-1, 0]]
    op 5 mean(X: s) -> (Out: loss) role forward|loss
         dist @world impl default:0 [s: [-1, -1] -> loss: []]
  }
}
`

// TestGradReadsAsForward: the grad op of a rule-based op reads each
// forward var as the forward op did (a all-gathered, the weights split
// by columns), not as the var is (a split by rows would make the rule
// gather the weights); the parts of a@GRAD, partial alike, are summed as
// they are and the sum reduce-scattered once. check proves the result.
func TestGradReadsAsForward(t *testing.T) {
	m, err := ir.Parse("cols.dpir", []byte(gatheredColumns))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := passes.AppendBackward(m, "loss"); err != nil {
		t.Fatal(err)
	}
	// The backward as completion gets it from models.AnnotateGPT's
	// sequence-parallel strategies: without dists.
	g := m.Main.Global()
	for _, op := range g.Ops {
		if op.Fwd != 0 || !op.Role.IsForward() {
			op.Dist = nil
		}
	}
	for _, v := range g.Vars() {
		if strings.Contains(v.Name(), "@GRAD") {
			v.Dist = nil
		}
	}
	rep, err := complete.Complete(m, complete.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var grads int
	for _, op := range g.Ops {
		if op.Type != "matmul_v2_grad" {
			continue
		}
		grads++
		for arg, want := range map[string]string{"a": "[-1, -1]", op.Input("Y")[0]: "[-1, 0]"} {
			if m, _ := op.Dist.InputMapping(arg); ir.FormatInts(m) != want {
				t.Errorf("%s reads %s as %s, want %s as its forward op", op, arg, ir.FormatInts(m), want)
			}
		}
	}
	if grads != 2 {
		t.Fatalf("%d matmul_v2_grad ops, want 2", grads)
	}
	var vars []string
	for _, r := range rep.Reshards {
		vars = append(vars, r.Var)
	}
	// a: gathered once for both matmuls (and their grad ops); s for the
	// loss; a@GRAD, the sum of partial parts, to a's rows; the weights'
	// grads are neither partial nor gathered.
	for _, want := range []string{"a", "s", "a@GRAD"} {
		if !slices.Contains(vars, want) {
			t.Errorf("reshards %v: none of %s", vars, want)
		}
	}
	for _, v := range vars {
		if strings.Contains(v, "@RENAME@") || strings.HasPrefix(v, "w") {
			t.Errorf("reshards %v: %s is read as it is", vars, v)
		}
	}
	if d := g.Var("a@GRAD").Dist; !d.IsPartial() || ir.FormatInts(d.DimsMapping) != "[-1, -1]" {
		t.Errorf("a@GRAD is %+v, want [-1, -1] partial [0]", d)
	}
	passes.InsertReshards(m)
	cr, err := check.Run(context.Background(), m, check.Options{Steps: 2})
	if err != nil {
		t.Fatal(err)
	}
	if err := cr.Err(); err != nil {
		t.Fatal(err)
	}
	if cr.Count("grad") == 0 {
		t.Error("check compared no grad")
	}
}
