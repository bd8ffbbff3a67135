package paddle

import (
	"fmt"
	"sort"
	"strings"
	"testing"
)

func sortedFixtures(tb testing.TB) ([]string, map[string][]byte) {
	fs := fixtures(tb)
	names := make([]string, 0, len(fs))
	for n := range fs {
		names = append(names, n)
	}
	sort.Strings(names)
	return names, fs
}

func BenchmarkImport(b *testing.B) {
	names, fs := sortedFixtures(b)
	for _, n := range names {
		data := fs[n]
		b.Run(strings.TrimSuffix(n, ".pdmodel"), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if _, err := Import(n, data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkExport(b *testing.B) {
	names, fs := sortedFixtures(b)
	for _, n := range names {
		m, err := Import(n, fs[n])
		if err != nil {
			b.Fatal(err)
		}
		b.Run(strings.TrimSuffix(n, ".pdmodel"), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(fs[n])))
			for b.Loop() {
				if _, err := Export(m); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestFixtureTable checks each fixture's op count against the fixtures'
// README and, under -v, measures import and export and logs a table:
//
//	go test ./interop/paddle -run FixtureTable -v
func TestFixtureTable(t *testing.T) {
	wantOps := map[string]int{ // from testdata/README.md
		"lite_resnet_cifar.pdmodel":    118,
		"visualdl_mobilenetv1.pdmodel": 88,
		"lite_mobilenetv1.pdmodel":     91,
		"lite_mobilenetv2.pdmodel":     160,
		"lite_resnet50.pdmodel":        179,
	}
	names, fs := sortedFixtures(t)
	var sb strings.Builder
	fmt.Fprintf(&sb, "\n| fixture | bytes | ops | op types | import ns/op | import allocs/op | export ns/op | export allocs/op |\n|---|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, n := range names {
		data := fs[n]
		m, err := Import(n, data)
		if err != nil {
			t.Fatal(err)
		}
		ops, types := m.Main.NumOps(), map[string]bool{}
		for _, b := range m.Main.Blocks {
			for _, op := range b.Ops {
				types[op.Type] = true
			}
		}
		if w, ok := wantOps[n]; ok && ops != w {
			t.Errorf("%s: %d ops, want %d", n, ops, w)
		}
		if !testing.Verbose() || testing.Short() {
			continue
		}
		imp := testing.Benchmark(func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				Import(n, data)
			}
		})
		exp := testing.Benchmark(func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				Export(m)
			}
		})
		fmt.Fprintf(&sb, "| %s | %d | %d | %d | %d | %d | %d | %d |\n", strings.TrimSuffix(n, ".pdmodel"), len(data), ops, len(types),
			imp.NsPerOp(), imp.AllocsPerOp(), exp.NsPerOp(), exp.AllocsPerOp())
	}
	if testing.Verbose() && !testing.Short() {
		t.Log(sb.String())
	}
}
