package ops_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/ops"
)

// robustTypes are the op types of conv.go, quant.go and matmul.go.
var robustTypes = []string{
	"conv2d", "depthwise_conv2d", "pool2d", "batch_norm", "affine_channel",
	"fake_quantize_abs_max", "fake_quantize_dequantize_abs_max",
	"fake_channel_wise_quantize_abs_max", "fake_channel_wise_quantize_dequantize_abs_max",
	"fake_quantize_range_abs_max", "fake_quantize_moving_average_abs_max",
	"fake_quantize_dequantize_moving_average_abs_max", "moving_average_abs_max_scale",
	"fake_dequantize_max_abs", "fake_channel_wise_dequantize_max_abs",
	"quantize_linear", "dequantize_linear", "matmul", "matmul_v2", "mul",
}

// Verify never panics on these ops, however wrong their input ranks,
// dims and attr values: a bad op is an error, not a crash.
func TestVisionQuantInferNeverPanics(t *testing.T) {
	rng := rand.New(rand.NewPCG(24, 7))
	shape := func() []int64 {
		s := make([]int64, rng.IntN(6))
		for i := range s {
			s[i] = int64(rng.IntN(8)) - 1
		}
		return s
	}
	ints := func() ir.Ints {
		v := make(ir.Ints, rng.IntN(6))
		for i := range v {
			v[i] = int64(rng.IntN(8)) - 2
		}
		return v
	}
	for _, typ := range robustTypes {
		d := ops.Lookup(typ)
		if d == nil {
			t.Fatalf("%s has no definition", typ)
		}
		for n := range 2000 {
			m := ir.NewModule("robust")
			bl := ir.NewBuilder(m)
			var ins, outs []ir.Slot
			for i, s := range d.Inputs {
				if s.Optional && rng.IntN(2) == 0 {
					continue
				}
				args := []string{}
				for j := range 1 + rng.IntN(2)*boolInt(s.Variadic) {
					name := fmt.Sprintf("in%d_%d", i, j)
					bl.Var(name, ir.Tensor(ir.F32, shape()...))
					args = append(args, name)
				}
				ins = append(ins, ir.Slot{Name: s.Name, Args: args})
			}
			for i, s := range d.Outputs {
				if s.Optional && rng.IntN(2) == 0 {
					continue
				}
				name := fmt.Sprintf("out%d", i)
				bl.Var(name, ir.Tensor(ir.F32, shape()...))
				outs = append(outs, ir.Slot{Name: s.Name, Args: []string{name}})
			}
			var attrs []ir.Attr
			for _, a := range d.Attrs {
				if rng.IntN(3) == 0 {
					continue
				}
				var v ir.Value
				switch {
				case a.Allowed != nil && rng.IntN(2) == 0:
					v = a.Allowed[rng.IntN(len(a.Allowed))]
				case a.Type == ir.KindInt:
					v = ir.Int(rng.IntN(24) - 4)
				case a.Type == ir.KindInts:
					v = ints()
				case a.Type == ir.KindBool:
					v = ir.Bool(rng.IntN(2) == 0)
				case a.Type == ir.KindFloat:
					v = ir.Float(rng.Float64())
				case a.Type == ir.KindString:
					v = ir.String([]string{"NCHW", "NHWC", "AnyLayout", "SAME", "VALID", "EXPLICIT", "max", "avg", "x"}[rng.IntN(9)])
				default:
					continue
				}
				attrs = append(attrs, ir.A(a.Name, v))
			}
			op := bl.Op(typ, ins, outs, attrs...)
			if bl.Err() != nil {
				t.Fatal(bl.Err())
			}
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Fatalf("%s case %d: %s panics: %v\n%s", typ, n, op, r, ir.Print(m))
					}
				}()
				ops.Verify(m, ops.Options{})
			}()
		}
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
