package complete_test

import (
	"context"
	"testing"

	"github.com/distpass/distpass/check"
	"github.com/distpass/distpass/complete"
	"github.com/distpass/distpass/passes"
)

// TestIncrementalSPMDGrads: a forward module completed to the rule-based
// impl (batch and sequence split: matmul_v2 and mean on spmd:0), then
// append-backward and append-optimizer, then complete again.
// append-backward gives w@GRAD w's dist (whole) and leaves the grad ops
// of spmd:0 ops to completion, which gives them their rules' dists: the
// grad op's w@GRAD is partial [0:avg, 1:avg], and the var, whose dist
// append-backward derived, takes that partial state (its mapping kept),
// so that the report lists the reshard before sgd, which reads it whole.
// insert-reshards makes it (an all-reduce), and the step checks. (The
// var once kept its whole dist, and the reshard the report listed, at
// the grad op's output, was one insert-reshards could not make: the
// partitioner refused the grad op.)
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
	if !containsLine(reportText(t, rep), "reshard: op 7 sgd reads w@GRAD as [-1, -1], which is [-1, -1] partial [0:avg, 1:avg]\n") {
		t.Errorf("report:\n%s", reportText(t, rep))
	}
	if d := m.Main.Global().Var("w@GRAD").Dist.String(); d != "@w[-1, -1] partial [0:avg, 1:avg]" {
		t.Errorf("w@GRAD is %s", d)
	}
	// Until the reshard is inserted, partition refuses sgd, which reads
	// a partial grad.
	if _, err := passes.PartitionAll(context.Background(), m, nil); err == nil {
		t.Error("partition accepts an sgd that reads a partial grad")
	}
	if n := passes.InsertReshards(m); n != 1 {
		t.Fatalf("%d reshards inserted, want 1", n)
	}
	cr, err := check.Run(context.Background(), m, check.Options{Steps: 2})
	if err != nil {
		t.Fatal(err)
	}
	if err := cr.Err(); err != nil {
		t.Fatal(err)
	}
	if cr.Count("grad") != 1 || cr.Count("param") != 1 {
		t.Errorf("compared %d grads, %d params; want 1 and 1", cr.Count("grad"), cr.Count("param"))
	}
}
