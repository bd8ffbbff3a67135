package passes_test

import (
	"bytes"
	"runtime"
	"strconv"
	"testing"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/models"
	"github.com/distpass/distpass/passes"
	"github.com/distpass/distpass/registry"
)

// PartitionSteps, run in order, does what Partition does: the same
// bytes for every rank of every golden case and example model, and the
// same error where Partition fails.
func TestPartitionStepsArePartition(t *testing.T) {
	compared := 0
	for name, m := range classCases(t) {
		for _, r := range passes.Ranks(m) {
			want := m.Clone()
			werr := passes.Partition(want, nil, r)
			got := m.Clone()
			var gerr error
			for _, s := range passes.PartitionSteps(got, nil, r) {
				if gerr = s.Run(); gerr != nil {
					break
				}
			}
			if (werr == nil) != (gerr == nil) {
				t.Fatalf("%s rank %d: Partition: %v; the steps: %v", name, r, werr, gerr)
			}
			if werr != nil {
				continue
			}
			if !bytes.Equal(ir.Print(got), ir.Print(want)) {
				t.Fatalf("%s rank %d: the steps differ from Partition (-steps +Partition):\n%s", name, r, ir.Diff(got, want))
			}
			compared++
		}
	}
	if compared < 40 {
		t.Errorf("only %d ranks compared", compared)
	}
}

// keepRegistry has the containers of reg, each impl replaced by one that
// keeps the op as it is: lowering with it costs what the lowering passes
// cost without any impl's work.
func keepRegistry(reg *registry.Registry) *registry.Registry {
	keep := func(ctx *registry.Lowering, op *ir.Op) error { ctx.Keep(op); return nil }
	out := registry.NewRegistry()
	for _, c := range reg.Containers() {
		for range c.Impls {
			out.Register(c.Type, &registry.Impl{Name: "keep", RankSafe: true, Forward: keep, Backward: keep})
		}
	}
	return out
}

// BenchmarkPartitionSteps times each of Partition's steps (one at a
// time, on one core but for the index's and partition-vars' own
// goroutines) on the synthetic GPT read back from its text, after a
// collection, as bench's stages run; clone is the module's deep clone,
// for scale, and
// lower/keep-impls the three lowering phases with impls that keep every
// op: the lowering passes' own cost, without the impls' work. With
// -benchtime 10x, sizes 10^4 and 10^5 take about a minute.
func BenchmarkPartitionSteps(b *testing.B) {
	reg := registry.DefaultRegistry()
	for _, n := range []int{10000, 100000} {
		gen, err := models.SyntheticGPTMesh(n, 1, 2, 4)
		if err != nil {
			b.Fatal(err)
		}
		m, err := ir.Parse("synthetic.dpir", ir.Print(gen))
		if err != nil {
			b.Fatal(err)
		}
		prefix := "ops=" + strconv.Itoa(n) + "/"
		b.Run(prefix+"clone", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				b.StopTimer()
				runtime.GC()
				b.StartTimer()
				m.Clone()
			}
		})
		names := []string{}
		for _, s := range passes.PartitionSteps(m.Clone(), reg, 0) {
			names = append(names, s.Name)
		}
		for k, name := range names {
			b.Run(prefix+name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					b.StopTimer()
					steps := passes.PartitionSteps(m.Clone(), reg, 0)
					for _, s := range steps[:k] {
						if err := s.Run(); err != nil {
							b.Fatal(err)
						}
					}
					runtime.GC()
					b.StartTimer()
					if err := steps[k].Run(); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
		b.Run(prefix+"lower/keep-impls", func(b *testing.B) {
			keep := keepRegistry(reg)
			for b.Loop() {
				b.StopTimer()
				steps := passes.PartitionSteps(m.Clone(), keep, 0)
				lo := 0
				for steps[lo].Name != "lower-forward" {
					if err := steps[lo].Run(); err != nil {
						b.Fatal(err)
					}
					lo++
				}
				runtime.GC()
				b.StartTimer()
				for _, s := range steps[lo : lo+3] {
					if err := s.Run(); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
