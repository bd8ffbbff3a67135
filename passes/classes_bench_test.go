package passes_test

import (
	"context"
	"testing"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/models"
	"github.com/distpass/distpass/passes"
)

// BenchmarkPartitionAll64 compares, on a 4-layer GPT over an 8×8 dp×mp
// mesh: one rank (clone + lower), every rank lowered plainly, and every
// rank by classes (without building the 63 other modules).
func BenchmarkPartitionAll64(b *testing.B) {
	cfg := models.GPTConfig{Layers: 4, Hidden: 64, Heads: 8, Vocab: 128, Seq: 8, Batch: 8, DType: ir.F32}
	m, err := models.GPTTraining(cfg, "dp,mp", models.Mesh([]int{8, 8}, []string{"dp", "mp"}), "adam")
	if err != nil {
		b.Fatal(err)
	}
	b.Run("one-rank", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := passes.Partition(m.Clone(), nil, 5); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("plain-64", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := passes.PartitionAll(context.Background(), m, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("classes-64", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := passes.PartitionClasses(context.Background(), m, nil, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
}
