package analysis

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/ops"
	"github.com/distpass/distpass/spmd"
)

// This file holds the annotation rules that compare an op's view of its
// args with the args' own dists. Until resharding exists, the lowering
// computes on the data a var's dist says each rank holds, with the
// mapping the op's dist gives: where the two differ, the data would have
// to be moved first, and nothing moves it.

// spmdImpl is lower.SPMDType, the rule-based impl (lower imports
// analysis, not the other way).
const spmdImpl = "spmd"

// resharded ends every message about data in the wrong place: it stays
// true once a reshard can move it.
const resharded = "the data would have to be resharded"

// reshardable ends the messages about a mapping, a mesh or a partial
// read that the pass insert-reshards turns into a reshard op.
const reshardable = resharded + " (insert-reshards makes it explicit)"

// checkAgree compares op's mapping dm of arg v (an input, or an output)
// with v's own dist: the same mesh (or an equal one) and the same
// dims_mapping. A replicated value may cross into a mesh whose ranks all
// hold it (a partial one only into an op that reads each rank's own
// part, partialReaders). The test is spmd.NeedsReshard's, which
// completion and insert-reshards ask too.
func (c *annChecker) checkAgree(bi int, op *ir.Op, input bool, v *ir.Var, dm []int, pm *ir.ProcessMesh) {
	d := v.Dist
	if d == nil || pm == nil {
		return // no dist, or an unknown op mesh: said already
	}
	if d.Mesh == pm.Name && slices.Equal(dm, d.DimsMapping) {
		return // the common case, without a mesh lookup
	}
	vm := c.meshes.get(d.Mesh)
	if vm == nil || !mappingFits(d.DimsMapping, v.Type.Shape, vm) {
		return // said already, at the var
	}
	if !spmd.NeedsReshard(ops.ReadsOwnPart(op.Type), input, dm, pm, d, vm, true) {
		return // partial states are checkPartials' to check
	}
	verb := "writes"
	if input {
		verb = "reads"
	}
	if !spmd.SameMesh(vm, pm) {
		c.opErr(bi, op, v.Name(), fmt.Sprintf("%s %s as @%s%s but %s is %s, on another mesh: %s",
			verb, quoteName(v.Name()), quoteName(pm.Name), fmtInts(dm), quoteName(v.Name()), fmtDist(d), reshardable))
		return
	}
	c.opErr(bi, op, v.Name(), fmt.Sprintf("%s %s as %s but %s is %s: %s",
		verb, quoteName(v.Name()), fmtInts(dm), quoteName(v.Name()), fmtDist(d), reshardable))
}

// checkPartials holds the partial state of op's args to what the
// lowering does with it. The lowering computes on each rank's part: an
// op that reads a partial value computes on a part as if it were the
// whole, right only when it carries the pending reduction through to a
// partial output (cumsum of partial counts is their partial cumsum);
// and a partial output comes only from a partial input or from folding
// a dim sharded on that mesh dim (a mean over the sharded batch).
func (c *annChecker) checkPartials(bi int, op *ir.Op, ins, outs []int32, pm *ir.ProcessMesh) {
	// The dense inputs the op reads as parts: a grad op reads the forward
	// op's values (its slots but S@GRAD) as the forward op did, and the
	// forward op's check covers them; the MoE exchanges read a rank's
	// own part as what it is.
	partial := false
	for _, g := range ins {
		if g >= 0 && c.pi.v(g).Dist.IsPartial() {
			partial = true
			break
		}
	}
	var in [][]ir.Partial
	var inNames []string
	if partial && !ops.ReadsOwnPart(op.Type) {
		j := 0
		for _, s := range op.Inputs {
			forwardValue := op.Fwd != 0 && !strings.HasSuffix(s.Name, "@GRAD")
			for _, name := range s.Args {
				g := ins[j]
				j++
				if g < 0 || !c.pi.v(g).Type.IsTensor() {
					continue
				}
				var p []ir.Partial
				if v := c.argVar(g, pm); v != nil && !forwardValue {
					p = v.Dist.Partial
				}
				in, inNames = append(in, p), append(inNames, name)
			}
		}
	}
	carried, err := ops.CarriedPartial(op, in, func(k int) string { return quoteName(inNames[k]) })
	if err != nil {
		k := slices.IndexFunc(in, func(p []ir.Partial) bool { return len(p) > 0 })
		if errors.Is(err, ops.ErrReadsWhole) {
			d := c.pi.v(c.pi.resolve(bi, inNames[k])).Dist
			err = fmt.Errorf("reads %s as a whole value but %s is %s", quoteName(inNames[k]), quoteName(inNames[k]), fmtDist(d))
		}
		c.opErr(bi, op, inNames[k], fmt.Sprintf("%v: %s", err, reshardable))
	} else if len(carried) > 0 {
		var out [][]ir.Partial
		var outNames []string
		j := 0
		for _, s := range op.Outputs {
			for _, name := range s.Args {
				g := outs[j]
				j++
				var p []ir.Partial
				if v := c.argVar(g, pm); v != nil {
					p = v.Dist.Partial
				}
				out, outNames = append(out, p), append(outNames, name)
			}
		}
		if err := ops.CarriedPartialOut(op, carried, out, func(k int) string { return quoteName(outNames[k]) }); err != nil {
			c.opErr(bi, op, inNames[slices.IndexFunc(in, func(p []ir.Partial) bool { return len(p) > 0 })], fmt.Sprintf("%v: %s", err, reshardable))
		}
	}
	c.checkPartialOutputs(bi, op, ins, outs, pm)
}

