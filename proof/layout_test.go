package proof

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// elementAt returns the serial index of the local element idx of the
// layout evaluated at coord: what the local tensor holds there.
func elementAt(l *layout, coord []int, idx []int64) []int64 {
	c := l.at(coord)
	st := c.strides()
	cell := 0
	serial := make([]int64, len(idx))
	for a, off := range idx {
		k := 0
		for off >= c.seg[a][k] {
			off -= c.seg[a][k]
			k++
		}
		cell += k * st[a]
		serial[a] = off
	}
	for a := range serial {
		serial[a] += c.tiles[cell].lo[a].c
	}
	return serial
}

// each calls f with every index of shape.
func each(shape []int64, f func(idx []int64)) {
	idx := make([]int64, len(shape))
	for {
		f(idx)
		a := len(idx) - 1
		for ; a >= 0; a-- {
			if idx[a]++; idx[a] < shape[a] {
				break
			}
			idx[a] = 0
		}
		if a < 0 {
			return
		}
	}
}

// The layout operations move blocks as the ops they follow move
// elements: a placement's block, split into parts, taken, concatenated
// back in order and merged, is the block it was; in another order it is
// not, and the elements say where each part went.
func TestLayoutSplitConcatMerge(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		rank := 1 + r.IntN(3)
		shape := make([]int64, rank)
		for a := range shape {
			shape[a] = int64(4 * (1 + r.IntN(3))) // at least 2 on a rank
		}
		mesh := []int{2, 2}
		dims := make([]int, rank)
		for a := range dims {
			dims[a] = -1
		}
		if d := r.IntN(rank + 1); d < rank {
			dims[d] = r.IntN(2)
		}
		l, err := placed(shape, dims, mesh)
		if err != nil {
			t.Fatal(err)
		}
		coord := []int{r.IntN(2), r.IntN(2)}
		a := r.IntN(rank)
		local := l.shape()[a]
		cut := 1 + r.Int64N(local-1) // local is at least 2: a part on each side
		x, err := l.take(a, 0, cut)
		if err != nil {
			t.Fatal(err)
		}
		y, err := l.take(a, cut, local)
		if err != nil {
			t.Fatal(err)
		}
		back, err := concatLayouts([]*layout{x, y}, a)
		if err != nil {
			t.Fatal(err)
		}
		if !back.merge().equal(l) {
			t.Fatalf("%v split at %d along %d and put back: %v, want %v", l, cut, a, back.merge(), l)
		}
		swapped, err := concatLayouts([]*layout{y, x}, a)
		if err != nil {
			t.Fatal(err)
		}
		if swapped.merge().at(coord).equal(l.at(coord)) {
			t.Fatalf("%v put back in reverse along %d equals it", l, a)
		}
		// Element by element, the reversed layout holds y's part first.
		ylen := local - cut
		each(swapped.shape(), func(idx []int64) {
			got := elementAt(swapped, coord, idx)
			j := slices.Clone(idx)
			var want []int64
			if idx[a] < ylen {
				want = elementAt(y, coord, j)
			} else {
				j[a] -= ylen
				want = elementAt(x, coord, j)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("element %v of %v: %v, want %v", idx, swapped, got, want)
			}
		})
	}
}

// A gather stacks the members' blocks: stacking, along dim 0, a block
// split along dim 1 over mesh dim 0 at each coordinate, then splitting
// along 0 and concatenating along 1 in coordinate order, gives the whole
// tensor, as the all-gather reshard does.
func TestLayoutGatherReassembles(t *testing.T) {
	l, err := placed([]int64{4, 8}, []int{-1, 0}, []int{2})
	if err != nil {
		t.Fatal(err)
	}
	stacked, err := concatLayouts([]*layout{l.subst(0, 0), l.subst(0, 1)}, 0)
	if err != nil {
		t.Fatal(err)
	}
	p0, _ := stacked.take(0, 0, 4)
	p1, _ := stacked.take(0, 4, 8)
	whole, err := concatLayouts([]*layout{p0, p1}, 1)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := placed([]int64{4, 8}, []int{-1, -1}, []int{2})
	if got := whole.merge(); !got.equal(want) {
		t.Fatalf("gathered %v, want %v", got, want)
	}
	wrong, _ := concatLayouts([]*layout{p1, p0}, 1)
	if wrong.merge().equal(want) {
		t.Fatal("the pieces in the other order make the whole tensor")
	}
	if !l.dependsOn(0) || whole.dependsOn(0) {
		t.Fatalf("dependsOn: the block %v, the whole %v", l.dependsOn(0), whole.dependsOn(0))
	}
}
