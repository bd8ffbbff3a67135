package analysis

import (
	"hash/maphash"
	"math/bits"

	"github.com/distpass/distpass/ir"
)

// nameSeed seeds the name hashes. Hashes never reach output, so a seed
// per process keeps results deterministic.
var nameSeed = maphash.MakeSeed()

// nameTable maps the names of a block's vars to their positions. Blocks
// of fewer than smallBlock vars are scanned; larger ones get an
// open-addressing table of 32-bit slots that hold position+1 in the low
// posBits bits (0: empty) and hash bits above, a tag that settles most
// probes without comparing names. It is several times smaller than a
// map[string]int32, which matters on a block of a million vars.
type nameTable struct {
	slots   []uint32
	posBits uint
}

const smallBlock = 8

// tableSize returns the slot count of the table for n vars: 0 for a
// small block, else a power of two at least 4n/3, so that the table is
// at most three quarters full.
func tableSize(n int) int {
	if n < smallBlock {
		return 0
	}
	size := 16
	for size < n+n/3+1 {
		size <<= 1
	}
	return size
}

// build fills slots (tableSize(len(names)) of them, zeroed) with the
// names of vars. The first of several vars with one name wins. Nil vars
// are skipped.
func (t *nameTable) build(slots []uint32, names []string, vars []*ir.Var) {
	if len(slots) == 0 {
		return
	}
	t.slots, t.posBits = slots, uint(bits.Len(uint(len(names))))
	mask, posMask := uint64(len(slots)-1), uint32(1)<<t.posBits-1
	for pos, name := range names {
		if vars[pos] == nil {
			continue
		}
		h := maphash.String(nameSeed, name)
		tag := t.tag(h)
		for i := h & mask; ; i = (i + 1) & mask {
			s := slots[i]
			if s == 0 {
				slots[i] = tag | uint32(pos+1)
				break
			}
			if s&^posMask == tag && names[s&posMask-1] == name {
				break
			}
		}
	}
}

func (t *nameTable) tag(h uint64) uint32 {
	if t.posBits >= 32 {
		return 0
	}
	return uint32(h>>32) << t.posBits
}

// find returns the position in names of name, whose hash is h, or -1.
// names and vars are parallel; a nil var's "" does not match.
func (t *nameTable) find(names []string, vars []*ir.Var, name string, h uint64) int32 {
	if t.slots == nil {
		for i, n := range names {
			if n == name && (name != "" || i < len(vars) && vars[i] != nil) {
				return int32(i)
			}
		}
		return -1
	}
	tag, mask, posMask := t.tag(h), uint64(len(t.slots)-1), uint32(1)<<t.posBits-1
	for i := h & mask; ; i = (i + 1) & mask {
		s := t.slots[i]
		if s == 0 {
			return -1
		}
		if s&^posMask == tag {
			if pos := s&posMask - 1; names[pos] == name {
				return int32(pos)
			}
		}
	}
}