// checkPartialOutputs reports each output op declares partial along a
// mesh dim that nothing makes it partial along: no input partial or
// sharded along it, and no rule of the op's that folds it.
func (c *annChecker) checkPartialOutputs(bi int, op *ir.Op, ins, outs []int32, pm *ir.ProcessMesh) {
	j := 0
	for _, s := range op.Outputs {
		for _, name := range s.Args {
			g := outs[j]
			j++
			if g < 0 || !c.pi.v(g).Dist.IsPartial() {
				continue
			}
			v := c.argVar(g, pm)
			if v == nil {
				continue
			}
			var rule []ir.Partial
			ruled := false
			for _, p := range v.Dist.Partial {
				if c.someArgPartial(op.Inputs, ins, pm, p.Dim) || c.folds(op, ins, pm, p.Dim, v) {
					continue
				}
				if !ruled {
					rule, ruled = c.rulePartial(bi, op, pm, j-1), true
				}
				if slices.ContainsFunc(rule, func(q ir.Partial) bool { return q.Dim == p.Dim }) {
					continue
				}
				c.opErr(bi, op, name, fmt.Sprintf("writes %s as a whole value but %s is %s: no input is partial or sharded along mesh dim %d: %s",
					quoteName(name), quoteName(name), fmtDist(v.Dist), p.Dim, resharded))
				break
			}
		}
	}
}

// lookup finds the vars of block bi by name, for the rules.
func (c *annChecker) lookup(bi int) func(string) *ir.Var {
	return func(name string) *ir.Var {
		if g := c.pi.resolve(bi, name); g >= 0 {
			return c.pi.v(g)
		}
		return nil
	}
}

// gradFolds is ops.GradFolds for a grad op of block bi; nil in a
// partitioned program, whose local shapes the rules do not read.
func (c *annChecker) gradFolds(bi int, op *ir.Op, mapping func(string) []int, pm *ir.ProcessMesh, axis int) []ops.Fold {
	if c.partitioned {
		return nil
	}
	lookup := c.lookup(bi)
	return c.foldMemo.GradFolds(op, lookup, lookup, mapping, pm.Shape, axis)
}

// rulePartial returns the partial state op's sharding rule gives its
// output arg k (in slot order) from the op's input mappings, or nil: a
// contraction or reduction over a split dim, whatever the shapes (a
// square matmul's Out has its operands' shape). The rule reads the
// serial shapes: none in a partitioned program.
func (c *annChecker) rulePartial(bi int, op *ir.Op, pm *ir.ProcessMesh, k int) []ir.Partial {
	if c.partitioned {
		return nil
	}
	lookup := c.lookup(bi)
	rule, err := ops.ShardingRuleOf(op, lookup)
	if err != nil || rule == nil {
		return nil
	}
	var in [][]int
	for a := range op.InputNames {
		m, ok := op.Dist.InputMapping(a)
		if v := lookup(a); !ok || v == nil || v.Type.Kind != ir.DenseTensor {
			m = nil
		}
		in = append(in, m)
	}
	s, err := rule.Forward(pm.Shape, in)
	if err != nil || k >= len(s.Partial) {
		return nil
	}
	return s.Partial[k]
}

