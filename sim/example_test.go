package sim_test

import (
	"fmt"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/sim"
)

// Run a program on fed values with the reference kernels.
func ExampleRun() {
	m, err := ir.Parse("scale.dpir", []byte(`program main {
  block 0 {
    var x : f64[2, 2] {is_data}
    var y : f64[2, 2]
    var z : f64[2, 2]
    op 1 scale(X: x) -> (Out: y) {bias = 1.0, scale = 2.0}
    op 2 relu(X: y) -> (Out: z)
  }
}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	x := sim.MustFromData(ir.F64, []int64{2, 2}, []float64{1, -2, 3, -4})
	scope, err := sim.Run(m, sim.Scope{"x": x}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(scope["z"].Data)
	// Output:
	// [3 0 7 0]
}
