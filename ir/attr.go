package ir

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"sort"
)

// AttrKind is the kind of an attribute value.
type AttrKind uint8

// The attribute kinds.
const (
	KindBool AttrKind = iota
	KindInt
	KindFloat
	KindString
	KindBools
	KindInts
	KindFloats
	KindStrings
	KindBlock
	KindBlocks
	KindLong
	KindLongs
	KindFloat64
	KindFloat64s
	KindVarRef
	KindVarRefs
	KindScalar
	KindScalars
	numAttrKinds
)

var attrKindNames = [numAttrKinds]string{"bool", "int", "float", "string", "bools", "ints", "floats", "strings", "block", "blocks",
	"long", "longs", "float64", "float64s", "var", "vars", "scalar", "scalars"}

func (k AttrKind) String() string {
	if int(k) < len(attrKindNames) {
		return attrKindNames[k]
	}
	return fmt.Sprintf("attrkind(%d)", uint8(k))
}

// Value is an attribute value: one of Bool, Int, Float, String, Bools, Ints,
// Floats, Strings, BlockRef, BlockRefs, Long, Longs, Float64, Float64s,
// VarRef, VarRefs, Scalar, Scalars. The set is closed.
//
// distpass itself writes the first ten. The others exist so that programs
// imported from Paddle keep the exact attribute type of each value (Paddle
// tells INT from LONG and FLOAT, a float32, from FLOAT64): Int and Float
// are Paddle's INT and FLOAT, Long and Float64 its LONG and FLOAT64.
type Value interface {
	Kind() AttrKind
	isValue()
}

type (
	// Bool is a boolean attribute value.
	Bool bool
	// Int is an integer attribute value.
	Int int64
	// Float is a floating-point attribute value.
	Float float64
	// String is a string attribute value.
	String string
	// Bools is a list of booleans.
	Bools []bool
	// Ints is a list of integers.
	Ints []int64
	// Floats is a list of floats.
	Floats []float64
	// Strings is a list of strings.
	Strings []string
	// BlockRef names a block of the same program by index (`^1` in text).
	BlockRef int
	// BlockRefs is a list of block refs.
	BlockRefs []int
	// Long is a 64-bit integer that Paddle keeps apart from Int (its LONG
	// attribute type); `long(5)` in text.
	Long int64
	// Longs is a list of Longs; `longs[1, 2]` in text.
	Longs []int64
	// Float64 is a double that Paddle keeps apart from Float (its FLOAT64
	// attribute type; Float is its float32 FLOAT); `float64(0.5)` in text.
	Float64 float64
	// Float64s is a list of Float64s; `float64s[0.5, 1.0]` in text.
	Float64s []float64
	// VarRef names a var, resolved through the op's block chain (Paddle's
	// VAR attribute type); `var(x)` in text.
	VarRef string
	// VarRefs is a list of var refs; `vars[x, y]` in text.
	VarRefs []string
	// Scalars is a list of scalars; `scalars[1, 0.5, true]` in text.
	Scalars []Scalar
)

// ScalarKind says which field of a Scalar holds its value.
type ScalarKind uint8

// The scalar kinds, with Paddle's Scalar.Type numbers.
const (
	ScalarBool    ScalarKind = 1
	ScalarLong    ScalarKind = 2
	ScalarFloat64 ScalarKind = 3
	ScalarComplex ScalarKind = 4
)

// Scalar is a typed number (Paddle's SCALAR attribute type): a bool, an
// int64, a float64 or a complex128, as Type says; the other fields are
// zero. In text: `scalar(true)`, `scalar(3)`, `scalar(0.5)`,
// `scalar(complex(1.0, -2.0))`.
type Scalar struct {
	Type ScalarKind
	B    bool
	I    int64
	R    float64 // the float, or the real part of a complex
	Im   float64 // the imaginary part of a complex
}

// BoolScalar, LongScalar, Float64Scalar and ComplexScalar build scalars.
func BoolScalar(b bool) Scalar            { return Scalar{Type: ScalarBool, B: b} }
func LongScalar(i int64) Scalar           { return Scalar{Type: ScalarLong, I: i} }
func Float64Scalar(f float64) Scalar      { return Scalar{Type: ScalarFloat64, R: f} }
func ComplexScalar(re, im float64) Scalar { return Scalar{Type: ScalarComplex, R: re, Im: im} }

// Valid reports whether s has a known type and no field set but its own.
func (s Scalar) Valid() bool {
	switch s.Type {
	case ScalarBool:
		return s.I == 0 && s.R == 0 && s.Im == 0
	case ScalarLong:
		return !s.B && s.R == 0 && s.Im == 0
	case ScalarFloat64:
		return !s.B && s.I == 0 && s.Im == 0
	case ScalarComplex:
		return !s.B && s.I == 0
	}
	return false
}

