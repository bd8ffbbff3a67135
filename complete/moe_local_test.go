package complete_test

import (
	"context"
	"strings"
	"testing"

	"github.com/distpass/distpass/check"
	"github.com/distpass/distpass/complete"
	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/models"
	"github.com/distpass/distpass/passes"
)

// moeFromDataAndParams builds the MoE zoo case for strategy s with only
// its data and params annotated, completes it and inserts its reshards,
// as `distpass complete` then `insert-reshards` would.
func moeFromDataAndParams(t *testing.T, s string) *ir.Module {
	t.Helper()
	pm := models.Mesh([]int{2}, []string{"ep"})
	if s == "dp,ep" {
		pm = models.Mesh([]int{2, 2}, []string{"dp", "ep"})
	}
	m, err := models.MoETraining(models.MoEConfig{Tokens: 8, Model: 4, Hidden: 8, Experts: 4, TopK: 2, DType: ir.F64}, s, pm, "sgd")
	if err != nil {
		t.Fatal(err)
	}
	strip(m, nil)
	if _, err := complete.Complete(m, complete.Options{}); err != nil {
		t.Fatal(err)
	}
	passes.InsertReshards(m)
	return m
}

// TestMoELocalPositions: the MoE dispatch's positions (assign_pos's Out,
// and tok = pos // k) index each rank's own rows. Completed from data
// and params, the gather once read u all-gathered with them, and after
// insert-reshards check-annotations accepted a module that ran wrong
// (issue 38). Under ep, completion now keeps the indexed rows split
// (gather reads u [0, -1], scatter writes ys [0, -1]) and check proves
// two steps; under dp,ep it places the combine's scatter on the experts'
// mesh, and check-annotations refuses it, naming the scatter.
func TestMoELocalPositions(t *testing.T) {
	m := moeFromDataAndParams(t, "ep")
	for _, name := range []string{"u", "slots_zero", "ys", "u@GRAD@RENAME@1"} {
		if got := mappingOf(t, m, name); got != "@world[0, -1]" {
			t.Errorf("moe ep: %s is %s, want @world[0, -1]", name, got)
		}
	}
	// The positions' dists say what they are: each rank's own rows,
	// split along mesh dim 0.
	for _, name := range []string{"pos", "tok"} {
		if got := m.Main.Global().Var(name).Dist.String(); got != "@world[-1] local [0]" {
			t.Errorf("moe ep: %s is %s, want @world[-1] local [0]", name, got)
		}
	}
	if err := annotationsErr(m); err != nil {
		t.Fatalf("moe ep: check-annotations: %v", err)
	}
	cr, err := check.Run(context.Background(), m, check.Options{Steps: 2})
	if err != nil {
		t.Fatalf("moe ep: check: %v", err)
	}
	if err := cr.Err(); err != nil {
		t.Fatalf("moe ep: check: %v", err)
	}

	m = moeFromDataAndParams(t, "dp,ep")
	for _, name := range []string{"pos", "tok"} {
		if got := m.Main.Global().Var(name).Dist.String(); got != "@tokens[-1] local [0]" {
			t.Errorf("moe dp,ep: %s is %s, want @tokens[-1] local [0]", name, got)
		}
	}
	err = annotationsErr(m)
	if err == nil {
		t.Fatal("moe dp,ep: check-annotations accepts the completed module with its reshards")
	}
	want := "main block 0: op 22 scatter: Ids pos holds positions into each rank's own rows (from op 12 assign_pos, whose X topi is @tokens[0, -1]): " +
		"the op runs on mesh world; it must run on mesh tokens, where those rows are"
	if !strings.Contains(err.Error()+"\n", want+"\n") {
		t.Errorf("moe dp,ep: check-annotations: %v\nwant a line %s", err, want)
	}
}

