package ops

import (
	"encoding/binary"
	"slices"
	"strings"

	"github.com/distpass/distpass/ir"
)

// The data-parallel grad sync (Paddle's batch-dim rule): each rank
// differentiates its own loss on its batch shard, and the loss is the
// ranks' mean. What a grad op leaves in each of its grad outputs follows
// from what it computed: its rule's partials along the axis
// (GradFolds), its slots and mappings, never var names. Both the
// lowering (lower.SyncGrads) and check-annotations decide by these
// functions.

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

// Fold is what a grad op's sharding rule says of one of its grad
// outputs, given the op's input mappings: whether each rank holds a part
// of a sum along the sync's axis.
type Fold uint8

const (
	// FoldUnknown: the op has no rule, or the rule refuses the
	// mappings; the sync falls back to the batch-dim convention (a grad
	// not split along the axis is a fold over it).
	FoldUnknown Fold = iota
	// FoldNone: the rule gives the output no partial along the axis.
	FoldNone
	// FoldAlong: the rule makes the output partial along the axis.
	FoldAlong
)

// GradFolds returns, for each output arg of grad op op (flattened in
// slot order), what its sharding rule says of it along mesh dim axis,
// the op's inputs mapped as mapping gives and their vars found by
// lookup (serial shapes); nil when the op has no rule or the rule
// refuses the mappings.
func GradFolds(op *ir.Op, lookup func(string) *ir.Var, mapping func(string) []int, mesh []int, axis int) []Fold {
	rule, err := ShardingRuleOf(op, lookup)
	if err != nil || rule == nil {
		return nil
	}
	var in [][]int
	for _, s := range op.Inputs {
		for _, a := range s.Args {
			var m []int // nil: not a dense tensor, or unmapped: free
			if v := lookup(a); v != nil && v.Type.Kind == ir.DenseTensor {
				m = mapping(a)
			}
			in = append(in, m)
		}
	}
	sh, err := rule.Forward(mesh, in)
	if err != nil {
		return nil
	}
	var folds []Fold
	for _, s := range op.Outputs {
		for range s.Args {
			j, f := len(folds), FoldNone
			if j < len(sh.Partial) && slices.ContainsFunc(sh.Partial[j], func(p ir.Partial) bool { return p.Dim == axis }) {
				f = FoldAlong
			}
			folds = append(folds, f)
		}
	}
	return folds
}

// FoldMemo remembers GradFolds' answers for ops alike (a model's layers
// differ in names alone): the key spells the op's type and attrs, its
// args' types and dists, their mappings, the mesh and the axis, all the
// rule reads. The zero value is ready; it is not safe for concurrent
// use.
type FoldMemo struct {
	m   map[string][]Fold
	buf []byte
}

// GradFolds is the package's GradFolds, remembered. keyVar finds the
// vars the key spells: lookup's, or vars whose type and dist decide
// lookup's (a rank's local vars, of which lookup makes the serial ones
// that the rules read, at a cost a hit need not pay).
func (fm *FoldMemo) GradFolds(op *ir.Op, keyVar, lookup func(string) *ir.Var, mapping func(string) []int, mesh []int, axis int) []Fold {
	b, ok := ir.AppendOpKey(fm.buf[:0], op)
	if !ok {
		return GradFolds(op, lookup, mapping, mesh, axis)
	}
	b = ir.AppendIntsKey(b, mesh)
	b = binary.AppendVarint(b, int64(axis))
	for side, slots := range [2][]ir.Slot{op.Inputs, op.Outputs} {
		b = append(b, byte(side))
		for _, s := range slots {
			b = append(b, s.Name...)
			b = append(b, 0)
			b = binary.AppendUvarint(b, uint64(len(s.Args)))
			for _, a := range s.Args {
				v := keyVar(a)
				if v == nil {
					b = append(b, 0xff)
					continue
				}
				b = ir.AppendTypeKey(b, v.Type)
				if v.Dist != nil {
					b = append(b, v.Dist.Mesh...)
					b = append(b, 0)
					b = ir.AppendIntsKey(b, v.Dist.DimsMapping)
				} else {
					b = append(b, 0xff)
				}
				if side == 0 {
					b = ir.AppendIntsKey(b, mapping(a))
				}
			}
		}
	}
	fm.buf = b
	if f, ok := fm.m[string(b)]; ok {
		return f
	}
	f := GradFolds(op, lookup, mapping, mesh, axis)
	if fm.m == nil {
		fm.m = map[string][]Fold{}
	}
	fm.m[string(b)] = f
	return f
}