// argVar returns the dense-tensor var of gid g when its dist is on the
// op's mesh pm, else nil.
func (c *annChecker) argVar(g int32, pm *ir.ProcessMesh) *ir.Var {
	if g < 0 {
		return nil
	}
	v := c.pi.v(g)
	if v == nil || v.Type.Kind != ir.DenseTensor || v.Dist == nil {
		return nil
	}
	if vm := c.meshes.get(v.Dist.Mesh); vm == nil || !spmd.SameMesh(vm, pm) {
		return nil
	}
	return v
}

// someArgPartial reports whether an arg of slots (gids gs) is partial
// along mesh dim dim.
func (c *annChecker) someArgPartial(slots []ir.Slot, gs []int32, pm *ir.ProcessMesh, dim int) bool {
	j := 0
	for _, s := range slots {
		for range s.Args {
			v := c.argVar(gs[j], pm)
			j++
			if v != nil && slices.ContainsFunc(v.Dist.Partial, func(p ir.Partial) bool { return p.Dim == dim }) {
				return true
			}
		}
	}
	return false
}

// folds reports whether op reads an arg sharded along mesh dim dim (in
// the op's own mapping) into an output v mapped without it and of
// another shape (or is a reduction, which may keep it): a reduction or
// contraction over the sharded dim, whose local result is a part of the
// whole. An op whose output has its input's shape (relu) computes a
// block, not a part.
func (c *annChecker) folds(op *ir.Op, ins []int32, pm *ir.ProcessMesh, dim int, v *ir.Var) bool {
	if slices.Contains(v.Dist.DimsMapping, dim) {
		return false
	}
	_, isReduction := reduction(op.Type)
	j := 0
	for _, s := range op.Inputs {
		for _, name := range s.Args {
			g := ins[j]
			j++
			m, ok := op.Dist.InputMapping(name)
			if !ok || !slices.Contains(m, dim) {
				continue
			}
			if isReduction {
				return true
			}
			if x := c.argVar(g, pm); x != nil && !slices.Equal(x.Type.Shape, v.Type.Shape) {
				return true
			}
		}
	}
	return false
}

// reduction says whether ops of type typ fold dims of X into Out, and
// the pending reduction that a fold over a sharded dim leaves: each rank
// reduces its shard, and the whole is the reduction of the parts (the
// mean of equal shards is the mean of their means).
func reduction(typ string) (ir.Reduce, bool) {
	switch typ {
	case "mean", "reduce_mean":
		return ir.ReduceAvg, true
	case "reduce_sum":
		return ir.ReduceSum, true
	case "reduce_max":
		return ir.ReduceMax, true
	case "reduce_min":
		return ir.ReduceMin, true
	}
	return 0, false
}

// checkReduction: a reduction over a dim of X sharded along a mesh dim of
// size > 1 leaves each rank a part of the result, so Out must say so
// (partial along that mesh dim, with the reduction's kind) or the value
// would have to be brought together first.
func (c *annChecker) checkReduction(bi int, op *ir.Op, ins, outs []int32) {
	kind, ok := reduction(op.Type)
	if !ok || len(op.Inputs) == 0 || len(op.Outputs) == 0 {
		return
	}
	pm := c.meshes.get(op.Dist.Mesh)
	xi := slotStart(op.Inputs, "X")
	oi := slotStart(op.Outputs, "Out")
	if xi < 0 || oi < 0 {
		return
	}
	x, out := c.argVar(ins[xi], pm), c.argVar(outs[oi], pm)
	if x == nil || out == nil {
		return
	}
	xm, _ := op.Dist.InputMapping(x.Name())
	if len(xm) != x.Type.Rank() {
		return
	}
	red := reducedDims(op, len(xm))
	want := slices.Clone(out.Dist.Partial)
	var bad []string
	for i, a := range xm {
		if a < 0 || a >= len(pm.Shape) || pm.Shape[a] <= 1 || !red[i] {
			continue
		}
		k := slices.IndexFunc(want, func(p ir.Partial) bool { return p.Dim == a })
		switch {
		case k < 0:
			want = append(want, ir.Partial{Dim: a, Reduce: kind})
		case want[k].Reduce != kind:
			want[k].Reduce = kind
		default:
			continue
		}
		bad = append(bad, fmt.Sprintf("dim %d of %s, sharded along mesh dim %d (%s)", i, quoteName(x.Name()), a, meshDimName(pm, a)))
	}
	if len(bad) == 0 {
		return
	}
	slices.SortFunc(want, func(p, q ir.Partial) int { return p.Dim - q.Dim })
	fix := &ir.TensorDist{Mesh: out.Dist.Mesh, DimsMapping: out.Dist.DimsMapping, Partial: want}
	c.opErr(bi, op, out.Name(), fmt.Sprintf("reduces %s: each rank holds a part of %s, which is %s: declare it %s, or %s",
		strings.Join(bad, " and "), quoteName(out.Name()), fmtDist(out.Dist), fmtDist(fix), resharded))
}

