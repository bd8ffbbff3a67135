package proof_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/distpass/distpass/internal/irgen"
	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/models"
	"github.com/distpass/distpass/passes"
	"github.com/distpass/distpass/proof"
)

// BenchmarkProof proves one rank of a Megatron MLP of 10^5 and 10^6 ops
// on a 2×4 mesh, beside ir.Verify of the same rank's program (the issue's
// bound: the proof within 2× verify).
func BenchmarkProof(b *testing.B) {
	for _, n := range []int{100000, 1000000} {
		m := irgen.MegatronMLP(n, 2, 4)
		r := m.Clone()
		if err := passes.Partition(r, nil, 3); err != nil {
			b.Fatal(err)
		}
		b.Run("ops="+strconv.Itoa(n)+"/verify-rank", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := ir.Verify(r); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("ops="+strconv.Itoa(n)+"/prove-rank", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := proof.Check(m, []int{3}, []*ir.Module{r}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkProofAll64 proves the 64 ranks of BenchmarkPartitionAll64's
// GPT (4 layers, 8×8 dp×mp) beside one of them.
func BenchmarkProofAll64(b *testing.B) {
	cfg := models.GPTConfig{Layers: 4, Hidden: 64, Heads: 8, Vocab: 128, Seq: 8, Batch: 8, DType: ir.F32}
	m, err := models.GPTTraining(cfg, "dp,mp", models.Mesh([]int{8, 8}, []string{"dp", "mp"}), "adam")
	if err != nil {
		b.Fatal(err)
	}
	ranks, err := passes.PartitionAll(context.Background(), m, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("one-rank", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := proof.Check(m, []int{5}, ranks[5:6]); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("all-64", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := proof.Check(m, passes.Ranks(m), ranks); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkProofGPT32 proves the 8 ranks of a 32-layer GPT trained
// dp,mp,sp on 2×4 (the sequence-parallel reshards included).
func BenchmarkProofGPT32(b *testing.B) {
	cfg := models.TinyGPT()
	cfg.Layers = 32
	m, err := models.GPTTraining(cfg, "dp,mp,sp", models.Mesh([]int{2, 4}, []string{"dp", "mp"}), "sgd")
	if err != nil {
		b.Fatal(err)
	}
	if err := (&passes.Manager{}).Run(context.Background(), passes.DefaultRegistry().MustParse("complete,insert-reshards"), m); err != nil {
		b.Fatal(err)
	}
	ranks, err := passes.PartitionAll(context.Background(), m, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		res, err := proof.Check(m, passes.Ranks(m), ranks)
		if err != nil || !res.Proven() {
			b.Fatalf("%v %v", err, res.Findings)
		}
	}
}
