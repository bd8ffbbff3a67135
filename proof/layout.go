package proof

import (
	"fmt"
	"slices"
	"strings"
)

// The reshard helpers (a gather's pieces split and concatenated along
// another dim, a reduce-scatter's lined-up blocks, a slice) hold values
// no placement describes: two blocks of a serial tensor stacked along a
// dim that is not theirs. A layout describes them: the local tensor cut
// along each dim into segments, and for each cell of that grid the block
// of the serial tensor it holds. A block's offsets are affine in the
// rank's mesh coordinates, so that the value a member of a group holds
// is this rank's with the member's coordinate put in (what a gather
// stacks), and the cross-rank check can compare the members' inputs as
// functions.

// aff is an offset c + Σ k[d]·coord[d] over the mesh dims d.
type aff struct {
	c int64
	k []int64 // per mesh dim; nil: constant
}

func (a aff) eval(coord []int) int64 {
	v := a.c
	for d, k := range a.k {
		v += k * int64(coord[d])
	}
	return v
}

// subst puts coordinate x for mesh dim d.
func (a aff) subst(d, x int) aff {
	if d >= len(a.k) || a.k[d] == 0 {
		return a
	}
	b := aff{c: a.c + a.k[d]*int64(x), k: slices.Clone(a.k)}
	b.k[d] = 0
	return b.trim()
}

func (a aff) plus(c int64) aff { return aff{c: a.c + c, k: a.k} }

// trim drops trailing zero strides, so that equal offsets compare equal.
func (a aff) trim() aff {
	for len(a.k) > 0 && a.k[len(a.k)-1] == 0 {
		a.k = a.k[:len(a.k)-1]
	}
	if len(a.k) == 0 {
		a.k = nil
	}
	return a
}

func (a aff) equal(b aff) bool { return a.c == b.c && slices.Equal(a.k, b.k) }

// dependsOn reports whether the offset moves with mesh dim d.
func (a aff) dependsOn(d int) bool { return d < len(a.k) && a.k[d] != 0 }

func (a aff) String() string {
	var b strings.Builder
	for d, k := range a.k {
		if k != 0 {
			fmt.Fprintf(&b, "%d·c%d+", k, d)
		}
	}
	fmt.Fprintf(&b, "%d", a.c)
	return b.String()
}

// tile is a block of the serial tensor: per dim its offset and size (-1:
// the whole of a dim of unknown size).
type tile struct {
	lo   []aff
	size []int64
	// fill: the tile holds the constant val in every element (a reshard's
	// padding), not the serial tensor's block (lo and size say only its
	// extent).
	fill bool
	val  float64
}

func (t tile) equal(u tile) bool {
	return t.fill == u.fill && t.val == u.val && slices.Equal(t.size, u.size) && slices.EqualFunc(t.lo, u.lo, aff.equal)
}

// layout is a local tensor as a grid of tiles: seg[a] are the sizes of
// the segments along local dim a (local dim a holds serial dim a), and
// tiles the cells in row-major order.
type layout struct {
	seg   [][]int64
	tiles []tile
}

// placed returns the layout of the block a placement gives a rank: the
// serial dims of shape split along the mesh dims of dims (of a mesh of
// shape mesh) evenly.
func placed(shape []int64, dims []int, mesh []int) (*layout, error) {
	if len(dims) != len(shape) {
		return nil, fmt.Errorf("a placement of %d dims for a tensor of %d", len(dims), len(shape))
	}
	t := tile{lo: make([]aff, len(shape)), size: slices.Clone(shape)}
	for a, d := range dims {
		if d < 0 {
			continue
		}
		if d >= len(mesh) || shape[a] < 0 || shape[a]%int64(mesh[d]) != 0 {
			return nil, fmt.Errorf("dim %d of size %d does not split evenly over mesh dim %d", a, shape[a], d)
		}
		t.size[a] = shape[a] / int64(mesh[d])
		k := make([]int64, d+1)
		k[d] = t.size[a]
		t.lo[a] = aff{k: k}
	}
	l := &layout{seg: make([][]int64, len(shape)), tiles: []tile{t}}
	for a := range shape {
		l.seg[a] = []int64{t.size[a]}
	}
	return l, nil
}

// shape is the local shape.
func (l *layout) shape() []int64 {
	s := make([]int64, len(l.seg))
	for a, segs := range l.seg {
		for _, n := range segs {
			if n < 0 {
				s[a] = -1
				break
			}
			s[a] += n
		}
	}
	return s
}

// strides of the row-major cell index.
func (l *layout) strides() []int {
	st := make([]int, len(l.seg))
	n := 1
	for a := len(l.seg) - 1; a >= 0; a-- {
		st[a] = n
		n *= len(l.seg[a])
	}
	return st
}

// slabs returns, for each index along dim a, the cells' indices in
// that slab, in row-major order.
func (l *layout) slabs(a int) [][]int {
	st := l.strides()
	out := make([][]int, len(l.seg[a]))
	for c := range l.tiles {
		i := c / st[a] % len(l.seg[a])
		out[i] = append(out[i], c)
	}
	return out
}

