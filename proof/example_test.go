package proof_test

import (
	"context"
	"fmt"
	"os"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/passes"
	"github.com/distpass/distpass/proof"
)

// Prove the four ranks of the example MLP (data parallel along dp,
// Megatron along mp) without running them; then drop rank programs'
// tensor-parallel all-reduce and see the proof refute them.
func Example() {
	src, _ := os.ReadFile("../examples/mlp_dp_mp.dpir")
	m, err := ir.Parse("mlp_dp_mp.dpir", src)
	if err != nil {
		panic(err)
	}
	ranks, err := passes.PartitionAll(context.Background(), m, nil)
	if err != nil {
		panic(err)
	}
	res, _ := proof.Check(m, passes.Ranks(m), ranks)
	fmt.Println("proven:", res.Proven())

	for _, r := range ranks {
		g := r.Main.Global()
		for i, op := range g.Ops {
			if op.Type == "c_allreduce_sum" && op.Output("Out")[0] == "h2" {
				g.Ops[i] = &ir.Op{ID: op.ID, Type: "assign", Inputs: op.Inputs, Outputs: op.Outputs, Role: op.Role, Attrs: op.Attrs}
			}
		}
	}
	res, _ = proof.Check(m, passes.Ranks(m), ranks)
	fmt.Println(res.Refuted())
	// Output:
	// proven: true
	// rank 0: op 4 mean: refuted: mean reads h2, partial [1]: the op reads it as a whole value: the op of the parts is not the parts of the op
}
