package spmd

import (
	"fmt"

	"github.com/distpass/distpass/ir"
)

// ExactPartial returns why values of dtype dt cannot be held as parts
// awaiting reduction r, or nil: an average is exact on floats only, and
// bools are parts of a max (their or) or a min (their and), never of a
// sum (which is no bool) or an average. The annotations check, complete
// and the reshard lowering all refuse such a partial state by it.
func ExactPartial(dt ir.DType, r ir.Reduce) error {
	var why string
	switch {
	case dt == ir.Boolean && r == ir.ReduceSum:
		why = "the sum of bool parts is no bool (hold it partial by max, their or, or by min, their and)"
	case dt == ir.Boolean && r == ir.ReduceAvg:
		why = "the mean of bool parts is no bool (hold it partial by max, their or, or by min, their and)"
	case r == ir.ReduceAvg && !dt.IsFloat():
		why = "the mean of integer parts truncates (hold it partial by sum, or whole)"
	default:
		return nil
	}
	return fmt.Errorf("a partial %s of %s cannot be exact: %s", r, dt, why)
}
