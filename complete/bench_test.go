package complete_test

import (
	"strconv"
	"testing"

	"github.com/distpass/distpass/complete"
	"github.com/distpass/distpass/models"
	"github.com/distpass/distpass/ops"
)

// BenchmarkComplete completes the synthetic GPT (dp×mp, 2×4) at 10^5
// and 10^6 ops with only its data vars and params annotated
// (step=complete), beside verify with the op table (step=verify) and a
// walk that resolves every op arg (step=walk) of the same module: the
// ratios are what completion costs against the passes every command
// already runs, and their growth from 10^5 to 10^6 whether it stays
// linear.
func BenchmarkComplete(b *testing.B) {
	for _, n := range []int{100000, 1000000} {
		m, err := models.SyntheticGPTMesh(n, 1, 2, 4)
		if err != nil {
			b.Fatal(err)
		}
		strip(m, nil)
		nops := m.Main.NumOps()
		b.Run("ops="+strconv.Itoa(n)+"/step=complete", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				b.StopTimer()
				c := m.Clone()
				b.StartTimer()
				if _, err := complete.Complete(c, complete.Options{}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(nops), "ns/op-completed")
		})
		b.Run("ops="+strconv.Itoa(n)+"/step=verify", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := ops.Verify(m, ops.Options{}); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("ops="+strconv.Itoa(n)+"/step=walk", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				found := 0
				for _, blk := range m.Main.Blocks {
					for _, op := range blk.Ops {
						for a := range op.InputNames {
							if m.Main.LookupVar(blk, a) != nil {
								found++
							}
						}
						for a := range op.OutputNames {
							if m.Main.LookupVar(blk, a) != nil {
								found++
							}
						}
					}
				}
				if found == 0 {
					b.Fatal("no arg resolved")
				}
			}
		})
		m = nil
	}
}