// fromSlabs builds the layout of the slabs along dim a (each a list of
// tiles in row-major order of the other dims), with segment sizes segs.
func (l *layout) fromSlabs(a int, segs []int64, slabs [][]tile) *layout {
	m := &layout{seg: slices.Clone(l.seg)}
	m.seg[a] = segs
	st := m.strides()
	total := 1
	for _, s := range m.seg {
		total *= len(s)
	}
	m.tiles = make([]tile, total)
	for i, slab := range slabs {
		// The cells of slab i in row-major order of the other dims.
		k := 0
		for c := range m.tiles {
			if c/st[a]%len(segs) == i {
				m.tiles[c] = slab[k]
				k++
			}
		}
	}
	return m
}

// cut refines dim a so that a segment boundary falls at local offset at.
func (l *layout) cut(a int, at int64) (*layout, error) {
	var off int64
	for i, n := range l.seg[a] {
		if at == off || at == off+n {
			return l, nil
		}
		if n < 0 {
			return nil, fmt.Errorf("cutting dim %d, of unknown size", a)
		}
		if at < off+n {
			first, rest := at-off, off+n-at
			segs := slices.Concat(l.seg[a][:i], []int64{first, rest}, l.seg[a][i+1:])
			old := l.slabs(a)
			var slabs [][]tile
			for j, cells := range old {
				if j != i {
					slabs = append(slabs, l.pick(cells))
					continue
				}
				var x, y []tile
				for _, c := range cells {
					t := l.tiles[c]
					u, v := t.clone(), t.clone()
					u.size[a] = first
					v.lo[a], v.size[a] = t.lo[a].plus(first), rest
					x, y = append(x, u), append(y, v)
				}
				slabs = append(slabs, x, y)
			}
			return l.fromSlabs(a, segs, slabs), nil
		}
		off += n
	}
	return nil, fmt.Errorf("offset %d beyond dim %d of size %d", at, a, off)
}

func (t tile) clone() tile {
	return tile{lo: slices.Clone(t.lo), size: slices.Clone(t.size), fill: t.fill, val: t.val}
}

func (l *layout) pick(cells []int) []tile {
	out := make([]tile, len(cells))
	for i, c := range cells {
		out[i] = l.tiles[c]
	}
	return out
}

// take returns the part of the layout from local offset lo to hi along
// dim a.
func (l *layout) take(a int, lo, hi int64) (*layout, error) {
	m, err := l.cut(a, lo)
	if err == nil {
		m, err = m.cut(a, hi)
	}
	if err != nil {
		return nil, err
	}
	var (
		segs  []int64
		slabs [][]tile
		off   int64
	)
	for i, cells := range m.slabs(a) {
		n := m.seg[a][i]
		if off >= lo && off+n <= hi {
			segs = append(segs, n)
			slabs = append(slabs, m.pick(cells))
		}
		off += n
	}
	return m.fromSlabs(a, segs, slabs), nil
}

// concat lays ls one after the other along dim a.
func concatLayouts(ls []*layout, a int) (*layout, error) {
	if len(ls) == 0 {
		return nil, fmt.Errorf("concatenating nothing")
	}
	// The other dims cut alike in every part.
	ls = slices.Clone(ls)
	for b := range ls[0].seg {
		if b == a {
			continue
		}
		for _, l := range ls {
			if len(l.seg) != len(ls[0].seg) {
				return nil, fmt.Errorf("concatenating tensors of %d and %d dims", len(ls[0].seg), len(l.seg))
			}
			for _, at := range offsets(l.seg[b]) {
				for i := range ls {
					m, err := ls[i].cut(b, at)
					if err != nil {
						return nil, err
					}
					ls[i] = m
				}
			}
		}
		for _, l := range ls[1:] {
			if !slices.Equal(l.seg[b], ls[0].seg[b]) {
				return nil, fmt.Errorf("concatenating along dim %d tensors whose dim %d differ (%v, %v)", a, b, ls[0].seg[b], l.seg[b])
			}
		}
	}
	var (
		segs  []int64
		slabs [][]tile
	)
	for _, l := range ls {
		segs = append(segs, l.seg[a]...)
		for _, cells := range l.slabs(a) {
			slabs = append(slabs, l.pick(cells))
		}
	}
	return ls[0].fromSlabs(a, segs, slabs), nil
}

// offsets are the inner segment boundaries of segs.
func offsets(segs []int64) []int64 {
	var out []int64
	var off int64
	for _, n := range segs[:max(len(segs)-1, 0)] {
		off += n
		out = append(out, off)
	}
	return out
}

// subst puts coordinate x for mesh dim d in every offset.
func (l *layout) subst(d, x int) *layout {
	m := &layout{seg: l.seg, tiles: make([]tile, len(l.tiles))}
	for i, t := range l.tiles {
		u := t.clone()
		for a := range u.lo {
			u.lo[a] = u.lo[a].subst(d, x)
		}
		m.tiles[i] = u
	}
	return m
}

