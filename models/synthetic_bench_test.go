package models_test

import (
	"strconv"
	"testing"

	"github.com/distpass/distpass/models"
	"github.com/distpass/distpass/passes"
	"github.com/distpass/distpass/registry"
)

// BenchmarkSyntheticGPTPartition sets the partition of one rank of the
// GPT-shaped module distpass bench uses (8×8 mesh) beside a deep clone
// of it, the floor it is held to; the clone each partition works on is
// made outside the timer.
func BenchmarkSyntheticGPTPartition(b *testing.B) {
	reg := registry.DefaultRegistry()
	for _, n := range []int{10000, 100000} {
		m, err := models.SyntheticGPTMesh(n, 1, 8, 8)
		if err != nil {
			b.Fatal(err)
		}
		b.Run("ops="+strconv.Itoa(n)+"/clone", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				m.Clone()
			}
		})
		b.Run("ops="+strconv.Itoa(n)+"/partition-rank", func(b *testing.B) {
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
