package passes_test

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/distpass/distpass/internal/corpus"
	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/passes"
)

// Printing and hashing never depend on the order anything was inserted
// in. The IR holds no Go maps: its tables are slices. Those whose order
// is content (meshes, the group table, the params-grads list, a block's
// vars and ops, slot args, mappings) print in their order by design, and
// what builds them must not take that order from a map: the determinism
// test of package golden runs every producer many times, with Go's
// randomised map iteration, and an audit of every range over a map
// outside tests found none that feeds them (two fed error messages, in
// append-backward and check's feeding; both now iterate in a fixed
// order, with tests beside them). The one order-free table is an
// attribute list (module, var and op Attrs): it is kept sorted by name,
// whatever order Set was called in, and the verifier rejects one that
// is not, so no construction order can reach the printer.

// shuffleAttrs rebuilds every attribute list of m with Set, inserting
// the attrs in a random order, and returns how many lists had two or
// more attrs to shuffle.
func shuffleAttrs(m *ir.Module, rng *rand.Rand) int {
	n := 0
	rebuild := func(as *ir.Attrs) {
		old := *as
		if len(old) > 1 {
			n++
		}
		perm := rng.Perm(len(old))
		fresh := ir.Attrs(nil)
		if old != nil {
			fresh = ir.Attrs{}
		}
		for _, i := range perm {
			fresh.Set(old[i].Name, old[i].Value)
		}
		*as = fresh
	}
	rebuild(&m.Attrs)
	for _, p := range m.Programs() {
		for _, b := range p.Blocks {
			for _, v := range b.Vars() {
				rebuild(&v.Attrs)
			}
			for _, op := range b.Ops {
				rebuild(&op.Attrs)
			}
		}
	}
	return n
}

// TestPrintingIgnoresAttrInsertionOrder: every module of the corpus, and
// every rank's partitioned module, prints and hashes the same after each of its attribute lists is rebuilt in a random order, for
// five orders. An attribute list put out of order by hand, bypassing
// Set, does not verify.
func TestPrintingIgnoresAttrInsertionOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	shuffled := 0
	for _, c := range corpus.All(t) {
		mods := []*ir.Module{c.Module}
		if parts, err := passes.PartitionAll(context.Background(), c.Module, nil); err == nil {
			mods = append(mods, parts...)
		}
		for i, m := range mods {
			want := corpus.Take(m)
			for range 5 {
				cl := m.Clone()
				shuffled += shuffleAttrs(cl, rng)
				if !want.Unchanged(t, cl, c.Name+": rebuilding the attrs in another order") {
					break
				}
			}
			if ir.Verify(m) != nil {
				continue
			}
			cl := m.Clone()
			if op := firstOpWithAttrs(cl, 2); op != nil {
				op.Attrs[0], op.Attrs[1] = op.Attrs[1], op.Attrs[0]
				if err := ir.Verify(cl); err == nil || !strings.Contains(err.Error(), "attrs out of order") {
					t.Errorf("%s module %d: %s with its attrs out of order: verify says %v", c.Name, i, op, err)
				}
			}
		}
	}
	if shuffled < 1000 {
		t.Errorf("only %d attribute lists had two attrs or more to shuffle", shuffled)
	}
}

func firstOpWithAttrs(m *ir.Module, n int) *ir.Op {
	for _, p := range m.Programs() {
		for _, b := range p.Blocks {
			for _, op := range b.Ops {
				if len(op.Attrs) >= n {
					return op
				}
			}
		}
	}
	return nil
}
