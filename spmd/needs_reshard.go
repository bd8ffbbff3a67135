package spmd

import (
	"slices"

	"github.com/distpass/distpass/ir"
)

// NeedsReshard reports whether an op on mesh om, reading (input) or
// writing an arg with mapping m, sees the arg's var, whose dist is vd on
// mesh vm, otherwise than as it is: the data would have to move first.
// Completion's list of reshards, check-annotations and insert-reshards
// all ask it, so that they agree on where data moves.
//
// Two meshes of one shape over the same ranks in the same order are one.
// A replicated input may be read from another mesh that holds every rank
// of om, and written into one (a partial one only read, by an op that
// reads its own part). A partial
// input is read whole unless the op carries it through to a partial
// output (carries: ops.PassesPartial, the caller knowing the output's
// state) or reads its own part (own: the op reads its own part of a
// partial input, as ops.ReadsOwnPart says of its type).
// An output is compared by mesh and mapping only.
func NeedsReshard(own, input bool, m []int, om *ir.ProcessMesh, vd *ir.TensorDist, vm *ir.ProcessMesh, carries bool) bool {
	if vd == nil || om == nil || vm == nil {
		return false // nothing to compare: the annotation checks say so
	}
	own = own && input
	if !SameMesh(om, vm) {
		if !allUnmapped(m) || !allUnmapped(vd.DimsMapping) || !holdsRanks(vm, om) {
			return true
		}
		return vd.IsPartial() && !own
	}
	if !slices.Equal(m, vd.DimsMapping) {
		return true
	}
	return input && vd.IsPartial() && !carries && !own
}

// SameMesh reports whether a and b are one mesh: the same one, or two of
// one shape over the same ranks in the same order.
func SameMesh(a, b *ir.ProcessMesh) bool {
	return a == b || a.Name == b.Name ||
		slices.Equal(a.Shape, b.Shape) && slices.Equal(a.ProcessIDs, b.ProcessIDs)
}

// holdsRanks reports whether every rank of b is one of a's.
func holdsRanks(a, b *ir.ProcessMesh) bool {
	for _, r := range b.ProcessIDs {
		if !a.Contains(r) {
			return false
		}
	}
	return true
}

func allUnmapped(m []int) bool {
	for _, x := range m {
		if x != -1 {
			return false
		}
	}
	return true
}
