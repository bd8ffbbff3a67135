package ir

import (
	"hash/maphash"
	"math/bits"
)

// nameSeed seeds the hash of every nameTable. Lookups never reach output,
// so a per-process seed keeps results deterministic.
var nameSeed = maphash.MakeSeed()

// nameTable maps the names of a block's vars to their positions: an
// open-addressing hash table, at most half full, of 32-bit slots holding
// position+1 in the low posBits bits (0: empty) and high hash bits above,
// a tag that settles most probes without comparing names. On a large
// block it is several times smaller than a map[string]int32, and faster
// to fill, since the names themselves stay in the vars. It holds the
// first var of each name; nil vars are left out.
//
// A block keeps its table current through every change of its vars
// (AddVar, RemoveVar, RenameVar), so that a lookup only reads: the
// verifier and the analyses resolve names through it, also on a module
// that other goroutines read.
type nameTable struct {
	slots   []uint32
	posBits uint
	n       int // names in the table
}

func (t *nameTable) tag(h uint64) uint32 { return uint32(h>>32) << t.posBits }

// reset empties the table and sizes it for capacity names.
func (t *nameTable) reset(capacity int) {
	size := 16
	for size < 2*capacity {
		size <<= 1
	}
	t.slots, t.posBits, t.n = make([]uint32, size), uint(bits.Len(uint(size/2))), 0
}

// reserve makes room for capacity names without growing, keeping the
// names of vars, which the table holds.
func (t *nameTable) reserve(vars []*Var, capacity int) {
	if t.slots != nil && 2*capacity <= len(t.slots) && capacity < 1<<t.posBits {
		return
	}
	t.reset(capacity)
	for i := range vars {
		t.insert(vars, i)
	}
}

// insert adds the name of vars[pos] and returns -1, or, when an earlier var
// of that name is in the table, that var's position (and adds nothing). The
// table grows as needed; vars[:pos] must be the vars inserted so far.
func (t *nameTable) insert(vars []*Var, pos int) int32 {
	if vars[pos] == nil {
		return -1
	}
	if t.slots == nil || 2*(t.n+1) > len(t.slots) || pos+1 >= 1<<t.posBits {
		t.grow(vars, pos)
	}
	return t.insertHashed(vars, pos, maphash.String(nameSeed, vars[pos].name))
}

// insertHashed is insert with the name's hash given; the table must have
// room.
func (t *nameTable) insertHashed(vars []*Var, pos int, h uint64) int32 {
	name := vars[pos].name
	tag, mask, posMask := t.tag(h), uint64(len(t.slots)-1), uint32(1)<<t.posBits-1
	for i := h & mask; ; i = (i + 1) & mask {
		s := t.slots[i]
		if s == 0 {
			t.slots[i] = tag | uint32(pos+1)
			t.n++
			return -1
		}
		if s&^posMask == tag && vars[s&posMask-1].name == name {
			return int32(s&posMask - 1)
		}
	}
}

// grow re-inserts vars[:pos] into a table twice the size.
func (t *nameTable) grow(vars []*Var, pos int) {
	t.reset(max(2*t.n, pos+1, 8))
	for i := range vars[:pos] {
		t.insert(vars, i)
	}
}

// build fills the table with vars, sized once, and appends to dups the
// positions of vars whose name an earlier var has. Nil vars are skipped.
func (t *nameTable) build(vars []*Var, dups []int32) []int32 {
	t.reset(len(vars))
	for pos, v := range vars {
		if v != nil && t.insert(vars, pos) >= 0 {
			dups = append(dups, int32(pos))
		}
	}
	return dups
}

// find returns the position of the var named name, or -1.
func (t *nameTable) find(vars []*Var, name string) int32 {
	if t.slots == nil {
		return -1
	}
	h := maphash.String(nameSeed, name)
	tag, mask, posMask := t.tag(h), uint64(len(t.slots)-1), uint32(1)<<t.posBits-1
	for i := h & mask; ; i = (i + 1) & mask {
		s := t.slots[i]
		if s == 0 {
			return -1
		}
		if s&^posMask == tag {
			if pos := s&posMask - 1; vars[pos].name == name {
				return int32(pos)
			}
		}
	}
}

// remove takes the name of vars[pos] out of the table, by moving later
// slots of its probe run back (no tombstones); with shift, the positions
// after pos go one down, as the var's removal from vars moves them. The
// name must be in the table at pos.
func (t *nameTable) remove(vars []*Var, pos int, shift bool) {
	mask, posMask := uint64(len(t.slots)-1), uint32(1)<<t.posBits-1
	i := maphash.String(nameSeed, vars[pos].name) & mask
	for t.slots[i]&posMask != uint32(pos+1) {
		i = (i + 1) & mask
	}
	for j := (i + 1) & mask; t.slots[j] != 0; j = (j + 1) & mask {
		// The slot at j moves into the hole at i unless its name's home
		// lies cyclically in (i, j]: there it would not be found.
		home := maphash.String(nameSeed, vars[t.slots[j]&posMask-1].name) & mask
		if (j-home)&mask >= (j-i)&mask {
			t.slots[i], i = t.slots[j], j
		}
	}
	t.slots[i] = 0
	t.n--
	if shift {
		for k, s := range t.slots {
			if s&posMask > uint32(pos+1) {
				t.slots[k] = s - 1
			}
		}
	}
}
