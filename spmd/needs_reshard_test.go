package spmd_test

import (
	"testing"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/spmd"
)

// NeedsReshard, the one test completion, check-annotations and
// insert-reshards share: each rule, and each of its exceptions. own is
// what the op table says of the op (ops.ReadsOwnPart): alltoall and
// global_scatter_grad read their own part, relu and scale do not.
func TestNeedsReshard(t *testing.T) {
	world := &ir.ProcessMesh{Name: "world", Shape: []int{2, 2}, DimNames: []string{"dp", "mp"}, ProcessIDs: []int{0, 1, 2, 3}}
	alias := &ir.ProcessMesh{Name: "alias", Shape: []int{2, 2}, DimNames: []string{"a", "b"}, ProcessIDs: []int{0, 1, 2, 3}}
	half := &ir.ProcessMesh{Name: "half", Shape: []int{2}, DimNames: []string{"dp"}, ProcessIDs: []int{0, 1}}
	other := &ir.ProcessMesh{Name: "other", Shape: []int{2}, DimNames: []string{"dp"}, ProcessIDs: []int{4, 5}}
	dist := func(mesh string, p []ir.Partial, m ...int) *ir.TensorDist {
		return &ir.TensorDist{Mesh: mesh, DimsMapping: m, Partial: p}
	}
	p1 := []ir.Partial{{Dim: 1, Reduce: ir.ReduceSum}}
	for _, c := range []struct {
		name    string
		own     bool
		input   bool
		m       []int
		om      *ir.ProcessMesh
		vd      *ir.TensorDist
		vm      *ir.ProcessMesh
		carries bool
		want    bool
	}{
		{"as it is", false, true, []int{0, -1}, world, dist("world", nil, 0, -1), world, false, false},
		{"another mapping", false, true, []int{0, -1}, world, dist("world", nil, 0, 1), world, false, true},
		{"an output's other mapping", false, false, []int{0, -1}, world, dist("world", nil, 0, 1), world, false, true},
		{"an equal mesh of another name", false, true, []int{0, -1}, world, dist("alias", nil, 0, -1), alias, false, false},
		{"a partial read whole", false, true, []int{0, -1}, world, dist("world", p1, 0, -1), world, false, true},
		{"a partial carried", false, true, []int{0, -1}, world, dist("world", p1, 0, -1), world, true, false},
		{"a partial read as its own part", true, true, []int{0, -1}, world, dist("world", p1, 0, -1), world, false, false},
		{"a grad op of an own-part reader", true, true, []int{0, -1}, world, dist("world", p1, 0, -1), world, false, false},
		{"a partial output", false, false, []int{0, -1}, world, dist("world", p1, 0, -1), world, false, false},
		{"replicated, read on a mesh inside", false, true, []int{-1}, half, dist("world", nil, -1), world, false, false},
		{"replicated, read on a mesh of other ranks", false, true, []int{-1}, other, dist("world", nil, -1), world, false, true},
		{"replicated, read on a larger mesh", false, true, []int{-1}, world, dist("half", nil, -1), half, false, true},
		{"sharded, from another mesh", false, true, []int{0}, half, dist("world", nil, 0), world, false, true},
		{"partial, replicated, from another mesh", false, true, []int{-1}, half, dist("world", p1, -1), world, true, true},
		{"partial counts into an exchange from another mesh", true, true, []int{-1}, half, dist("world", p1, -1), world, false, false},
		{"partial, replicated, written into another mesh by an own-part reader", true, false, []int{-1}, half, dist("world", p1, -1), world, false, true},
		{"no dist", false, true, []int{0}, world, nil, world, false, false},
	} {
		if got := spmd.NeedsReshard(c.own, c.input, c.m, c.om, c.vd, c.vm, c.carries); got != c.want {
			t.Errorf("%s: NeedsReshard = %v, want %v", c.name, got, c.want)
		}
	}
}
