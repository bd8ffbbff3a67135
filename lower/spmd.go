package lower

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/ops"
)

// The generic rule-based impl: each rank computes the op on its shards,
// exactly as the op's sharding rule (ops) maps them, and emits
// no collective; whatever must move is left to reshards.
//
// Its grad ops follow the data-parallel convention of every other impl:
// each rank differentiates its own loss, so where the loss is partial
// [d:avg] (the mean of the ranks' losses), a grad partial along d, which
// the grad rule calls a sum, is the average of the ranks' parts. A grad
// split along such a d is that many times its serial shard (activations
// only: a parameter's is refused); a grad neither split nor partial
// along d is the serial value on every rank.

// SPMD is impl 0 "rule_based" of the spmd container: the op kept on each
// rank's shards, as its sharding rule maps them; outputs partial where
// the rule says; shape attrs made local; no collective.
//
// What an op's dists must say for it (Compatible, on a forward op; a
// Fitter asks it before lowering): the op's input mappings are a fixpoint of
// the rule's Forward, its output mappings the rule's outputs, and each
// output var's own dist partial exactly along the rule's mesh dims with
// the rule's reductions (sum for a contraction, avg for a mean, max,
// min); an XShape output is [-1] and X's mapping, never partial; no
// input var is partial. Backward holds each grad op of an op it lowered
// (and an optimizer op given this impl) to its own rule the same way,
// but for the partials of a grad op's outputs, which SPMDGradPartial
// gives from the rule's and the loss's dist; and a param grad may not be
// split along a mesh dim the loss averages over.
func SPMD() *Impl {
	return &Impl{
		Name:       "rule_based",
		Doc:        "the op on each rank's shards as its sharding rule maps them; outputs partial where the rule says; no collective",
		Compatible: func(ctx *Lowering, op *ir.Op) error { return spmdCheck(ctx, op, nil) },
		Forward: func(ctx *Lowering, op *ir.Op) error {
			ctx.Keep(op)
			if err := localShapeAttr(ctx, op); err != nil {
				return err
			}
			return SyncParams(ctx, op)
		},
		Backward: func(ctx *Lowering, op *ir.Op) error {
			var loss *spmdLoss
			if op.Role.IsBackward() {
				var err error
				if loss, err = ctx.lossDist(); err != nil {
					return fmt.Errorf("%s: rule_based: %v", op, err)
				}
			}
			if err := spmdCheck(ctx, op, loss); err != nil {
				return err
			}
			ctx.Keep(op)
			return localShapeAttr(ctx, op)
		},
	}
}

// SPMDGradPartial returns the partial state that the rule-based impl
// requires of an output of a grad op it lowers: rule is what the grad
// op's sharding rule gives that output (sums), loss the dist of the loss
// being differentiated (nil: none). A sum along a mesh dim the loss
// averages over (partial [d:avg]) is an average: each rank's grad is its
// own loss's, and the serial loss is the mean of those. Other partials
// stay as the rule gives them. The result is sorted by mesh dim.
func SPMDGradPartial(rule []ir.Partial, loss *ir.TensorDist) []ir.Partial {
	if len(rule) == 0 {
		return nil
	}
	out := slices.Clone(rule)
	for i, p := range out {
		if p.Reduce == ir.ReduceSum && lossAverages(loss, p.Dim) {
			out[i].Reduce = ir.ReduceAvg
		}
	}
	slices.SortFunc(out, func(a, b ir.Partial) int { return a.Dim - b.Dim })
	return out
}

// lossAverages reports whether loss is partial along mesh dim d as an
// average.
func lossAverages(loss *ir.TensorDist, d int) bool {
	if loss == nil {
		return false
	}
	for _, p := range loss.Partial {
		if p.Dim == d && p.Reduce == ir.ReduceAvg {
			return true
		}
	}
	return false
}

// spmdLoss is the loss a grad op's partials are averaged by: its name
// and dist ("" and an empty dist before any loss-grad op: every partial
// then stays a sum).
type spmdLoss struct {
	name string
	dist *ir.TensorDist
}

// lossDist returns the loss the backward being lowered differentiates:
// the forward var of the loss-grad op's output (none before a loss-grad
// op), or why it cannot tell.
func (c *Lowering) lossDist() (*spmdLoss, error) {
	l := &spmdLoss{dist: &ir.TensorDist{}}
	if c.st.lossGrad == "" {
		return l, nil
	}
	v := c.Var(ForwardVar(c.st.lossGrad))
	if v == nil {
		return nil, fmt.Errorf("the loss-grad op's output %s names no loss (LOSS@GRAD of a declared LOSS): its partial state decides the grads'", c.st.lossGrad)
	}
	l.name = v.Name()
	if v.Dist != nil {
		l.dist = v.Dist
	}
	return l, nil
}

