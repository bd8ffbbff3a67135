package lower

import (
	"fmt"
	"slices"

	"github.com/distpass/distpass/ir"
)

// The reshape2 impls, in Paddle's order: 0 add_one_dim_back, 1
// remove_one_dim_back, 2 same_dim_shape. Each keeps the op with its
// shape attr made local (divided on the dims where Out is split, with
// floor division so that 0 and -1 stay what they mean).

// ReshapeAddOneDimBack is impl 0: Out has one more dim than X, a
// replicated last one; the other dims are split as X's.
func ReshapeAddOneDimBack() *Impl {
	return reshapeImpl(0, "add_one_dim_back", "Out adds a replicated last dim; the shape attr becomes local")
}

// ReshapeRemoveOneDimBack is impl 1: Out has one dim less than X, whose
// replicated last dim goes; the other dims are split as X's.
func ReshapeRemoveOneDimBack() *Impl {
	return reshapeImpl(1, "remove_one_dim_back", "Out drops X's replicated last dim; the shape attr becomes local")
}

// ReshapeSameDimShape is impl 2: X and Out have the same rank and
// mapping.
func ReshapeSameDimShape() *Impl {
	return reshapeImpl(2, "same_dim_shape", "same rank and mapping; the shape attr becomes local")
}

func reshapeImpl(kind int, name, doc string) *Impl {
	return &Impl{
		Name:       name,
		Doc:        doc,
		Compatible: func(ctx *Lowering, op *ir.Op) error { return reshapeCompatible(ctx, op, kind, name) },
		Forward: func(ctx *Lowering, op *ir.Op) error {
			if v := op.Attrs.Get("shape"); v != nil {
				if _, ok := v.(ir.Ints); !ok {
					return fmt.Errorf("%s: attr shape has kind %s, want ints", op, v.Kind())
				}
			}
			ctx.Keep(op)
			if err := divideShapeAttr(ctx, op, "Out"); err != nil {
				return err
			}
			return SyncParams(ctx, op)
		},
		Backward: DefaultImpl().Backward,
	}
}

// reshapeCompatible holds the op to its sharding rule (ruleFit: each
// rank's block of X reshapes into its block of Out, XShape [-1] and X's
// mapping, a partial X carried into Out partial alike) and to the impl's
// own constraint, reshapeFits.
func reshapeCompatible(ctx *Lowering, op *ir.Op, kind int, name string) error {
	if err := reshapeFits(ctx, op, kind, name); err != nil {
		return err
	}
	return ruleFit(ctx, op, ruleOpts{impl: name, carries: true, spell: true})
}

// reshapeFits is §3.5's table, Paddle's reshape impls' own ranks and
// mappings: add_one_dim_back, Out one dim more than X, its last
// replicated, the others split as X's; remove_one_dim_back, the same
// the other way; same_dim_shape, X and Out of one rank, split alike.
func reshapeFits(ctx *Lowering, op *ir.Op, kind int, name string) error {
	x, xm, err := argMapping(ctx, op, "X", true)
	if err != nil {
		return err
	}
	out, om, err := argMapping(ctx, op, "Out", false)
	if err != nil {
		return err
	}
	// Spelled only for an error: compatibility is checked on every op.
	both := func() string {
		return fmt.Sprintf("X %s has dims_mapping %s, Out %s %s", x, ir.FormatInts(xm), out, ir.FormatInts(om))
	}
	fail := func(need string) error { return fmt.Errorf("%s: %s needs %s; %s", op, name, need, both()) }
	switch kind {
	case 0:
		if len(xm) != len(om)-1 {
			return fail("Out of one dim more than X")
		}
		if om[len(om)-1] != -1 {
			return fail("Out's last dim replicated")
		}
		if !slices.Equal(xm, om[:len(xm)]) {
			return fail("Out's dims but the last split as X's")
		}
	case 1:
		if len(xm) != len(om)+1 {
			return fail("Out of one dim less than X")
		}
		if xm[len(xm)-1] != -1 {
			return fail("X's last dim replicated")
		}
		if !slices.Equal(xm[:len(om)], om) {
			return fail("X's dims but the last split as Out's")
		}
	case 2:
		if len(xm) != len(om) {
			return fail("X and Out of the same rank")
		}
		if !slices.Equal(xm, om) {
			return fail("X and Out split alike")
		}
	}
	return nil
}
