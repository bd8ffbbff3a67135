package passes

import (
	"errors"
	"fmt"
	"strings"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/lower"
	"github.com/distpass/distpass/ops"
)

// checkImpls holds every op that lower-forward lowers (forward, or
// recomputed) to its impl as partition will, before any rank is lowered:
// the impl exists, lowers ops of the op's type, and its Compatible
// accepts the op's dist (lower.Fitter, which completion asks too). A
// column-parallel matmul whose X has the batch on mp is refused here,
// naming it, rather than by a later op that inherits its mappings. It
// lists every op that does not fit, in program order; a partitioned
// main program (its ops already lowered) is not checked.
func checkImpls(m *ir.Module, reg *lower.Registry) error {
	p := m.Main
	if p == nil || p.Rank >= 0 {
		return nil
	}
	if reg == nil {
		reg = lower.DefaultRegistry()
	}
	var f *lower.Fitter // made on the first op to check
	var errs []error
	for _, b := range p.Blocks {
		if b == nil {
			continue
		}
		for _, op := range b.Ops {
			if op == nil || op.Dist == nil || op.Type == ops.ReshardType || !op.Role.IsForward() && !op.Dist.Recompute {
				continue
			}
			if f == nil {
				f = reg.Fitter(m)
			}
			if err := fitsImpl(reg, f, b, op); err != nil {
				errs = append(errs, fmt.Errorf("%s block %d: %s: %v", p.Name, b.Index, op, err))
			}
		}
	}
	return errors.Join(errs...)
}

// fitsImpl says why op's impl (default:0 when its dist names none) does
// not lower it, as lower-forward would say it, or nil.
func fitsImpl(reg *lower.Registry, f *lower.Fitter, b *ir.Block, op *ir.Op) error {
	typ, idx := lower.DefaultType, 0
	if op.Dist.ImplType != "" {
		typ, idx = op.Dist.ImplType, op.Dist.ImplIndex
	}
	impl, err := reg.Lookup(typ, idx)
	if err != nil {
		return err
	}
	if !lower.Lowers(typ, op.Type) {
		return fmt.Errorf("impl %s:%d (%s) lowers %s ops, not %s", typ, idx, impl.Name, typ, op.Type)
	}
	if err := f.Fits(b, op, typ, idx); err != nil {
		// An impl's reason often starts by naming the op, which the
		// message already has.
		why := strings.TrimPrefix(err.Error(), op.String()+": ")
		return fmt.Errorf("impl %s:%d (%s) does not fit: %s", typ, idx, impl.Name, why)
	}
	return nil
}