// serialVar returns var name with its serial shape (a partitioned
// program holds local shapes: each split dim is multiplied back by its
// mesh dim's size), or nil. Rules read shapes (reshape's regrouping, a
// size-1 dim that broadcasts) and are spelled on the serial ones.
func (c *Lowering) serialVar(name string) *ir.Var {
	v := c.Var(name)
	if v == nil || c.module.Main == nil || c.module.Main.Rank < 0 || v.Dist == nil || allReplicated(v.Dist.DimsMapping) {
		return v
	}
	mesh := c.module.Mesh(v.Dist.Mesh)
	if mesh == nil || len(v.Dist.DimsMapping) != len(v.Type.Shape) {
		return v
	}
	// A shallow copy: the rule reads the type alone, and a full Clone
	// (attrs, dist) per arg of every op lowered cost more than the rule.
	g := *v
	g.Type.Shape = slices.Clone(v.Type.Shape)
	for i, a := range v.Dist.DimsMapping {
		if a >= 0 && a < len(mesh.Shape) && g.Type.Shape[i] > 0 {
			g.Type.Shape[i] *= int64(mesh.Shape[a])
		}
	}
	return &g
}

// spmdCheck holds op's dist to its sharding rule as the rule-based impl
// lowers it (ruleFit, no input partial; for a grad op, loss non-nil,
// each output partial as SPMDGradPartial says and no param grad split
// along a mesh dim the loss averages over), and refuses what the local
// kernels would get wrong (spmdLocal).
func spmdCheck(ctx *Lowering, op *ir.Op, loss *spmdLoss) error {
	// Messages name the impl as the others do theirs: the lowering and
	// completion say which impl type and index it is.
	if err := ruleFit(ctx, op, ruleOpts{impl: "rule_based", loss: loss}); err != nil {
		return err
	}
	return spmdLocal(ctx, op, "rule_based")
}

// ruleOpts says how ruleFit holds an op to its rule beyond the rule
// itself.
type ruleOpts struct {
	// impl names the impl in messages.
	impl string
	// loss is the loss a grad op's partials are averaged by
	// (SPMDGradPartial), nil for a forward op.
	loss *spmdLoss
	// reduces is Impl.Reduces: an output the rule makes partial may
	// also be declared whole, the impl's collective reducing it.
	reduces bool
	// carries accepts an input declared partial where the op takes it
	// as it is: an OwnPart op reads each rank's own part; an op that
	// passes X's partial value to Out (ops.PassesPartial: assign, scale,
	// the views) gives Out X's partial state on top of the rule's. Any
	// other partial input is refused, as it is without carries: its
	// pending reduction would have to be done first.
	carries bool
	// spell adds every input's mapping to a message on an input the rule
	// would map otherwise: the rule merges them, and the conflict may be
	// another arg's (the Paddle impls' messages name both operands).
	spell bool
}

// ruleFit holds op's dist to its sharding rule: the op's input mappings
// are a fixpoint of the rule, its output mappings the rule's outputs, and
// each output var partial exactly as the rule says (for a grad op, as
// SPMDGradPartial says; with o.reduces, or whole where the rule makes it
// partial), no input partial but as o.carries says.
func ruleFit(ctx *Lowering, op *ir.Op, o ruleOpts) error {
	// Forward ops alike (a model's layers) get one verdict, as in
	// batchByRule: the key spells all the check reads, and only
	// acceptances are kept (a refusal names the op's vars). A grad op's
	// verdict reads the loss and the params' grads besides: not kept.
	if o.loss != nil || !fitKey(ctx, op) {
		return ruleFitOnce(ctx, op, o)
	}
	st := ctx.st
	st.fitBuf = append(st.fitBuf, 0xfe)
	st.fitBuf = append(st.fitBuf, o.impl...)
	st.fitBuf = append(st.fitBuf, 0, boolByte(o.reduces), boolByte(o.carries), boolByte(o.spell))
	if st.fits[string(st.fitBuf)] {
		return nil
	}
	key := string(st.fitBuf)
	if err := ruleFitOnce(ctx, op, o); err != nil {
		return err
	}
	if st.fits == nil {
		st.fits = map[string]bool{}
	}
	st.fits[key] = true
	return nil
}

