package lower

import (
	"fmt"

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

// transposeCompatible holds the op to its sharding rule (ruleFit: Out's
// dim i split as X's dim axis[i], XShape [-1] and X's mapping, a
// partial X carried into Out partial alike); the impl has no constraint
// of its own: the rule is what it names (same mapping, permuted).
func transposeCompatible(ctx *Lowering, op *ir.Op) error {
	if err := transposePerm(ctx, op); err != nil {
		return err
	}
	return ruleFit(ctx, op, ruleOpts{impl: "same_mapping_transpose", carries: true, spell: true})
}

// transposePerm refuses an attr axis that is no permutation of X's and
// Out's dims, which the rule would not spell, with what is wrong.
func transposePerm(ctx *Lowering, op *ir.Op) error {
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
	if len(xm) != len(om) || len(perm) != len(xm) {
		return fmt.Errorf("%s: same_mapping_transpose needs X, Out and axis %v of one rank; X %s has dims_mapping %s, Out %s %s",
			op, []int64(perm), x, ir.FormatInts(xm), out, ir.FormatInts(om))
	}
	for i, p := range perm {
		if p < 0 || p >= int64(len(xm)) {
			return fmt.Errorf("%s: attr axis %v: entry %d is out of range for rank %d", op, []int64(perm), i, len(xm))
		}
	}
	return nil
}
