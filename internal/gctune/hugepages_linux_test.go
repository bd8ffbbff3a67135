package gctune

import (
	"bufio"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

// Memory the heap hands out after PrepareHeap is advised for huge pages;
// memory it handed out before is not.
func TestPrepareHeapAdvisesLaterAllocations(t *testing.T) {
	if !hugePagesOnRequest() {
		t.Skip("transparent huge pages are off on this machine")
	}
	if disabledByGODEBUG(os.Getenv("GODEBUG")) {
		t.Skip("GODEBUG sets disablethp=1")
	}
	prep.Lock()
	again := prep.done != 0
	prep.Unlock()
	if again {
		t.Skip("an earlier run in this process prepared the heap: the advice stays")
	}

	before := make([]byte, 64<<20)
	if advised(t, before) {
		t.Fatal("a block allocated before PrepareHeap is already advised for huge pages; the test cannot tell")
	}
	if !PrepareHeap(512 << 20) {
		t.Fatal("PrepareHeap(512 MB) = false on a machine with huge pages on request")
	}
	// The page allocator hands out the lowest free run that fits: a block
	// no larger than one another test of this process freed (gctune_test
	// frees 64 MB) may land there, before the prepared range. Half the
	// prepared range fits only in it.
	prep.Lock()
	half := int(prep.done / 2)
	prep.Unlock()
	after := make([]byte, half)
	if !advised(t, after) {
		t.Error("a block allocated after PrepareHeap is not advised for huge pages")
	}
	if PrepareHeap(256 << 20) {
		t.Error("PrepareHeap(256 MB) after 512 MB = true, want false: it was prepared")
	}
	if advised(t, before) {
		t.Error("PrepareHeap advised a block that was in use")
	}
}

// advised reports whether the middle of b lies in a mapping with the
// huge-page advice ("hg" in /proc/self/smaps).
func advised(t *testing.T, b []byte) bool {
	t.Helper()
	addr := uint64(uintptr(unsafe.Pointer(&b[len(b)/2])))
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skipf("no smaps: %v", err)
	}
	defer f.Close()
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if rng, _, ok := strings.Cut(line, " "); ok && strings.Contains(rng, "-") && !strings.HasSuffix(rng, ":") {
			lo, hi, _ := strings.Cut(rng, "-")
			l, err1 := strconv.ParseUint(lo, 16, 64)
			h, err2 := strconv.ParseUint(hi, 16, 64)
			in = err1 == nil && err2 == nil && l <= addr && addr < h
			continue
		}
		if in {
			if flags, ok := strings.CutPrefix(line, "VmFlags:"); ok {
				return slices.Contains(strings.Fields(flags), "hg")
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	t.Fatalf("no mapping in /proc/self/smaps holds %#x", addr)
	return false
}
