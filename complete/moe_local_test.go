package complete_test

import (
	"strings"
	"testing"

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
// (issue 38). It must be refused, naming the gather.
func TestMoELocalPositions(t *testing.T) {
	for _, c := range []struct{ strategy, mesh string }{{"ep", "world"}, {"dp,ep", "tokens"}} {
		m := moeFromDataAndParams(t, c.strategy)
		err := annotationsErr(m)
		if err == nil {
			t.Errorf("moe %s: check-annotations accepts the completed module with its reshards", c.strategy)
			continue
		}
		want := "main block 0: op 15 gather: Index tok holds positions into each rank's own rows (from op 12 assign_pos, whose X topi is @" +
			c.mesh + "[0, -1]): input X u.reshard_0 is [-1, -1]; its dim 0 must be split along mesh dim 0 as those rows are, or the rank's local positions pick other rows"
		if !strings.Contains(err.Error()+"\n", want+"\n") {
			t.Errorf("moe %s: check-annotations: %v\nwant a line %s", c.strategy, err, want)
		}
	}
}
