package passes_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/distpass/distpass/internal/corpus"
	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/passes"
)

// Every rank's program that partition -all builds (passes.PartitionClasses,
// then Classes.Module) is byte for byte the one partition -rank R builds
// (passes.Partition), whatever order a mesh lists its ranks in: on every
// order of the 4 ranks of each 2×2 corpus module, and on a seeded sample of
// orders of 8 ranks with a third mesh dim of 2 added to those meshes. A
// lowering decision that depends on the rank and that the classes do not
// see (a gather's member order on a mesh whose ids do not ascend) makes
// some rank's -all program another rank's.
func TestPartitionAllEqualsRankOnEveryOrder(t *testing.T) {
	var cases []corpus.Case
	for _, c := range corpus.All(t) {
		if c.WantErr || !strings.HasPrefix(c.Pipeline, "partition{rank=$RANK}") || len(c.Module.Groups) > 0 {
			continue
		}
		if ranks := passes.Ranks(c.Module); len(ranks) != 4 {
			continue
		}
		cases = append(cases, c)
	}
	if len(cases) < 12 {
		t.Fatalf("%d corpus cases on 4 ranks: the corpus lost its 2×2 modules", len(cases))
	}
	samples := 300
	if testing.Short() || corpus.RaceDetector {
		samples = 40
	}
	orders4 := permutations([]int{0, 1, 2, 3})
	rng := rand.New(rand.NewPCG(37, 1))
	compared, rankOrders := 0, 0
	for _, c := range cases {
		for _, ord := range orders4 {
			compared += sameOnEveryRank(t, c.Name, withRanks(c.Module, ord, 0))
			rankOrders++
		}
	}
	n4 := rankOrders
	var with3 []corpus.Case
	for _, c := range cases {
		if len(c.Module.Meshes) == 1 && len(c.Module.Meshes[0].Shape) == 2 {
			with3 = append(with3, c)
		}
	}
	for i := range samples {
		c := with3[i%len(with3)]
		ord := rng.Perm(8)
		compared += sameOnEveryRank(t, c.Name, withRanks(c.Module, ord, 2))
		rankOrders++
	}
	t.Logf("%d modules × 24 orders of 2×2 meshes (%d) and %d sampled orders of 2×2×2 meshes over %d modules: %d rank programs equal",
		len(cases), n4, rankOrders-n4, len(with3), compared)
}

// withRanks returns a clone of m whose meshes list rank ord[i] where m's
// list its i-th rank (ascending) and, with extra > 0, have a last dim of
// size extra more (their dims mappings leave it replicated).
func withRanks(m *ir.Module, ord []int, extra int) *ir.Module {
	c := m.Clone()
	world := passes.Ranks(m)
	for _, pm := range c.Meshes {
		ids := make([]int, len(pm.ProcessIDs))
		for i, id := range pm.ProcessIDs {
			ids[i] = slices.Index(world, id)
		}
		if extra > 0 {
			// Row-major: the new last dim varies fastest.
			inter := make([]int, 0, len(ids)*extra)
			for _, id := range ids {
				for k := range extra {
					inter = append(inter, id+k*len(world))
				}
			}
			ids = inter
			pm.Shape = append(slices.Clone(pm.Shape), extra)
			pm.DimNames = append(slices.Clone(pm.DimNames), "extra")
		}
		for i, id := range ids {
			ids[i] = ord[id]
		}
		pm.ProcessIDs = ids
	}
	return c
}

// sameOnEveryRank fails t when some rank's program by classes differs
// from its plain partition, or when one fails and the other does not,
// and returns how many programs it compared.
func sameOnEveryRank(t *testing.T, name string, m *ir.Module) int {
	t.Helper()
	where := fmt.Sprintf("%s on %s", name, meshesOf(m))
	cs, cerr := passes.PartitionClasses(context.Background(), m, nil, nil)
	n := 0
	for _, r := range passes.Ranks(m) {
		p := m.Clone()
		perr := passes.Partition(p, nil, r)
		if cerr != nil || perr != nil {
			if (cerr == nil) != (perr == nil) {
				t.Errorf("%s: rank %d: by classes %v, plainly %v", where, r, cerr, perr)
			}
			return n
		}
		got, err := cs.Module(r)
		if err != nil {
			t.Fatalf("%s: rank %d: %v", where, r, err)
		}
		if g, w := ir.Print(got), ir.Print(p); !bytes.Equal(g, w) {
			t.Errorf("%s: rank %d by classes differs from partition -rank %d:\n%s", where, r, r, firstDiff(g, w))
			return n
		}
		n++
	}
	return n
}

func meshesOf(m *ir.Module) string {
	var parts []string
	for _, pm := range m.Meshes {
		parts = append(parts, fmt.Sprintf("%s %v ranks %v", pm.Name, pm.Shape, pm.ProcessIDs))
	}
	return strings.Join(parts, "; ")
}

// firstDiff is the first line where got and want differ, with both.
func firstDiff(got, want []byte) string {
	g, w := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := range min(len(g), len(w)) {
		if g[i] != w[i] {
			return fmt.Sprintf("line %d:\n  got  %s\n  want %s", i+1, g[i], w[i])
		}
	}
	return fmt.Sprintf("%d lines, want %d", len(g), len(w))
}

// permutations returns every order of xs.
func permutations(xs []int) [][]int {
	if len(xs) <= 1 {
		return [][]int{slices.Clone(xs)}
	}
	var out [][]int
	for i := range xs {
		rest := append(slices.Clone(xs[:i]), xs[i+1:]...)
		for _, p := range permutations(rest) {
			out = append(out, append([]int{xs[i]}, p...))
		}
	}
	return out
}
