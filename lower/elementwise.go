package lower

import (
	"fmt"
	"slices"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/ops"
)

// Elementwise is impl 0 "replicate_parallel" of the "elementwise"
// container (binary elementwise_* ops with broadcasting, and unary ops
// such as relu, gelu, scale, cast, assign). Every rank computes its local
// block of the output from its local blocks of the inputs, so the
// lowering is the default's; the impl only checks that the blocks line
// up: right-aligned (as broadcasting aligns dims), the args that have a
// dim at a position split it on the same mesh axis or not at all.
func Elementwise() *Impl {
	d := DefaultImpl()
	return &Impl{
		Name:       "replicate_parallel",
		Doc:        "the default lowering, for args split alike on right-aligned dims",
		Compatible: elementwiseCompatible,
		Forward:    d.Forward,
		Backward:   d.Backward,
	}
}

// elementwiseCompatible holds an elementwise op (ops.Elementwise) that
// has a sharding rule to it (ruleFit: the args split alike on the dims
// they share, right-aligned as broadcasting aligns them or Y at axis; a
// size-1 dim that broadcasts replicated; a partial X carried into Out
// partial alike by a linear unary op), with no constraint of its own
// (elementwiseFits). Another op, or one without a rule, gets the hand
// check it always had (elementwiseBlocks).
func elementwiseCompatible(ctx *Lowering, op *ir.Op) error {
	if d := ops.Lookup(op.Type); !elementwiseFits(op) || d == nil || d.Sharding == nil {
		return elementwiseBlocks(ctx, op)
	}
	err := ruleFit(ctx, op, ruleOpts{impl: "elementwise", carries: true, spell: true})
	if err != nil {
		// A rule that does not build on these args is no rule for them:
		// the hand check decides (asked on refusal only, as building the
		// rule costs what ruleFit's memo saves).
		if rule, rerr := ops.ShardingRuleOf(op, ctx.serialVar); rerr != nil || rule == nil {
			return elementwiseBlocks(ctx, op)
		}
	}
	return err
}

// elementwiseFits: the op is elementwise (ops.Elementwise), each output
// element computed from the inputs' at its index: the rule then says all
// the impl needs.
func elementwiseFits(op *ir.Op) bool { return ops.Has(op.Type, ops.Elementwise) }

// elementwiseBlocks checks that each rank's blocks line up: every
// arg is split as Out (the first output) on each dim it shares with it,
// aligned from the last dim as broadcasting aligns them (or from dim
// axis for a Y of lower rank, Paddle's axis attr); a dim of size 1 that
// broadcasts may stay replicated. Out's mapping is thus the broadcast of
// the inputs'. A partial arg is refused but for a linear unary op
// (assign, cast, scale without bias) whose X and Out are partial alike.
func elementwiseBlocks(ctx *Lowering, op *ir.Op) error {
	if len(op.Outputs) == 0 || len(op.Outputs[0].Args) == 0 {
		return fmt.Errorf("%s has no output", op)
	}
	out := op.Outputs[0].Args[0]
	om, err := expectedMapping(ctx, op, op.Outputs[0].Name, out)
	if err != nil {
		return err
	}
	axis := int64(-1)
	if v, ok := ir.AsInt(ops.AttrValue(op, "axis")); ok {
		axis = v
	}
	for side, slots := range [2][]ir.Slot{op.Inputs, op.Outputs} {
		for _, s := range slots {
			for _, a := range s.Args {
				m, err := expectedMapping(ctx, op, s.Name, a)
				if err != nil {
					return err
				}
				if err := elementwisePartial(ctx, op, a, out); err != nil {
					return err
				}
				if side == 1 && a == out {
					continue
				}
				off := len(om) - len(m)
				if s.Name == "Y" && axis >= 0 && len(m) < len(om) {
					off = int(axis)
				}
				if off < 0 || off+len(m) > len(om) {
					return fmt.Errorf("%s: elementwise needs each arg to broadcast to Out; %s %s has dims_mapping %s, Out %s %s (axis %d)",
						op, s.Name, a, ir.FormatInts(m), out, ir.FormatInts(om), axis)
				}
				shape := varShape(ctx, a)
				for i, x := range m {
					if x == om[off+i] || x == -1 && i < len(shape) && shape[i] == 1 {
						continue
					}
					return fmt.Errorf("%s: elementwise needs each arg split as Out on the dims it shares with it; %s %s has dims_mapping %s, Out %s %s (its dim %d is Out's dim %d)",
						op, s.Name, a, ir.FormatInts(m), out, ir.FormatInts(om), i, off+i)
				}
			}
		}
	}
	return nil
}

// elementwisePartial refuses a partial arg, but for the X and Out of a
// linear unary op that are partial alike: the op of the parts is then
// the part of the op.
func elementwisePartial(ctx *Lowering, op *ir.Op, a, out string) error {
	v := ctx.Var(a)
	if v == nil || !v.Dist.IsPartial() {
		return nil
	}
	if ops.PassesPartial(op, v.Dist.Partial) {
		xs, os := op.Input("X"), op.Output("Out")
		if len(xs) == 1 && len(os) == 1 {
			xv, ov := ctx.Var(xs[0]), ctx.Var(os[0])
			if xv != nil && ov != nil && xv.Dist.IsPartial() && ov.Dist.IsPartial() && slices.Equal(xv.Dist.Partial, ov.Dist.Partial) {
				return nil
			}
		}
	}
	return notPartial(ctx, op, "elementwise", a)
}
