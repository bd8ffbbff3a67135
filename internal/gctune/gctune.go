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
