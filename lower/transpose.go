package lower

import (
	"fmt"
	"slices"

	"github.com/distpass/distpass/ir"
)

// TransposeSameMapping is impl 0 "same_mapping_transpose" of transpose2:
// Out's mapping is X's permuted by the op's perm (attr axis), so each
// rank transposes its local block. Lowering is the default's.
func TransposeSameMapping() *Impl {
	d := DefaultImpl()
	return &Impl{
		Name:       "same_mapping_transpose",
		Doc:        "the default lowering, the mapping permuted with the dims",
		Compatible: transposeCompatible,
		Forward:    d.Forward,
		Backward:   d.Backward,
	}
}

// transposeCompatible: len(X) == len(Out) == len(perm), Out[i] ==
// X[perm[i]], and XShape (when present) = [-1] + X.
func transposeCompatible(ctx *Lowering, op *ir.Op) error {
	x, xm, err := argMapping(ctx, op, "X", true)
	if err != nil {
		return err
	}
	out, om, err := argMapping(ctx, op, "Out", false)
	if err != nil {
		return err
	}
	v := op.Attrs.Get("axis")
	if v == nil {
		return fmt.Errorf("%s has no attr axis (the permutation)", op)
	}
	perm, ok := v.(ir.Ints)
	if !ok {
		return fmt.Errorf("%s: attr axis has kind %s, want ints", op, v.Kind())
	}
	// Spelled only for an error: compatibility is checked on every op.
	both := func() string {
		return fmt.Sprintf("X %s has dims_mapping %s, Out %s %s", x, ir.FormatInts(xm), out, ir.FormatInts(om))
	}
	if len(xm) != len(om) || len(perm) != len(xm) {
		return fmt.Errorf("%s: same_mapping_transpose needs X, Out and axis %v of one rank; %s", op, []int64(perm), both())
	}
	for i, p := range perm {
		if p < 0 || p >= int64(len(xm)) {
			return fmt.Errorf("%s: attr axis %v: entry %d is out of range for rank %d", op, []int64(perm), i, len(xm))
		}
		if om[i] != xm[p] {
			return fmt.Errorf("%s: same_mapping_transpose needs Out's dim %d split as X's dim %d (axis %v); %s", op, i, p, []int64(perm), both())
		}
	}
	if xs := op.Output("XShape"); len(xs) > 0 {
		xsm, err := expectedMapping(ctx, op, "XShape", xs[0])
		if err != nil {
			return err
		}
		if len(xsm) != len(xm)+1 || xsm[0] != -1 || !slices.Equal(xsm[1:], xm) {
			return fmt.Errorf("%s: same_mapping_transpose needs XShape's mapping to be [-1] followed by X's; XShape %s has dims_mapping %s, X %s %s",
				op, xs[0], ir.FormatInts(xsm), x, ir.FormatInts(xm))
		}
	}
	return nil
}
