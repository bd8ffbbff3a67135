package spmd_test

import (
	"fmt"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/spmd"
)

// A matmul's rule: X's rows split along mesh dim 0 and the contracted k
// along mesh dim 1 give Out split by rows and partial (a sum) along mesh
// dim 1; Y follows k.
func ExampleEinsum() {
	e := &spmd.Einsum{In: []string{"mk", "kn"}, Out: []string{"mn"}, Reduce: ir.ReduceSum}
	s, err := e.Forward([]int{2, 3}, [][]int{{0, 1}, {-1, -1}})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(e, s.Inputs, s.Outputs, ir.FormatPartial(s.Partial[0]))
	// Output:
	// mk,kn->mn [[0 1] [1 -1]] [[0 -1]] [1]
}

// Merge gives each letter one mesh dim: here a is sharded along mesh
// dim 0 in the first tensor and b in the second; resolved, the mesh dim
// stays with a, the letter sharded on it first; unresolved, it is an
// error.
func ExampleMerge() {
	m, err := spmd.Merge([]string{"ab", "ba"}, [][]int{{0, -1}, {0, -1}}, true)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(m.Dim('a'), m.Dim('b'))
	_, err = spmd.Merge([]string{"ab", "ba"}, [][]int{{0, -1}, {0, -1}}, false)
	fmt.Println(err)
	// Output:
	// 0 -1
	// mesh dim 0 shards dims "a" and "b"
}
