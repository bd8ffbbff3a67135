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

// BenchmarkArgLookups looks every op arg of a synthetic module up by
// name, through the block's own table (Program.LookupVar) and through a
// Go map of the same names built beforehand: the floor of any pass that
// resolves names, and what the machine makes of it as the tables outgrow
// its caches (the time per lookup at a million ops against 100,000).
// "resolved" is what an IR whose args carried their vars would pay:
// each arg's var is known beforehand and only checked to still have the
// arg's name, which reads the var (in op order) but probes no table.
func BenchmarkArgLookups(b *testing.B) {
	for _, n := range []int{100000, 1000000} {
		m := irgen.Synthetic(n).Clone()
		g := m.Main.Global()
		var args []string
		for _, op := range g.Ops {
			for _, side := range [2][]ir.Slot{op.Inputs, op.Outputs} {
				for _, s := range side {
					args = append(args, s.Args...)
				}
			}
		}
		byName := make(map[string]*ir.Var, g.NumVars())
		for _, v := range g.Vars() {
			byName[v.Name()] = v
		}
		refs := make([]*ir.Var, len(args))
		for i, a := range args {
			refs[i] = byName[a]
		}
		for _, c := range []struct {
			name   string
			lookup func(int, string) *ir.Var
		}{
			{"table", func(_ int, a string) *ir.Var { return m.Main.LookupVar(g, a) }},
			{"gomap", func(_ int, a string) *ir.Var { return byName[a] }},
			{"resolved", func(i int, a string) *ir.Var {
				if v := refs[i]; v.Name() == a {
					return v
				}
				return nil
			}},
		} {
			b.Run("ops="+strconv.Itoa(n)+"/"+c.name, func(b *testing.B) {
				for b.Loop() {
					for i, a := range args {
						if c.lookup(i, a) == nil {
							b.Fatalf("no var %s", a)
						}
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(args)), "ns/lookup")
			})
		}
	}
}
