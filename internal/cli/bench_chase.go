package cli

import "math/rand/v2"

// chaseRing is memory laid out as one cycle through all its cache lines
// in random order, for the chase stage: each read depends on the one
// before, so the time of a step is the machine's latency for a random
// read in that much memory, caches, TLBs and page walks included, and
// nothing of distpass's code.
type chaseRing struct {
	lines []chaseLine
	last  uint32 // where the last chase ended, so that its reads count
}

// chaseLine is one 64-byte cache line: x86-64's and most arm64 cores'.
type chaseLine struct {
	next uint32
	_    [15]uint32
}

// newChaseRing returns a ring of about size bytes (two lines at least)
// linked in an order drawn from seed.
func newChaseRing(size uint64, seed int64) *chaseRing {
	n := max(size/64, 2)
	n = min(n, 1<<32-1) // indexes are uint32: 256 GB of lines
	// Sattolo's shuffle draws a permutation of a single cycle, so a chase
	// from any line visits every line before it comes back.
	order := make([]uint32, n)
	for i := range order {
		order[i] = uint32(i)
	}
	r := rand.New(rand.NewPCG(uint64(seed), 0x636861736521))
	for i := len(order) - 1; i > 0; i-- {
		j := r.IntN(i)
		order[i], order[j] = order[j], order[i]
	}
	c := &chaseRing{lines: make([]chaseLine, n)}
	for i, o := range order {
		c.lines[o].next = order[(i+1)%len(order)]
	}
	return c
}

// chase follows the ring for steps reads.
func (c *chaseRing) chase(steps int) {
	x := c.last
	for range steps {
		x = c.lines[x].next
	}
	c.last = x
}
