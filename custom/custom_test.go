package custom_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/distpass/distpass/check"
	"github.com/distpass/distpass/custom"
	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/ops"
	"github.com/distpass/distpass/passes"
	"github.com/distpass/distpass/sim"
)

// define parses and defines src, failing t on an error.
func define(t *testing.T, src string) []*custom.OpType {
	t.Helper()
	ts, err := custom.Parse("test.dpop", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if err := custom.Define(ts...); err != nil {
		t.Fatal(err)
	}
	return ts
}

func TestParseErrors(t *testing.T) {
	for _, c := range []struct{ name, src, want string }{
		{"no optype", "input X\n", "test.dpop:1:1: want \"optype NAME {\""},
		{"unknown statement", "optype a {\n  inpt X\n}\n", "test.dpop:2:3: unknown statement \"inpt\""},
		{"unknown kind", "optype a {\n  attr k : integer\n}\n", "test.dpop:2:8: attr k: unknown kind \"integer\""},
		{"bad default", "optype a {\n  attr k : int = [1,\n}\n", "test.dpop:2:"},
		{"rule syntax", "optype a {\n  rule (X: ab -> (Out: a)\n}\n", "test.dpop:2:15: rule: want \",\" or \")\""},
		{"rule letter", "optype a {\n  rule (X: ab) -> (Out: ac)\n}\n", "test.dpop:2:8: rule: output Out's dim c is no input's"},
		{"rule reduction", "optype a {\n  rule (X: ab) -> (Out: ab) avg\n}\n", "a reduction (avg) but no reduced dim"},
		{"no meaning", "optype a {\n  input X\n  output Out\n  rule (X: a) -> (Out: a)\n}\n", "test.dpop:1: optype a: no meaning"},
		{"rule misses a slot", "optype a {\n  input X\n  input Y\n  output Out\n  rule (X: a) -> (Out: a)\n  meaning {\n    relu(X: X) -> (Out: Out)\n  }\n}\n", "the rule does not spell slot Y"},
		{"writes an input", "optype a {\n  input X\n  output Out\n  rule (X: a) -> (Out: a)\n  meaning {\n    relu(X: X) -> (Out: X)\n  }\n}\n", "meaning: relu writes input X"},
		{"reads a temporary early", "optype a {\n  input X\n  output Out\n  rule (X: a) -> (Out: a)\n  meaning {\n    relu(X: t) -> (Out: Out)\n  }\n}\n", "meaning: relu reads t before anything writes it"},
		{"reserved name", "optype a {\n  input X\n  output Out\n  rule (X: a) -> (Out: a)\n  meaning {\n    relu(X: X) -> (Out: t@GRAD)\n  }\n}\n", "names with @ are reserved"},
		{"op syntax", "optype a {\n  input X\n  output Out\n  rule (X: a) -> (Out: a)\n  meaning {\n    relu(X: X) -> Out: Out)\n  }\n}\n", "test.dpop:6:19: expected \"(\""},
		{"unclosed", "optype a {\n  input X\n", "optype a is not closed"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := custom.Parse("test.dpop", []byte(c.src))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want an error containing %q", err, c.want)
			}
		})
	}
}

func TestDefineRefuses(t *testing.T) {
	for _, c := range []struct{ name, src, want string }{
		{"a built-in type", "optype relu {\n  input X\n  output Out\n  rule (X: a) -> (Out: a)\n  meaning {\n    tanh(X: X) -> (Out: Out)\n  }\n}\n", "relu is already defined"},
		{"an unknown meaning", "optype t_unknown {\n  input X\n  output Out\n  rule (X: a) -> (Out: a)\n  meaning {\n    frobnicate(X: X) -> (Out: Out)\n  }\n}\n", "the op table does not define frobnicate"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ts, err := custom.Parse("test.dpop", []byte(c.src))
			if err != nil {
				t.Fatal(err)
			}
			if err := custom.Define(ts...); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want an error containing %q", err, c.want)
			}
		})
	}
}

