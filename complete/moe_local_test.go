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
