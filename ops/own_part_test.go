package ops_test

import (
	"testing"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/ops"
	"github.com/distpass/distpass/spmd"
)

// ReadsOwnPart, which every caller of spmd.NeedsReshard asks: the
// OwnPart trait, a grad type answering by its forward type; and the two
// together on a partial input, as the callers put them.
func TestReadsOwnPart(t *testing.T) {
	for _, c := range []struct {
		typ  string
		want bool
	}{
		{"relu", false},
		{"scale", false},
		{"relu_grad", false},
		{"alltoall", true},
		{"global_scatter", true},
		{"global_scatter_grad", true},
		{"no_such_op", false},
		{"no_such_op_grad", false},
	} {
		if got := ops.ReadsOwnPart(c.typ); got != c.want {
			t.Errorf("ReadsOwnPart(%q) = %v, want %v", c.typ, got, c.want)
		}
	}

	world := &ir.ProcessMesh{Name: "world", Shape: []int{2, 2}, DimNames: []string{"dp", "mp"}, ProcessIDs: []int{0, 1, 2, 3}}
	half := &ir.ProcessMesh{Name: "half", Shape: []int{2}, DimNames: []string{"dp"}, ProcessIDs: []int{0, 1}}
	dist := func(mesh string, p []ir.Partial, m ...int) *ir.TensorDist {
		return &ir.TensorDist{Mesh: mesh, DimsMapping: m, Partial: p}
	}
	p1 := []ir.Partial{{Dim: 1, Reduce: ir.ReduceSum}}
	for _, c := range []struct {
		name    string
		typ     string
		input   bool
		m       []int
		om      *ir.ProcessMesh
		vd      *ir.TensorDist
		vm      *ir.ProcessMesh
		carries bool
		want    bool
	}{
		{"a partial read whole", "relu", true, []int{0, -1}, world, dist("world", p1, 0, -1), world, false, true},
		{"a partial read as its own part", "alltoall", true, []int{0, -1}, world, dist("world", p1, 0, -1), world, false, false},
		{"a grad op of an own-part reader", "global_scatter_grad", true, []int{0, -1}, world, dist("world", p1, 0, -1), world, false, false},
		{"partial, replicated, from another mesh", "relu", true, []int{-1}, half, dist("world", p1, -1), world, true, true},
		{"partial counts into an exchange from another mesh", "alltoall", true, []int{-1}, half, dist("world", p1, -1), world, false, false},
	} {
		if got := spmd.NeedsReshard(ops.ReadsOwnPart(c.typ), c.input, c.m, c.om, c.vd, c.vm, c.carries); got != c.want {
			t.Errorf("%s: NeedsReshard = %v, want %v", c.name, got, c.want)
		}
	}
}
