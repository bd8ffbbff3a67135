package ops

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/spmd"
)

// ShardingRuleOf returns the sharding rule of op, whose arg vars lookup
// finds; nil when its type has no rule or an input does not resolve.
func ShardingRuleOf(op *ir.Op, lookup func(name string) *ir.Var) (spmd.ShardingRule, error) {
	return shardingRuleOf(Lookup(op.Type), op, lookup)
}

// shardingRuleOf is ShardingRuleOf with op's def d.
func shardingRuleOf(d *Def, op *ir.Op, lookup func(name string) *ir.Var) (spmd.ShardingRule, error) {
	if d == nil || d.Sharding == nil {
		return nil, nil
	}
	c := newInfer(d, op, lookup)
	if c == nil {
		return nil, nil
	}
	// A rule spells each dim with a letter: more dims than letters would
	// run the builders off the alphabet.
	for _, vs := range [2][]*ir.Var{c.ins, c.outs} {
		for _, v := range vs {
			if v != nil && v.Type.IsTensor() && len(v.Type.Shape) > len(alphabet) {
				return nil, fmt.Errorf("%s: sharding rule: %s has %d dims; a rule spells at most %d", op, v.Name(), len(v.Type.Shape), len(alphabet))
			}
		}
	}
	r, err := d.Sharding(c)
	if err != nil {
		return nil, fmt.Errorf("%s: sharding rule: %w", op, err)
	}
	return r, nil
}

// alignRule is the rule of an op whose several inputs share every dim
// but one (concat), as Paddle's AlignDimsSharding makes it: per mesh dim,
// if the inputs agree, their sharding stays (unless it is on the joined
// dim); if they disagree, the mesh dim goes to the kept dim that costs
// least to reshard the inputs to, every input not yet split there paying
// its local size times the mesh dim's, and none on a dim smaller than
// the mesh dim. Its Backward is the einsum's.
type alignRule struct {
	*spmd.Einsum
	args   []int     // the aligned inputs' indexes among the op's inputs
	shapes [][]int64 // their shapes
	axis   int       // the dim they are joined along
}

func (r *alignRule) Forward(mesh []int, in [][]int) (spmd.Sharding, error) {
	if len(in) != len(r.In) {
		return spmd.Sharding{}, fmt.Errorf("rule %s: %d input mappings for %d inputs", r.Einsum, len(in), len(r.In))
	}
	for md, size := range mesh {
		if size < 1 {
			return spmd.Sharding{}, fmt.Errorf("rule %s: mesh dim %d has size %d", r.Einsum, md, size)
		}
	}
	// The first input with a shape and a mapping is the reference: the
	// others are compared with it, and Out takes its result.
	ref := -1
	for k, i := range r.args {
		if in[i] == nil || len(r.shapes[k]) == 0 || r.shapes[k][0] == 0 {
			continue
		}
		if len(in[i]) != len(r.shapes[k]) {
			return spmd.Sharding{}, fmt.Errorf("rule %s: mapping %s of %d dims for a %d-dim input", r.Einsum, ir.FormatInts(in[i]), len(in[i]), len(r.shapes[k]))
		}
		for d, md := range in[i] {
			if md < -1 || md >= len(mesh) {
				return spmd.Sharding{}, fmt.Errorf("rule %s: mapping %s uses mesh dim %d of a %d-dim mesh", r.Einsum, ir.FormatInts(in[i]), md, len(mesh))
			}
			if md >= 0 && slices.Index(in[i], md) != d {
				return spmd.Sharding{}, fmt.Errorf("rule %s: mapping %s uses mesh dim %d twice", r.Einsum, ir.FormatInts(in[i]), md)
			}
		}
		if ref < 0 {
			ref = k
		}
	}
	if ref < 0 {
		return r.Einsum.Forward(mesh, in)
	}
	used := func(k int) bool {
		i := r.args[k]
		return in[i] != nil && len(r.shapes[k]) > 0 && r.shapes[k][0] != 0
	}
	refMap := in[r.args[ref]]
	mismatch := func(md int) bool {
		want := slices.Index(refMap, md)
		for k := range r.args {
			if used(k) && slices.Index(in[r.args[k]], md) != want {
				return true
			}
		}
		return false
	}
	n := len(refMap)
	owner := make([]int, len(mesh)) // the dim each mesh dim shards, or -1
	taken := make([]bool, n)
	for md := range mesh {
		owner[md] = -1
		if d := slices.Index(refMap, md); !mismatch(md) && d >= 0 && d != r.axis {
			owner[md], taken[d] = d, true
		}
	}
	for md := range mesh {
		if !mismatch(md) {
			continue
		}
		best, bestCost := -1, math.Inf(1)
		for d := range n {
			if d == r.axis || taken[d] {
				continue
			}
			cost := 0.0
			for k := range r.args {
				if !used(k) {
					continue
				}
				shape, dm := r.shapes[k], in[r.args[k]]
				switch {
				case shape[d] < int64(mesh[md]):
					cost = math.Inf(1)
				case dm[d] >= 0:
				default:
					local := 1.0
					for e, s := range shape {
						if dm[e] >= 0 {
							s = (s + int64(mesh[dm[e]]) - 1) / int64(mesh[dm[e]])
						}
						local *= float64(s)
					}
					cost += local * float64(mesh[md])
				}
			}
			if cost < bestCost {
				best, bestCost = d, cost
			}
		}
		if best >= 0 {
			owner[md], taken[best] = best, true
		}
	}
	aligned := make([]int, n)
	for d := range aligned {
		aligned[d] = slices.Index(owner, d)
	}
	s := spmd.Sharding{Inputs: make([][]int, len(in)), Partial: make([][]ir.Partial, len(r.Out))}
	for _, i := range r.args {
		if in[i] != nil {
			s.Inputs[i] = slices.Clone(aligned)
		}
	}
	for range r.Out {
		s.Outputs = append(s.Outputs, slices.Clone(aligned))
	}
	return s, nil
}

