package sim

import (
	"math"
	"os"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/distpass/distpass/internal/irgen"
	"github.com/distpass/distpass/ir"
)

func parseFile(t *testing.T, path string) *ir.Module {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m, err := ir.Parse(path, src)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// goldenInput returns the serial input.dpir of a golden case.
func goldenInput(t *testing.T, name string) *ir.Module {
	t.Helper()
	path := "../golden/testdata/" + name + ".txtar"
	ar, err := txtar.ParseFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range ar.Files {
		if f.Name == "input.dpir" {
			m, err := ir.Parse(path+":input.dpir", f.Data)
			if err != nil {
				t.Fatal(err)
			}
			return m
		}
	}
	t.Fatalf("%s: no input.dpir", path)
	return nil
}

// feedData returns a scope with every is_data var of main block 0 filled
// from a fixed pseudo-random sequence.
func feedData(m *ir.Module, seed int64) Scope {
	s := Scope{}
	x := uint64(seed)*2654435761 + 1
	for _, v := range m.Main.Global().Vars() {
		if !v.Has(ir.FlagIsData) || !v.Type.IsTensor() {
			continue
		}
		t := Zeros(v.Type.DType, v.Type.Shape...)
		for i := range t.Data {
			x = x*6364136223846793005 + 1442695040888963407
			t.Data[i] = float64(int64(x>>40)%2001-1000) / 1000
		}
		t.round()
		s[v.Name()] = t
	}
	return s
}

func TestInterpWhileLoop(t *testing.T) {
	m := parseFile(t, "../examples/while_loop.dpir")
	x := Zeros(ir.F32, 4, 8)
	for i := range x.Data {
		x.Data[i] = float64(i) - 7.5
	}
	x.round()
	out, err := Run(m, Scope{"x": x}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := out["i"].Data[0]; got != 10 {
		t.Errorf("i = %v, want 10", got)
	}
	for i, v := range out["x"].Data {
		want := (float64(i) - 7.5) / 1024
		if v != want {
			t.Fatalf("x[%d] = %v, want %v", i, v, want)
		}
	}
	if out["cond"].Data[0] != 0 || out["cond"].DType != ir.Boolean {
		t.Errorf("cond = %v", out["cond"])
	}
	if x.Data[1] != -6.5 {
		t.Error("input tensor was modified")
	}
}

func TestInterpWhileCap(t *testing.T) {
	m := parseFile(t, "../examples/while_loop.dpir")
	ip := NewInterp(nil)
	ip.MaxLoopOps = 3 * 5 // three iterations of a body of four ops
	_, err := ip.RunModule(m, Scope{"x": Zeros(ir.F32, 4, 8)})
	if err == nil || !strings.Contains(err.Error(), "op 4 while: loop work past the cap of 15 op executions per run") {
		t.Fatalf("err = %v", err)
	}
}

// runTraining runs a golden case's serial input with fed data and checks
// the loss is finite and sgd moved every param.
func runTraining(t *testing.T, m *ir.Module, lossVar string) Scope {
	t.Helper()
	feed := feedData(m, 1)
	out, err := Run(m, feed, nil)
	if err != nil {
		t.Fatal(err)
	}
	if lossVar != "" {
		l, ok := out[lossVar]
		if !ok || l.Numel() == 0 {
			t.Fatalf("no %s", lossVar)
		}
		for _, v := range l.Data {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.Fatalf("%s = %v", lossVar, l)
			}
		}
	}
	// re-run startup alone to get the initial params
	init := Scope{}
	if m.Startup != nil {
		if err := NewInterp(nil).RunProgram(m.Startup, init); err != nil {
			t.Fatal(err)
		}
	}
	for _, pg := range m.ParamGrads {
		before, after := init[pg.Param], out[pg.Param]
		if before == nil || after == nil {
			t.Fatalf("param %s: before %v after %v", pg.Param, before, after)
		}
		if Equal(before, after) {
			t.Errorf("param %s unchanged by the optimizer", pg.Param)
		}
	}
	return out
}

func TestInterpGoldenDPMLP(t *testing.T) {
	m := goldenInput(t, "dp_mlp")
	runTraining(t, m, "loss")
}

func TestInterpGoldenMegatron1D(t *testing.T) {
	m := goldenInput(t, "megatron_1d")
	// no startup and no sgd: feed the params too
	feed := feedData(m, 2)
	for _, n := range []string{"x", "w1", "w2"} {
		v := m.Main.Global().Var(n)
		w := Zeros(v.Type.DType, v.Type.Shape...)
		for i := range w.Data {
			w.Data[i] = float64((i*7)%13-6) / 10
		}
		w.round()
		feed[n] = w
	}
	out, err := Run(m, feed, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"y", "w1@GRAD", "w2@GRAD", "x@GRAD"} {
		if out[n] == nil {
			t.Fatalf("no %s", n)
		}
		for _, v := range out[n].Data {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.Fatalf("%s not finite: %v", n, out[n])
			}
		}
	}
}

