package irgen

import (
	"strconv"

	"github.com/distpass/distpass/ir"
)

// MegatronMLP returns a soundly annotated training program of about nOps
// ops in all, on a dp×mp mesh of ranks 0..dp*mp-1: pairs of layers, the
// first column-parallel (W split by columns, matmul_v2:0) and the second
// row-parallel (W split by rows, matmul_v2:1), each with a bias add and a
// relu, then a mean loss, the grad op of every forward op and sgd on every
// parameter, and the startup initialisers. It partitions on every rank,
// which makes it the input of the partitioner's benchmarks.
func MegatronMLP(nOps, dp, mp int) *ir.Module {
	const hidden, batch = 64, 16
	pairs := max(1, (nOps-4+19)/20) // 20 ops per pair of layers
	m := ir.NewModule("megatron_" + strconv.Itoa(nOps))
	b := ir.NewBuilder(m)
	s := b.Startup()
	ranks := make([]int, dp*mp)
	for i := range ranks {
		ranks[i] = i
	}
	b.Mesh("world", []int{dp, mp}, []string{"dp", "mp"}, ranks)
	act := ir.Tensor(ir.F32, batch, hidden)
	b.Var("x", act).WithDist("world", 0, -1).WithFlags(ir.FlagIsData | ir.FlagStopGradient)
	b.Persist("lr", ir.Tensor(ir.F32, 1)).WithDist("world", -1)
	s.Persist("lr", ir.Tensor(ir.F32, 1)).WithDist("world", -1)
	s.Op("fill_constant", nil, ir.Slots("Out", "lr"), ir.A("shape", ir.Ints{1}), ir.A("value", ir.Float(0.01)))

	type layer struct {
		in, w, bias, mm, add, out string
		col                       bool
		fwd                       [3]int64
	}
	var ls []layer
	in := "x"
	for i := range 2 * pairs {
		p := "l" + strconv.Itoa(i) + "."
		l := layer{in: in, w: p + "w", bias: p + "b", mm: p + "mm", add: p + "add", out: p + "out", col: i%2 == 0}
		wMap, bMap, outMap, impl := []int{-1, 1}, []int{1}, []int{0, 1}, 0
		if !l.col {
			wMap, bMap, outMap, impl = []int{1, -1}, []int{-1}, []int{0, -1}, 1
		}
		b.Param(l.w, ir.Tensor(ir.F32, hidden, hidden)).WithDist("world", wMap...).WithFlags(ir.FlagTrainable)
		b.Param(l.bias, ir.Tensor(ir.F32, hidden)).WithDist("world", bMap...).WithFlags(ir.FlagTrainable)
		s.Param(l.w, ir.Tensor(ir.F32, hidden, hidden)).WithDist("world", wMap...)
		s.Param(l.bias, ir.Tensor(ir.F32, hidden)).WithDist("world", bMap...)
		s.Op("uniform_random", nil, ir.Slots("Out", l.w), ir.A("shape", ir.Ints{hidden, hidden}),
			ir.A("min", ir.Float(-0.1)), ir.A("max", ir.Float(0.1)), ir.A("seed", ir.Int(int64(i))))
		s.Op("fill_constant", nil, ir.Slots("Out", l.bias), ir.A("shape", ir.Ints{hidden}), ir.A("value", ir.Float(0)))
		for _, n := range []string{l.mm, l.add, l.out} {
			b.Var(n, act).WithDist("world", outMap...)
		}
		mm := b.Op("matmul_v2", ir.Slots("X", l.in, "Y", l.w), ir.Slots("Out", l.mm),
			ir.A("trans_x", ir.Bool(false)), ir.A("trans_y", ir.Bool(false)))
		b.Annotate(mm, "matmul_v2", impl)
		add := b.Op("elementwise_add", ir.Slots("X", l.mm, "Y", l.bias), ir.Slots("Out", l.add), ir.A("axis", ir.Int(-1)))
		b.Annotate(add, "elementwise", 0)
		relu := b.Op("relu", ir.Slots("X", l.add), ir.Slots("Out", l.out))
		b.Annotate(relu, "elementwise", 0)
		l.fwd = [3]int64{mm.ID, add.ID, relu.ID}
		ls = append(ls, l)
		in = l.out
	}
	b.Var("loss", ir.Tensor(ir.F32)).WithDist("world").WithPartial(0, ir.ReduceAvg)
	b.Var("loss@GRAD", ir.Tensor(ir.F32)).WithDist("world")
	mean := b.Op("mean", ir.Slots("X", in), ir.Slots("Out", "loss")).WithRole(ir.RoleLoss)
	b.Annotate(mean, "default", 0)
	fill := b.Op("fill_constant", nil, ir.Slots("Out", "loss@GRAD"), ir.A("shape", ir.Ints{}), ir.A("value", ir.Float(1))).
		WithRole(ir.RoleBackward | ir.RoleLoss)
	b.Annotate(fill, "default", 0)
	b.Var(in+"@GRAD", act).WithDist("world", 0, -1)
	mg := b.Op("mean_grad", ir.Slots("X", in, "Out@GRAD", "loss@GRAD"), ir.Slots("X@GRAD", in+"@GRAD")).
		WithRole(ir.RoleBackward).WithFwd(mean.ID)
	b.Annotate(mg, "default", 0)
	for i := len(ls) - 1; i >= 0; i-- {
		l := ls[i]
		outMap, bMap, wMap := []int{0, 1}, []int{1}, []int{-1, 1}
		if !l.col {
			outMap, bMap, wMap = []int{0, -1}, []int{-1}, []int{1, -1}
		}
		b.Var(l.add+"@GRAD", act).WithDist("world", outMap...)
		b.Var(l.mm+"@GRAD", act).WithDist("world", outMap...)
		b.Var(l.w+"@GRAD", ir.Tensor(ir.F32, hidden, hidden)).WithDist("world", wMap...)
		b.Var(l.bias+"@GRAD", ir.Tensor(ir.F32, hidden)).WithDist("world", bMap...)
		bwd := ir.RoleBackward
		rg := b.Op("relu_grad", ir.Slots("Out", l.out, "Out@GRAD", l.out+"@GRAD"), ir.Slots("X@GRAD", l.add+"@GRAD")).
			WithRole(bwd).WithFwd(l.fwd[2])
		b.Annotate(rg, "elementwise", 0)
		ag := b.Op("elementwise_add_grad", ir.Slots("X", l.mm, "Y", l.bias, "Out@GRAD", l.add+"@GRAD"),
			ir.Slots("X@GRAD", l.mm+"@GRAD", "Y@GRAD", l.bias+"@GRAD"), ir.A("axis", ir.Int(-1))).WithRole(bwd).WithFwd(l.fwd[1])
		b.Annotate(ag, "elementwise", 0)
		outs := []ir.Slot{ir.S("X@GRAD"), ir.S("Y@GRAD", l.w+"@GRAD")}
		if i > 0 {
			inMap := []int{0, -1}
			if !l.col {
				inMap = []int{0, 1}
			}
			b.Var(l.in+"@GRAD", act).WithDist("world", inMap...)
			outs[0] = ir.S("X@GRAD", l.in+"@GRAD")
		}
		g := b.Op("matmul_v2_grad", ir.Slots("X", l.in, "Y", l.w, "Out@GRAD", l.mm+"@GRAD"), outs,
			ir.A("trans_x", ir.Bool(false)), ir.A("trans_y", ir.Bool(false))).WithRole(bwd).WithFwd(l.fwd[0])
		impl := 0
		if !l.col {
			impl = 1
		}
		b.Annotate(g, "matmul_v2", impl)
	}
	for _, l := range ls {
		for _, p := range []string{l.w, l.bias} {
			op := b.Op("sgd", ir.Slots("Param", p, "Grad", p+"@GRAD", "LearningRate", "lr"), ir.Slots("ParamOut", p)).
				WithRole(ir.RoleOptimize)
			b.Annotate(op, "default", 0)
			m.ParamGrads = append(m.ParamGrads, ir.ParamGrad{Param: p, Grad: p + "@GRAD"})
		}
	}
	if err := b.Err(); err != nil {
		panic("irgen.MegatronMLP: " + err.Error())
	}
	return m
}