// splitRule is split's: its Forward is the einsum's; its Backward, as
// Paddle's SplitWithNumInferSpmdReverse, merges the outputs with the
// split axis a dim like the others (so a mesh dim it is sharded on in an
// earlier output keeps it against the other dims), then replicates it.
type splitRule struct {
	*spmd.Einsum
	back *spmd.Einsum // the split axis a letter
	axis int
}

func (r *splitRule) Backward(mesh []int, out [][]int) (spmd.Sharding, error) {
	s, err := r.back.Backward(mesh, out)
	if err != nil {
		return spmd.Sharding{}, err
	}
	for _, m := range append(slices.Clip(s.Inputs), s.Outputs...) {
		if r.axis < len(m) {
			m[r.axis] = -1
		}
	}
	return s, nil
}

// PassesPartial reports whether op's Out is X's partial value carried
// through: the op is linear in its X alone (assign, scale without bias,
// cumsum, and the views reshape2, transpose2, squeeze2, unsqueeze2,
// flatten), so that the op of the parts is the parts of the op (Paddle's
// "with partial" rules), and each of X's partial
// mesh dims is a sum or an average, or any reduction for the identities
// (assign and the views: a max stays a max; scale by -1 would make it a
// min). cast is not: a cast to an integer of a sum is not the sum of the
// casts.
func PassesPartial(op *ir.Op, partial []ir.Partial) bool {
	d := partialDef(op)
	if d == nil {
		return false
	}
	identity := d.Traits&Identity != 0
	if !identity && d.Traits&LinearUnary == 0 {
		return false
	}
	for _, p := range partial {
		if !identity && p.Reduce != ir.ReduceSum && p.Reduce != ir.ReduceAvg {
			return false
		}
	}
	return len(op.Input("X")) == 1 && len(op.Output("Out")) == 1
}

// partialDef is op's def when the partial facts of its record hold for
// op's attrs (PartialIf), or nil.
func partialDef(op *ir.Op) *Def {
	d := Lookup(op.Type)
	if d == nil || d.PartialIf != nil && !d.PartialIf(op) {
		return nil
	}
	return d
}

// LinearInParts reports whether op's outputs are linear in its inputs
// that are partial (partial[k]: dense input k, in slot order, is partial
// as a sum or average along the mesh dims in question), so that each
// rank's op of the parts gives parts of the op's value: a linear unary
// op (PassesPartial), a sum or difference of partial values alike
// (elementwise_add, elementwise_sub, sum: every input partial), a
// product or quotient with one partial factor (elementwise_mul, the
// matmuls, elementwise_div's X). An add of a partial and a whole value
// is not: each rank would add the whole one.
func LinearInParts(op *ir.Op, partial []bool) bool {
	n, all, first := 0, true, -1
	for k, p := range partial {
		if p {
			n++
			if first < 0 {
				first = k
			}
		} else {
			all = false
		}
	}
	d := partialDef(op)
	switch {
	case d == nil:
		return false
	case d.Traits&Additive != 0:
		return all
	case len(d.LinearIn) > 0:
		return n == 1 && slices.Contains(d.LinearIn, inputSlotAt(op, first))
	}
	return n == 1 && len(partial) == 1 && PassesPartial(op, []ir.Partial{{}})
}

