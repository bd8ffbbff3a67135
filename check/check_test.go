package check_test

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/distpass/distpass/check"
	"github.com/distpass/distpass/internal/irgen"
	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/lower"
	"github.com/distpass/distpass/passes"
	"github.com/distpass/distpass/sim"
)

func goldenInput(t *testing.T, name string) *ir.Module {
	t.Helper()
	ar, err := txtar.ParseFile(filepath.Join("..", "golden", "testdata", name+".txtar"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range ar.Files {
		if f.Name == "input.dpir" {
			m, err := ir.Parse(name, f.Data)
			if err != nil {
				t.Fatal(err)
			}
			return m
		}
	}
	t.Fatalf("%s has no input", name)
	return nil
}

// TestGoldenTrainingCases: every training case of golden/ partitions to
// programs that compute what the serial program computes, over 3 steps.
func TestGoldenTrainingCases(t *testing.T) {
	for _, name := range []string{"dp_mlp", "col_1d", "row_1d", "megatron_1d", "megatron_2d", "vocab_embedding", "moe_ep2"} {
		t.Run(name, func(t *testing.T) {
			m := goldenInput(t, name)
			before := string(ir.Print(m))
			rep, err := check.Run(context.Background(), m, check.Options{Steps: 3})
			if err != nil {
				t.Fatal(err)
			}
			var sb strings.Builder
			rep.Write(&sb)
			if err := rep.Err(); err != nil {
				t.Fatalf("%v\n%s", err, sb.String())
			}
			if len(rep.Rows) == 0 {
				t.Fatal("nothing compared")
			}
			if string(ir.Print(m)) != before {
				t.Fatal("check changed the module")
			}
			t.Logf("\n%s", sb.String())
		})
	}
}

// TestFloat64 runs the 2-D Megatron case in float64, within 1e-5. The
// initialisers' dtype attrs (Paddle's 5, f32) become 6 (f64) with the vars:
// the simulator refuses an op computing another dtype than its output's.
func TestFloat64(t *testing.T) {
	m := goldenInput(t, "megatron_2d")
	text := strings.NewReplacer("f32[", "f64[", "dtype = 5", "dtype = 6").Replace(string(ir.Print(m)))
	m64, err := ir.Parse("f64", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := check.Run(context.Background(), m64, check.Options{Steps: 3, Tol: 1e-5})
	if err != nil {
		t.Fatal(err)
	}
	if err := rep.Err(); err != nil {
		t.Fatal(err)
	}
	// Sharded sums add in another order than serial ones; in float64 that
	// costs ~1e-10, far inside the bound.
	for _, row := range rep.Rows {
		if row.MaxRel > 1e-8 {
			t.Errorf("%s: relative error %g in float64", row.Var, row.MaxRel)
		}
	}
}

// brokenRow is the row-parallel matmul without its c_allreduce_sum: each
// rank keeps its partial product.
func brokenRow() *lower.Impl {
	row := lower.MatmulRow()
	return &lower.Impl{
		Name:       "row_parallel_without_allreduce",
		Compatible: row.Compatible,
		Forward: func(ctx *lower.Lowering, op *ir.Op) error {
			ctx.Keep(op)
			return lower.SyncParams(ctx, op)
		},
		Backward: row.Backward,
	}
}

func TestDroppedAllreduceIsCaught(t *testing.T) {
	r := lower.NewRegistry()
	r.Register("default", lower.DefaultImpl())
	r.Register("matmul_v2", lower.MatmulColumn())
	r.Register("matmul_v2", brokenRow())
	r.Register("elementwise", lower.Elementwise())
	rep, err := check.Run(context.Background(), goldenInput(t, "megatron_2d"), check.Options{Steps: 1, Registry: r})
	if err != nil {
		t.Fatal(err)
	}
	err = rep.Err()
	if err == nil || !strings.HasPrefix(err.Error(), "loss loss diverged on rank 0") {
		t.Fatalf("err = %v", err)
	}
	var first *check.Row
	for i := range rep.Rows {
		if !rep.Rows[i].OK() && rep.Rows[i].Kind == "activation" {
			first = &rep.Rows[i]
			break
		}
	}
	if first == nil || first.Var != "h2" {
		t.Fatalf("first diverging activation = %+v, want h2 (the row-parallel output)", first)
	}
}

// TestSkippedCollective: one rank's program lacks a collective the others
// run; the run fails well before its deadline and names that rank.
func TestSkippedCollective(t *testing.T) {
	m := goldenInput(t, "megatron_2d")
	mods, err := passes.PartitionAll(context.Background(), m, lower.DefaultRegistry())
	if err != nil {
		t.Fatal(err)
	}
	b := mods[1].Main.Global()
	for i, op := range b.Ops {
		if op.Type == "c_allreduce_sum" {
			b.Ops = append(b.Ops[:i:i], b.Ops[i+1:]...)
			break
		}
	}
	scopes := make([]sim.Scope, len(mods))
	for i, pm := range mods {
		scopes[i] = sim.Scope{}
		for _, v := range pm.Main.Global().Vars() {
			if v.Type.IsTensor() {
				scopes[i][v.Name()] = sim.Zeros(v.Type.DType, v.Type.Shape...)
			}
		}
	}
	start := time.Now()
	_, err = (&sim.SPMD{Deadline: time.Minute}).RunProgram("main", passes.Ranks(m), mods, scopes)
	if err == nil || !strings.Contains(err.Error(), "rank 1 finished its program without joining") {
		t.Fatalf("err = %v", err)
	}
	if time.Since(start) > 20*time.Second {
		t.Fatal("found only at the deadline")
	}
}

func BenchmarkCheck(b *testing.B) {
	m := irgen.MegatronMLP(1000, 2, 2)
	for b.Loop() {
		rep, err := check.Run(context.Background(), m, check.Options{Steps: 1})
		if err != nil {
			b.Fatal(err)
		}
		if err := rep.Err(); err != nil {
			b.Fatal(err)
		}
	}
}

// TestDropoutMaskFollowsTheGlobalIndex: a data-parallel dropout masks
// each rank's shard exactly as the serial program masks the whole batch.
func TestDropoutMaskFollowsTheGlobalIndex(t *testing.T) {
	m, err := ir.Parse("dropout.dpir", []byte(`mesh w shape [2, 2] dims [dp, mp] ranks [0, 1, 2, 3]
program main {
  block 0 {
    var x : f64[4, 6] @w[0, -1] {is_data}
    var y : f64[4, 6] @w[0, -1]
    var mask : u8[4, 6] @w[0, -1]
    var loss : f64[] @w[] partial [0:avg]
    op 1 dropout(X: x) -> (Out: y, Mask: mask) {dropout_implementation = "upscale_in_train", dropout_prob = 0.5, is_test = false, seed = 9}
         dist @w impl default:0 [x: [0, -1] -> y: [0, -1], mask: [0, -1]]
    op 2 mean(X: y) -> (Out: loss) role forward|loss
         dist @w impl default:0 [y: [0, -1] -> loss: []]
  }
}`))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := check.Run(context.Background(), m, check.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := rep.Err(); err != nil {
		t.Fatal(err)
	}
	if len(rep.Rows) != 3 {
		t.Fatalf("compared %d vars, want loss, y, mask", len(rep.Rows))
	}
	// The emitted program says which mask it draws: the global shape and
	// the rank's offset in it. Without them each rank would draw the mask
	// of its local block from the same seed, and check must see it.
	mods, err := passes.PartitionAll(context.Background(), m, nil)
	if err != nil {
		t.Fatal(err)
	}
	ranks := passes.Ranks(m)
	for i, pm := range mods {
		var drop *ir.Op
		for _, op := range pm.Main.Global().Ops {
			if op.Type == "dropout" {
				drop = op
			}
		}
		coord, _ := m.Meshes[0].Coord(ranks[i])
		if drop == nil {
			t.Fatalf("rank %d: no dropout", ranks[i])
		}
		global, _ := drop.Attrs.Ints("global_shape")
		offset, _ := drop.Attrs.Ints("shard_offset")
		if !slices.Equal(global, []int64{4, 6}) || !slices.Equal(offset, []int64{2 * int64(coord[0]), 0}) {
			t.Fatalf("rank %d: dropout global_shape %v shard_offset %v, want [4 6] [%d 0]", ranks[i], global, offset, 2*coord[0])
		}
		drop.Attrs.Delete("global_shape")
		drop.Attrs.Delete("shard_offset")
	}
	rep, err = check.RunParts(context.Background(), m, ranks, mods, check.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Ranks 0 and 1 hold the first batch shard, whose local draw is the
	// global one's; ranks 2 and 3 the second.
	for _, row := range rep.Rows {
		if (row.Var == "y" || row.Var == "mask") && row.Rank != 2 {
			t.Errorf("dropouts drawing their local block: %s first diverged on rank %d, want 2", row.Var, row.Rank)
		}
	}
}
