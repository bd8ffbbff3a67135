package lower_test

import (
	"context"
	"fmt"
	"slices"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/lower"
	"github.com/distpass/distpass/passes"
)

// gatherRows is an impl of relu whose input is split by rows and whose
// output is replicated: each rank applies relu to its rows, then gathers
// the rows of every rank of the group.
func gatherRows() *lower.Impl {
	return &lower.Impl{
		Name: "gather_rows",
		Doc:  "relu on the local rows, then c_allgather of the rows",
		// Checked once, before Forward: Forward relies on what it accepts.
		Compatible: func(ctx *lower.Lowering, op *ir.Op) error {
			xs, outs := op.Input("X"), op.Output("Out")
			if len(xs) != 1 || len(outs) != 1 {
				return fmt.Errorf("%s: want one X and one Out", op)
			}
			x, out := ctx.Mapping(xs[0]), ctx.Mapping(outs[0])
			if len(x) == 0 || x[0] < 0 || slices.ContainsFunc(x[1:], func(a int) bool { return a >= 0 }) {
				return fmt.Errorf("%s: gather_rows needs X split by rows only; it has dims_mapping %v", op, x)
			}
			if slices.ContainsFunc(out, func(a int) bool { return a >= 0 }) {
				return fmt.Errorf("%s: gather_rows needs Out replicated; it has dims_mapping %v", op, out)
			}
			return nil
		},
		Forward: func(ctx *lower.Lowering, op *ir.Op) error {
			x, out := op.Input("X")[0], op.Output("Out")[0]
			axis := ctx.Mapping(x)[0]
			id, size, err := ctx.Group(axis) // the ring id: not a read of the rank
			if err != nil {
				return err
			}
			xv := ctx.Var(x)
			rows := ctx.NewVar("relu.rows", xv, xv.Dist)
			ctx.Emit("relu", ctx.Slot("X", x), ctx.Slot("Out", rows.Name()), "relu on this rank's rows")
			ctx.Emit("c_allgather", ctx.Slot("X", rows.Name()), ctx.Slot("Out", out), "the rows of every rank",
				ir.A("ring_id", ir.Int(int64(id))), ir.A("nranks", ir.Int(int64(size))), ir.A("use_calc_stream", ir.Bool(true)))
			return nil
		},
	}
}

// reluSrc is a relu whose X is split by rows over a mesh of 2 ranks.
const reluSrc = `mesh m shape [2] dims [dp] ranks [0, 1]
program main {
  block 0 {
    var x : f32[4, 8] @m[0, -1]
    var y : f32[4, 8] @m[-1, -1]
    op 1 relu(X: x) -> (Out: y) dist @m impl relu:0 [x: [0, -1] -> y: [-1, -1]]
  }
}`

// A user's impl (gatherRows) is registered as impl relu:0, named after
// the op type it lowers, beside the built-in ones, and each rank's
// program is partitioned with it.
func ExampleImpl() {
	reg := lower.DefaultRegistry()
	fmt.Println("impl relu:", reg.Register("relu", gatherRows()))

	m, err := ir.Parse("relu.dpir", []byte(reluSrc))
	if err != nil {
		fmt.Println(err)
		return
	}
	ranks, err := passes.PartitionAll(context.Background(), m, reg)
	if err != nil {
		fmt.Println(err)
		return
	}
	for r, rm := range ranks {
		var types []string
		for _, op := range rm.Main.Global().Ops {
			types = append(types, op.Type)
		}
		last := rm.Main.Global().Ops[len(types)-1]
		fmt.Printf("rank %d: %v, ring_id %v, origin %v\n", r, types, last.Attrs.Get("ring_id"), last.Attrs.Get("origin"))
	}
	// Output:
	// impl relu: 0
	// rank 0: [relu c_allgather], ring_id 0, origin relu:0 the rows of every rank
	// rank 1: [relu c_allgather], ring_id 0, origin relu:0 the rows of every rank
}