func TestInterpMegatronMLP(t *testing.T) {
	runTraining(t, irgen.MegatronMLP(100, 2, 2), "loss")
}

func TestInterpDeterministic(t *testing.T) {
	m := irgen.MegatronMLP(60, 1, 1)
	a, err := Run(m, feedData(m, 5), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Run(m, feedData(m, 5), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(a) != len(b) {
		t.Fatalf("scopes of %d and %d vars", len(a), len(b))
	}
	for n, ta := range a {
		if tb := b[n]; tb == nil || !Equal(ta, tb) {
			t.Errorf("%s differs between runs", n)
		}
	}
}

func TestInterpErrors(t *testing.T) {
	cases := []struct{ src, want string }{
		{`program main { block 0 { var a : f32[2]
			op 3 relu(X: a) -> (Out: a) } }`, "op 3 relu: input a (X) has no value"},
		{`program main { block 0 { var a : f32[2]
			op 1 fill_constant() -> (Out: a) {dtype = 5, shape = [2], value = 1.0}
			op 2 frobnicate(X: a) -> (Out: a) } }`, "op 2 frobnicate: no kernel for op type frobnicate"},
		// A serial program is a world of one; a rank's program needs
		// its peers.
		{`program main rank 1 { block 0 { var a : f32[2]
			op 1 fill_constant() -> (Out: a) {dtype = 5, shape = [2], value = 1.0}
			op 2 c_allreduce_sum(X: a) -> (Out: a) {ring_id = 0} } }`, "op 2 c_allreduce_sum: collective op of rank 1's program outside an SPMD run"},
		{`program main { block 0 { var a : f32[2]
			op 1 fill_constant() -> (Out: a) {dtype = 5, shape = [2], value = 1.0}
			op 2 send_v2(X: a) -> () {peer = 1, ring_id = 0} } }`, "op 2 send_v2: send_v2 needs a peer; a serial program has none"},
	}
	for _, c := range cases {
		m, err := ir.ParseString("t", c.src)
		if err != nil {
			t.Fatal(err)
		}
		_, err = Run(m, nil, nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("err = %v, want %q", err, c.want)
		}
	}
}

// TestInterpTooLarge: a tensor beyond MaxElements, or whose element
// count overflows int64, is an error naming the op, whether the shape
// comes from an attr or a kernel asks Zeros for it; never a panic or an
// allocation that exhausts the memory.
func TestInterpTooLarge(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{`program main { block 0 { var a : f32[65536, 65536]
			op 1 fill_constant() -> (Out: a) {dtype = 5, shape = [65536, 65536], value = 1.0} } }`,
			"op 1 fill_constant: shape [65536 65536] has more than 268435456 elements"},
		{`program main { block 0 { var a : f32[4294967296, 4294967296]
			op 1 fill_constant() -> (Out: a) {dtype = 5, shape = [4294967296, 4294967296], value = 1.0} } }`,
			"op 1 fill_constant: shape [4294967296 4294967296] has more than 268435456 elements"},
		// 3 × 6148914691236517206 wraps around to 2 in int64.
		{`program main { block 0 { var a : f32[2] var b : f32[3, 6148914691236517206]
			op 1 fill_constant() -> (Out: a) {dtype = 5, shape = [2], value = 1.0}
			op 2 reshape2(X: a) -> (Out: b) {shape = [3, 6148914691236517206]} } }`,
			"op 2 reshape2: cannot reshape X [2] (2 elements) to [3 6148914691236517206]"},
	} {
		m, err := ir.ParseString("t", c.src)
		if err != nil {
			t.Fatal(err)
		}
		if _, err = Run(m, nil, nil); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("err = %v, want %q", err, c.want)
		}
	}
	huge := func(op *ir.Op, in Args) (Args, error) {
		return out1("Out", Zeros(ir.F32, 1<<31, 1<<31)), nil
	}
	m, err := ir.ParseString("t", `program main { block 0 { var a : f32[2] op 7 huge() -> (Out: a) } }`)
	if err != nil {
		t.Fatal(err)
	}
	want := "op 7 huge: shape [2147483648 2147483648] has more than 268435456 elements, the most a simulated tensor holds"
	if _, err := Run(m, nil, Kernels{"huge": huge}); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("err = %v, want %q", err, want)
	}
	if _, err := NewZeros(ir.F32, 1<<62, 4); err == nil {
		t.Error("NewZeros(1<<62, 4): no error")
	}
	if z, err := NewZeros(ir.F32, 1<<62, 0); err != nil || z.Numel() != 0 {
		t.Errorf("NewZeros(1<<62, 0) = %v, %v; want an empty tensor", z, err)
	}
}

