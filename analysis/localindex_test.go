package analysis_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/models"
)

func moeEP(t *testing.T) *ir.Module {
	t.Helper()
	m, err := models.MoETraining(models.MoEConfig{DType: ir.F64}, "ep", models.Mesh([]int{2}, []string{"ep"}), "sgd")
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestLocalPositions: the MoE dispatch's positions index each rank's
// own rows. The hand-written strategies read them so and are accepted;
// a gather reading its rows whole by them, or a reshard moving them, is
// refused, naming the op and the var.
func TestLocalPositions(t *testing.T) {
	if got := problems(t, moeEP(t)); len(got) != 0 {
		t.Fatalf("hand-written ep: %s", strings.Join(got, "\n"))
	}
	m, err := models.MoETraining(models.MoEConfig{DType: ir.F64}, "dp,ep", models.Mesh([]int{2, 2}, []string{"dp", "ep"}), "sgd")
	if err != nil {
		t.Fatal(err)
	}
	if got := problems(t, m); len(got) != 0 {
		t.Fatalf("hand-written dp,ep: %s", strings.Join(got, "\n"))
	}

	// The gather reads u whole (its var says so too, so the only problem
	// is the positions').
	m = moeEP(t)
	b := m.Main.Global()
	gather := b.Ops[slices.IndexFunc(b.Ops, func(op *ir.Op) bool { return op.Type == "gather" })]
	u := b.Var("u")
	u.Dist.DimsMapping = []int{-1, -1}
	gather.Dist.Inputs[0].DimsMapping = []int{-1, -1}
	want := "main block 0: op 15 gather: Index tok holds positions into each rank's own rows (from op 12 assign_pos, whose X topi is @world[0, -1]): " +
		"input X u is [-1, -1]; its dim 0 must be split along mesh dim 0 as those rows are, or the rank's local positions pick other rows"
	if got := problems(t, m); !slices.Contains(got, want) {
		t.Errorf("gather of whole rows: got\n%s\nwant a line %s", strings.Join(got, "\n"), want)
	}

	// A reshard of tok before the gather.
	m = moeEP(t)
	b = m.Main.Global()
	i := slices.IndexFunc(b.Ops, func(op *ir.Op) bool { return op.Type == "gather" })
	tok := b.Var("tok")
	moved := ir.Var{Type: tok.Type, Dist: tok.Dist.Clone()}.Named("tok.moved")
	if err := b.AddVar(&moved); err != nil {
		t.Fatal(err)
	}
	r := &ir.Op{ID: m.FreshOpID(), Type: "reshard", Inputs: ir.Slots("X", "tok"), Outputs: ir.Slots("Out", "tok.moved"),
		Dist: &ir.OpDist{Mesh: "world", ImplType: "reshard", Inputs: []ir.ArgDist{{Name: "tok", DimsMapping: []int{-1}}},
			Outputs: []ir.ArgDist{{Name: "tok.moved", DimsMapping: []int{-1}}}}}
	b.Ops = slices.Insert(b.Ops, i, r)
	b.Ops[i+1].Inputs[1].Args = []string{"tok.moved"}
	b.Ops[i+1].Dist.Inputs[1].Name = "tok.moved"
	want = "main block 0: op 56 reshard: X tok holds positions into each rank's own rows (from op 12 assign_pos, whose X topi is @world[0, -1]): " +
		"a reshard cannot move them, as their values mean nothing on another rank; the ops that read them must read them where they are"
	if got := problems(t, m); !slices.Contains(got, want) {
		t.Errorf("reshard of tok: got\n%s\nwant a line %s", strings.Join(got, "\n"), want)
	}
}

// opOf returns the first op of type typ in m's main block 0.
func opOf(t *testing.T, m *ir.Module, typ string) *ir.Op {
	t.Helper()
	b := m.Main.Global()
	i := slices.IndexFunc(b.Ops, func(op *ir.Op) bool { return op.Type == typ })
	if i < 0 {
		t.Fatalf("no %s op", typ)
	}
	return b.Ops[i]
}

// TestLocalAnnotations: a var's local dims are held to where its values
// come from, both ways, and each problem names the var. Positions that
// lack them are refused (an unannotated program cannot pass as if its
// positions indexed the serial rows), and so is a local [d] that
// assign_pos over rows split along d, or integer arithmetic on a local
// [d] var, did not make.
func TestLocalAnnotations(t *testing.T) {
	only := func(t *testing.T, m *ir.Module, want string) {
		t.Helper()
		if got := problems(t, m); len(got) != 1 || got[0] != want {
			t.Errorf("got\n%s\nwant the one line %s", strings.Join(got, "\n"), want)
		}
	}
	has := func(t *testing.T, m *ir.Module, want string) {
		t.Helper()
		if got := problems(t, m); !slices.Contains(got, want) {
			t.Errorf("got\n%s\nwant a line %s", strings.Join(got, "\n"), want)
		}
	}

	t.Run("missing on assign_pos's Out", func(t *testing.T) {
		m := moeEP(t)
		m.Main.Global().Var("pos").Dist.Local = nil
		only(t, m, "main block 0: op 12 assign_pos: Out pos holds positions into each rank's own rows "+
			"(numbered in the rows of this op's X topi, @world[0, -1]), but its dist @world[-1] does not say so: annotate it local [0]")
	})
	t.Run("missing on integer arithmetic's Out", func(t *testing.T) {
		m := moeEP(t)
		m.Main.Global().Var("tok").Dist.Local = nil
		only(t, m, "main block 0: op 14 elementwise_floordiv: Out tok holds positions into each rank's own rows "+
			"(from op 12 assign_pos, whose X topi is @world[0, -1]), but its dist @world[-1] does not say so: annotate it local [0]")
	})
	t.Run("missing on both", func(t *testing.T) {
		m := moeEP(t)
		m.Main.Global().Var("pos").Dist.Local = nil
		m.Main.Global().Var("tok").Dist.Local = nil
		got := problems(t, m)
		if len(got) != 2 || !strings.Contains(got[0], "Out pos holds positions") || !strings.Contains(got[1], "Out tok holds positions") {
			t.Errorf("got\n%s\nwant pos's and tok's missing local [0], in that order", strings.Join(got, "\n"))
		}
	})
	t.Run("another mesh dim", func(t *testing.T) {
		// On a mesh [x, ep] the tokens' rows are split along mesh dim 1.
		m, err := models.MoETraining(models.MoEConfig{DType: ir.F64}, "ep", models.Mesh([]int{1, 2}, []string{"x", "ep"}), "sgd")
		if err != nil {
			t.Fatal(err)
		}
		if got := problems(t, m); len(got) != 0 {
			t.Fatalf("hand-written ep on [x, ep]: %s", strings.Join(got, "\n"))
		}
		m.Main.Global().Var("tok").Dist.Local = []int{0}
		has(t, m, "main block 0: op 14 elementwise_floordiv: Out tok is local [0] but it holds positions into each rank's own rows "+
			"split along mesh dim 1 (from op 12 assign_pos, whose X topi is @world[1, -1]): annotate it local [1]")
	})
	t.Run("a fill", func(t *testing.T) {
		m := moeEP(t)
		m.Main.Global().Var("top_k").WithLocal(0)
		only(t, m, "main block 0: op 13 fill_constant: Out top_k is local [0] but this op numbers no positions: "+
			"they come from assign_pos, and from integer arithmetic on rank-local positions")
	})
	t.Run("assign_pos over whole rows", func(t *testing.T) {
		m := moeEP(t)
		ap := opOf(t, m, "assign_pos")
		ap.Dist.Inputs[0].DimsMapping = []int{-1, -1}
		has(t, m, "main block 0: op 12 assign_pos: Out pos is local [0] but this op reads its X topi whole ([-1, -1]): "+
			"every rank numbers every slot, as the serial program does")
	})
	t.Run("no writer", func(t *testing.T) {
		m := moeEP(t)
		b := m.Main.Global()
		ids := ir.Var{Type: ir.Tensor(ir.I64, 4)}.Named("ids")
		ids.WithDist("world", -1).WithLocal(0)
		if err := b.AddVar(&ids); err != nil {
			t.Fatal(err)
		}
		only(t, m, "main block 0: var ids: its dist is local [0] but no op writes it: "+
			"rank-local positions come from assign_pos, and from integer arithmetic on rank-local positions")
	})
	t.Run("rows not split", func(t *testing.T) {
		// assign_pos reads its X split along dim 1, not its rows: its
		// positions are each rank's own, but index no rows split as
		// they are. No local [d] can say so; the gather by them is
		// refused, as before there was a field.
		m := moeEP(t)
		b := m.Main.Global()
		b.Var("pos").Dist.Local = nil
		b.Var("tok").Dist.Local = nil
		opOf(t, m, "assign_pos").Dist.Inputs[0].DimsMapping = []int{-1, 0}
		has(t, m, "main block 0: op 15 gather: Index tok holds positions into each rank's own rows (from op 12 assign_pos, whose X topi is @world[-1, 0]): "+
			"its X's rows are not split, so no rows are split as they are; split the rows of assign_pos's X, not its other dims")
		b.Var("pos").WithLocal(0)
		has(t, m, "main block 0: op 12 assign_pos: Out pos is local [0] but its positions (numbered in the rows of this op's X topi, @world[-1, 0]) "+
			"index rows that are not split, so no rows are split as they are; split the rows of assign_pos's X, not its other dims")
	})
}