// dependsOn reports whether a block's offset moves with mesh dim d.
func (l *layout) dependsOn(d int) bool {
	for _, t := range l.tiles {
		if slices.ContainsFunc(t.lo, func(a aff) bool { return a.dependsOn(d) }) {
			return true
		}
	}
	return false
}

// merge joins neighbouring segments whose tiles continue each other along
// their dim, so that a gather's pieces put back in order are one block.
func (l *layout) merge() *layout {
	for a := range l.seg {
		for i := 0; i+1 < len(l.seg[a]); {
			slabs := l.slabs(a)
			x, y := slabs[i], slabs[i+1]
			joined := make([]tile, len(x))
			ok := true
			for k := range x {
				t, u := l.tiles[x[k]], l.tiles[y[k]]
				if t.fill != u.fill || t.val != u.val || t.size[a] < 0 || !t.fill && !u.lo[a].equal(t.lo[a].plus(t.size[a])) {
					ok = false
					break
				}
				for b := range t.lo {
					if b != a && (!t.fill && !t.lo[b].equal(u.lo[b]) || t.size[b] != u.size[b]) {
						ok = false
					}
				}
				j := t.clone()
				j.size[a] += u.size[a]
				joined[k] = j
			}
			if !ok {
				i++
				continue
			}
			segs := slices.Concat(l.seg[a][:i], []int64{l.seg[a][i] + l.seg[a][i+1]}, l.seg[a][i+2:])
			var all [][]tile
			for j, cells := range slabs {
				switch {
				case j == i:
					all = append(all, joined)
				case j != i+1:
					all = append(all, l.pick(cells))
				}
			}
			l = l.fromSlabs(a, segs, all)
		}
	}
	return l
}

func (l *layout) equal(m *layout) bool {
	return len(l.seg) == len(m.seg) && slices.EqualFunc(l.seg, m.seg, slices.Equal) && slices.EqualFunc(l.tiles, m.tiles, tile.equal)
}

// at evaluates the layout's offsets at coord: two layouts hold the same
// blocks on a rank when their evaluations are equal.
func (l *layout) at(coord []int) *layout {
	m := &layout{seg: l.seg, tiles: make([]tile, len(l.tiles))}
	for i, t := range l.tiles {
		u := tile{lo: make([]aff, len(t.lo)), size: t.size, fill: t.fill, val: t.val}
		for a, o := range t.lo {
			u.lo[a] = aff{c: o.eval(coord)}
		}
		m.tiles[i] = u
	}
	return m
}

// String prints the tiles in row-major order, each as its serial ranges
// ("[2:4, 0:8]"), after the grid's shape when it has more than one.
func (l *layout) String() string {
	var b strings.Builder
	if len(l.tiles) > 1 {
		grid := make([]string, len(l.seg))
		for a, segs := range l.seg {
			grid[a] = fmt.Sprint(len(segs))
		}
		b.WriteString(strings.Join(grid, "×") + " tiles ")
	}
	for i, t := range l.tiles {
		if i > 0 {
			b.WriteString(" ")
		}
		dims := make([]string, len(t.lo))
		for a, o := range t.lo {
			switch {
			case t.size[a] < 0:
				dims[a] = ":"
			case o.k == nil:
				dims[a] = fmt.Sprintf("%d:%d", o.c, o.c+t.size[a])
			default:
				dims[a] = fmt.Sprintf("%s:+%d", o, t.size[a])
			}
		}
		b.WriteString("[" + strings.Join(dims, ", ") + "]")
		if t.fill {
			fmt.Fprintf(&b, "=%g", t.val)
		}
	}
	return b.String()
}

// filled returns l with every tile holding the constant v.
func (l *layout) filled(v float64) *layout {
	m := &layout{seg: l.seg, tiles: make([]tile, len(l.tiles))}
	for i, t := range l.tiles {
		u := t.clone()
		u.fill, u.val = true, v
		m.tiles[i] = u
	}
	return m
}

// allFill reports whether every tile of l is a constant.
func (l *layout) allFill() bool {
	return !slices.ContainsFunc(l.tiles, func(t tile) bool { return !t.fill })
}

// offsetsOf returns each tile's local offset along every dim.
func (l *layout) offsetsOf() [][]int64 {
	st := l.strides()
	starts := make([][]int64, len(l.seg))
	for a, segs := range l.seg {
		starts[a] = append([]int64{0}, offsets(segs)...)
		if len(segs) == 1 {
			starts[a] = []int64{0}
		}
	}
	out := make([][]int64, len(l.tiles))
	for c := range l.tiles {
		o := make([]int64, len(l.seg))
		for a := range l.seg {
			o[a] = starts[a][c/st[a]%len(l.seg[a])]
		}
		out[c] = o
	}
	return out
}