func boolByte(b bool) byte {
	if b {
		return 1
	}
	return 0
}

// ruleFitOnce is ruleFit, unremembered.
func ruleFitOnce(ctx *Lowering, op *ir.Op, o ruleOpts) error {
	impl := o.impl
	if op.Dist == nil {
		return fmt.Errorf("%s has no dist", op)
	}
	// The args, flattened in slot order as the rule takes them; nil for
	// an arg that is not a dense tensor.
	type arg struct {
		slot, name string
		v          *ir.Var
		m          []int
	}
	var ins, outs []arg
	for side, slots := range [2][]ir.Slot{op.Inputs, op.Outputs} {
		for _, s := range slots {
			for _, a := range s.Args {
				v := ctx.Var(a)
				if v == nil {
					if side == 0 {
						return fmt.Errorf("%s: %s: input %s %s is not declared", op, impl, s.Name, a)
					}
					outs = append(outs, arg{slot: s.Name, name: a})
					continue
				}
				x := arg{slot: s.Name, name: a, v: v}
				if v.Type.Kind == ir.DenseTensor {
					var ok bool
					if side == 0 {
						x.m, ok = op.Dist.InputMapping(a)
					} else {
						x.m, ok = op.Dist.OutputMapping(a)
					}
					if !ok {
						return fmt.Errorf("%s: %s: %s %s has no dims_mapping in the op's dist", op, impl, s.Name, a)
					}
					if err := checkMapping(ctx, x.m); err != nil {
						return fmt.Errorf("%s: %s: %s %s: %v", op, impl, s.Name, a, err)
					}
					if x.m == nil {
						x.m = []int{}
					}
				}
				if side == 0 {
					ins = append(ins, x)
				} else {
					outs = append(outs, x)
				}
			}
		}
	}
	rule, err := ops.ShardingRuleOf(op, ctx.serialVar)
	if err != nil {
		return fmt.Errorf("%s: %s: %s", op, impl, strings.TrimPrefix(err.Error(), op.String()+": "))
	}
	if rule == nil {
		return fmt.Errorf("%s: %s lowers ops by their sharding rule, and %s has none", op, impl, op.Type)
	}
	rs := op.Type + "'s rule"
	if str, ok := rule.(fmt.Stringer); ok {
		rs = str.String()
	}
	in := make([][]int, len(ins))
	for i, a := range ins {
		in[i] = a.m
	}
	sh, err := rule.Forward(ctx.Mesh().Shape, in)
	if err != nil {
		return fmt.Errorf("%s: %s: its rule %s refuses the mappings: %v", op, impl, rs, err)
	}
	carried, err := carriedPartial(ctx, op, o)
	if err != nil {
		return err
	}
	for i, a := range ins {
		if a.m == nil {
			continue
		}
		if want := ruleMapping(sh.Inputs, i, a.m); !slices.Equal(want, a.m) {
			if i >= len(sh.Inputs) || sh.Inputs[i] == nil {
				return fmt.Errorf("%s: %s reads %s %s whole (%s), which its rule %s leaves free; its dist says %s",
					op, impl, a.slot, a.name, ir.FormatInts(want), rs, ir.FormatInts(a.m))
			}
			msg := fmt.Sprintf("%s: %s needs %s %s split %s as its rule %s gives; its dist says %s",
				op, impl, a.slot, a.name, ir.FormatInts(want), rs, ir.FormatInts(a.m))
			if o.spell && len(ins) > 1 {
				var sp []string
				for _, b := range ins {
					if b.m != nil {
						sp = append(sp, b.slot+" "+b.name+" "+ir.FormatInts(b.m))
					}
				}
				msg += " (the rule merges " + strings.Join(sp, ", ")
				for k, d := range a.m {
					if d >= 0 && want[k] != d {
						// The merge gave the mesh dim to another dim.
						msg += fmt.Sprintf(": mesh dim %d splits another of their dims first", d)
						break
					}
				}
				msg += ")"
			}
			return errors.New(msg)
		}
	}
	for j, a := range outs {
		if a.m == nil {
			continue
		}
		if (j >= len(sh.Outputs) || sh.Outputs[j] == nil) && localFill(op, a.slot) {
			// A fill's Out is free: each rank fills its local part of
			// shape (localShapeAttr), whole, however it is split.
			if a.v.Dist.IsPartial() {
				return fmt.Errorf("%s: %s fills %s %s whole; its dist says %s", op, impl, a.slot, a.name, fmtPartial(a.m, a.v.Dist.Partial))
			}
			continue
		}
		// Any other arg the rule leaves free is computed whole.
		want := ruleMapping(sh.Outputs, j, a.m)
		var wp []ir.Partial
		if j < len(sh.Partial) {
			wp = sh.Partial[j]
		}
		gives := "as its rule " + rs + " gives"
		if o.loss != nil {
			if avg := SPMDGradPartial(wp, o.loss.dist); !slices.Equal(avg, wp) {
				gives += ", its sums averaged along the mesh dims the loss " + o.loss.name + " (" + o.loss.dist.String() + ") averages over"
				wp = avg
			}
		}
		if len(carried) > 0 && a.slot == "Out" {
			wp = withPartial(wp, carried)
			gives += ", and X's partial state carried"
		}
		var have []ir.Partial
		if a.v.Dist != nil {
			have = slices.Clone(a.v.Dist.Partial)
			slices.SortFunc(have, func(p, q ir.Partial) int { return p.Dim - q.Dim })
		}
		if slices.Equal(want, a.m) && o.reduces && len(have) == 0 && len(wp) > 0 {
			continue // the impl's collective reduces it
		}
		if !slices.Equal(want, a.m) || !slices.Equal(wp, have) {
			if j >= len(sh.Outputs) || sh.Outputs[j] == nil {
				return fmt.Errorf("%s: %s computes %s %s whole (%s), which its rule %s leaves free; its dist says %s",
					op, impl, a.slot, a.name, fmtPartial(want, nil), rs, fmtPartial(a.m, have))
			}
			if o.reduces && len(wp) > 0 {
				return fmt.Errorf("%s: %s needs %s %s %s whole (its collective reduces it) or partial %s %s; its dist says %s",
					op, impl, a.slot, a.name, ir.FormatInts(want), ir.FormatPartial(wp), gives, fmtPartial(a.m, have))
			}
			return fmt.Errorf("%s: %s needs %s %s %s %s; its dist says %s",
				op, impl, a.slot, a.name, fmtPartial(want, wp), gives, fmtPartial(a.m, have))
		}
	}
	if o.loss != nil {
		return spmdParamGrads(ctx, op, impl, o.loss)
	}
	return nil
}

