package spmd

import (
	"fmt"
	"slices"
	"strings"

	"github.com/distpass/distpass/ir"
)

// The plan of a reshard: the per-mesh-dim steps that turn one placement
// of a tensor into another on the same mesh. Each step changes what one
// mesh dim holds, and is either local or a collective over the groups
// along that dim.

// A Place is what one mesh dim holds of a tensor: the whole value
// (replicated), a block of tensor dim Dim (split), or a part of the value
// awaiting Reduce (partial).
type Place struct {
	Dim     int // the tensor dim split along the mesh dim, or -1
	Partial bool
	Reduce  ir.Reduce // the pending reduction, when Partial
}

// Replicated is the Place of a mesh dim that holds the whole value.
var Replicated = Place{Dim: -1}

// String spells p as the plan's errors do: "R", "S(1)", "P(sum)".
func (p Place) String() string {
	switch {
	case p.Partial:
		return "P(" + p.Reduce.String() + ")"
	case p.Dim >= 0:
		return fmt.Sprintf("S(%d)", p.Dim)
	}
	return "R"
}

// Linear reports whether p is a sum or an average: parts that a
// reduce-scatter reduces, and that a scale turns into one another.
func (p Place) Linear() bool {
	return p.Partial && (p.Reduce == ir.ReduceSum || p.Reduce == ir.ReduceAvg)
}

// PlacesOf returns the place of every dim of a mesh of shape shape for
// dist d. A mesh dim of size 1 holds the whole value whatever d says.
func PlacesOf(d *ir.TensorDist, shape []int) []Place {
	ps := make([]Place, len(shape))
	for k := range ps {
		ps[k] = Replicated
	}
	for t, k := range d.DimsMapping {
		if k >= 0 && k < len(ps) && shape[k] > 1 {
			ps[k].Dim = t
		}
	}
	for _, p := range d.Partial {
		if p.Dim >= 0 && p.Dim < len(ps) && shape[p.Dim] > 1 {
			ps[p.Dim] = Place{Dim: -1, Partial: true, Reduce: p.Reduce}
		}
	}
	return ps
}

// DistOf is the dist of places ps of a tensor of rank dims on mesh.
func DistOf(mesh string, ps []Place, dims int) *ir.TensorDist {
	d := &ir.TensorDist{Mesh: mesh, DimsMapping: make([]int, dims)}
	for i := range d.DimsMapping {
		d.DimsMapping[i] = -1
	}
	for k, p := range ps {
		switch {
		case p.Partial:
			d.Partial = append(d.Partial, ir.Partial{Dim: k, Reduce: p.Reduce})
		case p.Dim >= 0:
			d.DimsMapping[p.Dim] = k
		}
	}
	return d
}

// A StepKind is what a step does on its mesh dim.
type StepKind uint8

// The kinds of step, each from the places it turns into others.
const (
	StepSlice         StepKind = iota // R → S(d): keep this rank's block, locally
	StepReduceScatter                 // P(sum|avg) → S(d): c_reducescatter
	StepAllToAll                      // S(d) → S(e): alltoall
	StepAllReduce                     // P → R: c_allreduce_<reduce>
	StepAllGather                     // S(d) → R: c_allgather
	StepPad                           // S(d) → P: the block in place, the reduction's identity elsewhere, locally
	StepPartial                       // R → P: the value on coordinate 0 (a sum) or everywhere, locally
	StepRescale                       // P(sum) ↔ P(avg): a scale, locally
)

var stepNames = [...]string{"slice", "reduce-scatter", "all-to-all", "all-reduce", "all-gather", "pad", "partial", "rescale"}

// String names the kind: "slice", "reduce-scatter", ...
func (k StepKind) String() string { return stepNames[k] }

// A Step changes mesh dim Axis from From to To.
type Step struct {
	Kind     StepKind
	Axis     int
	From, To Place
}

// String spells s: "all-gather on mesh dim 1: S(0) → R".
func (s Step) String() string {
	return fmt.Sprintf("%s on mesh dim %d: %s → %s", s.Kind, s.Axis, s.From, s.To)
}

