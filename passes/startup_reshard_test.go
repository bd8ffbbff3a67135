package passes_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/distpass/distpass/check"
	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/passes"
	"github.com/distpass/distpass/sim"
)

// startupReshardModule is examples/mlp_dp_mp.dpir with w1 initialised
// whole (w1_init, replicated) and split by a reshard in the startup
// program, and w2 initialised split along mp and gathered whole on dp by
// a reshard on the other dim of a 2×2 mesh of ranks ranks.
const startupReshardModule = `module startup_reshard
mesh world shape [2, 2] dims [dp, mp] ranks RANKS

program main {
  block 0 {
    var x : f32[8, 16] @world[0, -1] {is_data, stop_gradient}
    param w1 : f32[16, 32] @world[-1, 1] {trainable}
    param w2 : f32[32, 16] @world[1, -1] {trainable}
    persist lr : f32[1] @world[-1]
    var h1 : f32[8, 32] @world[0, 1]
    var a1 : f32[8, 32] @world[0, 1]
    var h2 : f32[8, 16] @world[0, -1]
    var loss : f32[] @world[] partial [0:avg]
    var loss@GRAD : f32[] @world[]
    var h2@GRAD : f32[8, 16] @world[0, -1]
    var a1@GRAD : f32[8, 32] @world[0, 1]
    var h1@GRAD : f32[8, 32] @world[0, 1]
    var w1@GRAD : f32[16, 32] @world[-1, 1]
    var w2@GRAD : f32[32, 16] @world[1, -1]
    op 1 matmul_v2(X: x, Y: w1) -> (Out: h1) {trans_x = false, trans_y = false} role forward
         dist @world impl matmul_v2:0 [x: [0, -1], w1: [-1, 1] -> h1: [0, 1]]
    op 2 relu(X: h1) -> (Out: a1) role forward
         dist @world impl elementwise:0 [h1: [0, 1] -> a1: [0, 1]]
    op 3 matmul_v2(X: a1, Y: w2) -> (Out: h2) {trans_x = false, trans_y = false} role forward
         dist @world impl matmul_v2:1 [a1: [0, 1], w2: [1, -1] -> h2: [0, -1]]
    op 4 mean(X: h2) -> (Out: loss) role forward|loss
         dist @world impl default:0 [h2: [0, -1] -> loss: []]
    op 5 fill_constant() -> (Out: loss@GRAD) {dtype = 5, shape = [], value = 1.0} role backward|loss
         dist @world impl default:0 [-> loss@GRAD: []]
    op 6 mean_grad(X: h2, Out@GRAD: loss@GRAD) -> (X@GRAD: h2@GRAD) role backward fwd 4
         dist @world impl default:0 [h2: [0, -1], loss@GRAD: [] -> h2@GRAD: [0, -1]]
    op 7 matmul_v2_grad(X: a1, Y: w2, Out@GRAD: h2@GRAD) -> (X@GRAD: a1@GRAD, Y@GRAD: w2@GRAD)
         {trans_x = false, trans_y = false} role backward fwd 3
         dist @world impl matmul_v2:1 [a1: [0, 1], w2: [1, -1], h2@GRAD: [0, -1] -> a1@GRAD: [0, 1], w2@GRAD: [1, -1]]
    op 8 relu_grad(Out: a1, Out@GRAD: a1@GRAD) -> (X@GRAD: h1@GRAD) role backward fwd 2
         dist @world impl elementwise:0 [a1: [0, 1], a1@GRAD: [0, 1] -> h1@GRAD: [0, 1]]
    op 9 matmul_v2_grad(X: x, Y: w1, Out@GRAD: h1@GRAD) -> (X@GRAD: [], Y@GRAD: w1@GRAD)
         {trans_x = false, trans_y = false} role backward fwd 1
         dist @world impl matmul_v2:0 [x: [0, -1], w1: [-1, 1], h1@GRAD: [0, 1] -> w1@GRAD: [-1, 1]]
    op 10 sgd(Param: w1, Grad: w1@GRAD, LearningRate: lr) -> (ParamOut: w1) role optimize
          dist @world impl default:0 [w1: [-1, 1], w1@GRAD: [-1, 1], lr: [-1] -> w1: [-1, 1]]
    op 11 sgd(Param: w2, Grad: w2@GRAD, LearningRate: lr) -> (ParamOut: w2) role optimize
          dist @world impl default:0 [w2: [1, -1], w2@GRAD: [1, -1], lr: [-1] -> w2: [1, -1]]
  }
}

program startup {
  block 0 {
    param w1 : f32[16, 32] @world[-1, 1] {trainable}
    param w2 : f32[32, 16] @world[1, -1] {trainable}
    persist lr : f32[1] @world[-1]
    var w1_init : f32[16, 32] @world[-1, -1]
    var w2_init : f32[32, 16] @world[0, -1]
    op 1 uniform_random() -> (Out: w1_init) {dtype = 5, max = 0.1, min = -0.1, seed = 7, shape = [16, 32]} role forward
    op 2 fill_constant() -> (Out: w2_init) {dtype = 5, shape = [32, 16], value = 0.05} role forward
    op 3 fill_constant() -> (Out: lr) {dtype = 5, shape = [1], value = 0.01} role forward
    op 4 reshard(X: w1_init) -> (Out: w1) role forward
         dist @world impl reshard:0 [w1_init: [-1, -1] -> w1: [-1, 1]]
    op 5 reshard(X: w2_init) -> (Out: w2) role forward
         dist @world impl reshard:0 [w2_init: [0, -1] -> w2: [1, -1]]
  }
}

grads w1 -> w1@GRAD
grads w2 -> w2@GRAD
`

