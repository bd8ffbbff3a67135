package ir

import "fmt"

// DType is the element type of a dense tensor.
type DType uint8

// The dtypes of DESIGN.md. DTypeInvalid is the zero value, so a Type that
// was never set is caught by the verifier instead of passing as bool.
const (
	DTypeInvalid DType = iota
	Boolean
	U8
	I8
	I16
	I32
	I64
	F16
	BF16
	F32
	F64
	numDTypes
)

var dtypeNames = [numDTypes]string{"invalid", "bool", "u8", "i8", "i16", "i32", "i64", "f16", "bf16", "f32", "f64"}

// String returns the dtype's text-format spelling, such as "f32".
func (d DType) String() string {
	if d < numDTypes {
		return dtypeNames[d]
	}
	return fmt.Sprintf("dtype(%d)", uint8(d))
}

// Valid reports whether d is one of the named dtypes.
func (d DType) Valid() bool { return d > DTypeInvalid && d < numDTypes }

// IsFloat reports whether d is a floating-point dtype.
func (d DType) IsFloat() bool { return d == F16 || d == BF16 || d == F32 || d == F64 }

// IsInteger reports whether d is an integer dtype (bool excluded).
func (d DType) IsInteger() bool { return d >= U8 && d <= I64 }

// Size is the width of one element in bytes.
func (d DType) Size() int {
	switch d {
	case Boolean, U8, I8:
		return 1
	case I16, F16, BF16:
		return 2
	case I32, F32:
		return 4
	case I64, F64:
		return 8
	}
	return 0
}

// ParseDType returns the dtype spelled s.
func ParseDType(s string) (DType, bool) {
	for d := Boolean; d < numDTypes; d++ {
		if dtypeNames[d] == s {
			return d, true
		}
	}
	return DTypeInvalid, false
}

// TypeKind says whether a var is a dense tensor or one of the no-shape
// kinds Paddle programs carry (readers, scopes, feed and fetch lists,
// tensor arrays, selected rows, ...).
type TypeKind uint8

// The var type kinds. Only DenseTensor has a dtype and a shape. The
// comment names Paddle's VarType.Type of each.
const (
	DenseTensor  TypeKind = iota // DENSE_TENSOR (LOD_TENSOR)
	Reader                       // READER
	StepScopes                   // STEP_SCOPES
	TensorArray                  // DENSE_TENSOR_ARRAY (LOD_TENSOR_ARRAY)
	FeedList                     // FEED_MINIBATCH: the feed var
	FetchList                    // FETCH_LIST: the fetch var
	Raw                          // RAW
	SelectedRows                 // SELECTED_ROWS
	LoDRankTable                 // LOD_RANK_TABLE
	PlaceList                    // PLACE_LIST
	Tuple                        // TUPLE
	StringKind                   // STRING
	StringsKind                  // STRINGS
	Vocab                        // VOCAB
	FeedVarList                  // FEED_LIST
	PString                      // PSTRING
	SparseCOO                    // SPARSE_COO
	SparseCSR                    // SPARSE_CSR
	FetchVarList                 // FETCH_VAR_LIST (old programs only)
	numTypeKinds
)

var typeKindNames = [numTypeKinds]string{"tensor", "reader", "step_scopes", "tensor_array", "feed_list", "fetch_list", "raw",
	"selected_rows", "lod_rank_table", "place_list", "tuple", "string", "strings", "vocab", "feed_var_list", "pstring",
	"sparse_coo", "sparse_csr", "fetch_var_list"}

// String returns the kind's text-format spelling.
func (k TypeKind) String() string {
	if k < numTypeKinds {
		return typeKindNames[k]
	}
	return fmt.Sprintf("typekind(%d)", uint8(k))
}

// parseNoShapeKind returns the no-shape kind spelled s.
func parseNoShapeKind(s string) (TypeKind, bool) {
	for k := Reader; k < numTypeKinds; k++ {
		if typeKindNames[k] == s {
			return k, true
		}
	}
	return DenseTensor, false
}

// Type is a var's type: a dense tensor with dtype and shape (-1 is an
// unknown dim, an empty shape a scalar), or a no-shape kind.
//
// Programs imported from Paddle carry more, kept so that they export as
// they came: a dense tensor's LoD level, when the program declares one
// (HasLoD; LoD is the level), and what a no-shape kind describes, in Elems:
// the element tensor of a tensor array, the tensor of selected rows,
// strings, a vocab or a sparse tensor (one element each); the tensors a
// reader yields; the element types of a tuple (a tensor element with a
// dtype and no shape stands for that dtype, one of another kind for the
// kind). Elems of a dense tensor are always empty; elements of a no-shape
// kind never have elements of their own, except none at all.
type Type struct {
	Kind   TypeKind
	DType  DType
	HasLoD bool // beside the other bytes: a Type is 64 bytes, not 72
	LoD    int
	Shape  []int64
	Elems  []Type
}

// Tensor returns a dense tensor type.
func Tensor(d DType, shape ...int64) Type {
	if shape == nil {
		shape = []int64{}
	}
	return Type{Kind: DenseTensor, DType: d, Shape: shape}
}

// NoShape returns a type of a no-shape kind such as Reader.
func NoShape(k TypeKind) Type { return Type{Kind: k} }

// IsTensor reports whether t is a dense tensor type.
func (t Type) IsTensor() bool { return t.Kind == DenseTensor }

// Rank is the number of dims of a dense tensor, 0 for a scalar or no-shape kind.
func (t Type) Rank() int { return len(t.Shape) }

// Numel returns the element count and whether it is known: false when a
// dim is -1 or the product overflows int64.
func (t Type) Numel() (int64, bool) {
	n := int64(1)
	for _, d := range t.Shape {
		if d < 0 {
			return 0, false
		}
		if d != 0 && n > (1<<63-1)/d {
			return 0, false
		}
		n *= d
	}
	return n, true
}

// String returns the type's text-format spelling, such as "f32[8, 16]".
func (t Type) String() string {
	var p printer
	p.typ(t)
	return string(p.buf)
}

// paddleCodes maps dtypes to Paddle's VarType codes, which programs carry
// in attrs such as fill_constant's and cast's dtype.
var paddleCodes = [numDTypes]int64{
	Boolean: 0, I16: 1, I32: 2, I64: 3, F16: 4, F32: 5, F64: 6, U8: 20, I8: 21, BF16: 22,
}

// PaddleCode returns Paddle's VarType code of d.
func (d DType) PaddleCode() (int64, bool) {
	if !d.Valid() {
		return 0, false
	}
	return paddleCodes[d], true
}

// DTypeFromPaddle returns the dtype of Paddle's VarType code.
func DTypeFromPaddle(code int64) (DType, bool) {
	for d := Boolean; d < numDTypes; d++ {
		if paddleCodes[d] == code {
			return d, true
		}
	}
	return DTypeInvalid, false
}
