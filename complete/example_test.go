package complete_test

import (
	"fmt"

	"github.com/distpass/distpass/complete"
	"github.com/distpass/distpass/ir"
)

// Complete infers every dist from the data's batch split on dp and the
// weight split by columns on mp: the product is split as both, the bias
// takes its consumer's split, and the matmul gets the column-parallel
// impl.
func Example() {
	m, err := ir.Parse("mlp.dpir", []byte(`module mlp
mesh world shape [2, 2] dims [dp, mp] ranks [0, 1, 2, 3]
program main {
  block 0 {
    var x : f32[8, 16] @world[0, -1] {is_data, stop_gradient}
    param w : f32[16, 32] @world[-1, 1] {trainable}
    param b : f32[32] {trainable}
    var h : f32[8, 32]
    var y : f32[8, 32]
    op 1 matmul_v2(X: x, Y: w) -> (Out: h) {trans_x = false, trans_y = false} role forward
    op 2 elementwise_add(X: h, Y: b) -> (Out: y) {axis = -1} role forward
  }
}
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	rep, err := complete.Complete(m, complete.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	g := m.Main.Global()
	for _, name := range []string{"b", "h", "y"} {
		fmt.Println(ir.PrintVar(g.Var(name)))
	}
	for _, op := range g.Ops {
		fmt.Printf("op %d %s: %s:%d\n", op.ID, op.Type, op.Dist.ImplType, op.Dist.ImplIndex)
	}
	fmt.Println(rep.Summary())
	out, _ := rep.Explain("b")
	fmt.Print(out)
	// Output:
	// param b : f32[32] @world[1] {trainable}
	// var h : f32[8, 32] @world[0, 1]
	// var y : f32[8, 32] @world[0, 1]
	// op 1 matmul_v2: matmul_v2:0
	// op 2 elementwise_add: elementwise:0
	// 3 vars completed (2 annotated), 2 ops (0 kept), 2 sweeps (4 op visits); 0 conflicts, 0 uneven, 0 barriers, 0 rule conflicts, 0 rule errors, 0 fallbacks, 0 reshards needed
	// b dim 0: split along mesh dim 1 (mp), from var w
	//   op 1 matmul_v2: w dim 1 -> h dim 1
	//   op 2 elementwise_add: h dim 1 -> b dim 0
}
