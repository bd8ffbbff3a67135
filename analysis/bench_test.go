package analysis_test

import (
	"strconv"
	"testing"

	"github.com/distpass/distpass/analysis"
	"github.com/distpass/distpass/internal/irgen"
)

// BenchmarkAnalyses times each analysis alone on synthetic training
// programs: the cache holds what it requires (Index), and each iteration
// drops and recomputes only the analysis itself; "index" times Index.
// The module is a clone, as the partition pipeline's modules are: Clone
// lays out a block's vars and ops in arrays, where the builder scatters
// them, and the analyses are bound by memory access. ns/irop is the time
// per op of main and startup.
func BenchmarkAnalyses(b *testing.B) {
	as := []*analysis.Analyzer{analysis.Index, analysis.DefUse, analysis.Roles, analysis.GradMaps,
		analysis.Annotations, analysis.LocalShapes(3)}
	for _, n := range []int{10000, 100000} {
		m := irgen.Synthetic(n).Clone()
		nops := m.Main.NumOps() + m.Startup.NumOps()
		for _, a := range as {
			b.Run(a.Name+"/ops="+strconv.Itoa(n), func(b *testing.B) {
				c := analysis.NewCache(m)
				if _, err := c.Get(a); err != nil {
					b.Fatal(err)
				}
				b.ReportAllocs()
				for b.Loop() {
					c.Invalidate(a.Requires...)
					if _, err := c.Get(a); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(nops), "ns/irop")
			})
		}
	}
}
