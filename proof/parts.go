package proof

import (
	"slices"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/spmd"
)

// A reshard into a partial dist (spmd's StepPartial and StepPad) leaves
// on each rank a part that only the group's sum (or mean, max, min) makes
// the value: the value on the first rank of each summed mesh dim and zeros
// on the others, copies along a mean's, max's or min's dim, and, along the
// mesh dim the reshard's input is split on, the rank's block of that
// split in its place and the reduction's identity elsewhere (a pad).
// Which pattern applies is the serial program's (the reshard's input's
// dist), the same on every rank, so each rank checks its own part and
// the parts add up by construction.

// partsOf takes v, written to serial var a declared dist, as a part of
// what dist's partials the value does not owe yet, when it is this rank's
// part by the patterns; it reports whether it did (v then owes them).
func (p *prover) partsOf(a string, v *value, dist *ir.TensorDist) bool {
	var missing []ir.Partial
	for _, q := range dist.Partial {
		if !slices.ContainsFunc(v.owed, func(o ir.Partial) bool { return o.Dim == q.Dim }) {
			missing = append(missing, q)
		}
	}
	x, ok := p.alias[a] // the serial reshard's input
	if len(missing) == 0 || !ok {
		return false
	}
	xd := p.declared(x)
	sv := p.serialVar(p.canon(a))
	c, pm, err := p.coordOn(dist.Mesh)
	if err != nil || xd == nil || sv == nil {
		return false
	}
	got, err := p.layoutOf(v)
	if err != nil {
		return false
	}
	if v.mesh != "" {
		gc, _, err := p.coordOn(v.mesh)
		if err != nil {
			return false
		}
		got = got.at(gc)
	}
	wl, err := p.layoutOf(&value{src: v.src, mesh: dist.Mesh, dims: dist.DimsMapping})
	if err != nil || len(wl.tiles) != 1 {
		return false
	}
	want := wl.at(c)
	if !slices.Equal(got.shape(), want.shape()) {
		return false
	}
	// The pads: along each missing dim the input is split on (tensor dim
	// k), this rank's part of the split; the first rank of each other
	// summed dim holds the value, the others zeros.
	type padDim struct{ dim, k int }
	var pads []padDim
	first := true
	id, _ := spmd.Identity(sv.Type.DType, missing[0].Reduce)
	coef := v.coef
	for _, q := range missing {
		if v, _ := spmd.Identity(sv.Type.DType, q.Reduce); v != id {
			return false
		}
		if i := slices.Index(xd.DimsMapping, q.Dim); i >= 0 && sameShape(p.serial, xd.Mesh, dist.Mesh) {
			pads = append(pads, padDim{q.Dim, i})
			if q.Reduce == ir.ReduceAvg {
				coef /= float64(pm.Shape[q.Dim]) // the mean of n parts each n times a block
			}
			continue
		}
		if q.Reduce == ir.ReduceSum && c[q.Dim] != 0 {
			first = false
		}
	}
	expect := want.filled(id)
	if first {
		expect = want
		w := want.tiles[0]
		for _, pd := range pads {
			// want, its [lo, hi) along k the value, the rest the identity.
			n, full := int64(pm.Shape[pd.dim]), sv.Type.Shape[pd.k]
			if full < 0 || full%n != 0 {
				return false
			}
			end := want.shape()[pd.k]
			lo := min(max(int64(c[pd.dim])*full/n-w.lo[pd.k].c, 0), end)
			hi := max(min(int64(c[pd.dim]+1)*full/n-w.lo[pd.k].c, end), lo)
			var parts []*layout
			for _, r := range [][3]int64{{0, lo, 1}, {lo, hi, 0}, {hi, end, 1}} {
				if r[1] <= r[0] {
					continue
				}
				l, err := expect.take(pd.k, r[0], r[1])
				if err != nil {
					return false
				}
				if r[2] == 1 {
					l = l.filled(id)
				}
				parts = append(parts, l)
			}
			if expect, err = concatLayouts(parts, pd.k); err != nil {
				return false
			}
		}
	} else {
		coef = 1 // a constant part: what factor it carries is nothing
	}
	if !placeFills(got, want).merge().equal(placeFills(expect, want).merge()) {
		return false
	}
	v.owed = append(slices.Clone(v.owed), missing...)
	slices.SortFunc(v.owed, func(a, b ir.Partial) int { return a.Dim - b.Dim })
	v.coef, v.lay, v.mesh, v.dims = coef, nil, dist.Mesh, dist.DimsMapping
	return true
}

// placeFills gives l's constant tiles the offsets of where they stand in
// want's block (a fill's offsets say only its extent).
func placeFills(l, want *layout) *layout {
	offs := l.offsetsOf()
	m := &layout{seg: l.seg, tiles: make([]tile, len(l.tiles))}
	for i, t := range l.tiles {
		u := t.clone()
		if u.fill {
			for a := range u.lo {
				u.lo[a] = aff{c: want.tiles[0].lo[a].c + offs[i][a]}
			}
		}
		m.tiles[i] = u
	}
	return m
}

// sameShape reports whether meshes a and b have one shape (a reshard
// between them moves each coordinate's part to the same coordinate).
func sameShape(m *ir.Module, a, b string) bool {
	x, y := m.Mesh(a), m.Mesh(b)
	return x != nil && y != nil && slices.Equal(x.Shape, y.Shape)
}
