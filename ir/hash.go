package ir

import (
	"encoding/binary"
	"math"
	"math/bits"
	"unsafe"
)

// Hash returns a structural hash of m: modules that print the same bytes
// hash the same, and any change the printer would show changes the hash
// with overwhelming probability. It walks the structure without printing,
// at a fraction of Print's cost, and allocates nothing. It is meant for
// change detection, not for security: the mixing is wyhash's multiply-fold,
// with fixed constants, so values are stable across runs and machines.
func Hash(m *Module) uint64 {
	h := hasher{s: hashInit}
	h.module(m)
	return h.sum()
}

// HashOp returns a structural hash of one op, for per-op change counts.
func HashOp(op *Op) uint64 {
	h := hasher{s: hashInit}
	h.op(op)
	return h.sum()
}

const (
	hashInit = 0x243f6a8885a308d3 // digits of pi: any odd constant will do
	hashK1   = 0xa0761d6478bd642f
	hashK2   = 0xe7037ed1a0b428db
)

type hasher struct {
	s    uint64
	pend uint64 // a word waiting for its pair: each multiply takes two
	has  bool
	n    uint64 // pairs mixed, folded in at the end
}

// u64 feeds one word. Words are mixed in pairs by a 64x64->128 multiply
// folded to 64 bits, as wyhash does, which spreads every input bit over
// the state.
func (h *hasher) u64(x uint64) {
	if !h.has {
		h.pend, h.has = x, true
		return
	}
	hi, lo := bits.Mul64(h.s^h.pend^hashK1, x^hashK2)
	h.s = hi ^ lo
	h.has = false
	h.n++
}

func (h *hasher) sum() uint64 {
	if h.has {
		h.u64(0x5bd1e9955bd1e995)
	}
	hi, lo := bits.Mul64(h.s^hashK2, h.n^hashK1)
	return hi ^ lo
}

func (h *hasher) int(x int)   { h.u64(uint64(x)) }
func (h *hasher) i64(x int64) { h.u64(uint64(x)) }
func (h *hasher) byte(b byte) { h.u64(uint64(b) | 0xb7e1<<48) }

// str mixes the length, then the bytes eight at a time.
func (h *hasher) str(s string) {
	h.u64(uint64(len(s)))
	b := unsafe.Slice(unsafe.StringData(s), len(s))
	for len(b) >= 8 {
		h.u64(binary.LittleEndian.Uint64(b))
		b = b[8:]
	}
	if len(b) > 0 {
		var w uint64
		for i, c := range b {
			w |= uint64(c) << (8 * i)
		}
		h.u64(w)
	}
}

func (h *hasher) module(m *Module) {
	if m == nil {
		h.byte(0)
		return
	}
	h.str(m.Name)
	h.int(len(m.Meshes))
	for _, pm := range m.Meshes {
		if pm == nil {
			h.byte(0)
			continue
		}
		h.str(pm.Name)
		h.ints(pm.Shape)
		h.int(len(pm.DimNames))
		for _, d := range pm.DimNames {
			h.str(d)
		}
		h.ints(pm.ProcessIDs)
	}
	h.int(len(m.Groups))
	for _, g := range m.Groups {
		h.int(g.ID)
		h.ints(g.Ranks)
	}
	h.program(m.Main)
	h.program(m.Startup)
	h.int(len(m.ParamGrads))
	for _, pg := range m.ParamGrads {
		h.str(pg.Param)
		h.str(pg.Grad)
	}
}

func (h *hasher) program(p *Program) {
	if p == nil {
		h.byte(0)
		return
	}
	h.byte(1)
	h.str(p.Name)
	h.int(p.Rank)
	h.int(len(p.Blocks))
	for _, b := range p.Blocks {
		if b == nil {
			h.byte(0)
			continue
		}
		h.int(b.Index)
		h.int(b.Parent)
		h.int(b.Forward)
		h.int(len(b.vars))
		for _, v := range b.vars {
			h.var_(v)
		}
		h.int(len(b.Ops))
		for _, op := range b.Ops {
			h.op(op)
		}
	}
}

func (h *hasher) var_(v *Var) {
	if v == nil {
		h.byte(0)
		return
	}
	h.str(v.Name)
	h.byte(byte(v.Kind))
	h.byte(byte(v.Type.Kind))
	h.byte(byte(v.Type.DType))
	h.int(len(v.Type.Shape))
	for _, d := range v.Type.Shape {
		h.i64(d)
	}
	h.int(int(v.Flags))
	h.attrs(v.Attrs)
	if d := v.Dist; d != nil {
		h.byte(1)
		h.str(d.Mesh)
		h.ints(d.DimsMapping)
		h.int(len(d.Partial))
		for _, pd := range d.Partial {
			h.int(pd.Dim)
			h.byte(byte(pd.Reduce))
		}
	} else {
		h.byte(0)
	}
}

func (h *hasher) op(op *Op) {
	if op == nil {
		h.byte(0)
		return
	}
	h.i64(op.ID)
	h.str(op.Type)
	h.slots(op.Inputs)
	h.slots(op.Outputs)
	h.attrs(op.Attrs)
	h.u64(uint64(op.Role))
	h.i64(op.Fwd)
	if d := op.Dist; d != nil {
		h.byte(1)
		h.str(d.Mesh)
		h.str(d.ImplType)
		h.int(d.ImplIndex)
		if d.Recompute {
			h.byte(1)
		} else {
			h.byte(0)
		}
		for _, as := range [2][]ArgDist{d.Inputs, d.Outputs} {
			h.int(len(as))
			for _, a := range as {
				h.str(a.Name)
				h.ints(a.DimsMapping)
			}
		}
	} else {
		h.byte(0)
	}
}

func (h *hasher) slots(ss []Slot) {
	h.int(len(ss))
	for _, s := range ss {
		h.str(s.Name)
		h.int(len(s.Args))
		for _, a := range s.Args {
			h.str(a)
		}
	}
}

func (h *hasher) attrs(as Attrs) {
	h.int(len(as))
	for _, a := range as {
		h.str(a.Name)
		h.value(a.Value)
	}
}

func (h *hasher) value(v Value) {
	if v == nil {
		h.byte(0xff)
		return
	}
	h.byte(byte(v.Kind()))
	switch v := v.(type) {
	case Bool:
		if v {
			h.byte(1)
		} else {
			h.byte(0)
		}
	case Int:
		h.i64(int64(v))
	case Float:
		h.float(float64(v))
	case String:
		h.str(string(v))
	case BlockRef:
		h.int(int(v))
	case Bools:
		h.int(len(v))
		for _, x := range v {
			if x {
				h.byte(1)
			} else {
				h.byte(0)
			}
		}
	case Ints:
		h.int(len(v))
		for _, x := range v {
			h.i64(x)
		}
	case Floats:
		h.int(len(v))
		for _, x := range v {
			h.float(x)
		}
	case Strings:
		h.int(len(v))
		for _, x := range v {
			h.str(x)
		}
	case BlockRefs:
		h.ints(v)
	}
}

// float hashes the bits, with every NaN alike: they all print as nan.
func (h *hasher) float(f float64) {
	if f != f {
		h.u64(0x7ff8000000000001)
		return
	}
	h.u64(math.Float64bits(f))
}

func (h *hasher) ints(xs []int) {
	h.int(len(xs))
	for _, x := range xs {
		h.int(x)
	}
}
