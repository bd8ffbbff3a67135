package ops_test

import (
	"testing"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/ops"
)

func TestPassesPartial(t *testing.T) {
	sum := []ir.Partial{{Dim: 0}}
	max := []ir.Partial{{Dim: 0, Reduce: ir.ReduceMax}}
	op := func(typ string, attrs ...ir.Attr) *ir.Op {
		return &ir.Op{Type: typ, Inputs: []ir.Slot{ir.S("X", "x")}, Outputs: []ir.Slot{ir.S("Out", "y")}, Attrs: attrs}
	}
	for _, c := range []struct {
		op      *ir.Op
		partial []ir.Partial
		want    bool
	}{
		{op("assign"), max, true},
		{op("reshape2"), max, true},
		{op("cumsum"), sum, true},
		{op("cumsum"), max, false}, // a running sum of maxima is not the max of running sums
		{op("scale", ir.A("bias", ir.Float(0)), ir.A("scale", ir.Float(-1))), sum, true},
		{op("scale", ir.A("bias", ir.Float(0)), ir.A("scale", ir.Float(-1))), max, false}, // -max is a min
		{op("scale", ir.A("bias", ir.Float(1)), ir.A("scale", ir.Float(2))), sum, false},  // the bias would count once per part
		{op("cast"), sum, false}, // an integer cast of a sum is not the sum of the casts
		{op("relu"), sum, false},
	} {
		if got := ops.PassesPartial(c.op, c.partial); got != c.want {
			t.Errorf("%s %v: %v, want %v", c.op.Type, c.partial, got, c.want)
		}
	}
}

func TestLinearInParts(t *testing.T) {
	op := func(typ string, ins ...string) *ir.Op {
		o := &ir.Op{Type: typ, Outputs: []ir.Slot{ir.S("Out", "o")}}
		for i, a := range ins {
			o.Inputs = append(o.Inputs, ir.S([]string{"X", "Y", "Z"}[i], a))
		}
		return o
	}
	for _, c := range []struct {
		op      *ir.Op
		partial []bool
		want    bool
	}{
		{op("elementwise_add", "x", "y"), []bool{true, true}, true},
		{op("elementwise_add", "x", "y"), []bool{true, false}, false}, // the whole y added on every rank
		{op("elementwise_mul", "x", "y"), []bool{true, false}, true},
		{op("elementwise_mul", "x", "y"), []bool{true, true}, false}, // a product of sums
		{op("matmul_v2", "x", "y"), []bool{false, true}, true},
		{op("elementwise_div", "x", "y"), []bool{false, true}, false}, // 1/(a+b) is not 1/a + 1/b
		{op("elementwise_div", "x", "y"), []bool{true, false}, true},
		{op("assign", "x"), []bool{true}, true},
		{op("relu", "x"), []bool{true}, false},
	} {
		if got := ops.LinearInParts(c.op, c.partial); got != c.want {
			t.Errorf("%s %v: %v, want %v", c.op.Type, c.partial, got, c.want)
		}
	}
}

func TestKeepsExtremum(t *testing.T) {
	op := func(typ string, attrs ...ir.Attr) *ir.Op {
		return &ir.Op{Type: typ, Inputs: []ir.Slot{ir.S("X", "x")}, Outputs: []ir.Slot{ir.S("Out", "y")}, Attrs: attrs}
	}
	for _, c := range []struct {
		op   *ir.Op
		want bool
	}{
		{op("relu"), true},
		{op("assign"), true},
		{op("reshape2"), true},
		{op("gelu"), false}, // dips below zero: not monotone
		{op("scale", ir.A("bias", ir.Float(0)), ir.A("scale", ir.Float(-1))), false},
		{op("leaky_relu", ir.A("alpha", ir.Float(-0.5))), false},
		{op("leaky_relu", ir.A("alpha", ir.Float(0.1))), true},
		{op("softmax"), false},
	} {
		if got := ops.KeepsExtremum(c.op); got != c.want {
			t.Errorf("%s: %v, want %v", c.op.Type, got, c.want)
		}
	}
}
