package lower

import (
	"fmt"
	"slices"
	"strings"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/ops"
)

// ExpertAxisAttr names the attr of an MoE exchange op (global_scatter,
// global_gather, and the alltoall of the counts) that says which mesh dim
// is the expert axis: a string, the dim's name. The serial program runs
// the exchanges as a world of one; partitioning points their ring_id at
// this rank's group along that dim. An annotation like a dims_mapping,
// it is an attr because the exchanged tensors have no dim the axis maps:
// their rows are data-dependent.
const ExpertAxisAttr = "expert_axis"

// expertAxis returns the mesh dim the op's expert_axis attr names.
func expertAxis(ctx *Lowering, op *ir.Op) (int, error) {
	v := op.Attrs.Get(ExpertAxisAttr)
	if v == nil {
		return 0, fmt.Errorf("%s: expert_parallel needs attr %s, the name of the mesh dim the experts are split along (mesh %s has dims [%s])",
			op, ExpertAxisAttr, ctx.Mesh().Name, strings.Join(ctx.Mesh().DimNames, ", "))
	}
	name, ok := v.(ir.String)
	if !ok {
		return 0, fmt.Errorf("%s: attr %s has kind %s, want string", op, ExpertAxisAttr, v.Kind())
	}
	axis := ctx.Mesh().DimIndex(string(name))
	if axis < 0 {
		return 0, fmt.Errorf("%s: attr %s is %q, not a dim of mesh %s (dims [%s])",
			op, ExpertAxisAttr, string(name), ctx.Mesh().Name, strings.Join(ctx.Mesh().DimNames, ", "))
	}
	return axis, nil
}

// ExpertExchange is impl 0 "expert_parallel" of global_scatter,
// global_gather and alltoall: the op runs over this rank's group along
// the expert axis (attr expert_axis). Its count vectors hold n_expert ×
// world entries, the same length on every rank, so they are replicated
// and must split evenly over the axis. The backward (the other exchange,
// or the alltoall's own grad) runs over the same group.
func ExpertExchange() *Impl {
	return &Impl{
		Name:       "expert_parallel",
		Doc:        "ring_id set to the group along the op's expert_axis mesh dim",
		Compatible: exchangeCompatible,
		Forward:    exchangeLower,
		Backward:   exchangeLower,
	}
}

// exchangeCompatible is a hand check, not derived from the rule: the
// counts are each rank's own, which the rule leaves free, and the rows'
// mappings on the two sides are not the rule's (it splits Out's rows as
// X's, which would refuse the dp×ep MoE model's xs [-1, -1] -> xr
// [0, -1], which check proves).
func exchangeCompatible(ctx *Lowering, op *ir.Op) error {
	axis, err := expertAxis(ctx, op)
	if err != nil {
		return err
	}
	size := ctx.Mesh().Shape[axis]
	type arg struct {
		slot  string
		input bool
	}
	counts := []arg{{"local_count", true}, {"global_count", true}}
	if op.Type == "alltoall" || op.Type == "all_to_all" {
		counts = []arg{{"X", true}, {"Out", false}}
	}
	for _, c := range counts {
		slot := c.slot
		name, m, err := argMapping(ctx, op, slot, c.input)
		if err != nil {
			return err
		}
		if !allReplicated(m) {
			return fmt.Errorf("%s: expert_parallel needs the counts replicated (every rank holds n_expert × world of them); %s %s has dims_mapping %s",
				op, slot, name, ir.FormatInts(m))
		}
		v, err := lookupVar(ctx, op, slot, name)
		if err != nil {
			return err
		}
		if n := v.Type.Shape; len(n) != 1 || n[0] < 0 || n[0]%int64(size) != 0 {
			return fmt.Errorf("%s: %s %s has shape %s: the counts must be one vector of n_expert × %d entries (mesh dim %s)",
				op, slot, name, fmt.Sprint(n), size, ctx.Mesh().DimNames[axis])
		}
	}
	if op.Type == "alltoall" || op.Type == "all_to_all" {
		return nil
	}
	// The rows moved: each rank's own (replicated in their mapping, as
	// their number is data-dependent), or split along another mesh dim
	// than the expert axis the exchange runs over; features whole.
	for i, slot := range []string{"X", "Out"} {
		name, m, err := argMapping(ctx, op, slot, i == 0)
		if err != nil {
			return err
		}
		if len(m) == 0 || !allReplicated(m[1:]) || m[0] == axis {
			return fmt.Errorf("%s: expert_parallel needs %s's rows off the expert axis %s and its features replicated; %s %s has dims_mapping %s",
				op, slot, ctx.Mesh().DimNames[axis], slot, name, ir.FormatInts(m))
		}
		if err := notPartial(ctx, op, "expert_parallel", name); err != nil {
			return err
		}
	}
	return nil
}

