package opdef_test

import (
	"testing"

	"github.com/distpass/distpass/analysis/opdef"
	"github.com/distpass/distpass/ir"
)

func TestDescribe(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{opdef.Slot{Name: "X"}.String(), "X"},
		{opdef.Slot{Name: "Bias", Optional: true}.String(), "Bias?"},
		{opdef.Slot{Name: "X", Variadic: true}.String(), "X..."},
		{opdef.Slot{Name: "ShapeTensor", Optional: true, Variadic: true, NoGrad: true}.String(), "ShapeTensor?..."},
		{opdef.Attr{Name: "trans_x", Type: ir.KindBool, Default: ir.Bool(false)}.String(), "trans_x:bool=false"},
		{opdef.Attr{Name: "alpha", Type: ir.KindFloat, Default: ir.Float(1)}.String(), "alpha:float=1.0"},
		{opdef.Attr{Name: "shape", Type: ir.KindInts}.String(), "shape:ints"},
		{opdef.Attr{Name: "data_format", Type: ir.KindString, Default: ir.String("NCHW")}.String(), `data_format:string="NCHW"`},
		{opdef.ValueString(ir.Ints{1, -1}), "[1, -1]"},
		{opdef.ValueString(ir.Longs{2}), "longs[2]"},
		{opdef.ValueString(ir.Float64(0.5)), "float64(0.5)"},
		{opdef.ValueString(nil), "none"},
		{opdef.Lookup("matmul_v2").Signature(), "X, Y -> Out"},
	} {
		if c.got != c.want {
			t.Errorf("got %s, want %s", c.got, c.want)
		}
	}
	if got := opdef.GradOf("matmul_v2_grad"); len(got) != 1 || got[0] != "matmul_v2" {
		t.Errorf("GradOf(matmul_v2_grad) = %v, want [matmul_v2]", got)
	}
	if got := opdef.GradOf("matmul_v2"); got != nil {
		t.Errorf("GradOf(matmul_v2) = %v, want none", got)
	}
}
