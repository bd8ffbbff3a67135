package gctune

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync/atomic"
)

// StartingHeap sets GOGC, after each collection, so that the next one
// comes when the heap reaches target bytes, until the live heap is half
// of target; then GOGC is back to 100 for good. It does nothing when the
// GOGC environment variable is set: the user's setting wins.
func StartingHeap(target uint64) {
	if os.Getenv("GOGC") != "" || target == 0 {
		return
	}
	startTarget.Store(target)
	live := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	gen := generation.Add(1)
	var arm func()
	adjust := func() bool {
		if generation.Load() != gen {
			return false // a later call took over
		}
		metrics.Read(live)
		p := Percent(live[0].Value.Uint64(), target)
		debug.SetGCPercent(p)
		return p != 100
	}
	arm = func() {
		s := new(sentinel)
		runtime.SetFinalizer(s, func(*sentinel) {
			if adjust() {
				arm()
			}
		})
	}
	adjust()
	arm()
}

// startTarget is the target of the StartingHeap in force, 0 for none.
var startTarget atomic.Uint64

// raiseStartingHeap moves the starting heap up to n when a StartingHeap
// is in force with a lower target, and starts it again at n when n is its
// target: once the live heap has passed half the target, GOGC is 100 for
// good, and a later piece of work that expects the same heap (the next
// stage of a benchmark, once the last one's heap is freed) would be
// collected at the pace the first one left.
func raiseStartingHeap(n uint64) {
	if t := startTarget.Load(); t != 0 && n >= t {
		StartingHeap(n)
	}
}

// generation counts the calls of StartingHeap: only the last one tunes.
var generation atomic.Int64

// sentinel is collected at every GC cycle; its finalizer re-tunes GOGC.
// It holds a pointer so that it is not a tiny allocation, which may never
// be finalized.
type sentinel struct{ _ *byte }

// Percent is the GOGC that puts the next collection's goal at target for
// a live heap of live bytes: 100 once live reaches half of target.
func Percent(live, target uint64) int {
	const floor = 4 << 20 // the runtime's minimum heap
	live = max(live, floor)
	if 2*live >= target {
		return 100
	}
	return int(100 * (target - live) / live)
}
