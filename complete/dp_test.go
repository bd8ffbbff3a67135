package complete_test

import (
	"context"
	"testing"

	"github.com/distpass/distpass/complete"
	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/models"
	"github.com/distpass/distpass/passes"
	"github.com/rogpeppe/go-internal/diff"
)

// TestDataParallelLikeAnnotateDP: annotate-data-parallel is the data
// vars' split plus completion, so an MLP with only its data var split on
// dp completes to exactly its result: every var dist, op mapping and
// impl, and the same per-rank programs.
func TestDataParallelLikeAnnotateDP(t *testing.T) {
	m, err := models.MLPTraining(models.MLPConfig{Layers: 3, Hidden: 8, Batch: 8, DType: ir.F64}, "dp", models.Mesh([]int{4}, []string{"dp"}), "sgd")
	if err != nil {
		t.Fatal(err)
	}
	dp := m.Clone()
	strip(dp, func(*ir.Var) bool { return false })
	if err := passes.AnnotateDataParallel(dp, "world", 0, "dp"); err != nil {
		t.Fatal(err)
	}
	strip(m, func(v *ir.Var) bool { return v.Has(ir.FlagIsData) })
	if _, err := complete.Complete(m, complete.Options{}); err != nil {
		t.Fatal(err)
	}
	for _, d := range compareDists(dp, m) {
		t.Error(d)
	}
	want, err := passes.PartitionAll(context.Background(), dp, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := passes.PartitionAll(context.Background(), m, nil)
	if err != nil {
		t.Fatal(err)
	}
	for r := range want {
		w, g := ir.Print(want[r]), ir.Print(got[r])
		if d := diff.Diff("annotate-data-parallel", w, "complete", g); d != nil {
			t.Errorf("rank %d differs:\n%s", r, d)
		}
	}
}
