package ops_test

import (
	"testing"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/ops"
)

// TestAttrView: the one reading of an attr takes each width of its kind
// and an int for a bool, as verify accepts them, falls back on the
// table's default, and refuses another kind.
func TestAttrView(t *testing.T) {
	op := func(typ string, attrs ...ir.Attr) *ir.Op { return &ir.Op{Type: typ, Attrs: ir.Attrs(attrs)} }
	for _, c := range []struct {
		op   *ir.Op
		name string
		want any // bool, int64, float64, or an error's text
	}{
		{op("matmul_v2", ir.A("trans_y", ir.Bool(true))), "trans_y", true},
		{op("matmul_v2", ir.A("trans_y", ir.Int(1))), "trans_y", true},
		{op("matmul_v2", ir.A("trans_y", ir.Long(0))), "trans_y", false},
		{op("matmul_v2"), "trans_y", false},
		{op("scale"), "bias_after_scale", true}, // the table's default
		{op("matmul_v2", ir.A("trans_y", ir.String("yes"))), "trans_y", "attr trans_y has kind string, want bool"},
		{op("top_k_v2", ir.A("k", ir.Int(3))), "k", int64(3)},
		{op("top_k_v2", ir.A("k", ir.Long(4))), "k", int64(4)},
		{op("top_k_v2"), "k", int64(1)},
		{op("top_k_v2", ir.A("k", ir.Float(2))), "k", "attr k has kind float, want int"},
		{op("scale", ir.A("scale", ir.Float64(0.5))), "scale", 0.5},
		{op("scale"), "scale", 1.0},
		{op("scale", ir.A("scale", ir.Int(2))), "scale", "attr scale has kind int, want float"},
		{op("no_such_op"), "x", false},
	} {
		var got any
		var err error
		switch c.want.(type) {
		case bool:
			got, err = ops.AttrBool(c.op, c.name)
		case int64:
			got, err = ops.AttrInt(c.op, c.name)
		case float64:
			got, err = ops.AttrFloat(c.op, c.name)
		case string:
			switch c.want.(string)[len(c.want.(string))-4:] {
			case "bool":
				_, err = ops.AttrBool(c.op, c.name)
			case " int":
				_, err = ops.AttrInt(c.op, c.name)
			default:
				_, err = ops.AttrFloat(c.op, c.name)
			}
			if err == nil || err.Error() != c.want {
				t.Errorf("%s %s: error %v, want %q", c.op.Type, c.name, err, c.want)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%s %s = %v, %v; want %v", c.op.Type, c.name, got, err, c.want)
		}
	}
}
