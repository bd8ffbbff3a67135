package ir_test

import (
	"bytes"
	"errors"
	"io"
	"runtime"
	"testing"

	"github.com/distpass/distpass/internal/irgen"
	"github.com/distpass/distpass/ir"
)

// failAfter is a writer that fails once it has taken n bytes.
type failAfter struct {
	n   int
	buf bytes.Buffer
}

var errFull = errors.New("disk full")

func (w *failAfter) Write(b []byte) (int, error) {
	if w.buf.Len()+len(b) > w.n {
		return 0, errFull
	}
	return w.buf.Write(b)
}

// Printing a block in pieces on several workers gives the sequential
// printer's bytes, through Print and Fprint, for any piece size; a write
// error stops the output and is returned.
func TestPrintPiecesEqualSequential(t *testing.T) {
	mods := []*ir.Module{irgen.Synthetic(400)}
	for seed := range uint64(10) {
		mods = append(mods, irgen.Random(seed))
	}
	for i, m := range mods {
		restore := ir.SetPrintPiecesForTest(1<<30, 1, 1)
		want := ir.Print(m)
		restore()
		for _, size := range []int{1, 3, 64, 1000} {
			for _, workers := range []int{2, 3, 8} {
				restore := ir.SetPrintPiecesForTest(1, size, workers)
				got := ir.Print(m)
				var buf bytes.Buffer
				err := ir.Fprint(&buf, m)
				restore()
				if !bytes.Equal(got, want) {
					t.Fatalf("module %d, pieces of %d on %d workers: Print differs", i, size, workers)
				}
				if err != nil || !bytes.Equal(buf.Bytes(), want) {
					t.Fatalf("module %d, pieces of %d on %d workers: Fprint differs (err %v)", i, size, workers, err)
				}
			}
		}
	}
	restore := ir.SetPrintPiecesForTest(1, 2, 4)
	defer restore()
	w := &failAfter{n: 5000}
	if err := ir.Fprint(w, mods[0]); !errors.Is(err, errFull) {
		t.Fatalf("Fprint to a failing writer: %v, want %v", err, errFull)
	}
	if want := ir.Print(mods[0]); !bytes.HasPrefix(want, w.buf.Bytes()) {
		t.Fatal("Fprint wrote bytes that are not a prefix of the module's text")
	}
}

// Fprint prints a window of pieces at a time: beyond what printing
// allocates on one core, it holds the window's buffers, however large the
// module.
func TestFprintMemoryIsAWindow(t *testing.T) {
	if raceOn {
		t.Skip("the race detector's own allocations")
	}
	m := irgen.Synthetic(40000)
	allocs := func(workers int) int64 {
		restore := ir.SetPrintPiecesForTest(8192, 2048, workers)
		defer restore()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		if err := ir.Fprint(io.Discard, m); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		return int64(after.TotalAlloc - before.TotalAlloc)
	}
	one, two := allocs(1), allocs(2)
	// Four buffers of 1 MB, for pieces of 2048 statements.
	if extra := two - one; extra > 6<<20 {
		t.Errorf("Fprint on two cores allocated %d bytes more than on one (%d)", extra, one)
	}
}
