package passes_test

import (
	"context"
	"fmt"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/lower"
	"github.com/distpass/distpass/passes"
)

// Partition a column-parallel matmul for the 4 ranks of a 2×2 mesh by
// classes: one lowering, then each rank's ring id. No impl reads the rank
// (only its group's ring id), so the four ranks share one class; an impl
// that reads the rank gives each rank a class of its own.
func ExamplePartitionClasses() {
	m, err := ir.Parse("col.dpir", []byte(`mesh m shape [2, 2] dims [dp, mp] ranks [0, 1, 2, 3]
program main {
  block 0 {
    var x : f32[4, 8] @m[0, -1]
    param w : f32[8, 6] @m[-1, 1] {trainable}
    var y : f32[4, 6] @m[0, 1]
    op 1 matmul_v2(X: x, Y: w) -> (Out: y) {trans_x = false, trans_y = false}
         dist @m impl matmul_v2:0 [x: [0, -1], w: [-1, 1] -> y: [0, 1]]
  }
}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	cs, err := passes.PartitionClasses(context.Background(), m, nil, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	c := cs.Classes[0]
	fmt.Printf("%d class, ranks %v\n", len(cs.Classes), c.Ranks)
	for _, s := range c.Sites {
		fmt.Printf("site: %s op %d %s\n", s.Program, s.OpID, s.Attr)
	}
	for _, r := range cs.Ranks() {
		rm, err := cs.Module(r)
		if err != nil {
			fmt.Println(err)
			return
		}
		op := rm.Main.Blocks[0].Ops[0]
		fmt.Printf("rank %d: %s ring_id %v\n", r, op.Type, op.Attrs.Get("ring_id"))
	}

	// The same matmul impl, wrapped in one that reads the rank.
	reg := lower.NewRegistry()
	reg.Register(lower.DefaultType, lower.DefaultImpl())
	col := lower.MatmulColumn()
	forward := col.Forward
	col.Forward = func(ctx *lower.Lowering, op *ir.Op) error {
		_ = ctx.Rank()
		return forward(ctx, op)
	}
	reg.Register("matmul_v2", col)
	cs, err = passes.PartitionClasses(context.Background(), m, reg, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("rank read: %d classes\n", len(cs.Classes))
	// Output:
	// 1 class, ranks [0 1 2 3]
	// site: main op 2 ring_id
	// site: startup op 3 ring_id
	// rank 0: c_identity ring_id 3
	// rank 1: c_identity ring_id 3
	// rank 2: c_identity ring_id 4
	// rank 3: c_identity ring_id 4
	// rank read: 4 classes
}
