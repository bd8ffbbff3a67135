package lower

import (
	"fmt"

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

// softmaxCompatible holds the op to its sharding rule (ruleFit: the
// softmax axis replicated, Out split as X, no partial) and to the impl's
// own constraint, softmaxFits, which the rule implies but whose message
// names the axis.
func softmaxCompatible(ctx *Lowering, op *ir.Op) error {
	if err := softmaxFits(ctx, op); err != nil {
		return err
	}
	return ruleFit(ctx, op, ruleOpts{impl: "replicate_last_axis", carries: true, spell: true})
}

// softmaxFits: the softmax axis (attr axis, an int, default -1)
// replicated in X and Out, as Paddle's replicate_last_axis impl asks.
func softmaxFits(ctx *Lowering, op *ir.Op) error {
	axis := int64(-1)
	if v := op.Attrs.Get("axis"); v != nil {
		a, ok := v.(ir.Int)
		if !ok {
			return fmt.Errorf("%s: attr axis has kind %s, want int", op, v.Kind())
		}
		axis = int64(a)
	}
	for _, slot := range [...]string{"X", "Out"} {
		name, m, err := argMapping(ctx, op, slot, slot == "X")
		if err != nil {
			return err
		}
		if len(m) == 0 {
			continue // a 0-D tensor has nothing to split
		}
		i := axis
		if i < 0 {
			i += int64(len(m))
		}
		if i < 0 || i >= int64(len(m)) {
			return fmt.Errorf("%s: attr axis %d is out of range for %s %s of rank %d", op, axis, slot, name, len(m))
		}
		if m[i] != -1 {
			return fmt.Errorf("%s: replicate_last_axis needs %s's softmax axis %d replicated; %s %s has dims_mapping %s",
				op, slot, axis, slot, name, ir.FormatInts(m))
		}
	}
	return nil
}
