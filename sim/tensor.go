package sim

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/distpass/distpass/ir"
)

// Tensor is a dense row-major tensor. Data has Numel elements; every dtype's
// values are held as float64 (see the package doc for the rounding rules).
// An empty Shape is a scalar with one element.
type Tensor struct {
	DType ir.DType
	Shape []int64
	Data  []float64
}

// numel is the element count of shape.
func numel(shape []int64) int64 {
	n := int64(1)
	for _, d := range shape {
		n *= d
	}
	return n
}

// MaxElements is the most elements a tensor of the simulator may hold. It
// holds every value as a float64, so 2^28 elements are 2 GiB: a tensor
// beyond that is a program too large to check on one machine, and
// making it would exhaust the memory rather than fail.
const MaxElements = 1 << 28

// checkShape returns an error when shape has a negative dim or more than
// MaxElements elements (a product that overflows int64 included).
func checkShape(shape []int64) error {
	for _, d := range shape {
		if d < 0 {
			return fmt.Errorf("negative dim in shape %v", shape)
		}
		if d == 0 {
			return nil // no elements, whatever the other dims
		}
	}
	n := int64(1)
	for _, d := range shape {
		if n > MaxElements/d {
			return fmt.Errorf("shape %v has more than %d elements, the most a simulated tensor holds", shape, MaxElements)
		}
		n *= d
	}
	return nil
}

// NewZeros returns a tensor of dtype dt and the given shape filled with
// zeros, or an error when the shape has a negative dim or more than
// MaxElements elements.
func NewZeros(dt ir.DType, shape ...int64) (*Tensor, error) {
	if err := checkShape(shape); err != nil {
		return nil, err
	}
	return &Tensor{DType: dt, Shape: slices.Clone(shape), Data: make([]float64, numel(shape))}, nil
}

// ShapeError is the value Zeros panics with. The interpreter turns it
// into an error naming the op whose kernel asked for the tensor, so a
// kernel may call Zeros with a shape computed from attrs and inputs.
type ShapeError struct{ Err error }

func (e ShapeError) Error() string { return "sim.Zeros: " + e.Err.Error() }

// Zeros returns a tensor of dtype dt and the given shape filled with zeros.
// It panics with a ShapeError on a negative dim or more than MaxElements
// elements; NewZeros returns the error instead.
func Zeros(dt ir.DType, shape ...int64) *Tensor {
	t, err := NewZeros(dt, shape...)
	if err != nil {
		panic(ShapeError{err})
	}
	return t
}

// Full returns a tensor of the given shape filled with v (rounded to dt).
func Full(dt ir.DType, v float64, shape ...int64) *Tensor {
	t := Zeros(dt, shape...)
	v = roundTo(dt, v)
	for i := range t.Data {
		t.Data[i] = v
	}
	return t
}

// Scalar returns a 0-D tensor holding v (rounded to dt).
func Scalar(dt ir.DType, v float64) *Tensor { return Full(dt, v) }

// FromData returns a tensor of shape over a copy of data, rounded to dt. The
// length of data must be the shape's element count.
func FromData(dt ir.DType, shape []int64, data []float64) (*Tensor, error) {
	if err := checkShape(shape); err != nil {
		return nil, err
	}
	if n := numel(shape); int64(len(data)) != n {
		return nil, fmt.Errorf("sim.FromData: shape %v has %d elements, data %d", shape, n, len(data))
	}
	t := &Tensor{DType: dt, Shape: slices.Clone(shape), Data: slices.Clone(data)}
	t.round()
	return t, nil
}

// MustFromData is FromData that panics on error, for tests and examples.
func MustFromData(dt ir.DType, shape []int64, data []float64) *Tensor {
	t, err := FromData(dt, shape, data)
	if err != nil {
		panic(err)
	}
	return t
}

// Numel returns the number of elements.
func (t *Tensor) Numel() int64 { return int64(len(t.Data)) }

// Rank returns the number of dims.
func (t *Tensor) Rank() int { return len(t.Shape) }

// Clone returns a deep copy.
func (t *Tensor) Clone() *Tensor {
	return &Tensor{DType: t.DType, Shape: slices.Clone(t.Shape), Data: slices.Clone(t.Data)}
}

// strides returns the row-major strides of shape.
func strides(shape []int64) []int64 {
	s := make([]int64, len(shape))
	acc := int64(1)
	for i := len(shape) - 1; i >= 0; i-- {
		s[i] = acc
		acc *= shape[i]
	}
	return s
}

// At returns the element at idx (one index per dim). It panics when idx
// is out of range, like a slice index.
func (t *Tensor) At(idx ...int64) float64 {
	if len(idx) != len(t.Shape) {
		panic(fmt.Sprintf("sim: At with %d indices on shape %v", len(idx), t.Shape))
	}
	off := int64(0)
	for i, x := range idx {
		if x < 0 || x >= t.Shape[i] {
			panic(fmt.Sprintf("sim: index %v out of range for shape %v", idx, t.Shape))
		}
		off = off*t.Shape[i] + x
	}
	return t.Data[off]
}

// Equal reports whether a and b have the same dtype, shape and bits (NaNs
// are equal to NaNs with the same bits).
func Equal(a, b *Tensor) bool {
	if a.DType != b.DType || !slices.Equal(a.Shape, b.Shape) || len(a.Data) != len(b.Data) {
		return false
	}
	for i := range a.Data {
		if math.Float64bits(a.Data[i]) != math.Float64bits(b.Data[i]) {
			return false
		}
	}
	return true
}

func sameShape(a, b *Tensor) error {
	if !slices.Equal(a.Shape, b.Shape) {
		return fmt.Errorf("sim: shapes %v and %v differ", a.Shape, b.Shape)
	}
	return nil
}