// exchangeLower keeps the op with ring_id set to the expert-axis group.
func exchangeLower(ctx *Lowering, op *ir.Op) error {
	axis, err := expertAxis(ctx, op)
	if err != nil {
		return err
	}
	id, _, err := group(ctx, op, axis)
	if err != nil {
		return err
	}
	if err := coordinateOrdered(ctx, op, axis); err != nil {
		return err
	}
	op.Attrs.Set("ring_id", ir.Int(int64(id)))
	reason := fmt.Sprintf("expert-parallel: exchange over the %s group", ctx.Mesh().DimNames[axis])
	if implType, _ := ctx.Impl(); op.Type != implType {
		reason = fmt.Sprintf("expert-parallel: the grad of %s, over the %s group", implType, ctx.Mesh().DimNames[axis])
	}
	ctx.SetOrigin(op, reason)
	ctx.Keep(op)
	return nil
}

// GroupedMatmulExpert is impl 0 "expert_parallel" of grouped_matmul: the
// expert weights W [E, K, P] may be split along dim 0 (each rank holds
// E/n experts, and its rows arrive grouped by its own experts), never
// along K or P; the rows of X and Out are data-dependent, so only their
// feature dims are checked (replicated). Backward: a W split along axis a
// receives, through the exchange, the rows of every rank of a's group,
// each carrying the gradient of its own rank's loss; the loss is their
// average (partial avg, as the batch-dim rule assumes), so W@GRAD is
// scaled by 1/|group| — without communication: no other rank holds these
// experts. The batch-dim rule then syncs over the axis of X's rows, if
// any (dp in dp×ep).
func GroupedMatmulExpert() *Impl {
	return &Impl{
		Name:       "expert_parallel",
		Doc:        "experts split along their dim; W@GRAD averaged over it without communication",
		Compatible: groupedMatmulCompatible,
		Forward: func(ctx *Lowering, op *ir.Op) error {
			ctx.Keep(op)
			return SyncParams(ctx, op)
		},
		Backward: groupedMatmulBackward,
	}
}

// groupedMatmulCompatible holds the op to its sharding rule (ruleFit:
// Out's rows split as X's, off W's expert axis, the features as W's,
// ExpertCount replicated, nothing partial) and to the impl's own
// constraint, groupedMatmulFits.
func groupedMatmulCompatible(ctx *Lowering, op *ir.Op) error {
	if err := groupedMatmulFits(ctx, op); err != nil {
		return err
	}
	return ruleFit(ctx, op, ruleOpts{impl: "expert_parallel", carries: true, spell: true})
}

// groupedMatmulFits: W [experts, in, out] split at most along the
// experts (the rule would let a split in-dim make Out partial, which no
// collective here reduces), and so X's and Out's feature dims
// replicated, which the rule then implies: checked here to say which.
func groupedMatmulFits(ctx *Lowering, op *ir.Op) error {
	w, wm, err := argMapping(ctx, op, "W", true)
	if err != nil {
		return err
	}
	if len(wm) != 3 || wm[1] != -1 || wm[2] != -1 {
		return fmt.Errorf("%s: expert_parallel needs W [experts, in, out] split at most along the experts; W %s has dims_mapping %s",
			op, w, ir.FormatInts(wm))
	}
	for i, slot := range []string{"X", "Out"} {
		name, m, err := argMapping(ctx, op, slot, i == 0)
		if err != nil {
			return err
		}
		if len(m) != 2 || m[1] != -1 {
			return fmt.Errorf("%s: expert_parallel needs %s's feature dim replicated; %s %s has dims_mapping %s",
				op, slot, slot, name, ir.FormatInts(m))
		}
	}
	return nil
}

func groupedMatmulBackward(ctx *Lowering, op *ir.Op) error {
	ctx.Keep(op)
	gs := op.Output("W@GRAD")
	w := op.Input("W")
	if len(gs) == 1 && len(w) == 1 {
		if m := ctx.Mapping(w[0]); len(m) == 3 && m[0] >= 0 && ctx.Mesh().Shape[m[0]] > 1 {
			n := ctx.Mesh().Shape[m[0]]
			ctx.Emit("scale", ctx.Slot("X", gs[0]), ctx.Slot("Out", gs[0]),
				fmt.Sprintf("expert-parallel: %s holds the grads of the tokens of all %d ranks along %s, each of its own rank's loss; averaged, not summed over ranks",
					gs[0], n, ctx.Mesh().DimNames[m[0]]),
				ir.A("scale", ir.Float(1/float64(n))), ir.A("bias", ir.Float(0)), ir.A("bias_after_scale", ir.Bool(true)))
		}
	}
	return SyncGrads(ctx, op)
}

