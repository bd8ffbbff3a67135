package registry

import (
	"fmt"

	"github.com/distpass/distpass/ir"
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
		RankSafe:   true,
		Name:       "replicate_parallel",
		Doc:        "the default lowering, for args split alike on right-aligned dims",
		Compatible: elementwiseCompatible,
		Forward: func(ctx *Ctx, op *ir.Op) error {
			if err := elementwiseCompatible(ctx, op); err != nil {
				return err
			}
			return d.Forward(ctx, op)
		},
		Backward: d.Backward,
	}
}

// elementwiseCompatible checks, for each position counted from the last
// dim, that the non -1 entries of all input and output mappings there
// are equal (Paddle's compatible dim mapping).
func elementwiseCompatible(ctx *Ctx, op *ir.Op) error {
	type arg struct {
		slot, name string
		m          []int
	}
	var buf [8]arg // most ops have few args: no allocation
	args := buf[:0]
	maxRank := 0
	for _, slots := range [2][]ir.Slot{op.Inputs, op.Outputs} {
		for _, s := range slots {
			for _, a := range s.Args {
				m, err := expectedMapping(ctx, op, s.Name, a)
				if err != nil {
					return err
				}
				args = append(args, arg{s.Name, a, m})
				maxRank = max(maxRank, len(m))
			}
		}
	}
	for p := 1; p <= maxRank; p++ {
		var first *arg
		axis := -1
		for i := range args {
			a := &args[i]
			x, ok := at(a.m, -p)
			if !ok || x == -1 {
				continue
			}
			if first == nil {
				first, axis = a, x
				continue
			}
			if x != axis {
				return fmt.Errorf("%s: elementwise needs args split alike on right-aligned dims; at dim -%d, %s %s has dims_mapping %s and %s %s has %s",
					op, p, first.slot, first.name, ir.FormatInts(first.m), a.slot, a.name, ir.FormatInts(a.m))
			}
		}
	}
	return nil
}
