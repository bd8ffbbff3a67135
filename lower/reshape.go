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

// reshapeCompatible is §3.5's table with its "auto" column: the ranks of
// X and Out, the dims that must be split alike, and XShape (when
// present) = [-1] + X. Paddle's same_dim_shape compares XShape[1:] with
// Out; we compare it with X, as XShape holds X's shape, and ask X == Out
// in full instead.
func reshapeCompatible(ctx *Lowering, op *ir.Op, kind int, name string) error {
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
	if err := reshapeBlocks(ctx, op, name, x, xm, out, om); err != nil {
		return err
	}
	if xs := op.Output("XShape"); len(xs) > 0 {
		xsm, err := expectedMapping(ctx, op, "XShape", xs[0])
		if err != nil {
			return err
		}
		if len(xsm) != len(xm)+1 || xsm[0] != -1 || !slices.Equal(xsm[1:], xm) {
			return fmt.Errorf("%s: %s needs XShape's mapping to be [-1] followed by X's; XShape %s has dims_mapping %s, X %s %s",
				op, name, xs[0], ir.FormatInts(xsm), x, ir.FormatInts(xm))
		}
	}
	return nil
}

// reshapeBlocks checks that each rank's block of X reshapes into its
// block of Out. In row-major order a split dim of X cuts each run of the
// elements after the dims before it into equal contiguous blocks; Out's
// dim split along the same mesh dim cuts the same runs the same way
// exactly when the dims before it hold as many elements as X's do (the
// split dim may itself split into several, or merge with the next: the
// heads of an attention). A partial X is reshaped as its parts only into
// an Out partial alike.
func reshapeBlocks(ctx *Lowering, op *ir.Op, name, x string, xm []int, out string, om []int) error {
	xv, ov := ctx.Var(x), ctx.Var(out)
	if xv == nil || ov == nil {
		return nil // the lowering names the missing var
	}
	if xv.Dist.IsPartial() || ov.Dist.IsPartial() {
		if !xv.Dist.IsPartial() || !ov.Dist.IsPartial() || !slices.Equal(xv.Dist.Partial, ov.Dist.Partial) {
			return fmt.Errorf("%s: %s needs X and Out partial alike or whole; X %s is %s, Out %s %s",
				op, name, x, xv.Dist.String(), out, ov.Dist.String())
		}
	}
	for i, a := range xm {
		if a < 0 {
			continue
		}
		j := slices.Index(om, a)
		if j < 0 || i >= len(xv.Type.Shape) || j >= len(ov.Type.Shape) {
			continue // the mapping rules above say what is wrong
		}
		px, okx := globalPrefix(ctx, xv.Type.Shape, xm, i)
		po, oko := globalPrefix(ctx, ov.Type.Shape, om, j)
		if !okx || !oko || px != po {
			xs, os := globalShape(ctx, xv.Type.Shape, xm), globalShape(ctx, ov.Type.Shape, om)
			return fmt.Errorf("%s: %s needs the dims before each split dim to hold as many elements in X as in Out; X %s %s is split at dim %d along mesh dim %d, Out %s %s at dim %d",
				op, name, x, ir.FormatInts(int64sToInts(xs)), i, a, out, ir.FormatInts(int64sToInts(os)), j)
		}
	}
	return nil
}

// globalShape returns the serial shape of a var of local shape local
// mapped m: the lowering sees local shapes.
func globalShape(ctx *Lowering, local []int64, m []int) []int64 {
	g := slices.Clone(local)
	for i, a := range m {
		if a >= 0 && i < len(g) && g[i] >= 0 && ctx.Mesh() != nil && a < len(ctx.Mesh().Shape) {
			g[i] *= int64(ctx.Mesh().Shape[a])
		}
	}
	return g
}

// globalPrefix multiplies the serial sizes of the first n dims of a var
// of local shape local mapped m; false when a dim is of unknown size.
func globalPrefix(ctx *Lowering, local []int64, m []int, n int) (int64, bool) {
	p := int64(1)
	for i, d := range local[:n] {
		if d < 0 {
			return 0, false
		}
		if i < len(m) && m[i] >= 0 && ctx.Mesh() != nil && m[i] < len(ctx.Mesh().Shape) {
			d *= int64(ctx.Mesh().Shape[m[i]])
		}
		p *= d
	}
	return p, true
}

func int64sToInts(xs []int64) []int {
	out := make([]int, len(xs))
	for i, x := range xs {
		out[i] = int(x)
	}
	return out
}