// ExpertCapacity is impl 0 "expert_parallel" of limit_by_capacity and
// prune_gate_by_capacity: serially the expert counts have one worker, on
// a rank they have one per rank of the expert axis (attr expert_axis), so
// the lowering sets n_worker to the group's size, and prune's n_expert
// to the experts per rank. limit_by_capacity's capacity vector is split
// along the axis like the experts.
func ExpertCapacity() *Impl {
	lower := func(ctx *Lowering, op *ir.Op) error {
		axis, err := expertAxis(ctx, op)
		if err != nil {
			return err
		}
		_, size, err := group(ctx, op, axis)
		if err != nil {
			return err
		}
		w := int64(size)
		if op.Type == "prune_gate_by_capacity" {
			ne, ok := ir.AsInt(ops.AttrValue(op, "n_expert"))
			nw, ok2 := ir.AsInt(ops.AttrValue(op, "n_worker"))
			if !ok || !ok2 || nw != 1 || ne%w != 0 {
				return fmt.Errorf("%s: want the serial n_worker = 1 and n_expert split evenly over the %d ranks along %s; have n_worker %d, n_expert %d",
					op, w, ctx.Mesh().DimNames[axis], nw, ne)
			}
			op.Attrs.Set("n_expert", ir.Int(ne/w))
		}
		op.Attrs.Set("n_worker", ir.Int(w))
		ctx.SetOrigin(op, fmt.Sprintf("expert-parallel: counts of the %d ranks along %s", w, ctx.Mesh().DimNames[axis]))
		ctx.Keep(op)
		return nil
	}
	return &Impl{
		Name:       "expert_parallel",
		Doc:        "n_worker (and prune's n_expert) set to the rank's view of the expert axis",
		Compatible: capacityCompatible,
		Forward:    lower,
		Backward:   lower,
	}
}

// capacityCompatible is a hand check, not derived from the rule, which
// leaves the counts free (each rank's own) and keeps capacity whole
// where this impl also takes it split along the expert axis. The counts
// are replicated (every rank sees the whole world's, after the
// exchange), limit_by_capacity's capacity is replicated or split along
// the expert axis like the experts, and prune_gate_by_capacity's output
// is split as its GateIdx.
func capacityCompatible(ctx *Lowering, op *ir.Op) error {
	axis, err := expertAxis(ctx, op)
	if err != nil {
		return err
	}
	need := func(slot string, input bool, ok func(m []int) bool, what string) error {
		name, m, err := argMapping(ctx, op, slot, input)
		if err != nil {
			return err
		}
		if !ok(m) {
			return fmt.Errorf("%s: expert_parallel needs %s %s; %s %s has dims_mapping %s", op, slot, what, slot, name, ir.FormatInts(m))
		}
		return nil
	}
	switch op.Type {
	case "limit_by_capacity":
		if err := need("expert_count", true, allReplicated, "replicated"); err != nil {
			return err
		}
		if err := need("capacity", true, func(m []int) bool { return allReplicated(m) || len(m) == 1 && m[0] == axis }, "replicated or split along the expert axis"); err != nil {
			return err
		}
		return need("Out", false, allReplicated, "replicated")
	case "prune_gate_by_capacity":
		if err := need("ExpertCount", true, allReplicated, "replicated"); err != nil {
			return err
		}
		_, gm, err := argMapping(ctx, op, "GateIdx", true)
		if err != nil {
			return err
		}
		if len(op.Outputs) == 0 || len(op.Outputs[0].Args) == 0 {
			return fmt.Errorf("%s has no output", op)
		}
		return need(op.Outputs[0].Name, false, func(m []int) bool { return slices.Equal(m, gm) }, "split as GateIdx")
	}
	return nil
}

// coordinateOrdered refuses an exchange along a mesh axis some group
// of which lists its members (in ascending ids, as every ring does) in
// another order than their coordinates. The exchange sends count block
// j, and its rows, to member j of the ring, while the experts of block
// j are held by the rank at coordinate j: on such a group the tokens
// would reach the wrong experts. Every group of the axis is looked at,
// not only this rank's, so that every rank refuses the module alike;
// the answer depends on the mesh alone, not on the rank.
func coordinateOrdered(ctx *Lowering, op *ir.Op, axis int) error {
	pm := ctx.Mesh()
	for _, g := range pm.Groups(axis) {
		ord, err := memberOrder(pm, axis, g[0])
		if err != nil {
			return fmt.Errorf("%s: %v", op, err)
		}
		if isIdentity(ord) {
			continue
		}
		return fmt.Errorf("%s: expert_parallel: the group along %s of ranks %s (ascending, the exchange's ring order) holds its members at coordinates %s: "+
			"the exchange would send the tokens of the experts at coordinate j to the j-th rank of the ring, which holds other experts; "+
			"list mesh %s's ranks ascending along %s",
			op, pm.DimNames[axis], ir.FormatInts(g), ir.FormatInts(ord), pm.Name, pm.DimNames[axis])
	}
	return nil
}
