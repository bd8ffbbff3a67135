package ir

// OpIndex finds the ops of a program by id, each with a value of the
// indexer's choosing (the verifier keeps a few bits, the analysis index
// an op number, the lowering the op). Ids are looked up in a slice when
// they are dense with respect to the module's op count, as FreshOpID
// hands them out, and in a map otherwise. An id that two ops share is
// ambiguous: the first op's value is kept, and Get says that more have it.
type OpIndex[T comparable] struct {
	dense  []T
	sparse map[int64]T
	shared map[int64]bool // the ids of more than one op
}

// IndexOps indexes the ops of p, a program of m, by id, in block order:
// the op at position pos of block bi under value(op, bi, pos), which must
// not be T's zero value (it means "no op"). Nil ops and ids below 1, which
// Verify refuses, are left out.
func IndexOps[T comparable](m *Module, p *Program, value func(op *Op, bi, pos int) T) *OpIndex[T] {
	// Ids are handed out across the module's programs, so it is against
	// the module's op count that they are dense: main's ids alone leave
	// out those of startup, often as many.
	moduleOps, maxID := 0, int64(0)
	for _, q := range m.Programs() {
		moduleOps += q.NumOps()
	}
	for _, b := range p.Blocks {
		for k := 0; b != nil && k < len(b.Ops); k++ {
			if op := b.Ops[k]; op != nil {
				maxID = max(maxID, op.ID)
			}
		}
	}
	x := &OpIndex[T]{}
	if maxID <= 2*int64(moduleOps)+1024 {
		x.dense = make([]T, maxID+1)
	} else {
		x.sparse = make(map[int64]T, p.NumOps())
	}
	var zero T
	for bi, b := range p.Blocks {
		if b == nil {
			continue
		}
		for pos, op := range b.Ops {
			if op == nil || op.ID < 1 {
				continue
			}
			if x.dense != nil {
				if x.dense[op.ID] == zero {
					x.dense[op.ID] = value(op, bi, pos)
					continue
				}
			} else if _, ok := x.sparse[op.ID]; !ok {
				x.sparse[op.ID] = value(op, bi, pos)
				continue
			}
			if x.shared == nil {
				x.shared = map[int64]bool{}
			}
			x.shared[op.ID] = true
		}
	}
	return x
}

// Get returns the value of the first op with id, and how many ops have
// it: 0, 1, or 2 for two or more.
func (x *OpIndex[T]) Get(id int64) (T, int) {
	var v, zero T
	if x.dense != nil {
		if id >= 1 && id < int64(len(x.dense)) {
			v = x.dense[id]
		}
	} else {
		v = x.sparse[id]
	}
	switch {
	case v == zero:
		return v, 0
	case x.shared != nil && x.shared[id]:
		return v, 2
	}
	return v, 1
}