// TestStartupReshardLowered: a startup program that initialises w1 whole
// and splits it by a reshard, and w2 split along dp and moved to mp by
// another (issue 37, finding 5), partitions on every rank order of the
// 2×2 mesh into startups that hold no reshard (a slice, an all-to-all),
// which run on every rank to exactly the serial startup's values, shard
// by shard; check passes; and partition -all equals partition -rank R.
func TestStartupReshardLowered(t *testing.T) {
	for _, ranks := range []string{"[0, 1, 2, 3]", "[3, 2, 1, 0]", "[2, 1, 0, 3]", "[1, 2, 3, 0]"} {
		m, err := ir.Parse("startup_reshard.dpir", []byte(strings.Replace(startupReshardModule, "RANKS", ranks, 1)))
		if err != nil {
			t.Fatal(err)
		}
		if err := ir.Verify(m); err != nil {
			t.Fatal(err)
		}
		mods, err := passes.PartitionAll(context.Background(), m, nil)
		if err != nil {
			t.Fatalf("ranks %s: %v", ranks, err)
		}
		rs := passes.Ranks(m)
		for i, rm := range mods {
			if err := ir.Verify(rm); err != nil {
				t.Errorf("ranks %s: rank %d: %v", ranks, rs[i], err)
			}
			for _, op := range rm.Startup.Global().Ops {
				if op.Type == "reshard" {
					t.Errorf("ranks %s: rank %d: startup keeps %s", ranks, rs[i], op)
				}
			}
		}
		// Every rank's startup, run, holds its shard of the serial
		// startup's values, exactly.
		serial := sim.Scope{}
		if err := sim.NewInterp(sim.DefaultKernels()).RunProgram(m.Startup, serial); err != nil {
			t.Fatal(err)
		}
		scopes := make([]sim.Scope, len(mods))
		for i := range scopes {
			scopes[i] = sim.Scope{}
		}
		out, err := (&sim.SPMD{}).RunProgram("startup", rs, mods, scopes)
		if err != nil {
			t.Fatalf("ranks %s: per-rank startup: %v", ranks, err)
		}
		for i, rm := range mods {
			for _, name := range []string{"w1", "w2", "lr"} {
				v := rm.Startup.Global().Var(name)
				want, err := sim.Shard(serial[name], v.Dist, rm.Mesh(v.Dist.Mesh), rs[i])
				if err != nil {
					t.Fatal(err)
				}
				got := out[i][name]
				if got == nil || !slices.Equal(got.Shape, want.Shape) || !slices.Equal(got.Data, want.Data) {
					t.Errorf("ranks %s: rank %d: startup's %s is\n%v\nwant\n%v", ranks, rs[i], name, got, want)
				}
			}
		}
		rep, err := check.Run(context.Background(), m, check.Options{})
		if err != nil {
			t.Fatalf("ranks %s: check: %v", ranks, err)
		}
		if err := rep.Err(); err != nil || rep.Count("param") != 2 {
			t.Errorf("ranks %s: check: %v, %d params compared", ranks, err, rep.Count("param"))
		}
		sameOnEveryRank(t, "startup_reshard", m)
	}
}
