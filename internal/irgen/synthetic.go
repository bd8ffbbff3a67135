package irgen

import (
	"strconv"

	"github.com/distpass/distpass/ir"
)

// Synthetic returns a valid, annotated training program of about nOps ops
// in all, main and startup together, never fewer: a stack of dense layers
// (matmul_v2, elementwise_add, relu) on a 2x2 dp×mp mesh, column-parallel
// but the last, row-parallel, a mean loss over dp, the
// grad op of every forward op, and an sgd update of every parameter, with
// a startup program that initialises them. Each layer is 8 ops in main and
// 2 in startup; 4 more ops make the loss and the learning rate.
func Synthetic(nOps int) *ir.Module {
	const hidden, batch = 64, 16
	layers := max(1, (nOps-4+9)/10)
	m := ir.NewModule("synthetic_" + strconv.Itoa(nOps))
	b := ir.NewBuilder(m)
	s := b.Startup()
	b.Mesh("world", []int{2, 2}, []string{"dp", "mp"}, []int{0, 1, 2, 3})
	act := ir.Tensor(ir.F32, batch, hidden)

	b.Var("x", act).WithDist("world", 0, -1).WithFlags(ir.FlagIsData | ir.FlagStopGradient)
	b.Persist("lr", ir.Tensor(ir.F32, 1)).WithDist("world", -1)
	s.Persist("lr", ir.Tensor(ir.F32, 1)).WithDist("world", -1)
	s.Op("fill_constant", nil, ir.Slots("Out", "lr"), ir.A("shape", ir.Ints{1}), ir.A("value", ir.Float(0.01)), ir.A("dtype", ir.Int(5)))

	type layer struct{ in, w, bias, mm, add, out string }
	ls := make([]layer, layers)
	fwdIDs := make([][3]int64, layers)
	in := "x"
	for i := range ls {
		p := "l" + strconv.Itoa(i) + "."
		l := layer{in: in, w: p + "w", bias: p + "b", mm: p + "mm", add: p + "add", out: p + "out"}
		ls[i] = l
		wm, bm, am, impl := []int{-1, 1}, []int{1}, []int{0, 1}, 0
		if i == layers-1 {
			// The last layer is row-parallel: the loss's input is whole
			// along mp, so the loss averages over the batch alone, as the
			// data-parallel grad sync assumes.
			wm, bm, am, impl = []int{1, -1}, []int{-1}, []int{0, -1}, 1
		}
		b.Param(l.w, ir.Tensor(ir.F32, hidden, hidden)).WithDist("world", wm...).WithFlags(ir.FlagTrainable)
		b.Param(l.bias, ir.Tensor(ir.F32, hidden)).WithDist("world", bm...).WithFlags(ir.FlagTrainable)
		s.Param(l.w, ir.Tensor(ir.F32, hidden, hidden)).WithDist("world", wm...)
		s.Param(l.bias, ir.Tensor(ir.F32, hidden)).WithDist("world", bm...)
		s.Op("uniform_random", nil, ir.Slots("Out", l.w), ir.A("shape", ir.Ints{hidden, hidden}),
			ir.A("min", ir.Float(-0.1)), ir.A("max", ir.Float(0.1)), ir.A("seed", ir.Int(int64(i))))
		s.Op("fill_constant", nil, ir.Slots("Out", l.bias), ir.A("shape", ir.Ints{hidden}), ir.A("value", ir.Float(0)))
		for _, n := range []string{l.mm, l.add, l.out} {
			b.Var(n, act).WithDist("world", am...)
		}
		mm := b.Op("matmul_v2", ir.Slots("X", l.in, "Y", l.w), ir.Slots("Out", l.mm),
			ir.A("trans_x", ir.Bool(false)), ir.A("trans_y", ir.Bool(false)))
		b.Annotate(mm, "matmul_v2", impl)
		add := b.Op("elementwise_add", ir.Slots("X", l.mm, "Y", l.bias), ir.Slots("Out", l.add), ir.A("axis", ir.Int(-1)))
		b.Annotate(add, "elementwise", 0)
		relu := b.Op("relu", ir.Slots("X", l.add), ir.Slots("Out", l.out))
		b.Annotate(relu, "elementwise", 0)
		fwdIDs[i] = [3]int64{mm.ID, add.ID, relu.ID}
		in = l.out
	}
	// The last activation is split along dp: its mean on a rank is the
	// mean of its batch shard.
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
	for i := layers - 1; i >= 0; i-- {
		l := ls[i]
		wm, bm, am, impl := []int{-1, 1}, []int{1}, []int{0, 1}, 0
		if i == layers-1 {
			wm, bm, am, impl = []int{1, -1}, []int{-1}, []int{0, -1}, 1
		}
		for _, n := range []string{l.add + "@GRAD", l.mm + "@GRAD", l.w + "@GRAD", l.bias + "@GRAD"} {
			v := b.Var(n, act).WithDist("world", am...)
			if n == l.w+"@GRAD" {
				v.Type = ir.Tensor(ir.F32, hidden, hidden)
				v.Dist.DimsMapping = wm
			} else if n == l.bias+"@GRAD" {
				v.Type = ir.Tensor(ir.F32, hidden)
				v.Dist.DimsMapping = bm
			}
		}
		bwd := ir.RoleBackward
		rg := b.Op("relu_grad", ir.Slots("Out", l.out, "Out@GRAD", l.out+"@GRAD"), ir.Slots("X@GRAD", l.add+"@GRAD")).
			WithRole(bwd).WithFwd(fwdIDs[i][2])
		b.Annotate(rg, "elementwise", 0)
		ag := b.Op("elementwise_add_grad", ir.Slots("X", l.mm, "Y", l.bias, "Out@GRAD", l.add+"@GRAD"),
			ir.Slots("X@GRAD", l.mm+"@GRAD", "Y@GRAD", l.bias+"@GRAD"), ir.A("axis", ir.Int(-1))).WithRole(bwd).WithFwd(fwdIDs[i][1])
		b.Annotate(ag, "elementwise", 0)
		outs := []ir.Slot{ir.S("X@GRAD"), ir.S("Y@GRAD", l.w+"@GRAD")}
		if i > 0 {
			b.Var(l.in+"@GRAD", act).WithDist("world", 0, 1) // split as l.in, the last layer's out
			outs[0] = ir.S("X@GRAD", l.in+"@GRAD")
		}
		mg := b.Op("matmul_v2_grad", ir.Slots("X", l.in, "Y", l.w, "Out@GRAD", l.mm+"@GRAD"), outs,
			ir.A("trans_x", ir.Bool(false)), ir.A("trans_y", ir.Bool(false))).WithRole(bwd).WithFwd(fwdIDs[i][0])
		b.Annotate(mg, "matmul_v2", impl)
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
		panic("irgen.Synthetic: " + err.Error())
	}
	return m
}
