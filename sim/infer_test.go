package sim

import (
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/ops"
)

// inferCase is one op run on random inputs to compare its kernel's
// output types with what the op table infers. Src is a module with one
// block whose first op is the op under test; input vars need concrete
// shapes, output vars may declare -1 dims (the kernel fixes them).
type inferCase struct {
	Name string
	Src  string
	// IntHigh bounds the random values of integer inputs: [0, IntHigh);
	// 2 when 0. Values holds inputs that must be exact (counts, indices).
	IntHigh int
	Values  map[string]*Tensor
}

// inferCases holds the cases of every family, added by the family files
// (infer_*_test.go) from their init functions.
var inferCases []inferCase

// dataDependent lists the op types whose output shape the data decides
// (MoE's dispatched rows): inference may leave dims open there.
var dataDependent = map[string]bool{}

// TestInferMatchesKernels runs every case's op on random inputs and
// checks that the inferred dtype and shape of each output are exactly
// the kernel's, and that every kernel type has a case.
func TestInferMatchesKernels(t *testing.T) {
	ks := DefaultKernels()
	covered := map[string]bool{}
	for _, c := range inferCases {
		t.Run(c.Name, func(t *testing.T) {
			m, err := ir.Parse(c.Name, []byte(c.Src))
			if err != nil {
				t.Fatal(err)
			}
			b := m.Main.Global()
			op := b.Ops[0]
			covered[op.Type] = true
			k := ks[op.Type]
			if k == nil {
				t.Fatalf("%s has no kernel", op.Type)
			}
			rng := rand.New(rand.NewPCG(1, uint64(len(c.Name))))
			in := Args{}
			for _, s := range op.Inputs {
				for _, a := range s.Args {
					if v := c.Values[a]; v != nil {
						in[s.Name] = append(in[s.Name], v)
						continue
					}
					in[s.Name] = append(in[s.Name], randomTensor(t, rng, b.Var(a), c.IntHigh))
				}
			}
			out, err := k(op, in)
			if err != nil {
				t.Fatalf("kernel: %v", err)
			}
			inferred, err := ops.InferOp(op, b.Var)
			if err != nil {
				t.Fatal(err)
			}
			if ops.Lookup(op.Type).Infer != nil && len(inferred) == 0 {
				t.Fatalf("%s: inference set no output", op.Type)
			}
			for _, r := range inferred {
				ts := out[r.Slot]
				if r.Index >= len(ts) || ts[r.Index] == nil {
					t.Errorf("output %s[%d]: inferred %s, the kernel wrote none", r.Slot, r.Index, r.Type)
					continue
				}
				got := ts[r.Index]
				if got.DType != r.Type.DType {
					t.Errorf("output %s[%d]: kernel dtype %s, inferred %s", r.Slot, r.Index, got.DType, r.Type.DType)
				}
				shapeOK := slices.Equal(got.Shape, r.Type.Shape) ||
					r.Scalar && (len(got.Shape) == 0 || len(got.Shape) == 1 && got.Shape[0] == 1) ||
					dataDependent[op.Type] && ops.Compatible(got.Shape, r.Type.Shape)
				if !shapeOK {
					t.Errorf("output %s[%d]: kernel shape %v, inferred %v (%s)", r.Slot, r.Index, got.Shape, r.Type.Shape, ops.Lookup(op.Type).Shape)
				}
			}
		})
	}
	var missing []string
	for _, typ := range slices.Sorted(maps.Keys(ks)) {
		if !covered[typ] && ops.Lookup(typ) != nil && ops.Lookup(typ).Infer != nil {
			missing = append(missing, typ)
		}
	}
	if len(missing) > 0 {
		t.Errorf("kernels with an inference and no case: %s", strings.Join(missing, ", "))
	}
}

// randomTensor returns a tensor of v's type with random values.
func randomTensor(t *testing.T, rng *rand.Rand, v *ir.Var, intHigh int) *Tensor {
	t.Helper()
	if v == nil || !v.Type.IsTensor() {
		t.Fatalf("input %v is not a declared dense tensor", v)
	}
	if intHigh == 0 {
		intHigh = 2
	}
	x, err := NewZeros(v.Type.DType, v.Type.Shape...)
	if err != nil {
		t.Fatalf("input %s: %v", v.Name(), err)
	}
	for i := range x.Data {
		switch {
		case v.Type.DType.IsFloat():
			x.Data[i] = rng.Float64()*2 - 1
		default:
			x.Data[i] = float64(rng.IntN(intHigh))
		}
	}
	return x
}
