package ir

import (
	"fmt"
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
)

var attrKindNames = [...]string{"bool", "int", "float", "string", "bools", "ints", "floats", "strings", "block", "blocks"}

func (k AttrKind) String() string {
	if int(k) < len(attrKindNames) {
		return attrKindNames[k]
	}
	return fmt.Sprintf("attrkind(%d)", uint8(k))
}

// Value is an attribute value: one of Bool, Int, Float, String, Bools, Ints,
// Floats, Strings, BlockRef, BlockRefs. The set is closed.
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
)

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

// Set adds or replaces the attribute named name.
func (as *Attrs) Set(name string, v Value) {
	i, ok := as.find(name)
	if ok {
		(*as)[i].Value = v
		return
	}
	*as = slices.Insert(*as, i, Attr{Name: name, Value: v})
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
