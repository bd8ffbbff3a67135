package gctune

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

func TestPercent(t *testing.T) {
	for _, c := range []struct {
		live, target uint64
		want         int
	}{
		{0, 512 << 20, 12700},       // below the runtime's 4 MB floor
		{64 << 20, 512 << 20, 700},  // next goal 64 MB × 8 = 512 MB
		{200 << 20, 512 << 20, 156}, // 200 MB × 2.56 = 512 MB
		{256 << 20, 512 << 20, 100}, // half the target: back to normal
		{1 << 30, 512 << 20, 100},   // past it
		{100 << 20, 100 << 20, 100}, // a target the heap already has
	} {
		if got := Percent(c.live, c.target); got != c.want {
			t.Errorf("Percent(%d MB, %d MB) = %d, want %d", c.live>>20, c.target>>20, got, c.want)
		}
	}
}

// With a target, GOGC is raised at once and follows the live heap after
// each collection, back to 100 when the heap passes half the target.
func TestStartingHeap(t *testing.T) {
	t.Setenv("GOGC", "")
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	StartingHeap(1 << 40)
	if p := gogc(); p <= 100 {
		t.Fatalf("GOGC after StartingHeap(1 TB) = %d, want more than 100", p)
	}
	// A small target: a collection's finalizer puts GOGC back.
	StartingHeap(1 << 20)
	collectUntilGOGC100(t, "a 1 MB target")
}

// collectUntilGOGC100 collects until a StartingHeap's finalizer has put
// GOGC back to 100 (finalizers run after the collection, so it waits a
// little), failing after 10 s.
func collectUntilGOGC100(t *testing.T, with string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for gogc() != 100 {
		if time.Now().After(deadline) {
			t.Fatalf("GOGC after collections with %s = %d, want 100", with, gogc())
		}
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
}

func gogc() int {
	p := debug.SetGCPercent(-1)
	debug.SetGCPercent(p)
	return p
}

func TestDisabledByGODEBUG(t *testing.T) {
	for v, want := range map[string]bool{
		"":                          false,
		"disablethp=1":              true,
		"disablethp=0":              false,
		"gctrace=1,disablethp=1":    true,
		"disablethp=1,disablethp=0": false,
		" disablethp=1 ":            true,
		"xdisablethp=1":             false,
	} {
		if got := disabledByGODEBUG(v); got != want {
			t.Errorf("disabledByGODEBUG(%q) = %v, want %v", v, got, want)
		}
	}
}