// carriedPartial returns the partial state op carries from X to Out
// (o.carries and ops.PassesPartial), or nil; or why an input declared
// partial is refused.
func carriedPartial(ctx *Lowering, op *ir.Op, o ruleOpts) ([]ir.Partial, error) {
	if o.carries && ops.Has(op.Type, ops.OwnPart) {
		return nil, nil
	}
	var carried []ir.Partial
	for _, s := range op.Inputs {
		for _, a := range s.Args {
			v := ctx.Var(a)
			if v == nil || v.Type.Kind != ir.DenseTensor || !v.Dist.IsPartial() {
				continue
			}
			if o.carries && s.Name == "X" && ops.PassesPartial(op, v.Dist.Partial) {
				carried = slices.Clone(v.Dist.Partial)
				continue
			}
			if err := notPartial(ctx, op, o.impl, a); err != nil {
				return nil, err
			}
		}
	}
	return carried, nil
}

// withPartial is ps with the partial states of more added, sorted by
// mesh dim.
func withPartial(ps, more []ir.Partial) []ir.Partial {
	out := slices.Clone(ps)
	for _, p := range more {
		if !slices.ContainsFunc(out, func(q ir.Partial) bool { return q.Dim == p.Dim }) {
			out = append(out, p)
		}
	}
	slices.SortFunc(out, func(a, b ir.Partial) int { return a.Dim - b.Dim })
	return out
}

// localFill reports whether output slot of op is a fill of the op's
// shape attr that each rank makes for its part alone: Out of an op that
// is not random (a random fill's local draws are no shard of the serial
// ones).
func localFill(op *ir.Op, slot string) bool {
	if slot != "Out" || !op.Attrs.Has("shape") {
		return false
	}
	d := ops.Lookup(op.Type)
	return d != nil && d.Traits&ops.Random == 0
}

// ruleMapping is the rule's mapping of arg i, replicated when the rule
// leaves it open (free: a shape op's Input, a fetch's; computed on a
// rank's part, such an arg would give the part's dims or values).
func ruleMapping(ms [][]int, i int, like []int) []int {
	if i < len(ms) && ms[i] != nil {
		return ms[i]
	}
	r := make([]int, len(like))
	for k := range r {
		r[k] = -1
	}
	return r
}

