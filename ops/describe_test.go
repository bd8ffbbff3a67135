package ops_test

import (
	"testing"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/ops"
)

func TestDescribe(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{ops.Slot{Name: "X"}.String(), "X"},
		{ops.Slot{Name: "Bias", Optional: true}.String(), "Bias?"},
		{ops.Slot{Name: "X", Variadic: true}.String(), "X..."},
		{ops.Slot{Name: "ShapeTensor", Optional: true, Variadic: true, NoGrad: true}.String(), "ShapeTensor?..."},
		{ops.Attr{Name: "trans_x", Type: ir.KindBool, Default: ir.Bool(false)}.String(), "trans_x:bool=false"},
		{ops.Attr{Name: "alpha", Type: ir.KindFloat, Default: ir.Float(1)}.String(), "alpha:float=1.0"},
		{ops.Attr{Name: "shape", Type: ir.KindInts}.String(), "shape:ints"},
		{ops.Attr{Name: "data_format", Type: ir.KindString, Default: ir.String("NCHW")}.String(), `data_format:string="NCHW"`},
		{ops.ValueString(ir.Ints{1, -1}), "[1, -1]"},
		{ops.ValueString(ir.Longs{2}), "longs[2]"},
		{ops.ValueString(ir.Float64(0.5)), "float64(0.5)"},
		{ops.ValueString(nil), "none"},
		{ops.Lookup("matmul_v2").Signature(), "X, Y -> Out"},
	} {
		if c.got != c.want {
			t.Errorf("got %s, want %s", c.got, c.want)
		}
	}
	if got := ops.GradOf("matmul_v2_grad"); len(got) != 1 || got[0] != "matmul_v2" {
		t.Errorf("GradOf(matmul_v2_grad) = %v, want [matmul_v2]", got)
	}
	if got := ops.GradOf("matmul_v2"); got != nil {
		t.Errorf("GradOf(matmul_v2) = %v, want none", got)
	}
}
