package ir_test

import (
	"errors"
	"fmt"

	"github.com/distpass/distpass/ir"
)

func ExampleVerify() {
	m := ir.NewModule("tiny")
	bl := ir.NewBuilder(m)
	bl.Mesh("world", []int{2, 2}, []string{"dp", "mp"}, []int{0, 1, 2, 3})
	bl.Var("x", ir.Tensor(ir.F32, 8, 16)).WithDist("world", 0, -1)
	bl.Param("w", ir.Tensor(ir.F32, 16, 4)).WithDist("world", -1, 1)
	bl.Var("y", ir.Tensor(ir.F32, 8, 4)).WithDist("world", 0, 0) // mesh dim 0 twice
	bl.Op("matmul_v2", ir.Slots("X", "x", "Y", "w"), ir.Slots("Out", "y"))
	bl.Op("relu", ir.Slots("X", "y"), ir.Slots("Out", "z")) // z is not declared
	if err := bl.Err(); err != nil {
		panic(err)
	}

	err := ir.Verify(m)
	var ve *ir.VerifyError
	if errors.As(err, &ve) {
		for _, v := range ve.Violations {
			fmt.Println(v)
		}
	}
	// Output:
	// main block 0: var y: dims_mapping [0, 0] uses mesh dim 0 twice
	// main block 0: op 2 relu: output Out names undeclared var z
}
