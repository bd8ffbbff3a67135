package ir

import "testing"

// IndexOps finds ops by id in both of its forms: dense ids in a slice,
// scattered ones in a map, dense or not against the module's op count;
// an id two ops share is found with a count of 2; nil ops and ids below 1
// are left out.
func TestIndexOps(t *testing.T) {
	for _, c := range []struct {
		name       string
		ids        []int64
		startupOps int // ops of startup, whose ids main's do not share
		dense      bool
	}{
		{"dense", []int64{1, 2, 3, 3, 7}, 0, true},
		{"sparse", []int64{1, 2, 3, 3, 1 << 40}, 0, false},
		// Main's ids spread over twice its ops and more, as when
		// startup has as many ops: dense against the module's count.
		{"dense in the module", []int64{1, 2, 3, 3, 2000}, 1000, true},
		{"sparse in the module", []int64{1, 2, 3, 3, 4000}, 1000, false},
	} {
		m := &Module{Main: &Program{Blocks: []*Block{{}, nil, {}}}, Startup: NewProgram("startup")}
		m.Startup.Global().Ops = make([]*Op, c.startupOps)
		var ops []*Op
		for i, id := range c.ids {
			op := &Op{ID: id, Type: "relu"}
			ops = append(ops, op)
			b := m.Main.Blocks[2*(i%2)]
			b.Ops = append(b.Ops, op, nil, &Op{ID: -int64(i)})
		}
		x := IndexOps(m, m.Main, func(op *Op, bi, pos int) *Op { return op })
		if (x.dense != nil) != c.dense {
			t.Errorf("%s: dense = %v, want %v", c.name, x.dense != nil, c.dense)
		}
		for _, q := range []struct {
			id int64
			op *Op
			n  int
		}{
			{1, ops[0], 1}, {2, ops[1], 1}, {3, ops[2], 2}, {c.ids[4], ops[4], 1},
			{4, nil, 0}, {0, nil, 0}, {-1, nil, 0}, {1 << 41, nil, 0},
		} {
			if op, n := x.Get(q.id); op != q.op || n != q.n {
				t.Errorf("%s: Get(%d) = %v, %d; want %v, %d", c.name, q.id, op, n, q.op, q.n)
			}
		}
	}
}