func TestInterpCollectiveHook(t *testing.T) {
	m, err := ir.ParseString("t", `program main { block 0 { var a : f32[2]
		var b : f32[2]
		op 1 fill_constant() -> (Out: a) {dtype = 5, shape = [2], value = 1.5}
		op 2 c_allreduce_sum(X: a) -> (Out: b) {ring_id = 0} } }`)
	if err != nil {
		t.Fatal(err)
	}
	ip := NewInterp(nil)
	ip.Hooks.Collective = func(op *ir.Op, in Args) (Args, error) {
		x := in["X"][0].Clone()
		for i := range x.Data {
			x.Data[i] *= 2 // two ranks holding the same value
		}
		return Args{"Out": {x}}, nil
	}
	s, err := ip.RunModule(m, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := s["b"].Data; got[0] != 3 || got[1] != 3 {
		t.Errorf("b = %v", s["b"])
	}
}

func TestInterpConditionalBlock(t *testing.T) {
	src := `program main {
	  block 0 { var c : bool[1]
	    var a : f32[1]
	    op 1 fill_constant() -> (Out: a) {dtype = 5, shape = [1], value = 1.0}
	    op 2 fill_constant() -> (Out: c) {dtype = 0, shape = [1], value = %s}
	    op 3 conditional_block(Cond: c, Input: [a]) -> (Out: [a]) {sub_block = ^1} }
	  block 1 parent 0 { op 4 scale(X: a) -> (Out: a) {scale = 3.0} } }`
	for _, c := range []struct {
		cond string
		want float64
	}{{"1.0", 3}, {"0.0", 1}} {
		m, err := ir.ParseString("t", strings.Replace(src, "%s", c.cond, 1))
		if err != nil {
			t.Fatal(err)
		}
		s, err := Run(m, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := s["a"].Data[0]; got != c.want {
			t.Errorf("cond %s: a = %v, want %v", c.cond, got, c.want)
		}
	}
}

func BenchmarkInterp(b *testing.B) {
	m := irgen.MegatronMLP(10000, 1, 1)
	feed := feedData(m, 1)
	ks := DefaultKernels()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Run(m, feed, ks); err != nil {
			b.Fatal(err)
		}
	}
}
