package lower

import (
	"fmt"
	"math"
	"strconv"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/spmd"
)

// What a reshard's steps may do to values of a dtype. The steps of
// spmd.PlanReshard are exact on floats; on integers and bools a step is only
// taken when it is exact too:
//
//   - an average of parts (a partial avg, the reduce-scatter, all-reduce,
//     pad and rescale steps of one) is refused: the mean of integers
//     truncates, and bools have none;
//   - a sum of bool parts is refused too: it is no bool (a max of them is
//     their or); a sum of integers is the integer sum;
//   - a max or min of parts is the integer one (on bools, or and and);
//   - a pad fills the blocks the rank does not hold with the reduction's
//     identity in the dtype (spmd.Identity), never ±inf.

// exactPlaces refuses places of v (of v's dtype) that await a reduction
// spmd.ExactPartial refuses, naming the var, the mesh dim and the dtype.
func exactPlaces(v *ir.Var, ps []spmd.Place, pm *ir.ProcessMesh) error {
	for k, p := range ps {
		if !p.Partial {
			continue
		}
		if err := spmd.ExactPartial(v.Type.DType, p.Reduce); err != nil {
			return fmt.Errorf("%s %s is partial along mesh dim %d (%s) by %s: %v", v.Name(), v.Type, k, pm.DimNames[k], p.Reduce, err)
		}
	}
	return nil
}

// identity emits a temp of in's dtype and local shape filled with the
// identity of reduction r (spmd.Identity), and returns it. A value a
// Paddle float attr does not hold (the maxima of i32 and i64) is a
// fill_constant of one element, its str_value exact, added to zeros.
func (rw *reshardLowering) identity(in string, shape []int64, r ir.Reduce, what string) (*ir.Var, error) {
	ctx := rw.ctx
	dt := rw.x.Type.DType
	v, exact := spmd.Identity(dt, r)
	out := rw.temp("pad", shape)
	if exact {
		ctx.Emit("fill_any_like", ctx.Slot("X", in), ctx.Slot("Out", out.Name()), rw.why(what+": the identity of "+r.String()),
			ir.A("value", ir.Float(v)), ir.A("dtype", ir.Int(-1)))
		return out, nil
	}
	code, ok := dt.PaddleCode()
	if !ok {
		return nil, fmt.Errorf("%s: dtype %s has no Paddle code for the fill_constant of its %s identity", rw.x.Name(), dt, r)
	}
	text := strconv.FormatInt(math.MaxInt64, 10)
	if dt == ir.I32 {
		text = strconv.FormatInt(math.MaxInt32, 10)
	}
	zero := rw.temp("pad", shape)
	ctx.Emit("fill_any_like", ctx.Slot("X", in), ctx.Slot("Out", zero.Name()), rw.why(what+": zeros"),
		ir.A("value", ir.Float(0)), ir.A("dtype", ir.Int(-1)))
	c := rw.temp("pad", []int64{1})
	ctx.Emit("fill_constant", nil, ctx.Slot("Out", c.Name()), rw.why(what+": the identity of "+r.String()+", "+text),
		ir.A("dtype", ir.Int(code)), ir.A("shape", ir.Ints{1}), ir.A("value", ir.Float(v)), ir.A("str_value", ir.String(text)))
	ctx.Emit("elementwise_add", []ir.Slot{{Name: "X", Args: []string{zero.Name()}}, {Name: "Y", Args: []string{c.Name()}}},
		ctx.Slot("Out", out.Name()), rw.why(what+": the identity of "+r.String()+" in every element"), ir.A("axis", ir.Int(-1)))
	return out, nil
}
