package ir_test

import (
	"fmt"
	"os"

	"github.com/distpass/distpass/ir"
)

// Build a one-layer, data- and model-parallel program with the Builder.
func ExampleBuilder() {
	m := ir.NewModule("mlp")
	b := ir.NewBuilder(m)
	b.Mesh("world", []int{2, 2}, []string{"dp", "mp"}, []int{0, 1, 2, 3})
	b.Var("x", ir.Tensor(ir.F32, 8, 16)).WithDist("world", 0, -1).WithFlags(ir.FlagIsData | ir.FlagStopGradient)
	b.Param("w", ir.Tensor(ir.F32, 16, 32)).WithDist("world", -1, 1).WithFlags(ir.FlagTrainable)
	b.Var("h", ir.Tensor(ir.F32, 8, 32)).WithDist("world", 0, 1)
	op := b.Op("matmul_v2", ir.Slots("X", "x", "Y", "w"), ir.Slots("Out", "h"),
		ir.A("trans_x", ir.Bool(false)), ir.A("trans_y", ir.Bool(false)))
	b.Annotate(op, "matmul_v2", 0)
	if err := b.Err(); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(ir.PrintOp(op))
	// Output:
	// op 1 matmul_v2(X: x, Y: w) -> (Out: h) {trans_x = false, trans_y = false} role forward dist @world impl matmul_v2:0 [x: [0, -1], w: [-1, 1] -> h: [0, 1]]
}

// Print writes the canonical text of a module.
func ExamplePrint() {
	m := ir.NewModule("tiny")
	b := ir.NewBuilder(m)
	b.Var("x", ir.Tensor(ir.F32, 4))
	b.Var("y", ir.Tensor(ir.F32, 4))
	b.Op("scale", ir.Slots("X", "x"), ir.Slots("Out", "y"), ir.A("scale", ir.Float(2)), ir.A("bias", ir.Float(0.5)))
	os.Stdout.Write(ir.Print(m))
	// Output:
	// module tiny
	//
	// program main {
	//   block 0 {
	//     var x : f32[4]
	//     var y : f32[4]
	//     op 1 scale(X: x) -> (Out: y) {bias = 0.5, scale = 2.0} role forward
	//   }
	// }
}

// Parse reads .dpir text; errors carry file:line:col.
func ExampleParse() {
	src := `
program main {
  block 0 {
    var x : f32[2, 3] {is_data}
    var y : f32[2, 3]
    op 1 relu(X: x) -> (Out: y)
  }
}`
	m, err := ir.Parse("relu.dpir", []byte(src))
	if err != nil {
		fmt.Println(err)
		return
	}
	op := m.Main.Global().Ops[0]
	fmt.Println(op.Type, op.Input("X"), op.Output("Out"), m.Main.Global().Var("x").Type)

	_, err = ir.Parse("bad.dpir", []byte("program main {\n  block 0 {\n    var x : f32[2,, 3]\n  }\n}"))
	fmt.Println(err)
	// Output:
	// relu [x] [y] f32[2, 3]
	// bad.dpir:3:19: expected dim, found ","
}
