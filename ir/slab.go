package ir

// slab hands out elements and capped sub-slices of shared arrays. A capped
// sub-slice cannot be appended into its neighbour: append reallocates.
type slab[T any] struct{ buf []T }

const slabSize = 256

func (s *slab[T]) one() *T {
	if len(s.buf) == 0 {
		s.buf = make([]T, slabSize)
	}
	x := &s.buf[0]
	s.buf = s.buf[1:]
	return x
}

func (s *slab[T]) copyOf(xs []T) []T {
	n := len(xs)
	if n > len(s.buf) {
		s.buf = make([]T, max(4*slabSize, n))
	}
	out := s.buf[:n:n]
	copy(out, xs)
	s.buf = s.buf[n:]
	return out
}
