package paddle

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/ops"
	"github.com/distpass/distpass/sim"
)

// smallOps are the op types of the fixtures whose kernels are checked on
// the fixtures' own ops: each as the program has it, attrs and all.
var smallOps = map[string]bool{
	"relu": true, "relu6": true, "squeeze2": true, "flatten_contiguous_range": true,
	"reshape2": true, "transpose2": true, "elementwise_add": true, "scale": true,
	"softmax": true, "mul": true, "matmul": true, "matmul_v2": true,
}

// TestFixtureOpsRun runs every op of smallOps of every fixture in the
// simulator, on random inputs of its declared types with each unknown
// (batch) dim 2, and checks each output against the type the program
// declares for it (its -1 dims 2 likewise) and the op table infers.
// Ops alike (type, attrs, input types) run once, and ops whose X is
// larger than maxElems not at all (the early activations of the
// ImageNet models: ops of their kinds run on smaller inputs).
func TestFixtureOpsRun(t *testing.T) {
	ks := sim.DefaultKernels()
	fx := fixtures(t)
	names := make([]string, 0, len(fx))
	for n := range fx {
		names = append(names, n)
	}
	sort.Strings(names)
	ran := map[string]int{}
	seen := map[string]bool{}
	for _, name := range names {
		m, err := Import(name, fx[name])
		if err != nil {
			t.Fatal(err)
		}
		b := m.Main.Global()
		vars := map[string]*ir.Var{}
		concrete := func(a string) *ir.Var {
			if v, ok := vars[a]; ok {
				return v
			}
			v := b.Var(a)
			if v != nil && v.Type.IsTensor() {
				c := *v
				c.Type.Shape = slices.Clone(v.Type.Shape)
				for i, d := range c.Type.Shape {
					if d < 0 {
						c.Type.Shape[i] = 2
					}
				}
				v = &c
			}
			vars[a] = v
			return v
		}
		r := rand.New(rand.NewPCG(27, uint64(len(name))))
		for _, op := range b.Ops {
			if !smallOps[op.Type] {
				continue
			}
			// Ops alike in attrs the op table lists and input types
			// run once (the models repeat their blocks).
			key := op.Type
			for _, a := range ops.Lookup(op.Type).Attrs {
				key += fmt.Sprintf(" %s=%v", a.Name, op.Attrs.Get(a.Name))
			}
			for _, s := range op.Inputs {
				for _, a := range s.Args {
					key += fmt.Sprintf(" %s:%v", s.Name, concrete(a).Type)
				}
			}
			if seen[key] || xElems(op, concrete) > maxElems {
				continue
			}
			seen[key] = true
			in := sim.Args{}
			for _, s := range op.Inputs {
				for _, a := range s.Args {
					v := concrete(a)
					x, err := sim.NewZeros(v.Type.DType, v.Type.Shape...)
					if err != nil {
						t.Fatalf("%s: %s: input %s: %v", name, op, a, err)
					}
					for i := range x.Data {
						x.Data[i] = r.Float64()*2 - 1
					}
					in[s.Name] = append(in[s.Name], x)
				}
			}
			k := ks[op.Type]
			if k == nil {
				t.Errorf("%s: %s: no kernel", name, op)
				continue
			}
			out, err := k(op, in)
			if err != nil {
				t.Errorf("%s: %v", name, err)
				continue
			}
			ran[op.Type]++
			for _, s := range op.Outputs {
				for i, a := range s.Args {
					got := out[s.Name]
					if i >= len(got) {
						t.Errorf("%s: %s: no output %s", name, op, s.Name)
						continue
					}
					if want := concrete(a).Type.Shape; !slices.Equal(got[i].Shape, want) {
						t.Errorf("%s: %s: output %s %s: kernel shape %v, the program declares %v", name, op, s.Name, a, got[i].Shape, want)
					}
				}
			}
			inferred, err := ops.InferOp(op, concrete)
			if err != nil {
				t.Errorf("%s: %v", name, err)
				continue
			}
			for _, o := range inferred {
				if got := out[o.Slot][o.Index]; !slices.Equal(got.Shape, o.Type.Shape) || got.DType != o.Type.DType {
					t.Errorf("%s: %s: output %s: kernel %s %v, inferred %s", name, op, o.Slot, got.DType, got.Shape, o.Type)
				}
			}
		}
	}
	for typ := range smallOps {
		if ran[typ] == 0 {
			t.Errorf("no fixture op of type %s ran", typ)
		}
	}
	t.Logf("ops run: %v", ran)
}

// maxElems bounds the elements of the X of an op TestFixtureOpsRun runs.
const maxElems = 1 << 18

// xElems returns the number of elements of op's input X.
func xElems(op *ir.Op, lookup func(string) *ir.Var) int64 {
	n := int64(0)
	for _, a := range op.Input("X") {
		if v := lookup(a); v != nil && v.Type.IsTensor() {
			k := int64(1)
			for _, d := range v.Type.Shape {
				k *= d
			}
			n += k
		}
	}
	return n
}
