package gctune

import (
	"os"
	"runtime"
	"strings"
	"sync"
)

// PrepareHeap readies n bytes of heap, ahead of use, to be backed by
// transparent huge pages where the operating system offers them only on
// request (Linux's "madvise" mode, the usual default). It reports whether
// it did.
//
// Why: the Go runtime no longer asks for huge pages for its heap, so a
// process that builds a large module faults it in 4 KB at a time, and on a
// virtual machine a fault can cost microseconds. With 2 MB pages the same
// heap takes far fewer faults.
//
// How: a block of n bytes is allocated (fresh memory, not yet touched),
// marked for huge pages, and freed by a collection; the runtime keeps the
// range mapped and hands it out again for the allocations that follow,
// and the kernel backs each 2 MB of it with one page on first touch. It
// costs a collection (call it while the heap is small), no resident
// memory, and nothing when n is within what earlier calls prepared.
//
// It advises nothing where huge pages are off ("never"), when GODEBUG sets
// disablethp=1 (the runtime's own switch for the opposite advice), and on
// systems other than Linux.
func PrepareHeap(n uint64) bool {
	if n < minPrepare {
		return false // a small heap faults in quickly
	}
	// The block should not pass half the memory available: the kernel
	// refuses a mapping far beyond the machine's memory, and the runtime
	// dies of that.
	if avail := memAvailable(); avail > 0 {
		n = min(n, avail/2)
	}
	prep.Lock()
	defer prep.Unlock()
	if n <= prep.done || !hugePagesOnRequest() || disabledByGODEBUG(os.Getenv("GODEBUG")) {
		return false
	}
	if !adviseHuge(n) {
		return false
	}
	prep.done = n
	return true
}

// minPrepare is the least PrepareHeap does anything for.
const minPrepare = 32 << 20

var prep struct {
	sync.Mutex
	done uint64 // the largest n prepared so far
}

// adviseHuge allocates n bytes, advises huge pages for them and frees
// them.
func adviseHuge(n uint64) bool {
	if n != uint64(int(n)) {
		return false
	}
	b := make([]byte, int(n))
	ok := madviseHuge(b)
	runtime.KeepAlive(b)
	b = nil
	runtime.GC() // frees the block; its range stays mapped, advised
	return ok
}

// disabledByGODEBUG reports whether a GODEBUG value sets disablethp=1;
// as in the runtime, the last setting of a key wins.
func disabledByGODEBUG(v string) bool {
	off := false
	for kv := range strings.SplitSeq(v, ",") {
		if k, val, ok := strings.Cut(strings.TrimSpace(kv), "="); ok && k == "disablethp" {
			off = val == "1"
		}
	}
	return off
}