// TestRulePrintsItself: a rule reads back from what it prints.
func TestRulePrintsItself(t *testing.T) {
	for _, r := range []string{"(X: nchw) -> (Out: nc11) avg", "(X: mk, Y: kn) -> (Out: mn) sum", "(X: nC) -> (Out: nC)", "(X: ab) -> (Out: a) max"} {
		src := "optype rp {\n  input X\n  input Y\n  output Out\n  rule " + r + "\n  meaning {\n    relu(X: X) -> (Out: Out)\n  }\n}\n"
		if !strings.Contains(r, "Y:") {
			src = strings.Replace(src, "  input Y\n", "", 1)
		}
		ts, err := custom.Parse("test.dpop", []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		if got := ts[0].Rule.String(); got != r {
			t.Errorf("rule %q prints %q", r, got)
		}
	}
}

// scaledGap is a custom op of two steps and two attrs.
const scaledGap = `# a global average pool, doubled
optype t_scaled_gap {
  doc "twice the mean of each (n, c) plane"
  input X
  output Out
  attr unused : ints = ints[]
  rule (X: nchw) -> (Out: nc11) avg
  meaning {
    reduce_mean(X: X) -> (Out: m) {dim = [2, 3], keep_dim = true}
    scale(X: m) -> (Out: Out) {scale = 2.0, bias = 0.0, bias_after_scale = true}
  }
}
`

// TestMeaningIsTheKernel: a module with the custom op and the same module
// with its meaning written out give the same forward values and the same
// gradients, bit for bit: the kernel runs the meaning, and the grad
// kernel differentiates it as append-backward differentiates the
// written-out module.
func TestMeaningIsTheKernel(t *testing.T) {
	define(t, scaledGap)
	const body = `module m
program main {
  block 0 {
    param x : f32[2, 3, 4, 4] {trainable}
    var y : f32[2, 3, 1, 1]
    var loss : f32[]
    OPS
    op 9 mean(X: y) -> (Out: loss) role forward|loss
  }
}
program startup {
  block 0 {
    param x : f32[2, 3, 4, 4] {trainable}
    op 1 uniform_random() -> (Out: x) {dtype = 5, max = 1.0, min = -1.0, seed = 3, shape = [2, 3, 4, 4]} role forward
  }
}
`
	custom := strings.Replace(body, "OPS", "op 1 t_scaled_gap(X: x) -> (Out: y)", 1)
	written := strings.Replace(body, "OPS", "var m : f32[2, 3, 1, 1]\n    op 1 reduce_mean(X: x) -> (Out: m) {dim = [2, 3], keep_dim = true}\n    op 2 scale(X: m) -> (Out: y) {scale = 2.0, bias = 0.0, bias_after_scale = true}", 1)
	run := func(src string) sim.Scope {
		m, err := ir.ParseString("m.dpir", src)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ops.Verify(m, ops.Options{Strict: true}); err != nil {
			t.Fatal(err)
		}
		if _, err := passes.AppendBackward(m, "loss"); err != nil {
			t.Fatal(err)
		}
		s, err := sim.Run(m, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	a, b := run(custom), run(written)
	for _, v := range []string{"y", "loss", "x@GRAD"} {
		if a[v] == nil || b[v] == nil || fmt.Sprint(a[v].Data) != fmt.Sprint(b[v].Data) {
			t.Errorf("%s: custom %v, written out %v", v, a[v], b[v])
		}
	}
	if g := a["x@GRAD"]; g == nil || g.Data[0] == 0 {
		t.Errorf("x@GRAD is %v: want the doubled mean's gradient", g)
	}
}

// TestCustomOpsAreProven: completion and the lowering read a custom op's
// rule as a built-in's, and check runs its meaning: a 2×2 mesh with the
// batch split along dp and the channels along mp (both pass through the
// op), in two rank orders, in f32 and f64.
func TestCustomOpsAreProven(t *testing.T) {
	define(t, strings.ReplaceAll(scaledGap, "t_scaled_gap", "t_proven_gap"))
	const src = `module gapnet
mesh world shape [2, 2] dims [dp, mp] ranks RANKS

program main {
  block 0 {
    var x : f32[4, 6, 4, 4] @world[0, 1, -1, -1] {is_data, stop_gradient}
    param w : f32[4, 6, 4, 4] @world[-1, 1, -1, -1] {trainable}
    var h : f32[4, 6, 4, 4]
    var y : f32[4, 6, 1, 1]
    var z : f32[4, 6, 1, 1]
    var loss : f32[]
    op 1 elementwise_mul(X: x, Y: w) -> (Out: h) {axis = -1} role forward
    op 2 t_proven_gap(X: h) -> (Out: y) role forward
    op 3 tanh(X: y) -> (Out: z) role forward
    op 4 mean(X: z) -> (Out: loss) role forward|loss
  }
}

program startup {
  block 0 {
    param w : f32[4, 6, 4, 4] {trainable}
    op 1 uniform_random() -> (Out: w) {dtype = 5, max = 1.0, min = -1.0, seed = 5, shape = [4, 6, 4, 4]} role forward
  }
}
`
	for _, ranks := range []string{"[0, 1, 2, 3]", "[3, 1, 0, 2]"} {
		for _, f64 := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/f64=%v", ranks, f64), func(t *testing.T) {
				m, err := ir.ParseString("gapnet.dpir", strings.Replace(src, "RANKS", ranks, 1))
				if err != nil {
					t.Fatal(err)
				}
				pl := "append-backward{loss=loss},append-optimizer{type=sgd},complete,insert-reshards"
				if f64 {
					pl += ",to-f64"
				}
				if err := (&passes.Manager{}).Run(context.Background(), passes.DefaultRegistry().MustParse(pl), m); err != nil {
					t.Fatal(err)
				}
				if d := m.Main.Global().Var("y").Dist; d == nil || fmt.Sprint(d.DimsMapping) != "[0 1 -1 -1]" {
					t.Fatalf("y is %v: want the batch on dp and the channels on mp, through the op", d)
				}
				rep, err := check.Run(context.Background(), m, check.Options{Steps: 2})
				if err != nil {
					t.Fatal(err)
				}
				if err := rep.Err(); err != nil {
					t.Fatal(err)
				}
				if rep.Count("grad") < 1 || rep.Count("activation") < 3 {
					t.Fatalf("compared %d grads and %d activations", rep.Count("grad"), rep.Count("activation"))
				}
			})
		}
	}
}

