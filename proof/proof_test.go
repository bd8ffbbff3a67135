package proof_test

import (
	"context"
	"os"
	"slices"
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

// A reshard into a sum's parts leaves the value on the first rank and
// zeros on the others: proven; the value kept on every rank (n times it
// once summed) is refuted, and so is a pad whose block is out of place.
func TestPartsAddUp(t *testing.T) {
	src := `mesh m shape [2] dims [a] ranks [0, 1]
program main {
  block 0 {
    var x : f32[8, 4] @m[KIND] {is_data, stop_gradient}
    var y : f32[8, 4] @m[-1, -1] partial [0]
    var z : f32[8, 4] @m[-1, -1] partial [0]
    op 1 reshard(X: x) -> (Out: y) dist @m impl reshard:0 [x: [KIND] -> y: [-1, -1]]
    op 2 scale(X: y) -> (Out: z) {bias = 0.0, bias_after_scale = true, scale = 2.0} dist @m [y: [-1, -1] -> z: [-1, -1]]
  }
}
`
	for _, c := range []struct {
		kind   string // x's mapping: replicated (a copy on the first rank) or split (a pad)
		mutate func(op *ir.Op) bool
		want   string
	}{
		{"-1, -1", nil, ""},
		{"-1, -1", func(op *ir.Op) bool {
			if op.Type != "fill_any_like" {
				return false
			}
			op.Type, op.Attrs = "assign", ir.Attrs{}
			op.Attrs.Set("origin_op", ir.Long(1))
			return true
		}, "ends owing nothing, declared partial [0]"},
		{"0, -1", nil, ""},
		{"0, -1", func(op *ir.Op) bool {
			if op.Type != "concat" {
				return false
			}
			slices.Reverse(op.Inputs[0].Args)
			return true
		}, "holds the blocks 2×1 tiles [4:8, 0:4] [4:8, 0:4]=0, and the rank declares it [-1, -1]"},
	} {
		m, err := ir.Parse("parts.dpir", []byte(strings.ReplaceAll(src, "KIND", c.kind)))
		if err != nil {
			t.Fatal(err)
		}
		ranks, err := passes.PartitionAll(context.Background(), m, nil)
		if err != nil {
			t.Fatal(err)
		}
		mutated := c.mutate == nil
		for _, op := range ranks[1].Main.Global().Ops {
			if c.mutate != nil && c.mutate(op) {
				mutated = true
			}
		}
		if !mutated {
			t.Fatalf("%s: nothing to mutate", c.kind)
		}
		res, err := proof.Check(m, passes.Ranks(m), ranks)
		if err != nil {
			t.Fatal(err)
		}
		switch f := res.Refuted(); {
		case c.want == "" && !res.Proven():
			t.Errorf("%s: not proven: %v", c.kind, res.Findings)
		case c.want != "" && (f == nil || !strings.Contains(f.Msg, c.want)):
			t.Errorf("%s, mutated: %v, want refuted: %s", c.kind, res.Findings, c.want)
		}
	}
}
