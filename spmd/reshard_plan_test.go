package spmd_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/spmd"
)

// The plans of a few reshards, step by step, in the order PlanReshard
// promises: what shrinks the local tensor first, then all-to-alls, then
// all-reduces and gathers, and last the local steps into partial states.
func TestPlanReshard(t *testing.T) {
	r := spmd.Replicated
	s := func(d int) spmd.Place { return spmd.Place{Dim: d} }
	p := func(red ir.Reduce) spmd.Place { return spmd.Place{Dim: -1, Partial: true, Reduce: red} }
	for _, c := range []struct {
		name     string
		src, dst []spmd.Place
		want     []string
	}{
		{"nothing to do", []spmd.Place{s(0), r}, []spmd.Place{s(0), r}, nil},
		{"slice", []spmd.Place{r, r}, []spmd.Place{s(0), r}, []string{"slice on mesh dim 0: R → S(0)"}},
		{"reduce-scatter", []spmd.Place{p(ir.ReduceSum), r}, []spmd.Place{s(1), r}, []string{"reduce-scatter on mesh dim 0: P(sum) → S(1)"}},
		{"all-reduce", []spmd.Place{p(ir.ReduceMax)}, []spmd.Place{r}, []string{"all-reduce on mesh dim 0: P(max) → R"}},
		{"swap two splits", []spmd.Place{s(0), s(1)}, []spmd.Place{s(1), s(0)}, []string{
			"all-gather on mesh dim 0: S(0) → R",
			"all-to-all on mesh dim 1: S(1) → S(0)",
			"slice on mesh dim 0: R → S(1)",
		}},
		{"shrink before gathering", []spmd.Place{s(0), r}, []spmd.Place{r, s(1)}, []string{
			"slice on mesh dim 1: R → S(1)",
			"all-gather on mesh dim 0: S(0) → R",
		}},
		{"into partial states", []spmd.Place{r, s(0), p(ir.ReduceSum)}, []spmd.Place{p(ir.ReduceSum), p(ir.ReduceSum), p(ir.ReduceAvg)}, []string{
			"pad on mesh dim 1: S(0) → P(sum)",
			"partial on mesh dim 0: R → P(sum)",
			"rescale on mesh dim 2: P(sum) → P(avg)",
		}},
	} {
		steps, err := spmd.PlanReshard(c.src, c.dst)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		var got []string
		for _, st := range steps {
			got = append(got, st.String())
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: plan\n\t%s\nwant\n\t%s", c.name, strings.Join(got, "\n\t"), strings.Join(c.want, "\n\t"))
		}
	}
	mixed := []spmd.Place{p(ir.ReduceSum), p(ir.ReduceMax)}
	if _, err := spmd.PlanReshard(mixed, []spmd.Place{r, r}); err == nil || !strings.Contains(err.Error(), "the order of the two reductions decides the value") {
		t.Errorf("a sum and a max partial: err = %v", err)
	}
}

// PlacesOf reads a dist per mesh dim (a mesh dim of size 1 holds the
// whole value), and DistOf writes the places back.
func TestPlacesOf(t *testing.T) {
	d := &ir.TensorDist{Mesh: "m", DimsMapping: []int{-1, 0, 2}, Partial: []ir.Partial{{Dim: 1, Reduce: ir.ReduceAvg}}}
	ps := spmd.PlacesOf(d, []int{2, 4, 1})
	want := []spmd.Place{{Dim: 1}, {Dim: -1, Partial: true, Reduce: ir.ReduceAvg}, spmd.Replicated}
	if !slices.Equal(ps, want) {
		t.Fatalf("PlacesOf = %v, want %v", ps, want)
	}
	back := spmd.DistOf("m", ps, 3)
	if !slices.Equal(back.DimsMapping, []int{-1, 0, -1}) || !slices.Equal(back.Partial, d.Partial) || back.Mesh != "m" {
		t.Errorf("DistOf = %v", back)
	}
}