// fmtPartial spells a mapping and a partial state: "[-1, 1] partial
// [0, 1:avg]", or "[-1, 1] and not partial".
func fmtPartial(m []int, ps []ir.Partial) string {
	if len(ps) == 0 {
		return ir.FormatInts(m) + " and not partial"
	}
	return ir.FormatInts(m) + " partial " + ir.FormatPartial(ps)
}

// spmdParamGrads refuses a parameter grad split along a mesh dim of size
// > 1 that the loss averages over: each rank's grad of its shard is its
// own loss's, that many times the serial one, and nothing scales it.
func spmdParamGrads(ctx *Lowering, op *ir.Op, impl string, loss *spmdLoss) error {
	for g := range op.OutputNames {
		f := ForwardVar(g)
		if f == "" || !ctx.IsParam(f) {
			continue
		}
		m, _ := op.Dist.OutputMapping(g)
		for _, p := range loss.dist.Partial {
			if p.Reduce != ir.ReduceAvg || p.Dim < 0 || p.Dim >= len(ctx.Mesh().Shape) || ctx.Mesh().Shape[p.Dim] <= 1 || !slices.Contains(m, p.Dim) {
				continue
			}
			return fmt.Errorf("%s: %s leaves %s, split along mesh dim %d (%s) as its param, at %d times its serial value: the loss %s averages over that mesh dim, and each rank's grad is its own loss's",
				op, impl, g, p.Dim, meshDim(ctx.Mesh(), p.Dim), ctx.Mesh().Shape[p.Dim], loss.name)
		}
	}
	return nil
}

// meshDim names mesh dim d of pm: its name, or its index.
func meshDim(pm *ir.ProcessMesh, d int) string {
	if d >= 0 && d < len(pm.DimNames) {
		return pm.DimNames[d]
	}
	return fmt.Sprint(d)
}

// spmdLocal refuses what a rule allows but a kernel on local shards does
// not compute: a lookup in a split vocabulary (the ids are global rows),
// batch statistics of a split batch.
func spmdLocal(ctx *Lowering, op *ir.Op, impl string) error {
	switch strings.TrimSuffix(op.Type, "_grad") {
	case "lookup_table", "lookup_table_v2":
		for _, w := range op.Input("W") {
			if m, _ := op.Dist.InputMapping(w); len(m) > 0 && m[0] >= 0 && ctx.Mesh().Shape[m[0]] > 1 {
				return fmt.Errorf("%s: %s cannot look up a split vocabulary: each rank would index its rows of W %s (dims_mapping %s) with global ids; %s:0 (vocab parallel) lowers it",
					op, impl, w, ir.FormatInts(m), strings.TrimSuffix(op.Type, "_grad"))
			}
		}
	case "batch_norm":
		if ops.AttrOn(op, "is_test") {
			return nil
		}
		if ops.AttrOn(op, "use_global_stats") {
			return nil
		}
		for _, x := range op.Input("X") {
			if m, _ := op.Dist.InputMapping(x); len(m) > 0 && m[0] >= 0 && ctx.Mesh().Shape[m[0]] > 1 {
				return fmt.Errorf("%s: %s cannot normalise a split batch: X %s has dims_mapping %s, and each rank's statistics would be its shard's, not the batch's",
					op, impl, x, ir.FormatInts(m))
			}
		}
	}
	return nil
}

// localShapeAttr makes an op's shape attr (reshape2's, a fill's: the
// shape of Out) the local shape of Out: its partitioned shape where known
// (an explicit dim for a 0 or -1 entry, which the local count then
// implies), else each entry floor-divided on the dims where Out is split.
func localShapeAttr(ctx *Lowering, op *ir.Op) error {
	v := op.Attrs.Get("shape")
	if v == nil {
		return nil
	}
	shape, ok := v.(ir.Ints)
	if !ok {
		return fmt.Errorf("%s: attr shape has kind %s, want ints", op, v.Kind())
	}
	outs := op.Output("Out")
	if len(outs) == 0 || len(shape) == 0 {
		return nil
	}
	ov := ctx.Var(outs[0])
	if ov == nil || ctx.module.Main == nil || ctx.module.Main.Rank < 0 || len(ov.Type.Shape) != len(shape) || slices.Contains(ov.Type.Shape, -1) {
		return divideShapeAttr(ctx, op, "Out")
	}
	op.Attrs.Set("shape", ir.Ints(slices.Clone(ov.Type.Shape)))
	return nil
}