// MaxAbsDiff returns the largest |a-b| over the elements, +Inf when one is
// NaN and the other is not; an error when the shapes differ.
func MaxAbsDiff(a, b *Tensor) (float64, error) {
	if err := sameShape(a, b); err != nil {
		return 0, err
	}
	m := 0.0
	for i := range a.Data {
		m = max(m, absDiff(a.Data[i], b.Data[i]))
	}
	return m, nil
}

// MaxRelDiff returns the largest |a-b| / max(|a|, |b|, floor) over the
// elements; floor keeps values near zero from dominating (use e.g. 1e-6).
func MaxRelDiff(a, b *Tensor, floor float64) (float64, error) {
	if err := sameShape(a, b); err != nil {
		return 0, err
	}
	m := 0.0
	for i := range a.Data {
		d := absDiff(a.Data[i], b.Data[i])
		m = max(m, d/max(math.Abs(a.Data[i]), math.Abs(b.Data[i]), floor))
	}
	return m, nil
}

func absDiff(x, y float64) float64 {
	xn, yn := math.IsNaN(x), math.IsNaN(y)
	switch {
	case xn && yn:
		return 0
	case xn || yn:
		return math.Inf(1)
	case x == y: // equal infinities
		return 0
	}
	return math.Abs(x - y)
}

// Slice returns the part of t with indices [start, end) along dim.
func (t *Tensor) Slice(dim int, start, end int64) (*Tensor, error) {
	if dim < 0 || dim >= len(t.Shape) {
		return nil, fmt.Errorf("sim: slice dim %d of shape %v", dim, t.Shape)
	}
	if start < 0 || end < start || end > t.Shape[dim] {
		return nil, fmt.Errorf("sim: slice [%d, %d) of dim %d of shape %v", start, end, dim, t.Shape)
	}
	outer := numel(t.Shape[:dim])
	inner := numel(t.Shape[dim+1:])
	shape := slices.Clone(t.Shape)
	shape[dim] = end - start
	out := &Tensor{DType: t.DType, Shape: shape, Data: make([]float64, 0, numel(shape))}
	for o := range outer {
		base := (o*t.Shape[dim] + start) * inner
		out.Data = append(out.Data, t.Data[base:base+(end-start)*inner]...)
	}
	return out, nil
}

// Concat joins ts along dim; they must agree in dtype and in every other dim.
func Concat(dim int, ts ...*Tensor) (*Tensor, error) {
	if len(ts) == 0 {
		return nil, fmt.Errorf("sim: concat of no tensors")
	}
	first := ts[0]
	if dim < 0 || dim >= len(first.Shape) {
		return nil, fmt.Errorf("sim: concat dim %d of shape %v", dim, first.Shape)
	}
	shape := slices.Clone(first.Shape)
	shape[dim] = 0
	for _, t := range ts {
		ok := t.DType == first.DType && len(t.Shape) == len(first.Shape)
		for i := 0; ok && i < len(t.Shape); i++ {
			ok = i == dim || t.Shape[i] == first.Shape[i]
		}
		if !ok {
			return nil, fmt.Errorf("sim: concat along dim %d of %s%v and %s%v", dim, first.DType, first.Shape, t.DType, t.Shape)
		}
		shape[dim] += t.Shape[dim]
	}
	outer := numel(shape[:dim])
	inner := numel(shape[dim+1:])
	out := &Tensor{DType: first.DType, Shape: shape, Data: make([]float64, 0, numel(shape))}
	for o := range outer {
		for _, t := range ts {
			n := t.Shape[dim] * inner
			out.Data = append(out.Data, t.Data[o*n:(o+1)*n]...)
		}
	}
	return out, nil
}

// String formats t as "f32[2, 3] [[1, 2, 3], [4, 5, 6]]", eliding the
// middle of long tensors.
func (t *Tensor) String() string {
	var sb strings.Builder
	sb.WriteString(ir.Tensor(t.DType, t.Shape...).String())
	sb.WriteByte(' ')
	if len(t.Data) > 64 {
		sb.WriteString("[")
		for i, v := range t.Data[:8] {
			if i > 0 {
				sb.WriteString(", ")
			}
			sb.WriteString(strconv.FormatFloat(v, 'g', -1, 64))
		}
		fmt.Fprintf(&sb, ", … (%d elements)]", len(t.Data))
		return sb.String()
	}
	t.format(&sb, 0, 0)
	return sb.String()
}

func (t *Tensor) format(sb *strings.Builder, dim int, off int64) {
	if dim == len(t.Shape) {
		sb.WriteString(strconv.FormatFloat(t.Data[off], 'g', -1, 64))
		return
	}
	inner := numel(t.Shape[dim+1:])
	sb.WriteByte('[')
	for i := range t.Shape[dim] {
		if i > 0 {
			sb.WriteString(", ")
		}
		t.format(sb, dim+1, off+i*inner)
	}
	sb.WriteByte(']')
}

// roundTo rounds v to a value of dtype dt.
func roundTo(dt ir.DType, v float64) float64 {
	switch {
	case dt == ir.F32 || dt == ir.F16 || dt == ir.BF16:
		return float64(float32(v))
	case dt == ir.Boolean:
		if v != 0 {
			return 1
		}
		return 0
	case dt.IsInteger():
		if math.IsNaN(v) {
			return 0
		}
		return math.Trunc(v)
	}
	return v
}

// round rounds every element to t's dtype in place.
func (t *Tensor) round() {
	if t.DType == ir.F64 {
		return
	}
	for i, v := range t.Data {
		t.Data[i] = roundTo(t.DType, v)
	}
}
