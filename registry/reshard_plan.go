package registry

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

// place is what one mesh dim holds of a tensor: the whole value
// (replicated), a block of tensor dim dim (split), or a part of the value
// awaiting reduce (partial).
type place struct {
	dim     int // the tensor dim split along the mesh dim, or -1
	partial bool
	reduce  ir.Reduce
}

var replicated = place{dim: -1}

func (p place) String() string {
	switch {
	case p.partial:
		return "P(" + p.reduce.String() + ")"
	case p.dim >= 0:
		return fmt.Sprintf("S(%d)", p.dim)
	}
	return "R"
}

// linear reports whether p is a sum or an average: parts that a
// reduce-scatter reduces, and that a scale turns into one another.
func (p place) linear() bool {
	return p.partial && (p.reduce == ir.ReduceSum || p.reduce == ir.ReduceAvg)
}

// placesOf returns the place of every dim of a mesh of shape shape for
// dist d. A mesh dim of size 1 holds the whole value whatever d says.
func placesOf(d *ir.TensorDist, shape []int) []place {
	ps := make([]place, len(shape))
	for k := range ps {
		ps[k] = replicated
	}
	for t, k := range d.DimsMapping {
		if k >= 0 && k < len(ps) && shape[k] > 1 {
			ps[k].dim = t
		}
	}
	for _, p := range d.Partial {
		if p.Dim >= 0 && p.Dim < len(ps) && shape[p.Dim] > 1 {
			ps[p.Dim] = place{dim: -1, partial: true, reduce: p.Reduce}
		}
	}
	return ps
}

// distOf is the dist of places ps of a tensor of rank dims on mesh.
func distOf(mesh string, ps []place, dims int) *ir.TensorDist {
	d := &ir.TensorDist{Mesh: mesh, DimsMapping: make([]int, dims)}
	for i := range d.DimsMapping {
		d.DimsMapping[i] = -1
	}
	for k, p := range ps {
		switch {
		case p.partial:
			d.Partial = append(d.Partial, ir.Partial{Dim: k, Reduce: p.reduce})
		case p.dim >= 0:
			d.DimsMapping[p.dim] = k
		}
	}
	return d
}

// stepKind is what a step does on its mesh dim.
type stepKind uint8

const (
	stepSlice         stepKind = iota // R → S(d): keep this rank's block, locally
	stepReduceScatter                 // P(sum|avg) → S(d): c_reducescatter
	stepAllToAll                      // S(d) → S(e): alltoall
	stepAllReduce                     // P → R: c_allreduce_<reduce>
	stepAllGather                     // S(d) → R: c_allgather
	stepPad                           // S(d) → P: the block in place, the reduction's identity elsewhere, locally
	stepPartial                       // R → P: the value on coordinate 0 (a sum) or everywhere, locally
	stepRescale                       // P(sum) ↔ P(avg): a scale, locally
)

var stepNames = [...]string{"slice", "reduce-scatter", "all-to-all", "all-reduce", "all-gather", "pad", "partial", "rescale"}

func (k stepKind) String() string { return stepNames[k] }

// step changes mesh dim axis from from to to.
type step struct {
	kind     stepKind
	axis     int
	from, to place
}

func (s step) String() string {
	return fmt.Sprintf("%s on mesh dim %d: %s → %s", s.kind, s.axis, s.from, s.to)
}

// planReshard returns the steps from src to dst, the places of one
// tensor on one mesh, in the order they run. The order moves few bytes:
// what shrinks the local tensor first (slices, then reduce-scatters),
// then all-to-alls, which keep its size, then all-reduces of partial
// dims that stay whole or whose split is blocked, then gathers (and
// pads), one at a time, each preferring one that unblocks a shrinking
// step, and last the local steps into partial states. A tensor dim is
// split along one mesh dim at a time, so a split whose tensor dim is
// still split elsewhere waits. Ties go to the lowest mesh dim: the plan
// depends only on src and dst.
func planReshard(src, dst []place) ([]step, error) {
	if err := mixedPartials(src); err != nil {
		return nil, err
	}
	if err := mixedPartials(dst); err != nil {
		return nil, err
	}
	cur := slices.Clone(src)
	var steps []step
	do := func(kind stepKind, k int, to place) {
		steps = append(steps, step{kind: kind, axis: k, from: cur[k], to: to})
		cur[k] = to
	}
	// free reports whether tensor dim d is split along no mesh dim.
	free := func(d int) bool {
		return !slices.ContainsFunc(cur, func(p place) bool { return !p.partial && p.dim == d })
	}
	// Each round takes at least one mesh dim a step closer to dst, and
	// none moves away: a few rounds per mesh dim.
	for range 4*len(cur) + 4 {
		if slices.Equal(cur, dst) {
			return steps, nil
		}
		progress := false
		for k, want := range dst {
			if want.dim < 0 || cur[k] == want || !free(want.dim) {
				continue
			}
			switch {
			case cur[k] == replicated:
				do(stepSlice, k, want)
				progress = true
			case cur[k].linear():
				do(stepReduceScatter, k, want)
				progress = true
			}
		}
		if progress {
			continue
		}
		for k, want := range dst {
			if want.dim >= 0 && cur[k].dim >= 0 && !cur[k].partial && cur[k] != want && free(want.dim) {
				do(stepAllToAll, k, want)
				progress = true
				break
			}
		}
		if progress {
			continue
		}
		for k, want := range dst {
			if cur[k].partial && cur[k] != want && !(cur[k].linear() && want.linear()) {
				do(stepAllReduce, k, replicated)
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
			if cur[k].dim < 0 || cur[k].partial || cur[k] == want {
				continue
			}
			if pick < 0 {
				pick = k
			}
			if slices.ContainsFunc(dst, func(p place) bool { return !p.partial && p.dim == cur[k].dim }) {
				pick = k
				break
			}
		}
		if pick >= 0 {
			if want := dst[pick]; want.partial {
				do(stepPad, pick, want)
			} else {
				do(stepAllGather, pick, replicated)
			}
			continue
		}
		for k, want := range dst {
			switch {
			case cur[k] == replicated && want.partial:
				do(stepPartial, k, want)
				progress = true
			case cur[k].linear() && want.linear() && cur[k] != want:
				do(stepRescale, k, want)
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

// mixedPartials refuses a value partial along mesh dims with reductions
// that do not commute (a sum along one and a max along another): which
// is reduced first decides the value, and the dist does not say.
func mixedPartials(ps []place) error {
	kind := func(p place) int {
		switch {
		case p.linear():
			return 1
		case p.reduce == ir.ReduceMax:
			return 2
		}
		return 3
	}
	first := -1
	for k, p := range ps {
		if !p.partial {
			continue
		}
		if first < 0 {
			first = k
		} else if kind(p) != kind(ps[first]) {
			return fmt.Errorf("partial along mesh dim %d by %s and along mesh dim %d by %s: the order of the two reductions decides the value", first, ps[first].reduce, k, p.reduce)
		}
	}
	return nil
}

func spellPlaces(ps []place) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = p.String()
	}
	return "[" + strings.Join(s, ", ") + "]"
}