// reducedDims says which of X's rank dims op folds: all for mean, and
// for reduce_* the dims of its dim attr (all when reduce_all is set or
// dim is empty, as the kernels read it).
func reducedDims(op *ir.Op, rank int) []bool {
	red := make([]bool, rank)
	dims, _ := ir.AsInts(ops.AttrValue(op, "dim"))
	all := op.Type == "mean" || len(dims) == 0
	if b, _ := ir.AsBool(ops.AttrValue(op, "reduce_all")); b {
		all = true
	}
	for i := range red {
		red[i] = all
	}
	for _, d := range dims {
		if d < 0 {
			d += int64(rank)
		}
		if d >= 0 && d < int64(rank) {
			red[d] = true
		}
	}
	return red
}

// slotStart returns the position among op's args (of that side) of the
// first arg of slot, or -1.
func slotStart(slots []ir.Slot, slot string) int {
	j := 0
	for _, s := range slots {
		if s.Name == slot {
			if len(s.Args) == 0 {
				return -1
			}
			return j
		}
		j += len(s.Args)
	}
	return -1
}

func meshDimName(pm *ir.ProcessMesh, a int) string {
	if a < len(pm.DimNames) {
		return quoteName(pm.DimNames[a])
	}
	return fmt.Sprint(a)
}

// fmtDist writes a tensor dist as the text format does:
// "@world[0, -1] partial [1, 0:avg]", "@world[-1] local [0]".
func fmtDist(d *ir.TensorDist) string {
	var sb strings.Builder
	sb.WriteString("@" + quoteName(d.Mesh) + fmtInts(d.DimsMapping))
	if len(d.Partial) > 0 {
		sb.WriteString(" partial [")
		for i, p := range d.Partial {
			if i > 0 {
				sb.WriteString(", ")
			}
			fmt.Fprint(&sb, p.Dim)
			if p.Reduce != ir.ReduceSum {
				sb.WriteString(":" + p.Reduce.String())
			}
		}
		sb.WriteByte(']')
	}
	if len(d.Local) > 0 {
		sb.WriteString(" local " + fmtInts(d.Local))
	}
	return sb.String()
}

// checkLossSync: the backward's data-parallel gradient sync (the
// batch-dim rule) averages each parameter grad over the mesh dim of the
// batch, as the grad of a loss that is the mean of the ranks' losses. A
// training loss that is their sum (or max, min) would get grads scaled
// wrong, with nothing to notice it: refused where a loss-grad op shows
// that block b is differentiated.
func (c *annChecker) checkLossSync(bi int, b *ir.Block) {
	if !c.trained {
		return
	}
	for _, pos := range c.losses {
		op := b.Ops[pos]
		if op.Dist == nil {
			continue
		}
		pm := c.meshes.get(op.Dist.Mesh)
		if pm == nil {
			continue
		}
		_, outs := c.pi.opArgs(OpRef{int32(bi), int32(pos)})
		j := 0
		for _, s := range op.Outputs {
			for range s.Args {
				v := c.argVar(outs[j], pm)
				j++
				if v == nil {
					continue
				}
				for _, p := range v.Dist.Partial {
					if p.Reduce == ir.ReduceAvg || p.Dim < 0 || p.Dim >= len(pm.Shape) || pm.Shape[p.Dim] <= 1 {
						continue
					}
					c.opErr(bi, op, v.Name(), fmt.Sprintf("%s is %s: a %s of the ranks' losses over mesh dim %d (%s), but the backward's data-parallel sync averages the grads over it: the loss must be their mean (partial [%d:avg])",
						quoteName(v.Name()), fmtDist(v.Dist), p.Reduce, p.Dim, meshDimName(pm, p.Dim), p.Dim))
				}
			}
		}
	}
}

