package check_test

import (
	"context"
	"strings"
	"testing"

	"github.com/distpass/distpass/check"
	"github.com/distpass/distpass/ir"
)

// fsdpSrc is a two-layer MLP whose w1 is split by rows along dp, as
// FSDP and ZeRO-3 keep a weight: complete gathers it before its matmul,
// and the matmul's grad, a fold over the batch shards, is each rank's
// part of a sum before the reshard slices it back to w1's rows.
const fsdpSrc = `module fsdp
MESH

program main {
  block 0 {
    var x : f32[8, 16] {is_data, stop_gradient}
    param w1 : f32[16, 32] @world[0, -1] {trainable}
    param w2 : f32[32, 16] W2 {trainable}
    var h1 : f32[8, 32]
    var a1 : f32[8, 32]
    var h2 : f32[8, 16]
    var loss : f32[]
    op 1 matmul_v2(X: x, Y: w1) -> (Out: h1) {trans_x = false, trans_y = false} role forward
    op 2 relu(X: h1) -> (Out: a1) role forward
    op 3 matmul_v2(X: a1, Y: w2) -> (Out: h2) {trans_x = false, trans_y = false} role forward
    op 4 mean(X: h2) -> (Out: loss) role forward|loss
  }
}

program startup {
  block 0 {
    param w1 : f32[16, 32] {trainable}
    param w2 : f32[32, 16] {trainable}
    op 1 uniform_random() -> (Out: w1) {dtype = 5, max = 0.5, min = -0.5, seed = 7, shape = [16, 32]} role forward
    op 2 uniform_random() -> (Out: w2) {dtype = 5, max = 0.5, min = -0.5, seed = 8, shape = [32, 16]} role forward
  }
}
`

// TestGatheredParamGradsAreSummed: a param split along the data-parallel
// axis and gathered before its matmul gets its grad summed over the
// batch shards (and averaged, the loss being their mean) before the
// slice, whatever the grad vars are called: the sync is decided by what
// the grad op computed, not by names. On 1-D and 2-D meshes, in two rank
// orders, in f32 and f64, and with the grads renamed so that no name
// starts with its param's.
func TestGatheredParamGradsAreSummed(t *testing.T) {
	ctx := context.Background()
	for _, mesh := range []struct{ name, decl, w2 string }{
		{"dp2", "mesh world shape [2] dims [dp] ranks [0, 1]", ""},
		{"dp2xmp2", "mesh world shape [2, 2] dims [dp, mp] ranks [0, 1, 2, 3]", "@world[1, -1]"},
		{"dp2xmp2_permuted", "mesh world shape [2, 2] dims [dp, mp] ranks [3, 0, 2, 1]", "@world[1, -1]"},
	} {
		for _, f64 := range []bool{false, true} {
			for _, renamed := range []bool{false, true} {
				name := mesh.name
				if f64 {
					name += "/f64"
				}
				if renamed {
					name += "/renamed"
				}
				t.Run(name, func(t *testing.T) {
					m := dataParallel(t, strings.NewReplacer("MESH", mesh.decl, "W2", mesh.w2).Replace(fsdpSrc), f64)
					var err error
					if renamed {
						// w1@GRAD.reshard_0 (the gathered weight's grad) and
						// w1@GRAD become names that share nothing with w1.
						text := strings.NewReplacer("w1@GRAD.reshard_0", "gathered_grad", "w1@GRAD", "g1", "w1.reshard_0", "w_full").Replace(string(ir.Print(m)))
						if m, err = ir.ParseString("fsdp_renamed.dpir", text); err != nil {
							t.Fatal(err)
						}
						if strings.Contains(text, "@GRAD.reshard") || !strings.Contains(text, "grads w1 -> g1") {
							t.Fatalf("the rename missed the gathered grad:\n%s", text)
						}
					}
					rep, err := check.Run(ctx, m, check.Options{Steps: 2})
					if err != nil {
						t.Fatal(err)
					}
					if err := rep.Err(); err != nil {
						t.Fatal(err)
					}
					if rep.Count("grad") < 2 || rep.Count("param") < 2 {
						t.Fatalf("compared %d grads and %d params, want w1's and w2's", rep.Count("grad"), rep.Count("param"))
					}
				})
			}
		}
	}
}
