package check_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/distpass/distpass/check"
	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/passes"
)

// wholeLossSrc folds the batch before its loss: the batch is split along
// dp, but the sum over it is gathered (reduced) before the tanh, so
// every rank computes the whole loss, the same value: the grads of the
// weights are then each rank's part of a sum, summed and not averaged.
// (demo_custom_gap's flatten folds its batch the same way.)
const wholeLossSrc = `module whole_loss
MESH

program main {
  block 0 {
    var x : f32[8, 16] {is_data, stop_gradient}
    param w1 : f32[16, 4] W1 {trainable}
    var h : f32[8, 4]
    var s : f32[4]
    var t : f32[4]
    var loss : f32[]
    op 1 matmul_v2(X: x, Y: w1) -> (Out: h) {trans_x = false, trans_y = false} role forward
    op 2 reduce_sum(X: h) -> (Out: s) {dim = [0]} role forward
    op 3 tanh(X: s) -> (Out: t) role forward
    op 4 mean(X: t) -> (Out: loss) role forward|loss
  }
}

program startup {
  block 0 {
    param w1 : f32[16, 4] {trainable}
    op 1 uniform_random() -> (Out: w1) {dtype = 5, max = 0.5, min = -0.5, seed = 7, shape = [16, 4]} role forward
  }
}
`

// TestWholeLossGradsAreSummed: the data-parallel sync reads the loss's
// dist. A loss that is the ranks' mean (partial avg along dp) has its
// grads averaged; a loss every rank computes whole has grads that are
// the ranks' sum: summed, never scaled. Until the sync read the loss,
// such a program was refused. On 1-D and 2-D meshes, in two rank
// orders, in f32 and f64.
func TestWholeLossGradsAreSummed(t *testing.T) {
	ctx := context.Background()
	for _, mesh := range []struct{ name, decl, w1 string }{
		{"dp4", "mesh world shape [4] dims [dp] ranks [0, 1, 2, 3]", ""},
		{"dp2xmp2", "mesh world shape [2, 2] dims [dp, mp] ranks [0, 1, 2, 3]", "@world[1, -1]"},
		{"dp2xmp2_permuted", "mesh world shape [2, 2] dims [dp, mp] ranks [3, 0, 2, 1]", "@world[1, -1]"},
	} {
		for _, f64 := range []bool{false, true} {
			name := mesh.name
			if f64 {
				name += "/f64"
			}
			t.Run(name, func(t *testing.T) {
				m := dataParallel(t, strings.NewReplacer("MESH", mesh.decl, "W1", mesh.w1).Replace(wholeLossSrc), f64)
				d := m.Main.Global().Var("loss").Dist
				if d == nil || slices.ContainsFunc(d.Partial, func(p ir.Partial) bool { return p.Dim == 0 }) {
					t.Fatalf("the loss is %v: want it whole along dp, the premise of the test", d)
				}
				rank0 := m.Clone()
				if err := passes.Partition(rank0, nil, 0); err != nil {
					t.Fatal(err)
				}
				summed, scaled := false, false
				for _, op := range rank0.Main.Global().Ops {
					for _, a := range op.Input("X") {
						if strings.HasPrefix(a, "w1@GRAD") {
							summed = summed || op.Type == "c_allreduce_sum"
							scaled = scaled || op.Type == "scale"
						}
					}
				}
				if !summed || scaled {
					t.Errorf("w1@GRAD summed %v, scaled %v: want summed over dp and not scaled", summed, scaled)
				}
				rep, err := check.Run(ctx, m, check.Options{Steps: 2})
				if err != nil {
					t.Fatal(err)
				}
				if err := rep.Err(); err != nil {
					t.Fatal(err)
				}
				if rep.Count("grad") < 1 || rep.Count("param") < 1 {
					t.Fatalf("compared %d grads and %d params, want w1's", rep.Count("grad"), rep.Count("param"))
				}
			})
		}
	}
}

// TestWholeLossAveragedElsewhereIsRefused: with w1 split by columns on
// mp the loss is whole along dp but the mean of the mp ranks' parts: not
// a whole loss, whose grads the sync sums, nor the dp ranks' mean, whose
// grads it averages; partition refuses, naming the grad op and why.
func TestWholeLossAveragedElsewhereIsRefused(t *testing.T) {
	m := dataParallel(t, strings.NewReplacer("MESH", "mesh world shape [2, 2] dims [dp, mp] ranks [0, 1, 2, 3]", "W1", "@world[-1, 1]").Replace(wholeLossSrc), false)
	_, err := check.Run(context.Background(), m, check.Options{Steps: 1})
	want := "matmul_v2_grad: the data-parallel sync would average w1@GRAD over mesh dim 0 (dp), along which x's dim 0 is split, but the loss loss is @world[] partial [1:avg], no average over it"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("got %v, want an error containing %q", err, want)
	}
}

// dataParallel parses src and trains it data-parallel along dp: backward,
// the data split, sgd, completion and reshards (and f64 when asked).
// provenDataParallel is dataParallel's module, proven by check: its
// report, the test failed when check fails.
func provenDataParallel(t *testing.T, src string, f64 bool) (*ir.Module, *check.Report) {
	t.Helper()
	m := dataParallel(t, src, f64)
	rep, err := check.Run(context.Background(), m, check.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := rep.Err(); err != nil {
		t.Fatal(err)
	}
	return m, rep
}

func dataParallel(t *testing.T, src string, f64 bool) *ir.Module {
	t.Helper()
	m, err := ir.ParseString("dp.dpir", src)
	if err != nil {
		t.Fatal(err)
	}
	pl := "append-backward{loss=loss},annotate-data-parallel{mesh=world,axis=dp,data-only=true},append-optimizer{type=sgd},complete,insert-reshards"
	if f64 {
		pl += ",to-f64"
	}
	if err := (&passes.Manager{}).Run(context.Background(), passes.DefaultRegistry().MustParse(pl), m); err != nil {
		t.Fatal(err)
	}
	return m
}
