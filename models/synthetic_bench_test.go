package models_test

import (
	"strconv"
	"testing"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/lower"
	"github.com/distpass/distpass/models"
	"github.com/distpass/distpass/passes"
)

// BenchmarkSyntheticGPTPartition sets the partition of one rank of the
// synthetic GPT (2×4 mesh), read back from its text as a command reads a
// file, beside a deep clone of it, the floor it is held to; the clone
// each partition works on is made outside the timer. cmd/distpass-bench
// times the two in pairs (PartitionOverClone). The million-op module is
// left out under -short.
func BenchmarkSyntheticGPTPartition(b *testing.B) {
	reg := lower.DefaultRegistry()
	for _, n := range []int{100000, 1000000} {
		prefix := "ops=" + strconv.Itoa(n) + "/"
		if n > 100000 && testing.Short() {
			b.Run(prefix+"clone", func(b *testing.B) { b.Skip("-short") })
			continue
		}
		gen, err := models.SyntheticGPT(n, 1)
		if err != nil {
			b.Fatal(err)
		}
		m, err := ir.Parse("synthetic.dpir", ir.Print(gen))
		if err != nil {
			b.Fatal(err)
		}
		b.Run(prefix+"clone", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				m.Clone()
			}
		})
		b.Run(prefix+"partition-rank", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				b.StopTimer()
				c := m.Clone()
				b.StartTimer()
				if err := passes.Partition(c, reg, 0); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
