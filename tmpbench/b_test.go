package tmpbench

import (
	"testing"

	"github.com/distpass/distpass/models"
	"github.com/distpass/distpass/passes"
	"github.com/distpass/distpass/registry"
)

func BenchmarkPart(b *testing.B) {
	m, err := models.SyntheticGPTMesh(100000, 1, 8, 8)
	if err != nil {
		b.Fatal(err)
	}
	reg := registry.DefaultRegistry()
	b.Run("clone", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			m.Clone()
		}
	})
	b.Run("partition", func(b *testing.B) {
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
