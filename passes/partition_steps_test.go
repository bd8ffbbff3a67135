package passes_test

import (
	"bytes"
	"context"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/lower"
	"github.com/distpass/distpass/models"
	"github.com/distpass/distpass/passes"
)

// keepRegistry has the containers of reg, each impl replaced by one that
// keeps the op as it is: lowering with it costs what the lowering passes
// cost without any impl's work.
func keepRegistry(reg *lower.Registry) *lower.Registry {
	keep := func(ctx *lower.Lowering, op *ir.Op) error { ctx.Keep(op); return nil }
	out := lower.NewRegistry()
	for _, c := range reg.Containers() {
		for range c.Impls {
			out.Register(c.Type, &lower.Impl{Name: "keep", Forward: keep, Backward: keep})
		}
	}
	return out
}

// BenchmarkPartitionSteps times the partition pipeline of rank 0 on the
// synthetic GPT read back from its text, after a collection, with each
// step's share reported as a metric (STEP-ns/op) by an instrument; clone
// is the module's deep clone, for scale, and keep-impls the pipeline with
// impls that keep every op: the lowering passes' own cost, without the
// impls' work.
func BenchmarkPartitionSteps(b *testing.B) {
	reg := lower.DefaultRegistry()
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
		for _, impls := range []struct {
			name string
			reg  *lower.Registry
		}{{"partition", reg}, {"keep-impls", keepRegistry(reg)}} {
			b.Run(prefix+impls.name, func(b *testing.B) {
				b.ReportAllocs()
				pr, err := passes.NewRegistry(passes.PartitionPasses(impls.reg), nil)
				if err != nil {
					b.Fatal(err)
				}
				pl, err := pr.Parse("partition{rank=0}")
				if err != nil {
					b.Fatal(err)
				}
				steps := &stepTimes{}
				mgr := &passes.Manager{Instruments: []passes.Instrument{steps}}
				for b.Loop() {
					b.StopTimer()
					c := m.Clone()
					runtime.GC()
					b.StartTimer()
					if err := mgr.Run(context.Background(), pl, c); err != nil {
						b.Fatal(err)
					}
				}
				for _, name := range passes.PartitionStepNames() {
					b.ReportMetric(float64(steps.total[name].Nanoseconds())/float64(b.N), name+"-ns/op")
				}
			})
		}
	}
}

// stepTimes sums the time of each nested step by pass name.
type stepTimes struct {
	passes.NopInstrument
	start time.Time
	total map[string]time.Duration
}

func (s *stepTimes) BeforePass(*passes.Execution, *ir.Module) error {
	s.start = time.Now()
	return nil
}

func (s *stepTimes) AfterPass(e *passes.Execution, _ *ir.Module, _ error) error {
	if s.total == nil {
		s.total = map[string]time.Duration{}
	}
	if e.Depth() > 0 {
		s.total[e.Step.Pass.Name] += time.Since(s.start)
	}
	return nil
}

// Every step of partition leaves a module that verifies, and the
// checking steps change nothing: -verify-each holds inside partition on
// every rank of every golden case and example model, and the result is
// Partition's.
func TestPartitionStepsVerifyEach(t *testing.T) {
	checked := 0
	for name, m := range classCases(t) {
		for _, r := range passes.Ranks(m) {
			want := m.Clone()
			werr := passes.Partition(want, nil, r)
			got := m.Clone()
			rpl := passes.DefaultRegistry().MustParse("partition{rank=" + strconv.Itoa(r) + "}")
			gerr := (&passes.Manager{Instruments: []passes.Instrument{passes.VerifyEach{}}}).Run(context.Background(), rpl, got)
			if werr != nil {
				if gerr == nil {
					t.Fatalf("%s rank %d: Partition fails (%v), the pipeline with -verify-each does not", name, r, werr)
				}
				continue
			}
			if gerr != nil {
				t.Fatalf("%s rank %d: %v", name, r, gerr)
			}
			if !bytes.Equal(ir.Print(got), ir.Print(want)) {
				t.Fatalf("%s rank %d: the pipeline differs from Partition", name, r)
			}
			checked++
		}
	}
	if checked < 40 {
		t.Errorf("only %d ranks checked", checked)
	}
}
