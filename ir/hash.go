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
// change detection within a process, not for security.
func Hash(m *Module) uint64 {
	h := hasher{s: hashInit}
	h.module(m)
	return h.sum()
}

// HashOp returns a structural hash of one op, for per-op change counts.
func HashOp(op *Op) uint64 {
	return mix(mixOp(hashInit, op), hashFinal)
}

// The mixing is wyhash's multiply-fold, by hand rather than hash/maphash:
// nothing stores these values, but a maphash.Hash fed the same walk (its
// words buffered) took over twice as long, near Print's own cost.
const (
	hashInit  = 0x243f6a8885a308d3 // digits of pi: any odd constant will do
	hashK1    = 0xa0761d6478bd642f
	hashK2    = 0xe7037ed1a0b428db
	hashFinal = 0x8ebc6af09c88c6e3
)

type hasher struct {
	s uint64
}

// mix folds one word into the state: a 64x64->128 multiply folded to 64
// bits, as wyhash does, which spreads every input bit over the state.
// The functions take and return the state so that it stays in a register.
func mix(s, x uint64) uint64 {
	hi, lo := bits.Mul64(s^hashK1, x^hashK2)
	return hi ^ lo ^ s // feed-forward: a zero product cannot wipe the state
}

// mix2 folds two words with one multiply.
func mix2(s, a, b uint64) uint64 {
	hi, lo := bits.Mul64(s^a^hashK1, b^hashK2)
	return hi ^ lo ^ s
}

// mixStr folds a string: its length and its bytes, sixteen at a time.
func mixStr(s uint64, str string) uint64 {
	n := len(str)
	b := unsafe.Slice(unsafe.StringData(str), n)
	for len(b) > 16 {
		s = mix2(s, binary.LittleEndian.Uint64(b), binary.LittleEndian.Uint64(b[8:]))
		b = b[16:]
	}
	var a, c uint64
	switch {
	case len(b) > 8:
		a, c = binary.LittleEndian.Uint64(b), tail8(b[8:])
	default:
		a = tail8(b)
	}
	return mix2(s, a, c^uint64(n)*hashK1)
}

// tail8 packs up to eight bytes into a word, with overlapping reads as
// wyhash does; the length, mixed in separately, disambiguates.
func tail8(b []byte) uint64 {
	switch n := len(b); {
	case n == 8:
		return binary.LittleEndian.Uint64(b)
	case n >= 4:
		return uint64(binary.LittleEndian.Uint32(b)) | uint64(binary.LittleEndian.Uint32(b[n-4:]))<<32
	case n > 0:
		return uint64(b[0])<<16 | uint64(b[n>>1])<<8 | uint64(b[n-1])
	}
	return 0
}

// mixInts folds a small-int list: up to seven entries in [-128, 127] (every
// dims_mapping and mesh shape in practice) pack into one word with the
// length; others take a word each.
func mixInts(s uint64, xs []int) uint64 {
	if len(xs) <= 7 {
		w, ok := uint64(len(xs))<<56, true
		for i, x := range xs {
			if x < -128 || x > 127 {
				ok = false
				break
			}
			w |= uint64(uint8(int8(x))) << (8 * i)
		}
		if ok {
			return mix(s, w)
		}
	}
	s = mix(s, uint64(len(xs))|1<<63)
	for _, x := range xs {
		s = mix(s, uint64(x))
	}
	return s
}

func (h *hasher) u64(x uint64)  { h.s = mix(h.s, x) }
func (h *hasher) int(x int)     { h.u64(uint64(x)) }
func (h *hasher) byte(b byte)   { h.u64(uint64(b) | 0xb7e1<<48) }
func (h *hasher) str(s string)  { h.s = mixStr(h.s, s) }
func (h *hasher) ints(xs []int) { h.s = mixInts(h.s, xs) }

func (h *hasher) sum() uint64 { return mix(h.s, hashFinal) }

