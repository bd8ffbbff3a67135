package sim

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/distpass/distpass/ir"
)

// mkOp builds op id 1 of type typ with the given slots and attrs.
func mkOp(typ string, ins, outs []ir.Slot, attrs ...ir.Attr) *ir.Op {
	op := &ir.Op{ID: 1, Type: typ, Inputs: ins, Outputs: outs}
	for _, a := range attrs {
		op.Attrs.Set(a.Name, a.Value)
	}
	return op
}

// tf returns an f64 tensor (f for f32).
func td(shape []int64, data ...float64) *Tensor { return MustFromData(ir.F64, shape, data) }
func tf(shape []int64, data ...float64) *Tensor { return MustFromData(ir.F32, shape, data) }
func sh(d ...int64) []int64                     { return d }

// randT returns an f64 tensor of uniform values in [lo, hi).
func randT(r *rand.Rand, lo, hi float64, shape ...int64) *Tensor {
	t := Zeros(ir.F64, shape...)
	for i := range t.Data {
		t.Data[i] = lo + (hi-lo)*r.Float64()
	}
	return t
}

func run(t *testing.T, op *ir.Op, in Args) Args {
	t.Helper()
	k := DefaultKernels()[op.Type]
	if k == nil {
		t.Fatalf("no kernel %s", op.Type)
	}
	out, err := k(op, in)
	if err != nil {
		t.Fatalf("%s: %v", op.Type, err)
	}
	return out
}

func wantT(t *testing.T, what string, got, want *Tensor) {
	t.Helper()
	if got == nil {
		t.Fatalf("%s: missing", what)
	}
	if !Equal(got, want) {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}

func wantErr(t *testing.T, op *ir.Op, in Args, sub string) {
	t.Helper()
	_, err := DefaultKernels()[op.Type](op, in)
	if err == nil || !strings.Contains(err.Error(), sub) {
		t.Errorf("%s: err = %v, want it to contain %q", op.Type, err, sub)
	}
}

// fdTol is the relative tolerance of the finite-difference checks (with a
// floor of 1e-3 on the magnitude, so near-zero grads compare absolutely).
const fdTol = 1e-6

// checkGrad compares the grad op's outputs with central differences of the
// forward op. The scalar is L = sum(G * fwd[outSlot]) for a random G; the
// grad op's inputs are taken by slot name from the forward inputs, the
// forward outputs, and G for <outSlot>@GRAD. Every grad output S@GRAD the
// grad op declares is checked against dL/dS.
func checkGrad(t *testing.T, fwd, grad *ir.Op, in Args, outSlot string) float64 {
	t.Helper()
	ks := DefaultKernels()
	r := rand.New(rand.NewPCG(7, 7))
	out, err := ks[fwd.Type](fwd, in)
	if err != nil {
		t.Fatalf("%s: %v", fwd, err)
	}
	y := out[outSlot][0]
	g := randT(r, -1, 1, y.Shape...)
	gin := Args{}
	for _, s := range grad.Inputs {
		switch {
		case s.Name == outSlot+"@GRAD":
			gin[s.Name] = []*Tensor{g}
		case in[s.Name] != nil:
			gin[s.Name] = in[s.Name]
		case out[s.Name] != nil:
			gin[s.Name] = out[s.Name]
		default:
			t.Fatalf("%s: no value for grad input %s", grad, s.Name)
		}
	}
	gout, err := ks[grad.Type](grad, gin)
	if err != nil {
		t.Fatalf("%s: %v", grad, err)
	}
	loss := func() float64 {
		o, err := ks[fwd.Type](fwd, in)
		if err != nil {
			t.Fatalf("%s: %v", fwd, err)
		}
		s := 0.0
		for i, v := range o[outSlot][0].Data {
			s += g.Data[i] * v
		}
		return s
	}
	worst := 0.0
	for _, s := range grad.Outputs {
		if len(s.Args) == 0 {
			continue
		}
		src := strings.TrimSuffix(s.Name, "@GRAD")
		an := gout[s.Name]
		if len(an) != len(in[src]) || len(an) == 0 {
			t.Fatalf("%s: %d %s for %d %s", grad, len(an), s.Name, len(in[src]), src)
		}
		for k := range an { // each arg of a variadic slot (concat's X)
			args := slices.Clone(in[src])
			x := args[k].Clone()
			args[k] = x
			in[src] = args // perturb a private copy
			num := like(x)
			for i := range x.Data {
				v := x.Data[i]
				h := 1e-6 * max(1, math.Abs(v))
				x.Data[i] = v + h
				lp := loss()
				x.Data[i] = v - h
				lm := loss()
				x.Data[i] = v
				num.Data[i] = (lp - lm) / (2 * h)
			}
			d, err := MaxRelDiff(an[k], num, 1e-3)
			if err != nil {
				t.Fatalf("%s %s %d: %v", grad, s.Name, k, err)
			}
			if d > fdTol {
				t.Errorf("%s %s %d: max rel diff %.3g > %g\nanalytic %v\nnumeric  %v", grad, s.Name, k, d, fdTol, an[k], num)
			}
			worst = max(worst, d)
		}
	}
	return worst
}
