package complete

import (
	"fmt"

	"github.com/distpass/distpass/spmd"
)

// checkPartialDTypes refuses a var, given or completed, partial by a
// reduction that cannot be exact on its dtype (spmd.ExactPartial: an
// average of integers or bools, a sum of bools), naming the var, its
// dtype and the mesh dim.
func (e *engine) checkPartialDTypes(when string) error {
	for v, x := range e.g.vars {
		if !e.g.dense[v] || x.Dist == nil {
			continue
		}
		for _, p := range x.Dist.Partial {
			if err := spmd.ExactPartial(x.Type.DType, p.Reduce); err != nil {
				return fmt.Errorf("complete: var %s %s %s: partial along mesh dim %d: %v", x.Name(), x.Type, when, p.Dim, err)
			}
		}
	}
	return nil
}
