package complete_test

import (
	"context"
	"testing"

	"github.com/distpass/distpass/complete"
	"github.com/distpass/distpass/passes"
)

// TestIncrementalSPMDGrads: a forward module completed to the rule-based
// impl (batch and sequence split: matmul_v2 and mean on spmd:0), then
// append-backward and append-optimizer, then complete again.
// append-backward gives w@GRAD w's dist (whole) and leaves the grad ops
// of spmd:0 ops to completion, which gives them their rules' dists: the
// grad op's w@GRAD is partial [0:avg, 1:avg], the var keeps the dist it
// was given, and the report lists the reshard between the two (once
// the partitioner refused the grad op with nothing listed).
func TestIncrementalSPMDGrads(t *testing.T) {
	m := parseModule(t, "sp.dpir", spModule)
	if _, err := complete.Complete(m, complete.Options{}); err != nil {
		t.Fatal(err)
	}
	if d := m.Main.Global().Ops[0].Dist; d.ImplType != "spmd" {
		t.Fatalf("matmul_v2 on %s:%d, want spmd:0", d.ImplType, d.ImplIndex)
	}
	if _, err := passes.AppendBackward(m, "loss"); err != nil {
		t.Fatal(err)
	}
	if _, err := passes.AppendOptimizer(m, "sgd", 0.01); err != nil {
		t.Fatal(err)
	}
	rep, err := complete.Complete(m, complete.Options{})
	if err != nil {
		t.Fatal(err)
	}
	everythingHasADist(t, "sp", m)
	if d := m.Main.Global().Ops[4].Dist; d.ImplType != "spmd" {
		t.Errorf("%s on %s:%d, want spmd:0", m.Main.Global().Ops[4], d.ImplType, d.ImplIndex)
	}
	if !containsLine(reportText(t, rep), "reshard: op 5 matmul_v2_grad gives w@GRAD as [-1, -1] partial [0:avg, 1:avg], which is [-1, -1]\n") {
		t.Errorf("report:\n%s", reportText(t, rep))
	}
	// Until the reshard is inserted, partition refuses the grad op (the
	// rule-based impl's backward holds it to its rule).
	if _, err := passes.PartitionAll(context.Background(), m, nil); err == nil {
		t.Error("partition accepts a grad op whose output needs a reshard")
	}
}
