package irgen

import (
	"strconv"

	"github.com/distpass/distpass/ir"
)

// ForwardMLP returns a serial, forward-only program of about nOps ops,
// never fewer: a stack of residual dense layers, each
// out = in + relu(in·w + b) in four ops (matmul_v2, elementwise_add, relu,
// elementwise_add), and a mean to the scalar var "loss". Each layer's
// input is read twice, so its gradient has two parts. The input x is data
// with stop_gradient; the weights and biases are trainable params. It is
// the input of append-backward benchmarks.
func ForwardMLP(nOps int) *ir.Module {
	const hidden, batch = 64, 16
	layers := max(1, (nOps-1+3)/4)
	m := ir.NewModule("forward_mlp_" + strconv.Itoa(nOps))
	b := ir.NewBuilder(m)
	act := ir.Tensor(ir.F32, batch, hidden)
	b.Var("x", act).WithFlags(ir.FlagIsData | ir.FlagStopGradient)
	in := "x"
	for i := range layers {
		p := "l" + strconv.Itoa(i) + "."
		w, bias, mm, add, relu, out := p+"w", p+"b", p+"mm", p+"add", p+"relu", p+"out"
		b.Param(w, ir.Tensor(ir.F32, hidden, hidden)).WithFlags(ir.FlagTrainable)
		b.Param(bias, ir.Tensor(ir.F32, hidden)).WithFlags(ir.FlagTrainable)
		for _, n := range []string{mm, add, relu, out} {
			b.Var(n, act)
		}
		b.Op("matmul_v2", ir.Slots("X", in, "Y", w), ir.Slots("Out", mm),
			ir.A("trans_x", ir.Bool(false)), ir.A("trans_y", ir.Bool(false)))
		b.Op("elementwise_add", ir.Slots("X", mm, "Y", bias), ir.Slots("Out", add), ir.A("axis", ir.Int(-1)))
		b.Op("relu", ir.Slots("X", add), ir.Slots("Out", relu))
		b.Op("elementwise_add", ir.Slots("X", in, "Y", relu), ir.Slots("Out", out), ir.A("axis", ir.Int(-1)))
		in = out
	}
	b.Var("loss", ir.Tensor(ir.F32))
	b.Op("mean", ir.Slots("X", in), ir.Slots("Out", "loss"))
	if err := b.Err(); err != nil {
		panic("irgen.ForwardMLP: " + err.Error())
	}
	return m
}