// checkScaledGathers: where the loss of block b is averaged over a mesh
// dim, a backward reshard that gathers a gradient along it into what
// reaches a param's grad whole gives n times the gradient (a rank's part
// is its shard's gradient of its own mean; no sync takes the n back),
// as the lowering refuses it (ops.ScaledGather, ops.GatherFeedsParamGrad).
func (c *annChecker) checkScaledGathers(bi int, b *ir.Block) {
	if !c.trained || len(c.losses) == 0 {
		return
	}
	var loss *ir.TensorDist
	for a := range b.Ops[c.losses[0]].OutputNames {
		if v := b.Var(a); v != nil {
			loss = v.Dist
		}
		break
	}
	if loss == nil || len(loss.Partial) == 0 {
		return
	}
	pm := c.meshes.get(loss.Mesh)
	if pm == nil {
		return
	}
	var grads map[string]bool
	isView := c.paramGradView(bi)
	for pos, op := range b.Ops {
		if op == nil || op.Type != ops.ReshardType || !op.Role.IsBackward() {
			continue
		}
		xs, outs := op.Input("X"), op.Output("Out")
		if len(xs) != 1 || len(outs) != 1 {
			continue
		}
		x, out := b.Var(xs[0]), b.Var(outs[0])
		if x == nil || out == nil {
			continue
		}
		d, ok := ops.ScaledGather(x.Dist, out.Dist, loss, pm.Shape)
		if !ok || isView(x.Name()) {
			continue
		}
		if grads == nil {
			grads = map[string]bool{}
			for _, pg := range c.module.ParamGrads {
				grads[pg.Grad] = true
			}
		}
		if ops.GatherFeedsParamGrad(b.Ops, pos, out.Name(), grads, func(o string) bool {
			v := b.Var(o)
			return v != nil && v.Dist != nil && slices.Contains(v.Dist.DimsMapping, d)
		}) {
			c.opErr(bi, op, x.Name(), fmt.Sprintf("gathers %s along mesh dim %d (%s), over which the loss is averaged, into what reaches a param's grad whole: a rank's part is its shard's gradient, n times its part of the whole loss's, and no grad sync takes the n back",
				quoteName(x.Name()), d, meshDimName(pm, d)))
		}
	}
}

// checkParamGrad: an optimizer op updates each rank's block of Param
// with its block of Grad, so the two are split alike (their vars are, by
// the arg checks, as the op says).
func (c *annChecker) checkParamGrad(bi int, op *ir.Op) {
	ps, gs := op.Input("Param"), op.Input("Grad")
	if len(ps) != 1 || len(gs) != 1 {
		return
	}
	pm, ok1 := op.Dist.InputMapping(ps[0])
	gm, ok2 := op.Dist.InputMapping(gs[0])
	if ok1 && ok2 && len(pm) == len(gm) && !slices.Equal(pm, gm) {
		c.opErr(bi, op, gs[0], fmt.Sprintf("updates %s, split as %s, with %s, split as %s: a grad is split as its parameter",
			quoteName(ps[0]), fmtInts(pm), quoteName(gs[0]), fmtInts(gm)))
	}
}