// TestIntegerCustomOpsAreProven: a custom op over integer tensors (no
// gradient: its input is nograd) infers its dtype from its meaning,
// runs bit for bit, and check proves a data-parallel program through it,
// on a 1-D mesh in two rank orders.
func TestIntegerCustomOpsAreProven(t *testing.T) {
	define(t, `optype t_twice_int {
  input X nograd
  output Out
  rule (X: nk) -> (Out: nk)
  meaning {
    elementwise_add(X: X, Y: X) -> (Out: Out) {axis = -1}
  }
}
`)
	if d := ops.Lookup("t_twice_int"); d == nil || d.Grad != nil {
		t.Fatalf("t_twice_int: %v, want a def without a grad (its one input is nograd)", d)
	}
	const src = `module intnet
mesh world shape [4] dims [dp] ranks RANKS

program main {
  block 0 {
    var x : i64[8, 4] @world[0, -1] {is_data, stop_gradient}
    param w : f32[4, 4] {trainable}
    var y : i64[8, 4]
    var yf : f32[8, 4]
    var h : f32[8, 4]
    var loss : f32[]
    op 1 t_twice_int(X: x) -> (Out: y) role forward
    op 2 cast(X: y) -> (Out: yf) {in_dtype = 3, out_dtype = 5} role forward
    op 3 matmul_v2(X: yf, Y: w) -> (Out: h) {trans_x = false, trans_y = false} role forward
    op 4 mean(X: h) -> (Out: loss) role forward|loss
  }
}

program startup {
  block 0 {
    param w : f32[4, 4] {trainable}
    op 1 uniform_random() -> (Out: w) {dtype = 5, max = 1.0, min = -1.0, seed = 5, shape = [4, 4]} role forward
  }
}
`
	for _, ranks := range []string{"[0, 1, 2, 3]", "[3, 1, 2, 0]"} {
		t.Run(ranks, func(t *testing.T) {
			m, err := ir.ParseString("intnet.dpir", strings.Replace(src, "RANKS", ranks, 1))
			if err != nil {
				t.Fatal(err)
			}
			pl := "append-backward{loss=loss},append-optimizer{type=sgd},complete,insert-reshards"
			if err := (&passes.Manager{}).Run(context.Background(), passes.DefaultRegistry().MustParse(pl), m); err != nil {
				t.Fatal(err)
			}
			rep, err := check.Run(context.Background(), m, check.Options{Steps: 2})
			if err != nil {
				t.Fatal(err)
			}
			if err := rep.Err(); err != nil {
				t.Fatal(err)
			}
			if !slices.ContainsFunc(rep.Rows, func(r check.Row) bool { return r.Var == "y" && r.Kind == "activation" }) {
				t.Fatalf("rows %v: want the custom op's integer output y compared", rep.Rows)
			}
		})
	}
}