func (Bool) Kind() AttrKind      { return KindBool }
func (Int) Kind() AttrKind       { return KindInt }
func (Float) Kind() AttrKind     { return KindFloat }
func (String) Kind() AttrKind    { return KindString }
func (Bools) Kind() AttrKind     { return KindBools }
func (Ints) Kind() AttrKind      { return KindInts }
func (Floats) Kind() AttrKind    { return KindFloats }
func (Strings) Kind() AttrKind   { return KindStrings }
func (BlockRef) Kind() AttrKind  { return KindBlock }
func (BlockRefs) Kind() AttrKind { return KindBlocks }
func (Long) Kind() AttrKind      { return KindLong }
func (Longs) Kind() AttrKind     { return KindLongs }
func (Float64) Kind() AttrKind   { return KindFloat64 }
func (Float64s) Kind() AttrKind  { return KindFloat64s }
func (VarRef) Kind() AttrKind    { return KindVarRef }
func (VarRefs) Kind() AttrKind   { return KindVarRefs }
func (Scalar) Kind() AttrKind    { return KindScalar }
func (Scalars) Kind() AttrKind   { return KindScalars }

func (Bool) isValue()      {}
func (Int) isValue()       {}
func (Float) isValue()     {}
func (String) isValue()    {}
func (Bools) isValue()     {}
func (Ints) isValue()      {}
func (Floats) isValue()    {}
func (Strings) isValue()   {}
func (BlockRef) isValue()  {}
func (BlockRefs) isValue() {}
func (Long) isValue()      {}
func (Longs) isValue()     {}
func (Float64) isValue()   {}
func (Float64s) isValue()  {}
func (VarRef) isValue()    {}
func (VarRefs) isValue()   {}
func (Scalar) isValue()    {}
func (Scalars) isValue()   {}

// cloneValue returns a value that shares no memory with v.
func cloneValue(v Value) Value {
	switch v := v.(type) {
	case Bools:
		return Bools(slices.Clone([]bool(v)))
	case Ints:
		return Ints(slices.Clone([]int64(v)))
	case Floats:
		return Floats(slices.Clone([]float64(v)))
	case Strings:
		return Strings(slices.Clone([]string(v)))
	case BlockRefs:
		return BlockRefs(slices.Clone([]int(v)))
	case Longs:
		return Longs(slices.Clone([]int64(v)))
	case Float64s:
		return Float64s(slices.Clone([]float64(v)))
	case VarRefs:
		return VarRefs(slices.Clone([]string(v)))
	case Scalars:
		return Scalars(slices.Clone([]Scalar(v)))
	}
	return v
}

// Attr is a named attribute.
type Attr struct {
	Name  string
	Value Value
}

// Attrs is an attribute list kept sorted by name with unique names, so that
// printing, hashing and equality never depend on insertion order. Use Set
// and Get rather than appending.
type Attrs []Attr

func (as Attrs) find(name string) (int, bool) {
	return sort.Find(len(as), func(i int) int {
		switch {
		case name < as[i].Name:
			return -1
		case name > as[i].Name:
			return 1
		}
		return 0
	})
}

// Get returns the value named name, or nil.
func (as Attrs) Get(name string) Value {
	if i, ok := as.find(name); ok {
		return as[i].Value
	}
	return nil
}

// Has reports whether an attribute named name is present.
func (as Attrs) Has(name string) bool {
	_, ok := as.find(name)
	return ok
}

// Set adds or replaces the attribute named name. Lists are short and
// mostly built in name order (a lowering sets every emitted op's attrs):
// a scan from the end finds the place, and an insert shifts by
// assignment, which for a few entries beats a binary search and copy.
func (as *Attrs) Set(name string, v Value) {
	a := *as
	i := len(a)
	for i > 0 && a[i-1].Name > name {
		i--
	}
	if i > 0 && a[i-1].Name == name {
		a[i-1].Value = v
		return
	}
	a = append(a, Attr{})
	for j := len(a) - 1; j > i; j-- {
		a[j] = a[j-1]
	}
	a[i] = Attr{Name: name, Value: v}
	*as = a
}

// Delete removes the attribute named name, if present.
func (as *Attrs) Delete(name string) {
	if i, ok := as.find(name); ok {
		*as = slices.Delete(*as, i, i+1)
	}
}

// Clone returns a deep copy.
func (as Attrs) Clone() Attrs {
	if as == nil {
		return nil
	}
	out := make(Attrs, len(as))
	for i, a := range as {
		out[i] = Attr{Name: a.Name, Value: cloneValue(a.Value)}
	}
	return out
}

// Int returns the integer attribute name, if it is one.
func (as Attrs) Int(name string) (int64, bool) {
	v, ok := as.Get(name).(Int)
	return int64(v), ok
}

// Bool returns the boolean attribute name, if it is one.
func (as Attrs) Bool(name string) (bool, bool) {
	v, ok := as.Get(name).(Bool)
	return bool(v), ok
}

// Float returns the float attribute name, if it is one.
func (as Attrs) Float(name string) (float64, bool) {
	v, ok := as.Get(name).(Float)
	return float64(v), ok
}