// inputSlotAt returns the slot of op's k-th input arg in slot order, or "".
func inputSlotAt(op *ir.Op, k int) string {
	for _, s := range op.Inputs {
		if k < len(s.Args) {
			return s.Name
		}
		k -= len(s.Args)
	}
	return ""
}

// CarriedPartial returns the partial state that op carries from its
// partial inputs into its outputs when each rank computes the op on its
// parts, or why the op of the parts is not the parts of the op. in gives
// each dense input's partial state in slot order (nil: whole); name its
// arg's name, for the message. The combination is exact only when every
// partial input is partial alike (the same mesh dims with the same
// reductions: a sum-partial plus an avg-partial counts one of them
// twice, values partial along different mesh dims count each other's
// parts again) and the op is linear in them (LinearInParts: sums and
// averages), or, for a max or a min, the op's one partial input keeps
// its extremum (KeepsExtremum). Each output that is partial along one of
// the carried mesh dims must be so with the same reduction, and one
// output at least carries it (CarriedPartialOut).
func CarriedPartial(op *ir.Op, in [][]ir.Partial, name func(k int) string) ([]ir.Partial, error) {
	first := -1
	flags := make([]bool, len(in))
	extremum := false
	for k, p := range in {
		if len(p) == 0 {
			continue
		}
		flags[k] = true
		for _, q := range p {
			if q.Reduce == ir.ReduceMax || q.Reduce == ir.ReduceMin {
				extremum = true
			}
		}
		if first < 0 {
			first = k
			continue
		}
		if !slices.Equal(p, in[first]) {
			return nil, fmt.Errorf("%s reads %s, %s, with %s, %s: the parts of values partial along other mesh dims or by other reductions do not add up",
				op.Type, name(first), "partial "+ir.FormatPartial(in[first]), name(k), "partial "+ir.FormatPartial(p))
		}
	}
	if first < 0 {
		return nil, nil
	}
	if extremum {
		if !slices.ContainsFunc(in[first], func(q ir.Partial) bool { return q.Reduce == ir.ReduceSum || q.Reduce == ir.ReduceAvg }) &&
			slices.IndexFunc(flags[first+1:], func(b bool) bool { return b }) < 0 && KeepsExtremum(op) {
			return in[first], nil
		}
	} else if LinearInParts(op, flags) {
		return in[first], nil
	}
	return nil, fmt.Errorf("%s reads %s, %s: %w", op.Type, name(first), "partial "+ir.FormatPartial(in[first]), ErrReadsWhole)
}

// ErrReadsWhole is CarriedPartial's error for an op that reads a partial
// input as a whole value: the op of the parts is not the parts of the op.
var ErrReadsWhole = errors.New("the op reads it as a whole value: the op of the parts is not the parts of the op")

// CarriedPartialOut checks the outputs of an op that carries partial
// state carried (CarriedPartial's) into them: out gives each dense
// output's declared partial state in slot order. It returns why they do
// not hold it, or nil.
func CarriedPartialOut(op *ir.Op, carried []ir.Partial, out [][]ir.Partial, name func(k int) string) error {
	for _, c := range carried {
		held := false
		for k, p := range out {
			i := slices.IndexFunc(p, func(q ir.Partial) bool { return q.Dim == c.Dim })
			if i < 0 {
				continue
			}
			if p[i].Reduce != c.Reduce {
				return fmt.Errorf("%s carries %s over mesh dim %d into %s, which is %s: its parts would be reduced as %s",
					op.Type, reduceNoun(c.Reduce), c.Dim, name(k), "partial "+ir.FormatPartial(p), reduceNoun(p[i].Reduce))
			}
			held = true
		}
		if !held {
			return fmt.Errorf("%s carries %s over mesh dim %d into its outputs, and none is partial along it", op.Type, reduceNoun(c.Reduce), c.Dim)
		}
	}
	return nil
}

// reduceNoun names a pending reduction: "a sum", "an average".
func reduceNoun(r ir.Reduce) string {
	if r == ir.ReduceAvg {
		return "an average"
	}
	return "a " + r.String()
}

// KeepsExtremum reports whether op's Out of an X partial as a max (or a
// min) is partial alike: the identities (PassesPartial's) and the unary
// ops that never decrease (relu, sigmoid, tanh, exp, ...): the op of
// the largest part is the largest of the op's parts. A non-monotone op
// (gelu, silu) or a negation is not.
func KeepsExtremum(op *ir.Op) bool {
	if d := partialDef(op); d != nil && d.Traits&Monotone != 0 {
		return len(op.Input("X")) == 1 && len(op.Output("Out")) == 1
	}
	return PassesPartial(op, []ir.Partial{{Reduce: ir.ReduceMax}})
}
