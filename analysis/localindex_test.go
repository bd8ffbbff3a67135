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