// TestEllipsisRule: a rule with leading dims (...) types and shards an
// op of any rank: the leading dims pass through, the named ones as
// spelled; and the rule prints as the file writes it.
func TestEllipsisRule(t *testing.T) {
	define(t, `optype t_rowsum {
  input X
  output Out
  rule (X: ...k) -> (Out: ...1) sum
  meaning {
    reduce_sum(X: X) -> (Out: Out) {dim = [-1], keep_dim = true}
  }
}
`)
	if got, want := ops.Lookup("t_rowsum").Rule().String(), "(X: ...k) -> (Out: ...1) sum"; got != want {
		t.Errorf("t_rowsum prints %q, want %q", got, want)
	}
	for _, shape := range [][]int64{{5}, {4, 5}, {3, 4, 5}} {
		x := ir.Var{Type: ir.Tensor(ir.F32, shape...)}.Named("x")
		out := ir.Var{Type: ir.Tensor(ir.F32)}.Named("y")
		vars := map[string]*ir.Var{"x": &x, "y": &out}
		op := &ir.Op{Type: "t_rowsum", Inputs: []ir.Slot{ir.S("X", "x")}, Outputs: []ir.Slot{ir.S("Out", "y")}}
		res, err := ops.InferOp(op, func(n string) *ir.Var { return vars[n] })
		if err != nil || len(res) != 1 {
			t.Fatalf("X %v: inferred %v, %v", shape, res, err)
		}
		want := append(slices.Clone(shape[:len(shape)-1]), 1)
		if !slices.Equal(res[0].Type.Shape, want) {
			t.Errorf("X %v: Out %v, want %v", shape, res[0].Type.Shape, want)
		}
		out.Type = res[0].Type
		r, err := ops.ShardingRuleOf(op, func(n string) *ir.Var { return vars[n] })
		if err != nil {
			t.Fatal(err)
		}
		// The first leading dim split along mesh dim 0, k along mesh dim 1.
		in := make([]int, len(shape))
		for i := range in {
			in[i] = -1
		}
		in[len(in)-1] = 1
		if len(in) > 1 {
			in[0] = 0
		}
		s, err := r.Forward([]int{2, 2}, [][]int{in})
		if err != nil {
			t.Fatal(err)
		}
		wantOut := slices.Clone(in)
		wantOut[len(wantOut)-1] = -1
		if !slices.Equal(s.Outputs[0], wantOut) || len(s.Partial[0]) != 1 || s.Partial[0][0] != (ir.Partial{Dim: 1, Reduce: ir.ReduceSum}) {
			t.Errorf("X %v mapped %v: Out %v partial %v", shape, in, s.Outputs[0], s.Partial[0])
		}
	}
}
