package passes_test

import (
	"runtime"
	"strconv"
	"testing"

	"github.com/distpass/distpass/models"
	"github.com/distpass/distpass/ops"
	"github.com/distpass/distpass/passes"
)

// BenchmarkInsertReshards runs insert-reshards on the synthetic GPT
// (2×4 mesh) with one reshard per layer (models.SyntheticGPTReshards),
// each run on a clone made, and the one before collected, outside the
// timer (step=insert-reshards), beside verify with the op table of the
// same module (step=verify), the pass every command already runs: their
// ratio is what the pass costs.
// The million-op module is left out under -short.
func BenchmarkInsertReshards(b *testing.B) {
	for _, n := range []int{10000, 100000, 1000000} {
		prefix := "ops=" + strconv.Itoa(n) + "/"
		if n > 100000 && testing.Short() {
			b.Run(prefix+"step=insert-reshards", func(b *testing.B) { b.Skip("-short") })
			continue
		}
		m, err := models.SyntheticGPTReshards(n, 1)
		if err != nil {
			b.Fatal(err)
		}
		want := passes.InsertReshards(m.Clone())
		if want == 0 {
			b.Fatal("no reshard inserted")
		}
		nops := m.Main.NumOps()
		b.Run(prefix+"step=insert-reshards", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				b.StopTimer()
				c := m.Clone()
				runtime.GC() // the last clone's collection is not the pass's
				b.StartTimer()
				if got := passes.InsertReshards(c); got != want {
					b.Fatalf("%d reshards, want %d", got, want)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(nops), "ns/op-visited")
		})
		b.Run(prefix+"step=verify", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := ops.Verify(m, ops.Options{}); err != nil {
					b.Fatal(err)
				}
			}
		})
		m = nil
	}
}