func (h *hasher) module(m *Module) {
	if m == nil {
		h.byte(0)
		return
	}
	h.str(m.Name)
	h.int(len(m.Attrs))
	h.s = mixAttrs(h.s, m.Attrs)
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

func (h *hasher) var_(v *Var) { h.s = mixVar(h.s, v) }

func (h *hasher) op(op *Op) { h.s = mixOp(h.s, op) }

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

func mixVar(s uint64, v *Var) uint64 {
	if v == nil {
		return mix(s, 0xdead)
	}
	s = mixStr(s, v.name)
	s = mix(s, uint64(v.Kind)|uint64(v.Type.Kind)<<8|uint64(v.Type.DType)<<16|uint64(v.Flags)<<24|
		uint64(len(v.Type.Shape))<<40|b2u(v.Dist != nil)<<56|uint64(len(v.Attrs))<<57)
	for _, d := range v.Type.Shape {
		s = mix(s, uint64(d))
	}
	if t := &v.Type; t.HasLoD || t.LoD != 0 || t.Elems != nil {
		s = mixTypeExtra(s, t)
	}
	s = mixAttrs(s, v.Attrs)
	if d := v.Dist; d != nil {
		s = mixStr(s, d.Mesh)
		s = mixInts(s, d.DimsMapping)
		s = mix(s, uint64(len(d.Partial)))
		for _, pd := range d.Partial {
			s = mix(s, uint64(pd.Dim)|uint64(pd.Reduce)<<56)
		}
		if len(d.Local) > 0 {
			s = mixInts(mix(s, 0x10ca1), d.Local)
		}
	}
	return s
}

// mixTypeExtra folds what a type carries beyond kind, dtype and shape.
func mixTypeExtra(s uint64, t *Type) uint64 {
	s = mix2(s, uint64(t.LoD)^b2u(t.HasLoD)<<62^b2u(t.Elems != nil)<<63, uint64(len(t.Elems)))
	for i := range t.Elems {
		e := &t.Elems[i]
		s = mix2(s, uint64(e.Kind)|uint64(e.DType)<<8, uint64(len(e.Shape)))
		for _, d := range e.Shape {
			s = mix(s, uint64(d))
		}
		s = mixTypeExtra(s, e)
	}
	return s
}

func mixOp(s uint64, op *Op) uint64 {
	if op == nil {
		return mix(s, 0xdead)
	}
	s = mix2(s, uint64(op.ID), uint64(op.Role)|uint64(len(op.Inputs))<<32|uint64(len(op.Outputs))<<42|
		uint64(len(op.Attrs))<<52|b2u(op.Dist != nil)<<62)
	s = mixStr(s, op.Type)
	s = mix(s, uint64(op.Fwd))
	s = mixSlots(s, op.Inputs)
	s = mixSlots(s, op.Outputs)
	s = mixAttrs(s, op.Attrs)
	if d := op.Dist; d != nil {
		s = mixStr(s, d.Mesh)
		s = mixStr(s, d.ImplType)
		s = mix(s, uint64(d.ImplIndex)^b2u(d.Recompute)<<63^uint64(len(d.Inputs))<<40^uint64(len(d.Outputs))<<50)
		for _, a := range d.Inputs {
			s = mixInts(mixStr(s, a.Name), a.DimsMapping)
		}
		for _, a := range d.Outputs {
			s = mixInts(mixStr(s, a.Name), a.DimsMapping)
		}
	}
	return s
}

func mixSlots(s uint64, ss []Slot) uint64 {
	for _, sl := range ss {
		s = mix(mixStr(s, sl.Name), uint64(len(sl.Args)))
		for _, a := range sl.Args {
			s = mixStr(s, a)
		}
	}
	return s
}

func mixAttrs(s uint64, as Attrs) uint64 {
	for _, a := range as {
		s = mixValue(mixStr(s, a.Name), a.Value)
	}
	return s
}

func mixValue(s uint64, v Value) uint64 {
	if v == nil {
		return mix(s, 0xff)
	}
	k := uint64(v.Kind()) << 56
	switch v := v.(type) {
	case Bool:
		return mix(s, k|b2u(bool(v)))
	case Int:
		return mix2(s, k, uint64(v))
	case Float:
		return mix2(s, k, floatBits(float64(v)))
	case String:
		return mixStr(mix(s, k), string(v))
	case BlockRef:
		return mix2(s, k, uint64(v))
	case Bools:
		s = mix(s, k|uint64(len(v)))
		for _, x := range v {
			s = mix(s, b2u(x))
		}
	case Ints:
		return mixInt64s(s, k, v)
	case Floats:
		return mixFloat64s(s, k, v)
	case Strings:
		return mixStrings(s, k, v)
	case BlockRefs:
		s = mixInts(mix(s, k), v)
	case Long:
		return mix2(s, k, uint64(v))
	case Float64:
		return mix2(s, k, floatBits(float64(v)))
	case VarRef:
		return mixStr(mix(s, k), string(v))
	case Scalar:
		return mixScalar(mix(s, k), v)
	case Longs:
		return mixInt64s(s, k, v)
	case Float64s:
		return mixFloat64s(s, k, v)
	case VarRefs:
		return mixStrings(s, k, v)
	case Scalars:
		s = mix(s, k|uint64(len(v)))
		for _, x := range v {
			s = mixScalar(s, x)
		}
	}
	return s
}

// mixInt64s, mixFloat64s and mixStrings mix a list of kind k: its
// length, then each element.
func mixInt64s(s, k uint64, xs []int64) uint64 {
	s = mix(s, k|uint64(len(xs)))
	for _, x := range xs {
		s = mix(s, uint64(x))
	}
	return s
}

func mixFloat64s(s, k uint64, xs []float64) uint64 {
	s = mix(s, k|uint64(len(xs)))
	for _, x := range xs {
		s = mix(s, floatBits(x))
	}
	return s
}

func mixStrings(s, k uint64, xs []string) uint64 {
	s = mix(s, k|uint64(len(xs)))
	for _, x := range xs {
		s = mixStr(s, x)
	}
	return s
}

func mixScalar(s uint64, x Scalar) uint64 {
	s = mix2(s, uint64(x.Type)|b2u(x.B)<<8, uint64(x.I))
	return mix2(s, floatBits(x.R), floatBits(x.Im))
}

// floatBits returns the bits of f, with every NaN alike: they all print
// as nan.
func floatBits(f float64) uint64 {
	if f != f {
		return 0x7ff8000000000001
	}
	return math.Float64bits(f)
}