// checkGradSync follows the data-parallel grad sync of the lowering
// (lower.SyncGrads, by ops.BatchAxis and ops.SyncOf): once the
// loss grad is seen, a grad op whose first activation input has its dim
// 0 split along a mesh dim of size > 1 averages the grads it folds over
// that mesh dim. That is right when the loss is the average over it of
// the ranks' losses; when dim 0 is not the batch (a transpose moved it,
// or the value is a weight split along mp), the grads would be scaled
// (or summed) wrong: refused.
func (c *annChecker) checkGradSync(bi int, op *ir.Op, ins []int32, pm *ir.ProcessMesh) {
	isParam := func(name string) bool {
		g := c.pi.resolve(bi, name)
		return g >= 0 && c.pi.v(g).Kind == ir.KindParam
	}
	mapping := func(name string) []int {
		if m, ok := op.Dist.InputMapping(name); ok {
			return m
		}
		if m, ok := op.Dist.OutputMapping(name); ok {
			return m
		}
		if g := c.pi.resolve(bi, name); g >= 0 && c.pi.v(g).Dist != nil {
			return c.pi.v(g).Dist.DimsMapping
		}
		return nil
	}
	axis := ops.BatchAxis(op, pm.Shape, isParam, mapping)
	if c.loss.Dist == nil {
		return
	}
	if axis < 0 {
		c.checkGradUnsynced(bi, op, pm, isParam, mapping)
		return
	}
	from := ""
	for _, s := range op.Inputs {
		for _, a := range s.Args {
			if m := mapping(a); from == "" && !strings.HasSuffix(s.Name, "@GRAD") && !isParam(a) && len(m) > 0 && m[0] == axis {
				from = a
			}
		}
	}
	synced := ""
	folds := c.gradFolds(bi, op, mapping, pm, axis)
	for _, s := range op.Outputs {
		for k, a := range s.Args {
			if g := c.pi.resolve(bi, a); synced == "" && g >= 0 && c.pi.v(g).Type.IsTensor() && c.pi.v(g).Type.DType.IsFloat() &&
				ops.SyncOf(op, s, k, mapping(a), axis, ops.FoldAt(folds, op, s, k), isParam, c.paramGradView(bi)) != ops.GradKept {
				synced = a
			}
		}
	}
	if synced == "" {
		return
	}
	averaged := false
	for _, p := range c.loss.Dist.Partial {
		if p.Dim == axis {
			averaged = true // an average; another reduction is checkLossSync's to name
		}
	}
	if averaged {
		// The sync averages over axis alone: a loss averaged over another
		// mesh dim too leaves the grads that many times too large.
		for _, p := range c.loss.Dist.Partial {
			if p.Dim != axis && p.Reduce == ir.ReduceAvg && p.Dim >= 0 && p.Dim < len(pm.Shape) && pm.Shape[p.Dim] > 1 {
				c.opErr(bi, op, synced, fmt.Sprintf("the loss %s is %s, an average over mesh dim %d (%s) too, but the data-parallel sync averages %s over mesh dim %d (%s) alone: the loss may average only over the batch",
					quoteName(c.loss.Name()), fmtDist(c.loss.Dist), p.Dim, meshDimName(pm, p.Dim), quoteName(synced), axis, meshDimName(pm, axis)))
				return
			}
		}
		return
	}
	if len(c.loss.Dist.Partial) == 0 {
		// The loss is whole: every rank computed all of it (the batch
		// split before it was gathered or reduced), and the sync sums
		// the grads folded over the batch shards, without averaging.
		return
	}
	c.opErr(bi, op, synced, fmt.Sprintf("the data-parallel sync would average %s over mesh dim %d (%s), along which %s's dim 0 is split, but the loss %s is %s, no average over it: dim 0 must be the batch the loss averages",
		quoteName(synced), axis, meshDimName(pm, axis), quoteName(from), quoteName(c.loss.Name()), fmtDist(c.loss.Dist)))
}

