package lower

import (
	"fmt"
	"slices"

	"github.com/distpass/distpass/ir"
)

// SoftmaxReplicateLastAxis is impl 0 "replicate_last_axis" of softmax:
// the softmax axis (attr axis, default -1) is replicated in X and Out, so
// each rank normalises whole rows of its block. Lowering is the
// default's.
func SoftmaxReplicateLastAxis() *Impl {
	d := DefaultImpl()
	return &Impl{
		Name:       "replicate_last_axis",
		Doc:        "the default lowering, with the softmax axis replicated",
		Compatible: softmaxCompatible,
		Forward:    d.Forward,
		Backward:   d.Backward,
	}
}

func softmaxCompatible(ctx *Lowering, op *ir.Op) error {
	axis := int64(-1)
	if v := op.Attrs.Get("axis"); v != nil {
		a, ok := v.(ir.Int)
		if !ok {
			return fmt.Errorf("%s: attr axis has kind %s, want int", op, v.Kind())
		}
		axis = int64(a)
	}
	var xm, om []int
	var x, out string
	for _, s := range []struct {
		slot  string
		input bool
	}{{"X", true}, {"Out", false}} {
		name, m, err := argMapping(ctx, op, s.slot, s.input)
		if err != nil {
			return err
		}
		if err := notPartial(ctx, op, "replicate_last_axis", name); err != nil {
			return err
		}
		if s.input {
			x, xm = name, m
		} else {
			out, om = name, m
		}
		if len(m) == 0 {
			continue // a 0-D tensor has nothing to split
		}
		i := axis
		if i < 0 {
			i += int64(len(m))
		}
		if i < 0 || i >= int64(len(m)) {
			return fmt.Errorf("%s: attr axis %d is out of range for %s %s of rank %d", op, axis, s.slot, name, len(m))
		}
		if m[i] != -1 {
			return fmt.Errorf("%s: replicate_last_axis needs %s's softmax axis %d replicated; %s %s has dims_mapping %s",
				op, s.slot, axis, s.slot, name, ir.FormatInts(m))
		}
	}
	if !slices.Equal(xm, om) {
		// Each rank normalises its own block of X into its block of Out:
		// the blocks must be the same.
		return fmt.Errorf("%s: replicate_last_axis needs Out split as X; X %s has dims_mapping %s, Out %s %s",
			op, x, ir.FormatInts(xm), out, ir.FormatInts(om))
	}
	return nil
}
