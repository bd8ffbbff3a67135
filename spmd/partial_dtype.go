package spmd

import (
	"fmt"
	"math"

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

// Identity is the value that leaves reduction r unchanged in dtype dt
// (what pads a block into a part, and what a part that holds nothing
// holds): 0 for a sum or an average, the dtype's least value for a max
// and its greatest for a min (±inf for floats). exact32 says whether a
// float32 attr holds it exactly (a fill's value attr).
func Identity(dt ir.DType, r ir.Reduce) (v float64, exact32 bool) {
	lo, hi := math.Inf(-1), math.Inf(1)
	switch dt {
	case ir.Boolean, ir.U8:
		lo, hi = 0, 1
		if dt == ir.U8 {
			hi = math.MaxUint8
		}
	case ir.I8:
		lo, hi = math.MinInt8, math.MaxInt8
	case ir.I16:
		lo, hi = math.MinInt16, math.MaxInt16
	case ir.I32:
		lo, hi = math.MinInt32, math.MaxInt32
	case ir.I64:
		lo, hi = math.MinInt64, math.MaxInt64
	}
	switch r {
	case ir.ReduceMax:
		v = lo
	case ir.ReduceMin:
		v = hi
	}
	return v, math.IsInf(v, 0) || float64(float32(v)) == v
}
