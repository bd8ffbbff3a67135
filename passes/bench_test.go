package passes_test

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/distpass/distpass/internal/irgen"
	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/passes"
)

// BenchmarkPipeline runs a pipeline of 20 cheap passes. Without
// instruments it measures the pass manager's own cost, to compare with
// BenchmarkVerifyPass (one verify); with -verify-each, the cost of
// verifying after every pass.
func BenchmarkPipeline(b *testing.B) {
	r := testRegistry(b, noop("nop"))
	pl := r.MustParse(strings.TrimSuffix(strings.Repeat("nop,", 20), ","))
	for _, n := range []int{10000, 100000} {
		m := irgen.Synthetic(n)
		for _, ve := range []bool{false, true} {
			var insts []passes.Instrument
			if ve {
				insts = append(insts, passes.VerifyEach{})
			}
			pm := &passes.Manager{Instruments: insts}
			b.Run("ops="+strconv.Itoa(n)+"/verify-each="+strconv.FormatBool(ve), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if err := pm.Run(context.Background(), pl, m); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/20, "ns/pass")
			})
		}
	}
}

// BenchmarkVerifyPass is one verify pass through the manager: the unit the
// manager's overhead is measured against.
func BenchmarkVerifyPass(b *testing.B) {
	r := testRegistry(b)
	pl := r.MustParse("verify")
	for _, n := range []int{10000, 100000} {
		m := irgen.Synthetic(n)
		b.Run("ops="+strconv.Itoa(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := (&passes.Manager{}).Run(context.Background(), pl, m); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkChangeDetection compares the two ways to tell whether a pass
// changed the module: hashing it (what print-changed does) and printing it.
func BenchmarkChangeDetection(b *testing.B) {
	for _, n := range []int{10000, 100000} {
		// A clone, laid out as passes see it: partitioning clones first.
		m := irgen.Synthetic(n).Clone()
		b.Run("ops="+strconv.Itoa(n)+"/hash", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				ir.Hash(m)
			}
		})
		b.Run("ops="+strconv.Itoa(n)+"/print", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				ir.Print(m)
			}
		})
	}
}

// BenchmarkPreservesAllPasses runs each built-in PreservesAll pass on its
// own, the cost to set against two ir.Hash calls (BenchmarkChangeDetection)
// when deciding where VerifyEach's preservation check belongs.
func BenchmarkPreservesAllPasses(b *testing.B) {
	r := passes.DefaultRegistry()
	for _, n := range []int{10000, 100000} {
		m := irgen.Synthetic(n).Clone()
		for _, p := range r.Passes() {
			if !p.PreservesAll {
				continue
			}
			pl := r.MustParse(p.Name)
			b.Run("ops="+strconv.Itoa(n)+"/"+p.Name, func(b *testing.B) {
				for b.Loop() {
					if err := (&passes.Manager{}).Run(context.Background(), pl, m); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
