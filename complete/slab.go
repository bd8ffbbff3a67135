package complete

import "github.com/distpass/distpass/ir"

// slab hands out the dists completion writes into the module, cut from
// larger allocations: a large module gets millions of small ones.
type slab struct {
	dists   []ir.TensorDist
	opDists []ir.OpDist
	args    []ir.ArgDist
	ints    []int
}

const slabChunk = 4096

func (s *slab) dist() *ir.TensorDist { return one(&s.dists) }

func (s *slab) opDist() *ir.OpDist { return one(&s.opDists) }

// one returns a zero T cut from *xs, refilled when empty.
func one[T any](xs *[]T) *T {
	if len(*xs) == 0 {
		*xs = make([]T, slabChunk)
	}
	x := &(*xs)[0]
	*xs = (*xs)[1:]
	return x
}

// argDists returns an empty slice of capacity n.
func (s *slab) argDists(n int) []ir.ArgDist {
	if n > len(s.args) {
		s.args = make([]ir.ArgDist, max(n, slabChunk))
	}
	out := s.args[:0:n]
	s.args = s.args[n:]
	return out
}

// clone copies m (nil stays nil); the copy's capacity is exact, so that
// appending to it never writes into the next.
func (s *slab) clone(m []int) []int {
	if m == nil {
		return nil
	}
	if len(m) > len(s.ints) {
		s.ints = make([]int, max(len(m), slabChunk))
	}
	out := append(s.ints[:0:len(m)], m...)
	s.ints = s.ints[len(m):]
	return out
}