// PlanReshard returns the steps from src to dst, the places of one
// tensor on one mesh, in the order they run. The order moves few bytes:
// what shrinks the local tensor first (slices, then reduce-scatters),
// then all-to-alls, which keep its size, then all-reduces of partial
// dims that stay whole or whose split is blocked, then gathers (and
// pads), one at a time, each preferring one that unblocks a shrinking
// step, and last the local steps into partial states. A tensor dim is
// split along one mesh dim at a time, so a split whose tensor dim is
// still split elsewhere waits. Ties go to the lowest mesh dim: the plan
// depends only on src and dst.
func PlanReshard(src, dst []Place) ([]Step, error) {
	if err := MixedPartials(src); err != nil {
		return nil, err
	}
	if err := MixedPartials(dst); err != nil {
		return nil, err
	}
	cur := slices.Clone(src)
	var steps []Step
	do := func(kind StepKind, k int, to Place) {
		steps = append(steps, Step{Kind: kind, Axis: k, From: cur[k], To: to})
		cur[k] = to
	}
	// free reports whether tensor dim d is split along no mesh dim.
	free := func(d int) bool {
		return !slices.ContainsFunc(cur, func(p Place) bool { return !p.Partial && p.Dim == d })
	}
	// Each round takes at least one mesh dim a step closer to dst, and
	// none moves away: a few rounds per mesh dim.
	for range 4*len(cur) + 4 {
		if slices.Equal(cur, dst) {
			return steps, nil
		}
		progress := false
		for k, want := range dst {
			if want.Dim < 0 || cur[k] == want || !free(want.Dim) {
				continue
			}
			switch {
			case cur[k] == Replicated:
				do(StepSlice, k, want)
				progress = true
			case cur[k].Linear():
				do(StepReduceScatter, k, want)
				progress = true
			}
		}
		if progress {
			continue
		}
		for k, want := range dst {
			if want.Dim >= 0 && cur[k].Dim >= 0 && !cur[k].Partial && cur[k] != want && free(want.Dim) {
				do(StepAllToAll, k, want)
				progress = true
				break
			}
		}
		if progress {
			continue
		}
		for k, want := range dst {
			if cur[k].Partial && cur[k] != want && !(cur[k].Linear() && want.Linear()) {
				do(StepAllReduce, k, Replicated)
				progress = true
			}
		}
		if progress {
			continue
		}
		// Un-split one mesh dim: the first whose tensor dim another mesh
		// dim waits for, else the first.
		pick := -1
		for k, want := range dst {
			if cur[k].Dim < 0 || cur[k].Partial || cur[k] == want {
				continue
			}
			if pick < 0 {
				pick = k
			}
			if slices.ContainsFunc(dst, func(p Place) bool { return !p.Partial && p.Dim == cur[k].Dim }) {
				pick = k
				break
			}
		}
		if pick >= 0 {
			if want := dst[pick]; want.Partial {
				do(StepPad, pick, want)
			} else {
				do(StepAllGather, pick, Replicated)
			}
			continue
		}
		for k, want := range dst {
			switch {
			case cur[k] == Replicated && want.Partial:
				do(StepPartial, k, want)
				progress = true
			case cur[k].Linear() && want.Linear() && cur[k] != want:
				do(StepRescale, k, want)
				progress = true
			}
		}
		if !progress {
			break
		}
	}
	if !slices.Equal(cur, dst) {
		return nil, fmt.Errorf("no plan from %s to %s (stuck at %s)", spellPlaces(src), spellPlaces(dst), spellPlaces(cur))
	}
	return steps, nil
}

// MixedPartials refuses a value partial along mesh dims with reductions
// that do not commute (a sum along one and a max along another): which
// is reduced first decides the value, and the dist does not say.
func MixedPartials(ps []Place) error {
	kind := func(p Place) int {
		switch {
		case p.Linear():
			return 1
		case p.Reduce == ir.ReduceMax:
			return 2
		}
		return 3
	}
	first := -1
	for k, p := range ps {
		if !p.Partial {
			continue
		}
		if first < 0 {
			first = k
		} else if kind(p) != kind(ps[first]) {
			return fmt.Errorf("partial along mesh dim %d by %s and along mesh dim %d by %s: the order of the two reductions decides the value", first, ps[first].Reduce, k, p.Reduce)
		}
	}
	return nil
}

func spellPlaces(ps []Place) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = p.String()
	}
	return "[" + strings.Join(s, ", ") + "]"
}
