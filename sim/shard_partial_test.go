package sim_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/sim"
)

// TestShardPartialRoundTrip: a partial dist's parts, as Shard cuts them,
// differ from rank to rank and reduce (ReducePartial) to the value, for
// every reduction, float and integer, over one and two partial mesh
// dims, with a split dim beside them.
func TestShardPartialRoundTrip(t *testing.T) {
	mesh := &ir.ProcessMesh{Name: "m", Shape: []int{2, 3}, DimNames: []string{"a", "b"}, ProcessIDs: []int{0, 1, 2, 3, 4, 5}}
	for _, dt := range []ir.DType{ir.F64, ir.I64} {
		global := &sim.Tensor{DType: dt, Shape: []int64{4, 3}}
		for i := range 12 {
			global.Data = append(global.Data, float64(7*i-20))
		}
		for _, ps := range [][]ir.Partial{
			{{Dim: 1, Reduce: ir.ReduceSum}}, {{Dim: 1, Reduce: ir.ReduceAvg}},
			{{Dim: 1, Reduce: ir.ReduceMax}}, {{Dim: 1, Reduce: ir.ReduceMin}},
			{{Dim: 0, Reduce: ir.ReduceSum}, {Dim: 1, Reduce: ir.ReduceAvg}},
			{{Dim: 0, Reduce: ir.ReduceMax}, {Dim: 1, Reduce: ir.ReduceSum}},
		} {
			dm := []int{-1, -1}
			if len(ps) == 1 {
				dm[0] = 0 // dim 0 split along a, b partial
			}
			dist := &ir.TensorDist{Mesh: "m", DimsMapping: dm, Partial: ps}
			name := fmt.Sprintf("%s %v", dt, ps)
			local := map[int]*sim.Tensor{}
			for r := range 6 {
				p, err := sim.Shard(global, dist, mesh, r)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				local[r] = p
			}
			if fmt.Sprint(local[0].Data) == fmt.Sprint(local[len(local)-1].Data) && len(ps) == 2 {
				t.Errorf("%s: ranks 0 and 5 hold the same part", name)
			}
			for r := range 6 {
				got, err := sim.ReducePartial(local, dist, mesh, r)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				want, _ := sim.Shard(global, &ir.TensorDist{Mesh: "m", DimsMapping: dm}, mesh, r)
				for i := range want.Data {
					if math.Abs(got.Data[i]-want.Data[i]) > 1e-9 {
						t.Fatalf("%s: rank %d reduces to %v, want %v", name, r, got.Data, want.Data)
					}
				}
			}
			if fmt.Sprint(local[0].Data) == fmt.Sprint(local[1].Data) && dm[0] < 0 {
				t.Errorf("%s: ranks 0 and 1 hold the same part", name)
			}
		}
	}
}
