package ir_test

import (
	"strconv"
	"testing"

	"github.com/distpass/distpass/internal/irgen"
	"github.com/distpass/distpass/ir"
)

var benchSizes = []int{1000, 10000, 100000}

func BenchmarkParse(b *testing.B) {
	for _, n := range benchSizes {
		text := ir.Print(irgen.Synthetic(n))
		b.Run("ops="+strconv.Itoa(n), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				if _, err := ir.Parse("bench.dpir", text); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkPrint(b *testing.B) {
	for _, n := range benchSizes {
		m := irgen.Synthetic(n)
		b.Run("ops="+strconv.Itoa(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				ir.Print(m)
			}
		})
	}
}

func BenchmarkClone(b *testing.B) {
	for _, n := range benchSizes {
		m := irgen.Synthetic(n)
		b.Run("ops="+strconv.Itoa(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				m.Clone()
			}
		})
	}
}

// BenchmarkParseVerifyPrint is the whole text round trip of a large
// program: the figure to compare with mlir-opt on a file of the same size.
func BenchmarkParseVerifyPrint(b *testing.B) {
	for _, n := range []int{200000} {
		text := ir.Print(irgen.Synthetic(n))
		b.Run("ops="+strconv.Itoa(n), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				m, err := ir.Parse("bench.dpir", text)
				if err != nil {
					b.Fatal(err)
				}
				if err := ir.Verify(m); err != nil {
					b.Fatal(err)
				}
				ir.Print(m)
			}
		})
	}
}
