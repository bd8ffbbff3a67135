package ir_test

import (
	"strconv"
	"testing"

	"github.com/distpass/distpass/internal/irgen"
	"github.com/distpass/distpass/ir"
)

// benchModule builds a data- and tensor-parallel MLP of about nOps ops in
// main's block 0: per layer a forward matmul_v2 and relu, their grad ops
// (with fwd), and an sgd op; every var and op annotated.
func benchModule(nOps int) *ir.Module {
	layers := max(nOps/5, 1)
	m := ir.NewModule("bench")
	bl := ir.NewBuilder(m)
	bl.Mesh("world", []int{2, 4}, []string{"dp", "mp"}, []int{0, 1, 2, 3, 4, 5, 6, 7})
	bl.Persist("lr", ir.Tensor(ir.F32, 1)).WithDist("world", -1)
	x := func(i int) string { return "x" + strconv.Itoa(i) }
	w := func(i int) string { return "w" + strconv.Itoa(i) }
	h := func(i int) string { return "h" + strconv.Itoa(i) }
	g := func(s string) string { return s + "@GRAD" }
	act := ir.Tensor(ir.F32, 64, 1024)
	wt := ir.Tensor(ir.F32, 1024, 1024)
	bl.Var(x(0), act).WithDist("world", 0, -1).WithFlags(ir.FlagIsData | ir.FlagStopGradient)
	for i := range layers {
		bl.Param(w(i), wt).WithDist("world", -1, 1).WithFlags(ir.FlagTrainable)
		bl.Var(h(i), act).WithDist("world", 0, 1)
		bl.Var(x(i+1), act).WithDist("world", 0, 1)
		bl.Var(g(h(i)), act).WithDist("world", 0, 1)
		bl.Var(g(x(i+1)), act).WithDist("world", 0, 1)
		bl.Var(g(w(i)), wt).WithDist("world", -1, 1).WithPartial(0, ir.ReduceSum)
	}
	fwd := make([][2]int64, layers)
	for i := range layers {
		mm := bl.Op("matmul_v2", ir.Slots("X", x(i), "Y", w(i)), ir.Slots("Out", h(i)),
			ir.A("trans_x", ir.Bool(false)), ir.A("trans_y", ir.Bool(false)))
		relu := bl.Op("relu", ir.Slots("X", h(i)), ir.Slots("Out", x(i+1)))
		bl.Annotate(mm, "matmul_v2", 0)
		bl.Annotate(relu, "default", 0)
		fwd[i] = [2]int64{mm.ID, relu.ID}
	}
	for i := layers - 1; i >= 0; i-- {
		rg := bl.Op("relu_grad", ir.Slots("Out", x(i+1), "Out@GRAD", g(x(i+1))), ir.Slots("X@GRAD", g(h(i))))
		bl.Annotate(rg, "default", 0).WithRole(ir.RoleBackward).WithFwd(fwd[i][1])
		outs := []ir.Slot{ir.S("X@GRAD"), ir.S("Y@GRAD", g(w(i)))}
		if i > 0 {
			outs[0] = ir.S("X@GRAD", g(x(i)))
		}
		mg := bl.Op("matmul_v2_grad", ir.Slots("X", x(i), "Y", w(i), "Out@GRAD", g(h(i))), outs,
			ir.A("trans_x", ir.Bool(false)), ir.A("trans_y", ir.Bool(false)))
		bl.Annotate(mg, "matmul_v2", 0).WithRole(ir.RoleBackward).WithFwd(fwd[i][0])
	}
	for i := range layers {
		sgd := bl.Op("sgd", ir.Slots("Param", w(i), "Grad", g(w(i)), "LearningRate", "lr"), ir.Slots("ParamOut", w(i)))
		bl.Annotate(sgd, "default", 0).WithRole(ir.RoleOptimize)
	}
	if err := bl.Err(); err != nil {
		panic(err)
	}
	return m
}

func benchVerify(b *testing.B, m *ir.Module) {
	if err := ir.Verify(m); err != nil {
		b.Fatal(err)
	}
	n := m.Main.NumOps()
	b.ReportAllocs()
	for b.Loop() {
		if err := ir.Verify(m); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/irop")
}

func BenchmarkVerify(b *testing.B) {
	for _, n := range []int{1000, 10000, 100000} {
		b.Run("ops="+strconv.Itoa(n), func(b *testing.B) { benchVerify(b, benchModule(n)) })
	}
}

// BenchmarkVerifyClone verifies a clone of the module. Clone lays out a
// block's vars, and its ops, in one array each, where the builder
// allocates them one by one: the difference from BenchmarkVerify is the
// cost of memory layout.
func BenchmarkVerifyClone(b *testing.B) {
	for _, n := range []int{100000} {
		b.Run("ops="+strconv.Itoa(n), func(b *testing.B) { benchVerify(b, benchModule(n).Clone()) })
	}
}

// BenchmarkVerifySynthetic verifies synthetic training modules with a
// startup program and a params-grads list, at 10^5 and 10^6 ops: a
// million ops' name tables, main's and startup's, outgrow the caches.
func BenchmarkVerifySynthetic(b *testing.B) {
	for _, n := range []int{100000, 1000000} {
		b.Run("ops="+strconv.Itoa(n), func(b *testing.B) { benchVerify(b, irgen.Synthetic(n)) })
	}
}
