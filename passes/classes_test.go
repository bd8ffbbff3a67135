package passes_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/lower"
	"github.com/distpass/distpass/models"
	"github.com/distpass/distpass/passes"
)

// classCases are the modules the class partitioner is held to: every
// golden case whose pipeline partitions, and the example models.
func classCases(t *testing.T) map[string]*ir.Module {
	t.Helper()
	out := map[string]*ir.Module{}
	files, err := filepath.Glob(filepath.Join("..", "golden", "testdata", "*.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		ar, err := txtar.ParseFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var in, pipeline []byte
		for _, file := range ar.Files {
			switch file.Name {
			case "input.dpir":
				in = file.Data
			case "pipeline":
				pipeline = file.Data
			}
		}
		if !bytes.Contains(pipeline, []byte("partition{rank=$RANK}")) {
			continue
		}
		m, err := ir.Parse(f, in)
		if err != nil {
			t.Fatal(err)
		}
		out[strings.TrimSuffix(filepath.Base(f), ".txtar")] = m
	}
	gpt, err := models.GPTTraining(models.TinyGPT(), "dp,mp", models.Mesh([]int{2, 4}, []string{"dp", "mp"}), "adam")
	if err != nil {
		t.Fatal(err)
	}
	out["gpt dp,mp 2x4"] = gpt
	for _, c := range []struct {
		strategy string
		shape    []int
		dims     []string
	}{{"ep", []int{4}, []string{"ep"}}, {"dp,ep", []int{2, 2}, []string{"dp", "ep"}}} {
		moe, err := models.MoETraining(models.MoEConfig{Capacity: 6}, c.strategy, models.Mesh(c.shape, c.dims), "sgd")
		if c.strategy == "dp,ep" {
			moe, err = models.MoETraining(models.MoEConfig{}, c.strategy, models.Mesh(c.shape, c.dims), "sgd")
		}
		if err != nil {
			t.Fatal(err)
		}
		out["moe "+c.strategy] = moe
	}
	pp, err := os.ReadFile(filepath.Join("..", "examples", "mlp_dp_mp.dpir"))
	if err != nil {
		t.Fatal(err)
	}
	if out["example mlp_dp_mp"], err = ir.Parse("mlp_dp_mp.dpir", pp); err != nil {
		t.Fatal(err)
	}
	return out
}

// Every rank's module built from its class is byte-identical to its plain
// lowering, with no class falling back, and the input is not changed.
func TestPartitionClassesEqualsPlainLowering(t *testing.T) {
	cases := classCases(t)
	if len(cases) < 15 {
		t.Fatalf("only %d cases", len(cases))
	}
	for name, m := range cases {
		t.Run(name, func(t *testing.T) {
			before := ir.Print(m)
			plain, perr := passes.PartitionAll(context.Background(), m, nil)
			cs, err := passes.PartitionClasses(context.Background(), m, nil, nil)
			if (perr == nil) != (err == nil) {
				t.Fatalf("plain error %v, classes error %v", perr, err)
			}
			if err != nil {
				if err.Error() != perr.Error() {
					t.Errorf("classes error %q, plain %q", err, perr)
				}
				return
			}
			for _, c := range cs.Classes {
				if c.Fallback != "" {
					t.Errorf("class %v fell back: %s", c.Ranks, c.Fallback)
				}
			}
			for i, r := range passes.Ranks(m) {
				got, err := cs.Module(r)
				if err != nil {
					t.Fatal(err)
				}
				if g, w := ir.Print(got), ir.Print(plain[i]); !bytes.Equal(g, w) {
					t.Errorf("rank %d differs from its plain lowering", r)
				}
			}
			if !bytes.Equal(ir.Print(m), before) {
				t.Error("the input changed")
			}
		})
	}
}

// An attr that holds the serial op's own value may be copied from the
// input (the same on every rank) or computed for the representative: the
// class falls back to rank by rank, and every rank keeps its plain
// lowering. On the mesh [[0, 3], [1, 2]] the check rank 3 shares rank
// 0's group along b and its coordinate along a, so only ranks 1 and 2
// show a wrong relabelling (found by reading relabel; the inputs are in
// testdata/fuzz/FuzzPartition).
func TestPartitionClassesKeepsSerialAttrs(t *testing.T) {
	for _, tc := range []struct{ name, op, attr, want string }{
		{"ring_id", `op 1 c_allreduce_sum(X: x) -> (Out: y) {ring_id = 3}
         dist @m impl default:0 [x: [-1, -1] -> y: [-1, -1]]`, "ring_id = 3", "ring_id 3 is as the serial op has it"},
		{"start_index", `op 1 c_embedding(Ids: ids, W: w) -> (Out: y) {start_index = 0}
         dist @m impl default:0 [ids: [-1], w: [0, -1] -> y: [-1, -1]]`, "start_index = 0", "start_index 0 is as the serial op has it"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := `mesh m shape [2, 2] dims [a, b] ranks [0, 3, 1, 2]
program main {
  block 0 {
    var x : f32[4, 8] @m[-1, -1]
    var ids : i64[4] @m[-1]
    var w : f32[8, 4] @m[0, -1]
    var y : f32[4, 8] @m[-1, -1]
    ` + tc.op + `
  }
}
`
			if tc.name == "start_index" {
				src = strings.Replace(src, "var y : f32[4, 8] @m[-1, -1]", "var y : f32[4, 4] @m[-1, -1] partial [0]", 1)
			}
			m, err := ir.Parse("t.dpir", []byte(src))
			if err != nil {
				t.Fatal(err)
			}
			cs, err := passes.PartitionClasses(context.Background(), m, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(cs.Classes) != 1 {
				t.Fatalf("%d classes, want 1", len(cs.Classes))
			}
			if fb := cs.Classes[0].Fallback; !strings.Contains(fb, tc.want) {
				t.Fatalf("fallback %q, want one with %q", fb, tc.want)
			}
			for _, r := range []int{0, 1, 2, 3} {
				got, err := cs.Module(r)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Contains(ir.Print(got), []byte(tc.attr)) {
					t.Errorf("rank %d lost %s:\n%s", r, tc.attr, ir.Print(got))
				}
			}
		})
	}
}

// A class is split by what its representative's lowering read of the
// rank (lower.Lowering.Rank or Coord, or ShardStart put anywhere but
// a c_embedding's start_index). An impl that reads
// Lowering.Rank gives every rank a class of its own, whether or not it
// uses the value; one that reads Lowering.Coord along b splits the class
// by that coordinate; one that reads only what is relabelled (Group's
// ring id) keeps one class. Every rank's program equals its plain
// lowering.
func TestPartitionClassesCheck(t *testing.T) {
	src := `mesh m shape [2, 2] dims [a, b] ranks [0, 1, 2, 3]
program main {
  block 0 {
    var x : f32[4, 8] @m[0, -1]
    var y : f32[4, 8] @m[0, -1]
    op 1 relu(X: x) -> (Out: y)
         dist @m impl default:1 [x: [0, -1] -> y: [0, -1]]
  }
}
`
	m, err := ir.Parse("t.dpir", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	base := lower.DefaultImpl()
	for _, tc := range []struct {
		name    string
		forward func(ctx *lower.Lowering, op *ir.Op)
		classes string
	}{
		{"rank into an attr", func(ctx *lower.Lowering, op *ir.Op) {
			op.Attrs.Set("seen_rank", ir.Int(int64(ctx.Rank())))
		}, "[[0] [1] [2] [3]]"},
		{"coord into an attr", func(ctx *lower.Lowering, op *ir.Op) {
			c, _ := ctx.Coord(1)
			op.Attrs.Set("seen_coord", ir.Int(int64(c)))
		}, "[[0 2] [1 3]]"},
		{"rank read, not used", func(ctx *lower.Lowering, op *ir.Op) { _ = ctx.Rank() }, "[[0] [1] [2] [3]]"},
		{"ring id only", func(ctx *lower.Lowering, op *ir.Op) {
			id, _, _ := ctx.Group(1)
			op.Attrs.Set("ring_id", ir.Int(int64(id)))
		}, "[[0 1 2 3]]"},
		{"shard start into another attr", func(ctx *lower.Lowering, op *ir.Op) {
			s, _ := ctx.ShardStart(1, 4)
			op.Attrs.Set("offset", ir.Int(s))
		}, "[[0 2] [1 3]]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg := lower.DefaultRegistry()
			idx := reg.Register(lower.DefaultType, &lower.Impl{
				Name: "user", Compatible: base.Compatible, Backward: base.Backward,
				Forward: func(ctx *lower.Lowering, op *ir.Op) error {
					tc.forward(ctx, op)
					return base.Forward(ctx, op)
				},
			})
			if idx != 1 {
				t.Fatalf("user impl is default:%d, want default:1", idx)
			}
			cs, err := passes.PartitionClasses(context.Background(), m, reg, nil)
			if err != nil {
				t.Fatal(err)
			}
			var got [][]int
			for _, c := range cs.Classes {
				got = append(got, c.Ranks)
				if c.Fallback != "" {
					t.Errorf("class %v fell back: %s", c.Ranks, c.Fallback)
				}
			}
			if fmt.Sprint(got) != tc.classes {
				t.Errorf("classes %v, want %s", got, tc.classes)
			}
			plain, err := passes.PartitionAll(context.Background(), m, reg)
			if err != nil {
				t.Fatal(err)
			}
			for i, r := range passes.Ranks(m) {
				got, err := cs.Module(r)
				if err != nil {
					t.Fatal(err)
				}
				if g, w := ir.Print(got), ir.Print(plain[i]); !bytes.Equal(g, w) {
					t.Errorf("rank %d differs from its plain lowering:\n%s\nwant\n%s", r, g, w)
				}
			}
		})
	}
	// On these examples the built-in impls read the rank only for a
	// vocab-parallel embedding's start_index (ShardStart), which the
	// classes relabel: one class each, none falls back.
	cases := classCases(t)
	for _, name := range []string{"example mlp_dp_mp", "gpt dp,mp 2x4", "loss_scaling"} {
		cs, err := passes.PartitionClasses(context.Background(), cases[name], nil, nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(cs.Classes) != 1 {
			t.Errorf("%s: %d classes, want 1", name, len(cs.Classes))
		}
		for _, c := range cs.Classes {
			if c.Fallback != "" {
				t.Errorf("%s: class %v fell back: %s", name, c.Ranks, c.Fallback)
			}
		}
	}
}

// check_finite_and_unscale fails on a rank outside the world group
// (group 0): with a group table whose group 0 leaves ranks out, those
// ranks form a class of their own, so that the class partition fails as
// the plain one does. Here group 0 is also rank 0's group along mp, so
// without the split relabel would take the flag's reduction over group
// 0 for one along mp and give ranks 2 and 3 a program.
func TestPartitionClassesSplitsByWorldGroup(t *testing.T) {
	src := `mesh m shape [2, 2] dims [dp, mp] ranks [0, 1, 2, 3]
group 0 ranks [0, 1]
group 1 ranks [2, 3]
group 2 ranks [0, 2]
group 3 ranks [1, 3]
program main {
  block 0 {
    var w@GRAD : f32[8, 4] @m[-1, -1]
    persist loss_scaling : f32[1] @m[-1]
    var found_inf : bool[1] @m[-1]
    op 1 check_finite_and_unscale(X: w@GRAD, Scale: loss_scaling) -> (Out: w@GRAD, FoundInfinite: found_inf) role optimize
         dist @m impl check_finite_and_unscale:0 [w@GRAD: [-1, -1], loss_scaling: [-1] -> w@GRAD: [-1, -1], found_inf: [-1]]
  }
}
`
	m, err := ir.Parse("amp.dpir", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	_, perr := passes.PartitionAll(context.Background(), m, nil)
	if perr == nil || !strings.Contains(perr.Error(), "rank 2 is not in the world group") {
		t.Fatalf("plain lowering: %v, want rank 2's world-group error", perr)
	}
	_, err = passes.PartitionClasses(context.Background(), m, nil, nil)
	if err == nil || err.Error() != perr.Error() {
		t.Fatalf("classes: %v\nwant the plain lowering's %v", err, perr)
	}
	// Without ranks outside group 0, one class.
	m.Groups[0].Ranks = []int{0, 1, 2, 3}
	cs, err := passes.PartitionClasses(context.Background(), m, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(cs.Classes) != 1 {
		t.Errorf("%d classes, want 1", len(cs.Classes))
	}
}
