package ops

import (
	"slices"
	"strings"

	"github.com/distpass/distpass/ir"
)

// The data-parallel grad sync (Paddle's batch-dim rule): each rank
// differentiates its own loss on its batch shard, and the loss is the
// ranks' mean. What a grad op leaves in each of its grad outputs follows
// from what it computed, read from its slots and mappings, never from
// var names: both the lowering (lower.SyncGrads) and
// check-annotations decide by these two functions.

// GradSync is what the data-parallel sync does to a grad output.
type GradSync uint8

const (
	// GradKept: the grad is each rank's block of a grad split as the
	// batch (an activation's), or computed from whole values alone.
	GradKept GradSync = iota
	// GradSummed: the grad is a fold over the batch shards, each rank's
	// part of a sum: summed over the axis's group, then scaled by
	// 1/|group|.
	GradSummed
	// GradScaled: the grad of a parameter split along the axis (an
	// expert's weight), the only copy of its shard, for the ranks'
	// summed losses: scaled by 1/|group| alone.
	GradScaled
)

// BatchAxis returns the mesh dim of size > 1 along which grad op op's
// first activation input (an arg of a slot other than a grad slot
// S@GRAD, and not a parameter) has its dim 0 split, or -1: the axis the
// sync averages over. mapping gives an arg's dims_mapping (nil: none).
func BatchAxis(op *ir.Op, meshShape []int, isParam func(string) bool, mapping func(string) []int) int {
	for _, s := range op.Inputs {
		if strings.HasSuffix(s.Name, "@GRAD") {
			continue
		}
		for _, a := range s.Args {
			if isParam(a) {
				continue
			}
			if m := mapping(a); len(m) > 0 && m[0] >= 0 && m[0] < len(meshShape) && meshShape[m[0]] > 1 {
				return m[0]
			}
		}
	}
	return -1
}

// SyncOf returns what the sync along mesh dim axis does to the k-th arg
// of op's output slot s, a grad slot S@GRAD (the grad of the forward
// input in slot S), mapped as mapping (the op's own mapping of it).
// Outside a grad slot nothing is synced. A param's grad is one whose
// forward input is a param, or a param grad view (ParamGradViews: the
// param was resharded before its op).
func SyncOf(op *ir.Op, s ir.Slot, k int, mapping []int, axis int, isParam, isView func(string) bool) GradSync {
	if !strings.HasSuffix(s.Name, "@GRAD") {
		return GradKept
	}
	if !slices.Contains(mapping, axis) {
		return GradSummed
	}
	if IsParamGrad(op, s, k, isParam, isView) {
		return GradScaled
	}
	return GradKept
}

// IsParamGrad reports whether the k-th arg of op's grad slot s is a
// param's grad: its forward input is a param, or the arg is a param grad
// view.
func IsParamGrad(op *ir.Op, s ir.Slot, k int, isParam, isView func(string) bool) bool {
	fwd, _ := strings.CutSuffix(s.Name, "@GRAD")
	if ins := op.Input(fwd); k < len(ins) && isParam(ins[k]) {
		return true
	}
	return k < len(s.Args) && isView(s.Args[k])
}

// ParamGradViews returns the vars that reach a param's grad (one of
// grads) through reshards alone, among ops: the grad of a param sliced
// or gathered before its op is resharded back into the param's grad, and
// is that param's grad in another placement, whatever its name.
func ParamGradViews(ops []*ir.Op, grads []string) map[string]bool {
	from := map[string]string{} // a reshard's Out: its X
	for _, op := range ops {
		if op.Type == ReshardType {
			if x, out := op.Input("X"), op.Output("Out"); len(x) == 1 && len(out) == 1 {
				from[out[0]] = x[0]
			}
		}
	}
	views := map[string]bool{}
	if len(from) == 0 {
		return views
	}
	for _, g := range grads {
		for v, ok := from[g]; ok && !views[v]; v, ok = from[v] {
			views[v] = true
		}
	}
	return views
}
