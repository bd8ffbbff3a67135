package ops_test

import (
	"slices"
	"testing"

	"github.com/distpass/distpass/ops"
)

// TestSmallOpGradSlots: the grad ops of the small ops of the imported
// Paddle models have Paddle's grad op slots, and arg_max none.
func TestSmallOpGradSlots(t *testing.T) {
	names := func(ss []ops.Slot) []string {
		var n []string
		for _, s := range ss {
			n = append(n, s.Name)
		}
		return n
	}
	for _, c := range []struct {
		typ      string
		ins, out []string
	}{
		{"relu6_grad", []string{"Out", "Out@GRAD"}, []string{"X@GRAD"}},
		{"hard_swish_grad", []string{"X", "Out@GRAD"}, []string{"X@GRAD"}},
		{"affine_channel_grad", []string{"X", "Scale", "Out@GRAD"}, []string{"X@GRAD", "Scale@GRAD", "Bias@GRAD"}},
		// A view's grad reads XShape, or X when the forward op has no
		// XShape (demo_custom_gap's flatten, as an inference export
		// leaves it): either gives X's shape.
		{"flatten_contiguous_range_grad", []string{"XShape", "X", "Out@GRAD"}, []string{"X@GRAD"}},
		{"squeeze2_grad", []string{"XShape", "X", "Out@GRAD"}, []string{"X@GRAD"}},
	} {
		d := ops.Lookup(c.typ)
		if d == nil {
			t.Errorf("%s: not defined", c.typ)
			continue
		}
		if got := names(d.Inputs); !slices.Equal(got, c.ins) {
			t.Errorf("%s: inputs %v, want %v", c.typ, got, c.ins)
		}
		if got := names(d.Outputs); !slices.Equal(got, c.out) {
			t.Errorf("%s: outputs %v, want %v", c.typ, got, c.out)
		}
	}
	for _, typ := range []string{"arg_max", "arg_min"} {
		d := ops.Lookup(typ)
		if d.Grad != nil || len(d.Inputs) != 1 || !d.Inputs[0].NoGrad {
			t.Errorf("%s: grad %v, inputs %+v: want no grad and a no-grad X", typ, d.Grad != nil, d.Inputs)
		}
	}
}

func TestSmallOpGradInferErrors(t *testing.T) {
	runDefCases(t, []defCase{
		{"affine_channel_grad ok", ` var x : f32[2, 3, 4]
 var s : f32[3]
 var g : f32[2, 3, 4]
 var dx : f32[2, 3, 4]
 var ds : f32[3]
 var db : f32[3]
 op 1 affine_channel_grad(X: x, Scale: s, Out@GRAD: g) -> (X@GRAD: dx, Scale@GRAD: ds, Bias@GRAD: db) {data_layout = "NCHW"}`, ""},
		{"affine_channel_grad Bias@GRAD", ` var x : f32[2, 3, 4]
 var s : f32[3]
 var g : f32[2, 3, 4]
 var db : f32[4]
 op 1 affine_channel_grad(X: x, Scale: s, Out@GRAD: g) -> (X@GRAD: [], Scale@GRAD: [], Bias@GRAD: db) {data_layout = "NCHW"}`,
			"op 1 affine_channel_grad: output Bias@GRAD db: declared f32[4], inferred [3]"},
		{"squeeze2_grad X@GRAD", ` var xs : f32[0, 2, 1, 3]
 var g : f32[2, 3]
 var dx : f32[2, 3]
 op 1 squeeze2_grad(XShape: xs, Out@GRAD: g) -> (X@GRAD: dx) {axes = [1]}`,
			"op 1 squeeze2_grad: output X@GRAD dx: declared f32[2, 3], inferred [2, 1, 3]"},
		{"flatten_contiguous_range_grad X@GRAD", ` var xs : f32[0, 2, 3, 4]
 var g : f32[2, 12]
 var dx : f32[2, 12]
 op 1 flatten_contiguous_range_grad(XShape: xs, Out@GRAD: g) -> (X@GRAD: dx) {start_axis = 1, stop_axis = 2}`,
			"op 1 flatten_contiguous_range_grad: output X@GRAD dx: declared f32[2, 12], inferred [2, 3, 4]"},
		{"hard_swish_grad X@GRAD", ` var x : f32[2, 3]
 var g : f32[2, 3]
 var dx : f32[3, 2]
 op 1 hard_swish_grad(X: x, Out@GRAD: g) -> (X@GRAD: dx)`,
			"op 1 hard_swish_grad: output X@GRAD dx: declared f32[3, 2], inferred [2, 3]"},
	})
}