// String returns the string attribute name, if it is one.
func (as Attrs) String(name string) (string, bool) {
	v, ok := as.Get(name).(String)
	return string(v), ok
}

// Ints returns the integer-list attribute name, if it is one.
func (as Attrs) Ints(name string) ([]int64, bool) {
	v, ok := as.Get(name).(Ints)
	return []int64(v), ok
}

// AsInt reads v as an int of either width (Int or Long), as Paddle's
// attr loader does.
func AsInt(v Value) (int64, bool) {
	switch x := v.(type) {
	case Int:
		return int64(x), true
	case Long:
		return int64(x), true
	}
	return 0, false
}

// AsInts reads v as a list of ints of either width (Ints or Longs).
func AsInts(v Value) ([]int64, bool) {
	switch x := v.(type) {
	case Ints:
		return []int64(x), true
	case Longs:
		return []int64(x), true
	}
	return nil, false
}

// AsBool reads v as a bool: a Bool, or an int of either width (non-zero
// is true), as Paddle's loader reads is_test = 1.
func AsBool(v Value) (bool, bool) {
	switch x := v.(type) {
	case Bool:
		return bool(x), true
	case Int:
		return x != 0, true
	case Long:
		return x != 0, true
	}
	return false, false
}

// AsFloat reads v as a float of either width (Float or Float64).
func AsFloat(v Value) (float64, bool) {
	switch x := v.(type) {
	case Float:
		return float64(x), true
	case Float64:
		return float64(x), true
	}
	return 0, false
}

// AppendOpKey appends to b an exact spelling of op's type and attrs, for
// map keys, and reports false when an attr is of a kind AppendValueKey
// does not spell.
func AppendOpKey(b []byte, op *Op) ([]byte, bool) {
	b = append(b, op.Type...)
	b = append(b, 0)
	for _, a := range op.Attrs {
		b = append(b, a.Name...)
		b = append(b, 0)
		var ok bool
		if b, ok = AppendValueKey(b, a.Value); !ok {
			return b, false
		}
	}
	return append(b, 1), true
}

// AppendIntsKey appends to b an exact spelling of xs, for map keys: nil
// and empty spell apart (a mapping left free is not a scalar's).
func AppendIntsKey(b []byte, xs []int) []byte {
	if xs == nil {
		return append(b, 0)
	}
	b = binary.AppendUvarint(b, uint64(len(xs)+1))
	for _, x := range xs {
		b = binary.AppendVarint(b, int64(x))
	}
	return b
}

// AppendTypeKey appends to b an exact spelling of t (kind, dtype,
// shape), for map keys.
func AppendTypeKey(b []byte, t Type) []byte {
	b = append(b, byte(t.Kind), byte(t.DType))
	b = binary.AppendUvarint(b, uint64(len(t.Shape)))
	for _, d := range t.Shape {
		b = binary.AppendVarint(b, d)
	}
	return b
}

// AppendValueKey appends to b an exact spelling of v, for map keys
// (two values spell alike only when they are equal, kind included), and
// reports false for a kind it does not spell.
func AppendValueKey(b []byte, v Value) ([]byte, bool) {
	u := func(x uint64) { b = binary.AppendUvarint(b, x) }
	switch x := v.(type) {
	case Bool:
		b = append(b, 'b')
		if x {
			u(1)
		} else {
			u(0)
		}
	case Int:
		b = append(b, 'i')
		b = binary.AppendVarint(b, int64(x))
	case Long:
		b = append(b, 'l')
		b = binary.AppendVarint(b, int64(x))
	case Float:
		b = append(b, 'f')
		u(math.Float64bits(float64(x)))
	case Float64:
		b = append(b, 'F')
		u(math.Float64bits(float64(x)))
	case String:
		b = append(b, 's')
		u(uint64(len(x)))
		b = append(b, x...)
	case Ints:
		b = append(b, 'I')
		u(uint64(len(x)))
		for _, e := range x {
			b = binary.AppendVarint(b, int64(e))
		}
	case Longs:
		b = append(b, 'L')
		u(uint64(len(x)))
		for _, e := range x {
			b = binary.AppendVarint(b, int64(e))
		}
	case Floats:
		b = append(b, 'G')
		u(uint64(len(x)))
		for _, e := range x {
			u(math.Float64bits(e))
		}
	case Float64s:
		b = append(b, 'H')
		u(uint64(len(x)))
		for _, e := range x {
			u(math.Float64bits(e))
		}
	case Bools:
		b = append(b, 'B')
		u(uint64(len(x)))
		for _, e := range x {
			if e {
				b = append(b, 1)
			} else {
				b = append(b, 0)
			}
		}
	case Strings:
		b = append(b, 'S')
		u(uint64(len(x)))
		for _, e := range x {
			u(uint64(len(e)))
			b = append(b, e...)
		}
	default:
		return b, false
	}
	return b, true
}
