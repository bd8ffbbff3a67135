package proof_test

import (
	"context"
	"os"
	"testing"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/passes"
	"github.com/distpass/distpass/proof"
)

// A reshard across two meshes sends on one and receives on the other,
// on one ring: a pair, not one collective issued in two orders (the
// proof once refuted it); the receiver holds the block the sender sent.
func TestSendReceiveIsProven(t *testing.T) {
	src, err := os.ReadFile("../viz/testdata/reshard.dpir")
	if err != nil {
		t.Fatal(err)
	}
	m, err := ir.Parse("reshard.dpir", src)
	if err != nil {
		t.Fatal(err)
	}
	ranks, err := passes.PartitionAll(context.Background(), m, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := proof.Check(m, passes.Ranks(m), ranks)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Proven() {
		t.Fatalf("not proven: %v", res.Findings)
	}
}
