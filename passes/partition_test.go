package passes_test

import (
	"bytes"
	"context"
	"runtime"
	"strconv"
	"testing"

	"github.com/distpass/distpass/internal/irgen"
	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/lower"
	"github.com/distpass/distpass/passes"
)

func printAll(ms []*ir.Module) [][]byte {
	out := make([][]byte, len(ms))
	for i, m := range ms {
		out[i] = ir.Print(m)
	}
	return out
}

// TestPartitionAllKeepsInputAndIsDeterministic: partition-all leaves the
// serial module byte-identical, gives the same bytes with GOMAXPROCS 1
// and 8, and the same as partitioning each rank alone.
func TestPartitionAllKeepsInputAndIsDeterministic(t *testing.T) {
	for _, m := range []*ir.Module{loadExample(t, "mlp_dp_mp.dpir"), irgen.MegatronMLP(200, 2, 4)} {
		before := ir.Print(m)
		reg := lower.DefaultRegistry()
		var runs [][][]byte
		for _, procs := range []int{1, 8} {
			old := runtime.GOMAXPROCS(procs)
			ms, err := passes.PartitionAll(context.Background(), m, reg)
			runtime.GOMAXPROCS(old)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(before, ir.Print(m)) {
				t.Fatal("PartitionAll changed the serial module")
			}
			runs = append(runs, printAll(ms))
		}
		for i := range runs[0] {
			if !bytes.Equal(runs[0][i], runs[1][i]) {
				t.Fatalf("rank %d differs between GOMAXPROCS 1 and 8", i)
			}
			c := m.Clone()
			if err := passes.Partition(c, reg, passes.Ranks(m)[i]); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(runs[0][i], ir.Print(c)) {
				t.Fatalf("rank %d: PartitionAll differs from Partition", i)
			}
			if err := ir.Verify(c); err != nil {
				t.Fatalf("rank %d does not verify: %v", i, err)
			}
		}
	}
}

func BenchmarkPartition(b *testing.B) {
	reg := lower.DefaultRegistry()
	for _, n := range []int{10000, 100000} {
		m := irgen.MegatronMLP(n, 2, 4)
		b.Run("ops="+strconv.Itoa(n)+"/clone", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				m.Clone()
			}
		})
		b.Run("ops="+strconv.Itoa(n)+"/partition-rank", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				c := m.Clone()
				if err := passes.Partition(c, reg, 3); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("ops="+strconv.Itoa(n)+"/partition-all-8", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := passes.PartitionAll(context.Background(), m, reg); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
