package ir_test

import (
	"bytes"
	"errors"
	"runtime"
	"runtime/debug"
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

// The pieces' buffers are kept from one print to the next: with the
// collector off (so that the pool keeps them), a second print in pieces
// allocates its output and little more, where fresh buffers for the
// window of pieces in flight would take several times 1 MB.
func TestPrintPieceBuffersAreReused(t *testing.T) {
	if raceOn {
		t.Skip("the race detector drops pooled buffers at random")
	}
	m := irgen.Synthetic(10000)
	restore := ir.SetPrintPiecesForTest(8192, 2048, 2)
	defer restore()
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	// On one P: a buffer the printing goroutine puts back lands in its
	// P's private slot of the pool, which a worker on another P cannot
	// take, so that on several a print may allocate a buffer or two
	// afresh, as scheduling falls (it did, 1.9 MB, in a CI run). The two
	// workers still print the pieces and use the pool.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	text := ir.Print(m) // the first print fills the pool
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	again := ir.Print(m)
	runtime.ReadMemStats(&after)
	if !bytes.Equal(again, text) {
		t.Fatal("the second print differs from the first")
	}
	if extra := int64(after.TotalAlloc-before.TotalAlloc) - int64(len(text)); extra > 1<<20 {
		t.Errorf("the second print allocated %d bytes beyond its %d of text", extra, len(text))
	}
}
