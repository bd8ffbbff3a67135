package sim

import (
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/ops"
)

// Args holds an op's tensors by slot name, one per arg of the slot, in
// order: the inputs going into a kernel, its outputs coming out.
type Args map[string][]*Tensor

// Kernel computes one op. It must not modify its inputs.
type Kernel func(op *ir.Op, in Args) (Args, error)

// Kernels maps an op type to its kernel.
type Kernels map[string]Kernel

// DefaultKernels returns a fresh table of every built-in kernel, forward
// and grad. Each is wrapped so that its outputs are rounded to their dtype.
// The caller may add or replace entries (the SPMD runner replaces dropout
// to give it a global index map).
func DefaultKernels() Kernels {
	ks := builtinKernels()
	registeredMu.RLock()
	for t, k := range registered {
		ks[t] = k
	}
	registeredMu.RUnlock()
	for t, k := range ks {
		ks[t] = rounded(k)
	}
	return ks
}

// builtinKernels returns a fresh table of the built-in kernels, unwrapped:
// each file's own, as it registers them next to its kernels.
func builtinKernels() Kernels {
	ks := Kernels{}
	for _, fam := range []Kernels{
		matmulKernels(),
		elementwiseKernels(),
		activationKernels(), elementaryKernels(),
		reduceKernels(),
		nnKernels(),
		convKernels(),
		poolKernels(),
		batchNormKernels(),
		affineChannelKernels(),
		optimKernels(),
		randomKernels(),
		dataKernels(), broadcastKernels(),
		moeKernels(), quantKernels(), interpKernels(),
	} {
		maps.Copy(ks, fam)
	}
	return ks
}

var (
	registeredMu sync.RWMutex
	registered   = map[string]Kernel{} // by Register
)

// Register adds the kernel of an op type the op table defines but no
// built-in kernel computes (a custom op's, ops.Add), to every table
// DefaultKernels returns from then on, for the life of the process.
// Registering a type the table does not define, or one that has a kernel
// already, is an error.
func Register(typ string, k Kernel) error {
	if ops.Lookup(typ) == nil {
		return fmt.Errorf("sim: no kernel for %s: the op table does not define it", typ)
	}
	_, builtin := builtinKernels()[typ]
	registeredMu.Lock()
	defer registeredMu.Unlock()
	if _, ok := registered[typ]; ok || builtin {
		return fmt.Errorf("sim: %s has a kernel already", typ)
	}
	registered[typ] = k
	return nil
}

// rounded wraps k so that its outputs are rounded to their dtypes.
func rounded(k Kernel) Kernel {
	return func(op *ir.Op, in Args) (Args, error) {
		out, err := k(op, in)
		for _, ts := range out {
			for _, t := range ts {
				if t != nil {
					t.round()
				}
			}
		}
		return out, err
	}
}

// errf returns an error prefixed with the op.
func errf(op *ir.Op, format string, args ...any) error {
	return fmt.Errorf("%s: "+format, append([]any{op}, args...)...)
}

// one returns the single tensor of input slot name.
func one(op *ir.Op, in Args, name string) (*Tensor, error) {
	ts := in[name]
	if len(ts) != 1 || ts[0] == nil {
		return nil, errf(op, "input %s: want one tensor, have %d", name, len(ts))
	}
	return ts[0], nil
}

// opt returns the single tensor of an optional input slot, or nil.
func opt(in Args, name string) *Tensor {
	if ts := in[name]; len(ts) == 1 {
		return ts[0]
	}
	return nil
}

// wants reports whether the op declares output slot name with args.
func wants(op *ir.Op, name string) bool { return len(op.Output(name)) > 0 }

// out1 is an Args with one tensor in slot name.
func out1(name string, t *Tensor) Args { return Args{name: {t}} }

// attrInt, attrFloat and attrBool read an attr as the op table's view
// does (ops.AttrInt, AttrFloat, AttrBool: either width, an int for a
// bool, the table's default); def serves an attr absent from the op that
// the table gives no default, and a kind verify would have refused.
func attrInt(op *ir.Op, name string, def int64) int64 {
	if op.Attrs.Get(name) == nil && ops.AttrDefault(op.Type, name) == nil {
		return def
	}
	x, err := ops.AttrInt(op, name)
	if err != nil {
		return def
	}
	return x
}

// requiredInt reads an int attr the op needs: given (either width), or
// the table's default; an error when neither is there.
func requiredInt(op *ir.Op, name string) (int64, error) {
	if op.Attrs.Get(name) == nil && ops.AttrDefault(op.Type, name) == nil {
		return 0, errf(op, "no %s", name)
	}
	x, err := ops.AttrInt(op, name)
	if err != nil {
		return 0, errf(op, "%v", err)
	}
	return x, nil
}

func attrFloat(op *ir.Op, name string, def float64) float64 {
	if op.Attrs.Get(name) == nil && ops.AttrDefault(op.Type, name) == nil {
		return def
	}
	x, err := ops.AttrFloat(op, name)
	if err != nil {
		return def
	}
	return x
}

func attrBool(op *ir.Op, name string, def bool) bool {
	if op.Attrs.Get(name) == nil && ops.AttrDefault(op.Type, name) == nil {
		return def
	}
	x, err := ops.AttrBool(op, name)
	if err != nil {
		return def
	}
	return x
}

func attrString(op *ir.Op, name, def string) string {
	v := op.Attrs.Get(name)
	if v == nil {
		v = ops.AttrDefault(op.Type, name)
	}
	if s, ok := v.(ir.String); ok {
		return string(s)
	}
	return def
}

// attrInts reads an ints attr of either width: Paddle writes some as
// longs (fill_constant's and the random ops' shape, since 2.0).
func attrInts(op *ir.Op, name string) ([]int64, bool) {
	v := op.Attrs.Get(name)
	if v == nil {
		v = ops.AttrDefault(op.Type, name) // absent: the table's default, as verify reads it
	}
	switch v := v.(type) {
	case ir.Ints:
		return slices.Clone([]int64(v)), true
	case ir.Longs:
		return slices.Clone([]int64(v)), true
	case ir.Floats: // never written by distpass, tolerated
		out := make([]int64, len(v))
		for i, f := range v {
			out[i] = int64(f)
		}
		return out, true
	}
	return nil, false
}

// normAxis turns a possibly negative axis into [0, rank).
func normAxis(op *ir.Op, axis int64, rank int) (int, error) {
	if axis < 0 {
		axis += int64(rank)
	}
	if axis < 0 || axis >= int64(rank) {
		return 0, errf(op, "axis %d out of range for rank %d", axis, rank)
	}
	return int(axis), nil
}

// like returns a zero tensor with t's dtype and shape.
func like(t *Tensor) *Tensor { return Zeros(t.DType, t.Shape...) }

// mapUnary applies f to each element of x.
func mapUnary(x *Tensor, f func(float64) float64) *Tensor {
	out := like(x)
	for i, v := range x.Data {
		out.Data[i] = f(v)
	}
	return out
}

// map2 applies f elementwise to two tensors of the same shape.
func map2(op *ir.Op, a, b *Tensor, f func(x, y float64) float64) (*Tensor, error) {
	if !slices.Equal(a.Shape, b.Shape) {
		return nil, errf(op, "shapes %v and %v differ", a.Shape, b.Shape)
	}
	out := like(b)
	for i := range a.Data {
		out.Data[i] = f(a.Data[i], b.Data[i])
	}
	return out, nil
}

// reshaped returns t with a new shape (same data, shared).
func reshaped(t *Tensor, shape []int64) *Tensor {
	return &Tensor{DType: t.DType, Shape: shape, Data: t.Data}
}
