package sim

import (
	"testing"

	"github.com/distpass/distpass/ir"
)

// TestReducePartialTwoDims: a value partial along both dims of a 2×2
// mesh is reduced over all four ranks, each dim with its own reduction.
// It used to reduce the second dim's group from the ranks' raw parts,
// dropping the first dim's reduction.
func TestReducePartialTwoDims(t *testing.T) {
	mesh := &ir.ProcessMesh{Name: "w", Shape: []int{2, 2}, ProcessIDs: []int{0, 1, 2, 3}, DimNames: []string{"dp", "sp"}}
	local := map[int]*Tensor{0: Scalar(ir.F64, 1), 1: Scalar(ir.F64, 2), 2: Scalar(ir.F64, 3), 3: Scalar(ir.F64, 10)}
	for _, tc := range []struct {
		partial []ir.Partial
		want    float64
	}{
		{[]ir.Partial{{Dim: 0, Reduce: ir.ReduceAvg}, {Dim: 1, Reduce: ir.ReduceAvg}}, 4},
		{[]ir.Partial{{Dim: 0, Reduce: ir.ReduceSum}, {Dim: 1, Reduce: ir.ReduceSum}}, 16},
		{[]ir.Partial{{Dim: 0, Reduce: ir.ReduceAvg}, {Dim: 1, Reduce: ir.ReduceSum}}, 8},
		{[]ir.Partial{{Dim: 0, Reduce: ir.ReduceMax}, {Dim: 1, Reduce: ir.ReduceMax}}, 10},
		{[]ir.Partial{{Dim: 1, Reduce: ir.ReduceSum}}, 3}, // rank 0's group along sp: 0 and 1
	} {
		for r := range 4 {
			want := tc.want
			if len(tc.partial) == 1 && r >= 2 {
				want = 13
			}
			got, err := ReducePartial(local, &ir.TensorDist{Mesh: "w", DimsMapping: []int{}, Partial: tc.partial}, mesh, r)
			if err != nil {
				t.Fatal(err)
			}
			if got.Data[0] != want {
				t.Errorf("%v on rank %d: %v, want %v", tc.partial, r, got.Data[0], want)
			}
		}
	}
	if local[0].Data[0] != 1 {
		t.Error("ReducePartial changed a rank's value")
	}
}
