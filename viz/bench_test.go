package viz_test

import (
	"strconv"
	"testing"

	"github.com/distpass/distpass/internal/irgen"
	"github.com/distpass/distpass/viz"
)

func BenchmarkDOT(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		p := irgen.Synthetic(n).Main
		b.Run("ops="+strconv.Itoa(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				viz.DOT(p, viz.Options{})
			}
		})
	}
}