// moeGiven builds the MoE "ep" case with only its data and params
// annotated, gives the named vars the dists spelled, and completes it.
func moeGiven(t *testing.T, dists map[string]string) *ir.Module {
	t.Helper()
	m, err := models.MoETraining(models.MoEConfig{Tokens: 8, Model: 4, Hidden: 8, Experts: 4, TopK: 2, DType: ir.F64}, "ep",
		models.Mesh([]int{2}, []string{"ep"}), "sgd")
	if err != nil {
		t.Fatal(err)
	}
	strip(m, nil)
	g := m.Main.Global()
	for name, dist := range dists {
		d, err := ir.ParseDist(name, dist)
		if err != nil {
			t.Fatal(err)
		}
		g.Var(name).Dist = d
	}
	if _, err := complete.Complete(m, complete.Options{}); err != nil {
		t.Fatal(err)
	}
	passes.InsertReshards(m)
	return m
}

// TestMoELocalGiven: a var the user annotated keeps its dist, local dims
// and all; the gathers and scatters read the field as given, and
// check-annotations holds it to where the values come from, naming the
// var.
func TestMoELocalGiven(t *testing.T) {
	// pos given without local dims: completion does not add them, tok
	// (pos // k) has none either, the gather and the scatter index as
	// if by serial positions, and check-annotations refuses the module,
	// naming pos.
	m := moeGiven(t, map[string]string{"pos": "@world[-1]"})
	if got := m.Main.Global().Var("pos").Dist.String(); got != "@world[-1]" {
		t.Errorf("pos given @world[-1] is %s after completion", got)
	}
	if got := m.Main.Global().Var("tok").Dist.String(); got != "@world[-1]" {
		t.Errorf("tok (pos // k, pos given without local) is %s, want @world[-1]", got)
	}
	want := "main block 0: op 12 assign_pos: Out pos holds positions into each rank's own rows " +
		"(numbered in the rows of this op's X topi, @world[0, -1]), but its dist @world[-1] does not say so: annotate it local [0]"
	if err := annotationsErr(m); err == nil || !strings.Contains(err.Error()+"\n", want+"\n") {
		t.Errorf("pos given without local: check-annotations: %v\nwant a line %s", err, want)
	}

	// pos given local [0] over tokens the data leaves whole: the
	// scatter by pos keeps its rows split along mesh dim 0, as the field
	// says, and the rest follows (the tokens get split, assign_pos
	// numbers each rank's own): a right program.
	m = moeGiven(t, map[string]string{"pos": "@world[-1] local [0]", "x": "@world[-1, -1]"})
	for name, want := range map[string]string{"pos": "@world[-1] local [0]", "tok": "@world[-1] local [0]", "ys": "@world[0, -1]", "topi": "@world[0, -1]"} {
		if got := m.Main.Global().Var(name).Dist.String(); got != want {
			t.Errorf("pos given local [0], x whole: %s is %s, want %s", name, got, want)
		}
	}
	if err := annotationsErr(m); err != nil {
		t.Fatalf("pos given local [0], x whole: check-annotations: %v", err)
	}
	cr, err := check.Run(context.Background(), m, check.Options{Steps: 2})
	if err == nil {
		err = cr.Err()
	}
	if err != nil {
		t.Errorf("pos given local [0], x whole: check: %v", err)
	}

	// ... but with the gate's choices given whole too, assign_pos
	// numbers every slot on every rank: check-annotations refuses pos's
	// local [0], naming pos.
	m = moeGiven(t, map[string]string{"pos": "@world[-1] local [0]", "x": "@world[-1, -1]", "topi": "@world[-1, -1]"})
	if got := m.Main.Global().Var("pos").Dist.String(); got != "@world[-1] local [0]" {
		t.Errorf("pos given @world[-1] local [0] is %s after completion", got)
	}
	want = "main block 0: op 12 assign_pos: Out pos is local [0] but this op reads its X topi whole ([-1, -1]): " +
		"every rank numbers every slot, as the serial program does"
	if err := annotationsErr(m); err == nil || !strings.Contains(err.Error()+"\n", want+"\n") {
		t.Errorf("pos given local [0] over whole choices: check-annotations: %v\nwant a line %s", err, want)
	}
}
