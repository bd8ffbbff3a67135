package lower

import (
	"fmt"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/ops"
)

// lowerStartupReshards lowers the reshard ops of m's startup program
// (partitioned for its rank, as main is) with the reshard impl, on the
// lowering state st of the forward phase: the same path as main's
// reshards, whose rank reads and groups they share. Every other startup
// op is kept: partition-vars gave it its local shape. It returns one
// OpError per reshard that failed.
func (r *Registry) lowerStartupReshards(m *ir.Module, st *state) []error {
	s := m.Startup
	if s == nil {
		return nil
	}
	var errs []error
	fail := func(b *ir.Block, op *ir.Op, err error) {
		errs = append(errs, &OpError{Rank: s.Rank, Block: b.Index, OpID: op.ID, OpType: op.Type,
			Phase: "startup " + ForwardPhase.String(), Err: err})
	}
	for _, b := range s.Blocks {
		if !hasReshard(b) {
			continue
		}
		if b.Index != 0 {
			// A sub-block's vars are looked up through main's blocks.
			for _, op := range b.Ops {
				if op.Type == ops.ReshardType {
					fail(b, op, fmt.Errorf("a reshard in a sub-block of the startup program is not lowered: move it to block 0"))
				}
			}
			continue
		}
		impl, err := r.Lookup(ops.ReshardType, 0)
		if err != nil || impl.Forward == nil {
			if err == nil {
				err = fmt.Errorf("impl %s:0 (%s) has no forward lowering", ops.ReshardType, impl.Name)
			}
			for _, op := range b.Ops {
				if op.Type == ops.ReshardType {
					fail(b, op, err)
				}
			}
			continue
		}
		ctx := newLowering(m, s.Rank, b, st)
		for _, op := range b.Ops {
			if op.Type != ops.ReshardType {
				ctx.Keep(op)
				continue
			}
			ctx.begin(op, nil, ops.ReshardType, 0)
			if err := impl.Forward(ctx, op); err != nil {
				fail(b, op, err)
			}
		}
		b.Ops = ctx.out
	}
	return errs
}

func hasReshard(b *ir.Block) bool {
	for _, op := range b.Ops {
		if op.Type == ops.ReshardType {
			return true
		}
	}
	return false
}
