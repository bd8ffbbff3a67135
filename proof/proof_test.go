package proof_test

import (
	"context"
	"os"
	"strings"
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

// The body of a while loop is followed once, nested loops too: the
// partitioned program of two nested counted loops is proven; an attr of
// the inner body changed on one rank, or a sum over the ranks added to
// its counter, is refuted, located in the body.
func TestSubBlocksFollowed(t *testing.T) {
	src, err := os.ReadFile("../testdata/bad/loop_nested.dpir")
	if err != nil {
		t.Fatal(err)
	}
	m, err := ir.Parse("loop_nested.dpir", src)
	if err != nil {
		t.Fatal(err)
	}
	prove := func(mutate func(r *ir.Module)) *proof.Result {
		t.Helper()
		ranks, err := passes.PartitionAll(context.Background(), m, nil)
		if err != nil {
			t.Fatal(err)
		}
		mutate(ranks[1])
		res, err := proof.Check(m, passes.Ranks(m), ranks)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	if res := prove(func(*ir.Module) {}); !res.Proven() {
		t.Fatalf("not proven: %v", res.Findings)
	}
	inner := func(r *ir.Module) *ir.Block { return r.Main.Blocks[2] }
	res := prove(func(r *ir.Module) { inner(r).Ops[0].Attrs.Set("step", ir.Float(2)) })
	if f := res.Refuted(); f == nil || f.OpID != 10 || !strings.Contains(f.Msg, "attr step") {
		t.Fatalf("a drifted step: %v", res.Findings)
	}
	res = prove(func(r *ir.Module) {
		b := inner(r)
		sum := &ir.Op{ID: r.FreshOpID(), Type: "c_allreduce_sum", Inputs: ir.Slots("X", "j"), Outputs: ir.Slots("Out", "j")}
		sum.Attrs.Set("ring_id", ir.Int(0))
		sum.Attrs.Set("origin_op", ir.Long(10))
		b.Ops = append(b.Ops[:1], append([]*ir.Op{sum}, b.Ops[1:]...)...)
	})
	if f := res.Refuted(); f == nil || f.Var != "j" || !strings.Contains(f.Msg, "owes nothing") {
		t.Fatalf("a sum of the counter: %v", res.Findings)
	}
}