// checkGradUnsynced: a grad op that the sync leaves alone (no activation
// input split on its dim 0), while the loss is an average over a mesh
// dim of size > 1, and that writes a grad the sync would have to touch
// along it: a fold over an input split along it elsewhere than dim 0,
// or a parameter split along it. The grad is a rank's own loss's, never
// averaged. The grouped matmul's backward averages its experts' grads
// itself.
func (c *annChecker) checkGradUnsynced(bi int, op *ir.Op, pm *ir.ProcessMesh, isParam func(string) bool, mapping func(string) []int) {
	if op.Dist.ImplType == "grouped_matmul" {
		return
	}
	avg := -1
	for _, p := range c.loss.Dist.Partial {
		if p.Reduce == ir.ReduceAvg && p.Dim >= 0 && p.Dim < len(pm.Shape) && pm.Shape[p.Dim] > 1 {
			avg = p.Dim
			break
		}
	}
	if avg < 0 {
		return
	}
	read := false // some input is split along avg
	for a := range op.InputNames {
		if slices.Contains(mapping(a), avg) {
			read = true
		}
	}
	folds := c.gradFolds(bi, op, mapping, pm, avg)
	for _, s := range op.Outputs {
		for k, a := range s.Args {
			g := c.pi.resolve(bi, a)
			if g < 0 || !c.pi.v(g).Type.IsTensor() || !c.pi.v(g).Type.DType.IsFloat() {
				continue
			}
			// A parameter's grad, by the grad slot's forward input: other
			// grads may hold each rank's own rows (a scatter's by local
			// positions), which the batch-dim rule cannot tell from a fold.
			if !ops.IsParamGrad(op, s, k, isParam, c.paramGradView(bi)) {
				continue
			}
			switch ops.SyncOf(op, s, k, mapping(a), avg, ops.FoldAt(folds, op, s, k), isParam, c.paramGradView(bi)) {
			case ops.GradSummed:
				if !read {
					continue // computed from whole values: the same on every rank
				}
			case ops.GradKept:
				continue
			}
			c.opErr(bi, op, a, fmt.Sprintf("the loss %s is %s, an average over mesh dim %d (%s), but the data-parallel sync leaves %s alone: no activation input has its dim 0 (the batch) split along it",
				quoteName(c.loss.Name()), fmtDist(c.loss.Dist), avg, meshDimName(pm, avg), quoteName(a)))
			return
		}
	}
}

// A packed dist: bits 0-55 hold up to 14 mapping entries, 4 bits each
// (entry + 1); bits 56-59 the mapping's length; bits 60-62 the mesh's
// index + 1 among the module's first 7 meshes; bit 63 whether the dist
// is partial. Zero packs nothing (a dist that does not fit the scheme is
// compared the long way): a rank-local dist packs nothing, so that what
// the packing cannot hold never takes the short way past a check.
const (
	packPartial = 1 << 63
	packMaxDims = 14
)

// packMapping packs dm on mesh index mesh (+1, 1-7; 0: unknown), or 0.
func packMapping(dm []int, mesh int) uint64 {
	if mesh <= 0 || mesh > 7 || len(dm) > packMaxDims {
		return 0
	}
	var p uint64
	for i, e := range dm {
		if e < -1 || e > 14 {
			return 0
		}
		p |= uint64(e+1) << (4 * i)
	}
	return p | uint64(len(dm))<<56 | uint64(mesh)<<60
}

// packDist packs v's dist, or returns 0.
func (c *annChecker) packDist(v *ir.Var) uint64 {
	d := v.Dist
	if d == nil || len(d.Local) > 0 {
		return 0
	}
	pm := c.meshes.get(d.Mesh)
	if pm == nil || !mappingFits(d.DimsMapping, v.Type.Shape, pm) {
		return 0
	}
	p := packMapping(d.DimsMapping, c.meshIndex(pm))
	if p != 0 && len(d.Partial) > 0 {
		p |= packPartial
	}
	return p
}

// meshIndex returns 1 + the index of pm among the module's meshes, or 0
// when pm is nil or not among the first 7.
func (c *annChecker) meshIndex(pm *ir.ProcessMesh) int {
	if pm == nil {
		return 0
	}
	for i, x := range c.meshes.list {
		if i >= 7 {
			break
		}
		if x == pm {
			return i + 1
		}
	}
	return 0
}

// paramGradView returns whether a var of block bi reaches a param's
// grad through reshards alone (ops.ParamGradViews), found once a block.
func (c *annChecker) paramGradView(bi int) func(string) bool {
	if c.gradViews == nil || c.gradViewsOf != bi {
		var grads []string
		for _, pg := range c.module.ParamGrads {
			grads = append(grads, pg.Grad)
		}
		c.gradViews, c.gradViewsOf = ops.ParamGradViews(c.module.Main.Blocks[bi].Ops, grads), bi
	}
	views := c.gradViews
	return func(name string) bool { return views[name] }
}
