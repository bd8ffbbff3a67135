package lower

import (
	"fmt"
	"slices"

	"github.com/distpass/distpass/ir"
)

// Paddle's VarType codes for the in_dtype and out_dtype attrs of cast,
// which the AMP lowering emits (the same codes Paddle programs carry).
const (
	paddleBool  = 0
	paddleInt32 = 2
)

// CheckFiniteAndUnscale is impl 0 of check_finite_and_unscale, a
// backward-only op: it is kept, then its FoundInfinite flag is made
// global: cast to int32, c_allreduce_max over the world group (group 0),
// cast back to bool, so that every rank skips the same steps. It fails
// on a rank outside the world group (Lowering.InWorld).
func CheckFiniteAndUnscale() *Impl {
	return &Impl{
		Name:     "check_finite_and_unscale",
		Doc:      "found_inf cast to int32, maxed over the world, cast back",
		Forward:  backwardOnly,
		Backward: checkFiniteBackward,
	}
}

// UpdateLossScaling is impl 0 of update_loss_scaling, a backward-only op
// kept as is: its inputs are already global after check_finite_and_unscale.
func UpdateLossScaling() *Impl {
	return &Impl{
		Name:    "update_loss_scaling",
		Doc:     "kept as is (backward-only): every rank sees the same found_inf",
		Forward: backwardOnly,
		Backward: func(ctx *Lowering, op *ir.Op) error {
			ctx.Keep(op)
			return nil
		},
	}
}

func backwardOnly(_ *Lowering, op *ir.Op) error {
	return fmt.Errorf("%s is backward-only: it has no forward lowering", op)
}

// checkFiniteArgs: the op unscales each grad X[i] into Out[i] where it
// lies, so each Out is split as its X; Scale is one number every rank
// holds, and FoundInfinite one flag. Backward-only, the op is never
// checked by the forward lowering's Compatible: its lowering checks.
func checkFiniteArgs(ctx *Lowering, op *ir.Op) error {
	xs, outs := op.Input("X"), op.Output("Out")
	if len(xs) != len(outs) {
		return fmt.Errorf("%s has %d X and %d Out: one Out per X", op, len(xs), len(outs))
	}
	for i := range xs {
		xm, err := expectedMapping(ctx, op, "X", xs[i])
		if err != nil {
			return err
		}
		om, err := expectedMapping(ctx, op, "Out", outs[i])
		if err != nil {
			return err
		}
		if !slices.Equal(xm, om) {
			return fmt.Errorf("%s: check_finite_and_unscale needs each Out split as its X; X %s has dims_mapping %s, Out %s %s",
				op, xs[i], ir.FormatInts(xm), outs[i], ir.FormatInts(om))
		}
	}
	for _, s := range []struct {
		slot  string
		input bool
	}{{"Scale", true}, {"FoundInfinite", false}} {
		args := op.Input(s.slot)
		if !s.input {
			args = op.Output(s.slot)
		}
		for _, a := range args {
			m, err := expectedMapping(ctx, op, s.slot, a)
			if err != nil {
				return err
			}
			if !allReplicated(m) {
				return fmt.Errorf("%s: check_finite_and_unscale needs %s replicated; %s %s has dims_mapping %s", op, s.slot, s.slot, a, ir.FormatInts(m))
			}
		}
	}
	return nil
}

func checkFiniteBackward(ctx *Lowering, op *ir.Op) error {
	if err := checkFiniteArgs(ctx, op); err != nil {
		return err
	}
	found, err := slotArg(op, "FoundInfinite", false)
	if err != nil {
		return err
	}
	fv, err := lookupVar(ctx, op, "FoundInfinite", found)
	if err != nil {
		return err
	}
	if ctx.Mesh() == nil {
		return fmt.Errorf("%s: no mesh", op)
	}
	if err := ctx.InWorld(); err != nil {
		return fmt.Errorf("%s: %v", op, err)
	}
	// The op writes its own flag into a temp, and the world-reduced flag
	// is cast back into FoundInfinite: each var keeps one definition.
	local := found + "@local"
	if ctx.Var(local) == nil {
		v := fv.Clone().Named(local)
		if err := ctx.Declare(&v); err != nil {
			return fmt.Errorf("%s: %v", op, err)
		}
	}
	renameArg(ctx, op, "FoundInfinite", false, found, local)
	ctx.Keep(op)
	name := found + "@cast_int32"
	if ctx.Var(name) == nil {
		t := ir.Tensor(ir.I32, fv.Type.Shape...)
		if !fv.Type.IsTensor() {
			t = fv.Type
		}
		v := ir.Var{Type: t, Dist: fv.Dist.Clone(), Flags: ir.FlagStopGradient}.Named(name)
		if err := ctx.Declare(&v); err != nil {
			return fmt.Errorf("%s: %v", op, err)
		}
	}
	ctx.Emit("cast", ctx.Slot("X", local), ctx.Slot("Out", name),
		fmt.Sprintf("amp: %s to int32 for the allreduce", found),
		ir.A("in_dtype", ir.Int(paddleBool)), ir.A("out_dtype", ir.Int(paddleInt32)))
	ctx.Emit("c_allreduce_max", ctx.Slot("X", name), ctx.Slot("Out", name),
		fmt.Sprintf("amp: %s is true on every rank if it is on one", found),
		collectiveAttrs(0, false)...)
	ctx.Emit("cast", ctx.Slot("X", name), ctx.Slot("Out", found),
		fmt.Sprintf("amp: %s back to bool", found),
		ir.A("in_dtype", ir.Int(paddleInt32)), ir.A("out_dtype", ir.Int(paddleBool)))
	return nil
}
