package registry

import (
	"testing"

	"github.com/distpass/distpass/ir"
)

// indexOps finds ops by id in both of its forms: dense ids in a slice,
// scattered ones in a map; an id two ops share is found as nil.
func TestOpIndex(t *testing.T) {
	for _, c := range []struct {
		name      string
		ids       []int64
		moduleOps int // the ops of the whole module, whose ids main's share
		dense     bool
	}{
		{"dense", []int64{1, 2, 3, 3, 7}, 5, true},
		{"sparse", []int64{1, 2, 3, 3, 1 << 40}, 5, false},
		// Main's ids spread over twice its ops and more, as when
		// startup has as many ops: dense against the module's count.
		{"dense in the module", []int64{1, 2, 3, 3, 2000}, 1000, true},
		{"sparse in the module", []int64{1, 2, 3, 3, 4000}, 1000, false},
	} {
		p := &ir.Program{Blocks: []*ir.Block{{}, {}}}
		var ops []*ir.Op
		for i, id := range c.ids {
			op := &ir.Op{ID: id, Type: "relu"}
			ops = append(ops, op)
			b := p.Blocks[i%2]
			b.Ops = append(b.Ops, op)
		}
		x := indexOps(p, c.moduleOps)
		if (x.dense != nil) != c.dense {
			t.Errorf("%s: dense = %v, want %v", c.name, x.dense != nil, c.dense)
		}
		for _, q := range []struct {
			id    int64
			op    *ir.Op
			found bool
		}{
			{1, ops[0], true}, {2, ops[1], true}, {3, nil, true}, {c.ids[4], ops[4], true},
			{4, nil, false}, {0, nil, false}, {-1, nil, false}, {1 << 41, nil, false},
		} {
			op, found := x.get(q.id)
			if op != q.op || found != q.found {
				t.Errorf("%s: get(%d) = %v, %v; want %v, %v", c.name, q.id, op, found, q.op, q.found)
			}
		}
	}
}
