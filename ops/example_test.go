package ops_test

import (
	"fmt"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/ops"
)

// Verify checks each op against its definition: here a declared output
// shape that the inputs contradict, and a custom op, accepted and counted.
func ExampleVerify() {
	m, err := ir.Parse("ex.dpir", []byte(`program main {
  block 0 {
    var x : f32[4, 8] {is_data}
    var w : f32[8, 16]
    var h : f32[4, 8]
    var g : f32[4, 8]
    op 1 matmul_v2(X: x, Y: w) -> (Out: h)
    op 2 my_op(X: h) -> (Out: g)
  }
}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	st, err := ops.Verify(m, ops.Options{})
	fmt.Println(err)
	fmt.Println(st.Ops, st.Defined, st.Undefined)
	// Output:
	// main block 0: op 1 matmul_v2: output Out h: declared f32[4, 8], inferred [4, 16] from X f32[4, 8], Y f32[8, 16]
	// 2 1 [{my_op 1}]
}

// Lookup gives an op type's definition: its slots, attrs, shape rule and
// gradient.
func ExampleLookup() {
	d := ops.Lookup("matmul_v2")
	for _, s := range d.Inputs {
		fmt.Print(s.Name, " ")
	}
	fmt.Println("->", d.Outputs[0].Name)
	for _, a := range d.Attrs {
		fmt.Println(a.Name, a.Type, a.Default)
	}
	fmt.Println(d.GradType(), ops.Lookup(d.GradType()).Forward().Type)
	// Output:
	// X Y -> Out
	// trans_x bool false
	// trans_y bool false
	// matmul_v2_grad matmul_v2
}

// InferOp gives the output types an op's definition infers from its
// inputs, for passes that create ops (completion, resharding).
func ExampleInferOp() {
	m, err := ir.Parse("ex.dpir", []byte(`program main {
  block 0 {
    var x : f32[2, 3, 4] {is_data}
    var y : f32[4] {is_data}
  }
}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	b := m.Main.Global()
	op := &ir.Op{ID: 1, Type: "elementwise_add", Inputs: []ir.Slot{ir.S("X", "x"), ir.S("Y", "y")}, Outputs: ir.Slots("Out", "z")}
	outs, err := ops.InferOp(op, b.Var)
	fmt.Println(outs[0].Slot, outs[0].Type, err)
	// Output:
	// Out f32[2, 3, 4] <nil>
}

// ShardingRuleOf gives an op's sharding rule: here row-parallel
// matmul_v2, whose contraction is split, so Out is partial.
func ExampleShardingRuleOf() {
	m, err := ir.Parse("ex.dpir", []byte(`program main {
  block 0 {
    var x : f32[8, 32] {is_data}
    var w : f32[32, 64]
    var h : f32[8, 64]
    op 1 matmul_v2(X: x, Y: w) -> (Out: h)
  }
}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	b := m.Main.Global()
	r, err := ops.ShardingRuleOf(b.Ops[0], b.Var)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(r)
	s, err := r.Forward([]int{2, 4}, [][]int{{0, 1}, {-1, -1}})
	fmt.Println(s.Inputs, s.Outputs, s.Partial, err)
	s, err = r.Backward([]int{2, 4}, [][]int{{0, 1}})
	fmt.Println(s.Inputs, s.Outputs, err)
	// Output:
	// mk,kn->mn
	// [[0 1] [1 -1]] [[0 -1]] [[{1 sum}]] <nil>
	// [[0 -1] [-1 1]] [[0 1]] <nil>
}
