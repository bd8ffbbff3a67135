package sim

import (
	"math/rand/v2"

	"github.com/distpass/distpass/ir"
)

// Finite-difference cases of conv2d_grad and depthwise_conv2d_grad over
// the geometry the attrs give: strides, explicit paddings of 2 and 4
// values, SAME and VALID, dilations, groups, depthwise channel
// multipliers, a Bias and a fused relu.
func init() {
	moreGradCases = append(moreGradCases, func() []gradCase {
		r := rand.New(rand.NewPCG(27, 2))
		u := func(shape ...int64) *Tensor { return randT(r, -1, 1, shape...) }
		var cs []gradCase
		conv := func(name, typ string, x, w, b *Tensor, attrs ...ir.Attr) {
			ins := Sl("Input", "x", "Filter", "w")
			gins := Sl("Input", "x", "Filter", "w")
			outs := Sl("Input@GRAD", "dx", "Filter@GRAD", "dw")
			in := Args{"Input": {x}, "Filter": {w}}
			if b != nil {
				ins = append(ins, S("Bias", "b"))
				gins = append(gins, S("Bias", "b"))
				outs = append(outs, S("Bias@GRAD", "db"))
				in["Bias"] = []*Tensor{b}
			}
			gins = append(gins, S("Output@GRAD", "g"))
			cs = append(cs, gradCase{typ + "/" + name, mkOp(typ, ins, Sl("Output", "o"), attrs...),
				mkOp(typ+"_grad", gins, outs, attrs...), in, "Output"})
		}
		pads := func(p ...int64) ir.Attr { return A("paddings", ir.Ints(p)) }
		strides := func(s ...int64) ir.Attr { return A("strides", ir.Ints(s)) }
		algo := func(a string) ir.Attr { return A("padding_algorithm", ir.String(a)) }
		conv("plain", "conv2d", u(2, 3, 5, 5), u(4, 3, 3, 3), nil)
		conv("stride-pad", "conv2d", u(1, 2, 6, 5), u(3, 2, 3, 2), nil, strides(2, 1), pads(1, 2))
		conv("pads4-stride3", "conv2d", u(1, 2, 7, 6), u(2, 2, 3, 3), nil, strides(3, 2), pads(0, 2, 1, 0))
		conv("same-stride2", "conv2d", u(2, 2, 6, 7), u(3, 2, 3, 3), nil, algo("SAME"), strides(2, 2), A("dilations", ir.Ints{2, 2}))
		conv("same-even", "conv2d", u(1, 2, 5, 4), u(2, 2, 2, 4), nil, algo("SAME"))
		conv("valid", "conv2d", u(2, 2, 6, 6), u(2, 2, 3, 3), nil, algo("VALID"), pads(2, 2), strides(2, 2))
		conv("dilation", "conv2d", u(1, 2, 7, 6), u(3, 2, 3, 2), nil, A("dilations", ir.Ints{2, 3}), pads(1, 1))
		conv("groups-bias", "conv2d", u(1, 4, 4, 4), u(6, 2, 3, 3), u(6), A("groups", ir.Int(2)), pads(1, 1))
		conv("groups4", "conv2d", u(1, 4, 4, 4), u(4, 1, 2, 2), nil, A("groups", ir.Int(4)), strides(2, 2))
		conv("fused-relu", "conv2d", u(1, 2, 4, 4), u(3, 2, 3, 3), u(3), A("fuse_activation", ir.String("relu")), pads(1, 1))
		conv("depthwise", "depthwise_conv2d", u(1, 3, 6, 6), u(3, 1, 3, 3), nil, A("groups", ir.Int(3)), pads(1, 1), strides(2, 2))
		conv("depthwise-same", "depthwise_conv2d", u(1, 3, 5, 5), u(3, 1, 3, 3), nil, A("groups", ir.Int(3)), algo("SAME"), strides(2, 2))
		conv("depthwise-multiplier", "depthwise_conv2d", u(1, 2, 4, 5), u(6, 1, 3, 2), u(6), A("groups", ir.Int(2)),
			A("dilations", ir.Ints{1, 2}), pads(1, 0, 2, 1))
		return cs
	})
}
