package passes_test

import (
	"strings"
	"testing"

	"github.com/distpass/distpass/ir"
)

// The convolutions through append-backward: conv2d with a Bias, strides
// and 4-value paddings; depthwise_conv2d with the empty Bias and
// ResidualData slots of an imported Paddle program, which its grad op
// keeps (Bias: [] in, Bias@GRAD: [] out).
func init() {
	fdCases["conv2d"] = func(f *fdModule) string {
		f.in("x", 2, 2, 5, 4)
		f.in("w", 3, 2, 3, 2)
		f.in("b", 3)
		f.out("o", 2, 3, 2, 4)
		f.b.Op("conv2d", ir.Slots("Input", "x", "Filter", "w", "Bias", "b"), ir.Slots("Output", "o"),
			ir.A("strides", ir.Ints{2, 1}), ir.A("paddings", ir.Ints{1, 0, 1, 0}), ir.A("groups", ir.Int(1)))
		return "o"
	}
	fdCases["depthwise_conv2d"] = func(f *fdModule) string {
		f.in("x", 1, 2, 4, 4)
		f.in("w", 4, 1, 3, 3)
		f.out("o", 1, 4, 2, 2)
		f.b.Op("depthwise_conv2d", []ir.Slot{ir.S("Bias"), ir.S("Filter", "w"), ir.S("Input", "x"), ir.S("ResidualData")}, ir.Slots("Output", "o"),
			ir.A("strides", ir.Ints{2, 2}), ir.A("padding_algorithm", ir.String("SAME")), ir.A("groups", ir.Int(2)))
		return "o"
	}
}

// TestAppendBackwardConvRefuses: a convolution the simulator's grad
// kernel does not compute is refused when the backward is built, naming
// the op and the attr.
func TestAppendBackwardConvRefuses(t *testing.T) {
	for _, c := range []struct {
		attrs []ir.Attr
		want  string
	}{
		{[]ir.Attr{ir.A("data_format", ir.String("NHWC"))}, "op 1 conv2d: data_format NHWC is not supported (NCHW only)"},
		{[]ir.Attr{ir.A("fuse_activation", ir.String("relu6"))}, `op 1 conv2d: attr fuse_activation "relu6" is not supported`},
		{[]ir.Attr{ir.A("fuse_activation", ir.String("relu")), ir.A("fuse_alpha", ir.Float(0.5))}, `op 1 conv2d: attr fuse_alpha 0.5 with fuse_activation "relu" (a leaky relu) is not supported`},
		{[]ir.Attr{ir.A("fuse_residual_connection", ir.Bool(true))}, "op 1 conv2d: attr fuse_residual_connection = true is not supported"},
		{[]ir.Attr{ir.A("fuse_brelu", ir.Int(1))}, "op 1 conv2d: attr fuse_brelu = true is not supported"},
	} {
		t.Run(c.attrs[len(c.attrs)-1].Name, func(t *testing.T) {
			m := ir.NewModule("conv")
			b := ir.NewBuilder(m)
			b.Var("x", ir.Tensor(ir.F32, 1, 4, 4, 2))
			b.Param("w", ir.Tensor(ir.F32, 3, 2, 1, 1)).WithFlags(ir.FlagTrainable)
			b.Var("o", ir.Tensor(ir.F32, 1, 4, 4, 3))
			b.Op("conv2d", ir.Slots("Input", "x", "Filter", "w"), ir.Slots("Output", "o"), c.attrs...)
			b.Var("loss", ir.Tensor(ir.F32))
			b.Op("mean", ir.Slots("X", "o"), ir.Slots("Out", "loss"))
			if err := b.Err(); err != nil {
				t.Fatal(err)
			}
			err := appendBackward(t, m, "loss")
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("append-backward: %v, want %q", err, c.want)
			}
		})
	}
}