// SyncOf returns what the sync along mesh dim axis does to the k-th arg
// of op's output slot s, a grad slot S@GRAD (the grad of the forward
// input in slot S), mapped as mapping (the op's own mapping of it), of
// which the op's rule says fold (GradFolds). Outside a grad slot nothing
// is synced. A grad the rule makes partial along the axis is summed (a
// fold over the batch shards); one split along the axis is scaled when
// it is a param's (its forward input is a param, or it is a param grad
// view, ParamGradViews: the param was resharded before its op), kept
// otherwise; one the rule computes whole is kept. Without a rule, a grad
// not split along the axis is taken for a fold.
func SyncOf(op *ir.Op, s ir.Slot, k int, mapping []int, axis int, fold Fold, isParam, isView func(string) bool) GradSync {
	if !strings.HasSuffix(s.Name, "@GRAD") {
		return GradKept
	}
	if fold == FoldAlong || fold == FoldUnknown && !slices.Contains(mapping, axis) {
		return GradSummed
	}
	if slices.Contains(mapping, axis) && IsParamGrad(op, s, k, isParam, isView) {
		return GradScaled
	}
	return GradKept
}

// FoldAt returns folds' entry for the k-th arg of op's output slot s,
// FoldUnknown when folds is nil.
func FoldAt(folds []Fold, op *ir.Op, s ir.Slot, k int) Fold {
	if folds == nil {
		return FoldUnknown
	}
	j := k
	for _, o := range op.Outputs {
		if o.Name == s.Name {
			break
		}
		j += len(o.Args)
	}
	if j < len(folds) {
		return folds[j]
	}
	return FoldUnknown
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

// ScaledGather returns the mesh dim along which a backward reshard from
// dist x to dist out gathers a var that loss, a loss averaged over it
// (partial avg on a mesh dim of size > 1 of meshShape), scales: each
// rank's part of a gradient there is its shard's gradient of its own
// mean, n times its part of the whole loss's (the average sync of the
// param grads folded over the batch takes the n back). ok is false when
// the reshard gathers along no such dim.
func ScaledGather(x, out, loss *ir.TensorDist, meshShape []int) (dim int, ok bool) {
	if loss == nil || x == nil || out == nil || loss.Mesh != x.Mesh {
		return 0, false
	}
	for _, p := range loss.Partial {
		if p.Reduce != ir.ReduceAvg || p.Dim < 0 || p.Dim >= len(meshShape) || meshShape[p.Dim] == 1 || !slices.Contains(x.DimsMapping, p.Dim) {
			continue
		}
		if slices.Contains(out.DimsMapping, p.Dim) || slices.ContainsFunc(out.Partial, func(q ir.Partial) bool { return q.Dim == p.Dim }) {
			continue
		}
		return p.Dim, true
	}
	return 0, false
}

// GatherFeedsParamGrad reports whether var from, written by block[at],
// reaches a param's grad (grads) through the ops after it without a
// reshard that splits along mesh dim d again (splits tells, from the
// reshard's Out).
func GatherFeedsParamGrad(block []*ir.Op, at int, from string, grads map[string]bool, splits func(reshardOut string) bool) bool {
	if grads[from] {
		return true
	}
	live := map[string]bool{from: true}
	for _, op := range block[at+1:] {
		reads := false
		for a := range op.InputNames {
			reads = reads || live[a]
		}
		if !reads {
			continue
		}
		if op.Type == ReshardType {
			if outs := op.Output("Out"); len(outs) == 1 && splits(outs[0]) {
				continue
			}
		}
		for a := range op.OutputNames {
			if grads[a] {
				return true
			}
			live[a] = true
		}
	}
	return false
}
