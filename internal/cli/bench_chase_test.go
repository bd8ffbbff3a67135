package cli

import (
	"slices"
	"testing"
)

// A ring is one cycle through every line: a chase from any line reads
// each line once before it is back.
func TestChaseRingIsOneCycle(t *testing.T) {
	for _, size := range []uint64{0, 64, 3 * 64, 1000*64 + 17, 1 << 20} {
		c := newChaseRing(size, 1)
		n := len(c.lines)
		if want := max(int(size/64), 2); n != want {
			t.Fatalf("size %d: %d lines, want %d", size, n, want)
		}
		seen := make([]bool, n)
		x := uint32(0)
		for i := range n {
			if seen[x] {
				t.Fatalf("size %d: line %d read again after %d steps of %d", size, x, i, n)
			}
			seen[x] = true
			x = c.lines[x].next
		}
		if x != 0 {
			t.Errorf("size %d: after %d steps the chase is at line %d, not back at 0", size, n, x)
		}
		c.chase(n + 1)
		if c.last != c.lines[0].next {
			t.Errorf("size %d: chase of n+1 steps ended at %d, want %d", size, c.last, c.lines[0].next)
		}
	}
	// The order is the seed's: the same seed, the same ring.
	next := func(c *chaseRing) []uint32 {
		var out []uint32
		for _, l := range c.lines {
			out = append(out, l.next)
		}
		return out
	}
	a, b, other := newChaseRing(1<<16, 1), newChaseRing(1<<16, 1), newChaseRing(1<<16, 2)
	if !slices.Equal(next(a), next(b)) {
		t.Error("two rings of seed 1 differ")
	}
	if slices.Equal(next(a), next(other)) {
		t.Error("the rings of seeds 1 and 2 are the same")
	}
}

// The chase stage reads without allocating, over a ring as large as the
// module's heap, counted in its heap; it grows like any stage.
func TestBenchChase(t *testing.T) {
	rep := benchJSON(t, "bench", "-ops", "300,3000", "-stages", "chase,walk", "-json")
	if len(rep.Stages) != 4 {
		t.Fatalf("%d stages, want 4", len(rep.Stages))
	}
	for i, s := range rep.Stages {
		if s.Stage != "chase" {
			continue
		}
		mod := rep.Modules[i/2]
		if s.Allocs != 0 || s.WallNs <= 0 {
			t.Errorf("chase at %d ops: %d allocs, wall %d ns", s.RequestedOps, s.Allocs, s.WallNs)
		}
		if s.HeapBaseBytes < 2*mod.ModuleHeapBytes-64 {
			t.Errorf("chase at %d ops: heap base %d, want the module's %d and a ring as large", s.RequestedOps, s.HeapBaseBytes, mod.ModuleHeapBytes)
		}
	}
	var grew bool
	for _, g := range rep.Growth {
		grew = grew || g.Stage == "chase" && g.Ratio > 0
	}
	if !grew {
		t.Errorf("no growth for chase in %+v", rep.Growth)
	}
}
