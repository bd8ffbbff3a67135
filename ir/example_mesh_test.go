package ir_test

import (
	"fmt"

	"github.com/distpass/distpass/ir"
)

func ExampleProcessMesh_Group() {
	// [[0, 1, 2, 3],
	//  [4, 5, 6, 7]]
	pm := &ir.ProcessMesh{
		Name:       "world",
		Shape:      []int{2, 4},
		DimNames:   []string{"dp", "mp"},
		ProcessIDs: []int{0, 1, 2, 3, 4, 5, 6, 7},
	}
	mp, _ := pm.Group(pm.DimIndex("mp"), 3)
	dp, _ := pm.Group(pm.DimIndex("dp"), 3)
	fmt.Println("mp group of rank 3:", mp)
	fmt.Println("dp group of rank 3:", dp)
	fmt.Println("all dp groups:", pm.Groups(pm.DimIndex("dp")))
	// Output:
	// mp group of rank 3: [0 1 2 3]
	// dp group of rank 3: [3 7]
	// all dp groups: [[0 4] [1 5] [2 6] [3 7]]
}
