package lower_test

import (
	"fmt"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/lower"
	"github.com/distpass/distpass/passes"
)

// A reshard from rows split over dp to columns split over dp is one
// all-to-all on each rank, after the split and concat that line its
// column blocks up along dim 0, where the all-to-all cuts; what comes
// back is the rank's columns, every rank's rows in order.
func ExampleReshard() {
	m, err := ir.Parse("rows_to_cols.dpir", []byte(`mesh world shape [2] dims [dp] ranks [0, 1]
program main {
  block 0 {
    var x : f32[4, 6] @world[0, -1] {is_data, stop_gradient}
    var y : f32[4, 6] @world[-1, 0]
    op 1 reshard(X: x) -> (Out: y) role forward
         dist @world impl reshard:0 [x: [0, -1] -> y: [-1, 0]]
  }
}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := passes.Partition(m, lower.DefaultRegistry(), 1); err != nil {
		fmt.Println(err)
		return
	}
	for _, op := range m.Main.Global().Ops {
		fmt.Println(op.Type, op.Inputs, "->", op.Outputs)
	}
	// Output:
	// split [{X [x]}] -> [{Out [y.part_0 y.part_1]}]
	// concat [{X [y.part_0 y.part_1]}] -> [{Out [y.a2a_0]}]
	// alltoall [{X [y.a2a_0]}] -> [{Out [y]}]
}
