package passes_test

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/distpass/distpass/internal/irgen"
	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/passes"
	"github.com/distpass/distpass/sim"
)

// appendBackward runs append-backward{loss=loss} on m through the manager.
func appendBackward(t testing.TB, m *ir.Module, loss string) error {
	t.Helper()
	pl, err := passes.DefaultRegistry().Parse("append-backward{loss=" + loss + "}")
	if err != nil {
		t.Fatal(err)
	}
	return (&passes.Manager{}).Run(context.Background(), pl, m)
}

// fdModule builds tiny f64 modules for the finite-difference check and
// the values fed to them.
type fdModule struct {
	b    *ir.Builder
	r    *rand.Rand
	feed sim.Scope
	wrt  []string // the vars whose gradients are checked
}

// in declares an input var that takes a gradient, fed values of magnitude
// in [0.2, 1) and random sign (away from relu's kink and div's pole).
func (f *fdModule) in(name string, shape ...int64) {
	f.b.Var(name, ir.Tensor(ir.F64, shape...))
	t := sim.Zeros(ir.F64, shape...)
	for i := range t.Data {
		v := 0.2 + 0.8*f.r.Float64()
		if f.r.IntN(2) == 0 {
			v = -v
		}
		t.Data[i] = v
	}
	f.feed[name] = t
	f.wrt = append(f.wrt, name)
}

// ids declares an i64 input with stop_gradient, fed values in [0, n).
func (f *fdModule) ids(name string, n int, shape ...int64) {
	f.b.Var(name, ir.Tensor(ir.I64, shape...)).WithFlags(ir.FlagStopGradient)
	t := sim.Zeros(ir.I64, shape...)
	for i := range t.Data {
		t.Data[i] = float64(f.r.IntN(n))
	}
	f.feed[name] = t
}

func (f *fdModule) out(name string, shape ...int64) { f.b.Var(name, ir.Tensor(ir.F64, shape...)) }

// fdCases builds, per op type of the grad-maker table, a module of that
// op with f64 inputs. Each returns the op's differentiable output.
var fdCases = map[string]func(f *fdModule) string{
	"matmul_v2": func(f *fdModule) string {
		f.in("x", 2, 3)
		f.in("y", 4, 3)
		f.out("o", 2, 4)
		f.b.Op("matmul_v2", ir.Slots("X", "x", "Y", "y"), ir.Slots("Out", "o"), ir.A("trans_x", ir.Bool(false)), ir.A("trans_y", ir.Bool(true)))
		return "o"
	},
	"matmul": func(f *fdModule) string {
		f.in("x", 2, 3)
		f.in("y", 3, 4)
		f.out("o", 2, 4)
		f.b.Op("matmul", ir.Slots("X", "x", "Y", "y"), ir.Slots("Out", "o"), ir.A("alpha", ir.Float(1.5)),
			ir.A("transpose_X", ir.Bool(false)), ir.A("transpose_Y", ir.Bool(false)))
		return "o"
	},
	"mul": func(f *fdModule) string {
		f.in("x", 2, 3, 2)
		f.in("y", 6, 4)
		f.out("o", 2, 4)
		f.b.Op("mul", ir.Slots("X", "x", "Y", "y"), ir.Slots("Out", "o"), ir.A("x_num_col_dims", ir.Int(1)), ir.A("y_num_col_dims", ir.Int(1)))
		return "o"
	},
	"elementwise_add": binaryCase("elementwise_add", 4),
	"elementwise_sub": binaryCase("elementwise_sub", 3, 4),
	"elementwise_mul": binaryCase("elementwise_mul", 4),
	"elementwise_div": binaryCase("elementwise_div", 3, 4),
	"relu":            unaryCase("relu"),
	"gelu":            unaryCase("gelu"),
	"tanh":            unaryCase("tanh"),
	"sigmoid":         unaryCase("sigmoid"),
	"softmax":         unaryCase("softmax", ir.A("axis", ir.Int(-1))),
	"scale":           unaryCase("scale", ir.A("scale", ir.Float(2.5)), ir.A("bias", ir.Float(0.7)), ir.A("bias_after_scale", ir.Bool(true))),
	"assign":          unaryCase("assign"),
	"cast":            unaryCase("cast", ir.A("in_dtype", ir.Int(6)), ir.A("out_dtype", ir.Int(6))),
	"dropout": func(f *fdModule) string {
		f.in("x", 3, 4)
		f.out("o", 3, 4)
		f.b.Var("mask", ir.Tensor(ir.U8, 3, 4))
		f.b.Op("dropout", ir.Slots("X", "x"), ir.Slots("Out", "o", "Mask", "mask"), ir.A("dropout_prob", ir.Float(0.3)),
			ir.A("dropout_implementation", ir.String("upscale_in_train")), ir.A("seed", ir.Int(11)), ir.A("is_test", ir.Bool(false)))
		return "o"
	},
	"reshape2": func(f *fdModule) string {
		f.in("x", 2, 3)
		f.out("o", 3, 2)
		f.out("xs", 0, 2, 3)
		f.b.Op("reshape2", ir.Slots("X", "x"), ir.Slots("Out", "o", "XShape", "xs"), ir.A("shape", ir.Ints{3, 2}))
		return "o"
	},
	"transpose2": func(f *fdModule) string {
		f.in("x", 2, 3, 4)
		f.out("o", 4, 2, 3)
		f.out("xs", 0, 2, 3, 4)
		f.b.Op("transpose2", ir.Slots("X", "x"), ir.Slots("Out", "o", "XShape", "xs"), ir.A("axis", ir.Ints{2, 0, 1}))
		return "o"
	},
	"reduce_mean": func(f *fdModule) string {
		f.in("x", 3, 4)
		f.out("o", 3)
		f.b.Op("reduce_mean", ir.Slots("X", "x"), ir.Slots("Out", "o"), ir.A("dim", ir.Ints{1}), ir.A("keep_dim", ir.Bool(false)))
		return "o"
	},
	"reduce_sum": func(f *fdModule) string {
		f.in("x", 3, 4)
		f.out("o", 1, 4)
		f.b.Op("reduce_sum", ir.Slots("X", "x"), ir.Slots("Out", "o"), ir.A("dim", ir.Ints{0}), ir.A("keep_dim", ir.Bool(true)))
		return "o"
	},
	"mean": func(f *fdModule) string {
		f.in("x", 3, 4)
		f.out("o")
		f.b.Op("mean", ir.Slots("X", "x"), ir.Slots("Out", "o"))
		return "o"
	},
	"lookup_table_v2": func(f *fdModule) string {
		f.ids("ids", 5, 2, 3)
		f.in("w", 5, 4)
		f.out("o", 2, 3, 4)
		f.b.Op("lookup_table_v2", ir.Slots("Ids", "ids", "W", "w"), ir.Slots("Out", "o"), ir.A("padding_idx", ir.Int(-1)))
		return "o"
	},
	"softmax_with_cross_entropy": func(f *fdModule) string {
		f.in("logits", 3, 5)
		f.ids("label", 5, 3, 1)
		f.out("sm", 3, 5)
		f.out("o", 3, 1)
		f.b.Op("softmax_with_cross_entropy", ir.Slots("Logits", "logits", "Label", "label"), ir.Slots("Softmax", "sm", "Loss", "o"),
			ir.A("axis", ir.Int(-1)), ir.A("soft_label", ir.Bool(false)))
		return "o"
	},
	"top_k_v2": func(f *fdModule) string {
		f.in("x", 3, 4)
		f.out("o", 3, 2)
		f.b.Var("idx", ir.Tensor(ir.I64, 3, 2))
		f.b.Op("top_k_v2", ir.Slots("X", "x"), ir.Slots("Out", "o", "Indices", "idx"), ir.A("k", ir.Int(2)))
		return "o"
	},
	"gather": func(f *fdModule) string {
		f.in("x", 4, 3)
		f.counts("index", 2, 0, 2) // a repeated row accumulates its grads
		f.out("o", 3, 3)
		f.b.Op("gather", ir.Slots("X", "x", "Index", "index"), ir.Slots("Out", "o"))
		return "o"
	},
	"scatter": func(f *fdModule) string {
		f.in("x", 4, 3)
		f.counts("ids", 3, 1)
		f.in("updates", 2, 3)
		f.out("o", 4, 3)
		f.b.Op("scatter", ir.Slots("X", "x", "Ids", "ids", "Updates", "updates"), ir.Slots("Out", "o"), ir.A("overwrite", ir.Bool(true)))
		return "o"
	},
	"grouped_matmul": func(f *fdModule) string {
		f.in("x", 5, 3)
		f.in("w", 2, 3, 2)
		f.counts("count", 1, 2, 2, 0) // 2 experts, rows from 2 sources
		f.out("o", 5, 2)
		f.b.Op("grouped_matmul", ir.Slots("X", "x", "W", "w", "ExpertCount", "count"), ir.Slots("Out", "o"))
		return "o"
	},
	"global_scatter": exchangeCase("global_scatter"),
	"global_gather":  exchangeCase("global_gather"),
	"layer_norm": func(f *fdModule) string {
		f.in("x", 3, 4)
		f.in("scale", 4)
		f.in("bias", 4)
		f.out("o", 3, 4)
		f.out("mu", 3)
		f.out("var", 3)
		f.b.Op("layer_norm", ir.Slots("X", "x", "Scale", "scale", "Bias", "bias"), ir.Slots("Y", "o", "Mean", "mu", "Variance", "var"),
			ir.A("begin_norm_axis", ir.Int(1)), ir.A("epsilon", ir.Float(1e-5)))
		return "o"
	},
}

// exchangeCase is an MoE exchange in a serial program: a world of one,
// where it is the identity on rows sorted by expert.
func exchangeCase(typ string) func(f *fdModule) string {
	return func(f *fdModule) string {
		f.in("x", 5, 2)
		f.counts("lc", 2, 0, 3)
		f.counts("gc", 2, 0, 3)
		f.out("o", 5, 2)
		f.b.Op(typ, ir.Slots("X", "x", "local_count", "lc", "global_count", "gc"), ir.Slots("Out", "o"), ir.A("ring_id", ir.Int(0)))
		return "o"
	}
}

// counts declares an i64 vector with stop_gradient fed exactly xs.
func (f *fdModule) counts(name string, xs ...float64) {
	f.b.Var(name, ir.Tensor(ir.I64, int64(len(xs)))).WithFlags(ir.FlagStopGradient)
	f.feed[name] = sim.MustFromData(ir.I64, []int64{int64(len(xs))}, xs)
}

func binaryCase(typ string, yShape ...int64) func(f *fdModule) string {
	return func(f *fdModule) string {
		f.in("x", 3, 4)
		f.in("y", yShape...)
		f.out("o", 3, 4)
		f.b.Op(typ, ir.Slots("X", "x", "Y", "y"), ir.Slots("Out", "o"), ir.A("axis", ir.Int(-1)))
		return "o"
	}
}

func unaryCase(typ string, attrs ...ir.Attr) func(f *fdModule) string {
	return func(f *fdModule) string {
		f.in("x", 3, 4)
		f.out("o", 3, 4)
		f.b.Op(typ, ir.Slots("X", "x"), ir.Slots("Out", "o"), attrs...)
		return "o"
	}
}

// weightedLoss reduces out to the scalar loss: out itself when it is a
// scalar, else mean(out * c) for a fixed random c with stop_gradient (a
// plain mean would make softmax's gradient vanish).
func (f *fdModule) weightedLoss(out string) string {
	v := f.b.Block().Var(out)
	if v.Type.Rank() == 0 {
		return out
	}
	shape := v.Type.Shape
	f.b.Var("c", ir.Tensor(ir.F64, shape...)).WithFlags(ir.FlagStopGradient)
	c := sim.Zeros(ir.F64, shape...)
	for i := range c.Data {
		c.Data[i] = 2*f.r.Float64() - 1
	}
	f.feed["c"] = c
	f.out("wo", shape...)
	f.b.Op("elementwise_mul", ir.Slots("X", out, "Y", "c"), ir.Slots("Out", "wo"), ir.A("axis", ir.Int(-1)))
	f.out("loss")
	f.b.Op("mean", ir.Slots("X", "wo"), ir.Slots("Out", "loss"))
	return "loss"
}

// checkGrads runs fwd (forward only) and bwd (with append-backward's ops)
// and compares the gradient of the loss in each var of wrt with central
// differences (step 1e-6, relative tolerance 1e-5).
func checkGrads(t *testing.T, fwd, bwd *ir.Module, feed sim.Scope, loss string, wrt []string) {
	t.Helper()
	ip := sim.NewInterp(sim.DefaultKernels())
	run := func(m *ir.Module, s sim.Scope) sim.Scope {
		t.Helper()
		s = cloneScope(s)
		if err := ip.RunProgram(m.Main, s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	got := run(bwd, feed)
	const h, rtol = 1e-6, 1e-5
	for _, name := range wrt {
		g := got[passes.GradName(name)]
		if g == nil {
			t.Errorf("no gradient %s", passes.GradName(name))
			continue
		}
		x := feed[name]
		if !slices.Equal(g.Shape, x.Shape) {
			t.Errorf("%s shape %v, want %v", passes.GradName(name), g.Shape, x.Shape)
			continue
		}
		for i := range x.Data {
			lossAt := func(d float64) float64 {
				s := cloneScope(feed)
				xp := x.Clone()
				xp.Data[i] += d
				s[name] = xp
				return run(fwd, s)[loss].Data[0]
			}
			num := (lossAt(h) - lossAt(-h)) / (2 * h)
			ana := g.Data[i]
			if math.Abs(num-ana) > rtol*max(math.Abs(num), math.Abs(ana), 1e-2) {
				t.Errorf("d %s / d %s[%d] = %.10g, finite differences give %.10g", loss, name, i, ana, num)
			}
		}
	}
}

func pg(p, g string) ir.ParamGrad { return ir.ParamGrad{Param: p, Grad: g} }

func cloneScope(s sim.Scope) sim.Scope {
	c := make(sim.Scope, len(s))
	for k, v := range s {
		c[k] = v
	}
	return c
}

// TestAppendBackwardFiniteDifferences checks the grad op of every op type
// of the grad-maker table against central differences of the loss.
func TestAppendBackwardFiniteDifferences(t *testing.T) {
	types := passes.GradOpTypes()
	cases := slices.Sorted(func(yield func(string) bool) {
		for k := range fdCases {
			if !yield(k) {
				return
			}
		}
	})
	if !slices.Equal(types, cases) {
		t.Fatalf("grad-maker table %v and finite-difference cases %v differ", types, cases)
	}
	for _, typ := range types {
		t.Run(typ, func(t *testing.T) {
			m := ir.NewModule("fd_" + typ)
			f := &fdModule{b: ir.NewBuilder(m), r: rand.New(rand.NewPCG(1, uint64(len(typ)))), feed: sim.Scope{}}
			out := fdCases[typ](f)
			loss := f.weightedLoss(out)
			if err := f.b.Err(); err != nil {
				t.Fatal(err)
			}
			fwd := m.Clone()
			if err := appendBackward(t, m, loss); err != nil {
				t.Fatal(err)
			}
			if err := ir.Verify(m); err != nil {
				t.Fatalf("%v\n%s", err, ir.Print(m))
			}
			if !slices.ContainsFunc(m.Main.Global().Ops, func(op *ir.Op) bool { return op.Role.IsBackward() && op.Fwd != 0 && fwdType(m, op) == typ }) {
				t.Fatalf("no grad op of %s:\n%s", typ, ir.Print(m))
			}
			if straightThrough[typ] {
				// The estimator is no derivative of the rounding (0 almost
				// everywhere) but that of the identity, by definition: the
				// differences are taken of the program with X passed on.
				passThrough(fwd, typ)
			}
			checkGrads(t, fwd, m, f.feed, loss, f.wrt)
		})
	}
}

// straightThrough are the op types whose grad is Paddle's
// straight-through estimator, X@GRAD = Out@GRAD.
var straightThrough = map[string]bool{
	"fake_quantize_dequantize_abs_max": true, "fake_channel_wise_quantize_dequantize_abs_max": true,
	"fake_quantize_dequantize_moving_average_abs_max": true, "moving_average_abs_max_scale": true,
}

// passThrough replaces each op of type typ in m by an assign of its X to
// its Out.
func passThrough(m *ir.Module, typ string) {
	for i, op := range m.Main.Global().Ops {
		if op.Type == typ {
			m.Main.Global().Ops[i] = &ir.Op{ID: op.ID, Type: "assign", Inputs: ir.Slots("X", op.Input("X")[0]), Outputs: ir.Slots("Out", op.Output("Out")[0]), Role: op.Role}
		}
	}
}

func fwdType(m *ir.Module, op *ir.Op) string {
	for _, o := range m.Main.Global().Ops {
		if o.ID == op.Fwd {
			return o.Type
		}
	}
	return ""
}

// mlp builds x -> (matmul_v2, elementwise_add, relu) x2 -> mean, forward
// only, f64, with x data and stop_gradient.
func mlp() *ir.Module {
	m := ir.NewModule("mlp")
	b := ir.NewBuilder(m)
	b.Var("x", ir.Tensor(ir.F64, 4, 3)).WithFlags(ir.FlagIsData | ir.FlagStopGradient)
	in := "x"
	for i, width := range []int64{5, 2} {
		p := "fc" + strconv.Itoa(i)
		rows := b.Block().Var(in).Type.Shape[1]
		b.Param(p+".w", ir.Tensor(ir.F64, rows, width)).WithFlags(ir.FlagTrainable)
		b.Param(p+".b", ir.Tensor(ir.F64, width)).WithFlags(ir.FlagTrainable)
		for _, n := range []string{".mm", ".add", ".out"} {
			b.Var(p+n, ir.Tensor(ir.F64, 4, width))
		}
		b.Op("matmul_v2", ir.Slots("X", in, "Y", p+".w"), ir.Slots("Out", p+".mm"), ir.A("trans_x", ir.Bool(false)), ir.A("trans_y", ir.Bool(false)))
		b.Op("elementwise_add", ir.Slots("X", p+".mm", "Y", p+".b"), ir.Slots("Out", p+".add"), ir.A("axis", ir.Int(-1)))
		b.Op("relu", ir.Slots("X", p+".add"), ir.Slots("Out", p+".out"))
		in = p + ".out"
	}
	b.Var("loss", ir.Tensor(ir.F64))
	b.Op("mean", ir.Slots("X", in), ir.Slots("Out", "loss"))
	if err := b.Err(); err != nil {
		panic(err)
	}
	return m
}

func backwardText(m *ir.Module) string {
	var sb strings.Builder
	for _, op := range m.Main.Global().Ops {
		if op.Role.IsBackward() {
			sb.WriteString(ir.PrintOp(op))
			sb.WriteByte('\n')
		}
	}
	return sb.String()
}

func TestAppendBackwardMLP(t *testing.T) {
	m := mlp()
	fwd := m.Clone()
	if err := appendBackward(t, m, "loss"); err != nil {
		t.Fatal(err)
	}
	if err := ir.Verify(m); err != nil {
		t.Fatal(err)
	}
	want := `op 8 fill_constant() -> (Out: loss@GRAD) {dtype = 6, shape = [], value = 1.0} role backward|loss
op 9 mean_grad(X: fc1.out, Out@GRAD: loss@GRAD) -> (X@GRAD: fc1.out@GRAD) role backward fwd 7
op 10 relu_grad(Out: fc1.out, Out@GRAD: fc1.out@GRAD) -> (X@GRAD: fc1.add@GRAD) role backward fwd 6
op 11 elementwise_add_grad(X: fc1.mm, Y: fc1.b, Out@GRAD: fc1.add@GRAD) -> (X@GRAD: fc1.mm@GRAD, Y@GRAD: fc1.b@GRAD) {axis = -1} role backward fwd 5
op 12 matmul_v2_grad(X: fc0.out, Y: fc1.w, Out@GRAD: fc1.mm@GRAD) -> (X@GRAD: fc0.out@GRAD, Y@GRAD: fc1.w@GRAD) {trans_x = false, trans_y = false} role backward fwd 4
op 13 relu_grad(Out: fc0.out, Out@GRAD: fc0.out@GRAD) -> (X@GRAD: fc0.add@GRAD) role backward fwd 3
op 14 elementwise_add_grad(X: fc0.mm, Y: fc0.b, Out@GRAD: fc0.add@GRAD) -> (X@GRAD: fc0.mm@GRAD, Y@GRAD: fc0.b@GRAD) {axis = -1} role backward fwd 2
op 15 matmul_v2_grad(X: x, Y: fc0.w, Out@GRAD: fc0.mm@GRAD) -> (X@GRAD: [], Y@GRAD: fc0.w@GRAD) {trans_x = false, trans_y = false} role backward fwd 1
`
	if got := backwardText(m); got != want {
		t.Errorf("backward ops:\n%s\nwant:\n%s", got, want)
	}
	if r := m.Main.Global().Ops[6].Role; r != ir.RoleLoss {
		t.Errorf("mean has role %s, want forward|loss", r)
	}
	wantPG := []ir.ParamGrad{pg("fc0.w", "fc0.w@GRAD"), pg("fc0.b", "fc0.b@GRAD"), pg("fc1.w", "fc1.w@GRAD"), pg("fc1.b", "fc1.b@GRAD")}
	if !slices.Equal(m.ParamGrads, wantPG) {
		t.Errorf("params-grads %v, want %v", m.ParamGrads, wantPG)
	}
	if v := m.Main.Global().Var("x@GRAD"); v != nil {
		t.Errorf("stop_gradient x got a gradient var")
	}
	if v := m.Main.Global().Var("fc1.w@GRAD"); v == nil || v.Type.String() != "f64[5, 2]" {
		t.Errorf("fc1.w@GRAD declared as %v", v)
	}
	// The gradients are right, too.
	r := rand.New(rand.NewPCG(3, 4))
	feed := sim.Scope{}
	for _, v := range m.Main.Global().Vars() {
		if v.Kind == ir.KindParam || v.Name() == "x" {
			t := sim.Zeros(ir.F64, v.Type.Shape...)
			for i := range t.Data {
				t.Data[i] = 2*r.Float64() - 1
			}
			feed[v.Name()] = t
		}
	}
	checkGrads(t, fwd, m, feed, "loss", []string{"fc0.w", "fc0.b", "fc1.w", "fc1.b"})
}

// A var read by two ops gets two parts and a sum: the residual
// y = h + relu(h·w1) with h = x·w0.
func TestAppendBackwardSum(t *testing.T) {
	m := ir.NewModule("residual")
	b := ir.NewBuilder(m)
	b.Var("x", ir.Tensor(ir.F64, 2, 3)).WithFlags(ir.FlagIsData | ir.FlagStopGradient)
	b.Param("w0", ir.Tensor(ir.F64, 3, 3)).WithFlags(ir.FlagTrainable)
	b.Param("w1", ir.Tensor(ir.F64, 3, 3)).WithFlags(ir.FlagTrainable)
	b.Param("frozen", ir.Tensor(ir.F64, 3)) // not trainable: no gradient
	for _, n := range []string{"h", "hw", "r", "y", "yf"} {
		b.Var(n, ir.Tensor(ir.F64, 2, 3))
	}
	b.Var("loss", ir.Tensor(ir.F64))
	mm := func(x, w, out string) {
		b.Op("matmul_v2", ir.Slots("X", x, "Y", w), ir.Slots("Out", out), ir.A("trans_x", ir.Bool(false)), ir.A("trans_y", ir.Bool(false)))
	}
	mm("x", "w0", "h")
	mm("h", "w1", "hw")
	b.Op("relu", ir.Slots("X", "hw"), ir.Slots("Out", "r"))
	b.Op("elementwise_add", ir.Slots("X", "h", "Y", "r"), ir.Slots("Out", "y"), ir.A("axis", ir.Int(-1)))
	b.Op("elementwise_mul", ir.Slots("X", "y", "Y", "frozen"), ir.Slots("Out", "yf"), ir.A("axis", ir.Int(-1)))
	b.Op("mean", ir.Slots("X", "yf"), ir.Slots("Out", "loss"))
	if err := b.Err(); err != nil {
		t.Fatal(err)
	}
	fwd := m.Clone()
	pl := passes.DefaultRegistry().MustParse("append-backward{loss=loss}")
	var out strings.Builder
	pm := &passes.Manager{Instruments: []passes.Instrument{&passes.Counters{W: &out}}}
	if err := pm.Run(context.Background(), pl, m); err != nil {
		t.Fatal(err)
	}
	if err := ir.Verify(m); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "grad-ops=6 sum-ops=1") {
		t.Errorf("counters:\n%s", out.String())
	}
	want := `op 7 fill_constant() -> (Out: loss@GRAD) {dtype = 6, shape = [], value = 1.0} role backward|loss
op 8 mean_grad(X: yf, Out@GRAD: loss@GRAD) -> (X@GRAD: yf@GRAD) role backward fwd 6
op 9 elementwise_mul_grad(X: y, Y: frozen, Out@GRAD: yf@GRAD) -> (X@GRAD: y@GRAD, Y@GRAD: []) {axis = -1} role backward fwd 5
op 10 elementwise_add_grad(X: h, Y: r, Out@GRAD: y@GRAD) -> (X@GRAD: h@GRAD@RENAME@0, Y@GRAD: r@GRAD) {axis = -1} role backward fwd 4
op 11 relu_grad(Out: r, Out@GRAD: r@GRAD) -> (X@GRAD: hw@GRAD) role backward fwd 3
op 12 matmul_v2_grad(X: h, Y: w1, Out@GRAD: hw@GRAD) -> (X@GRAD: h@GRAD@RENAME@1, Y@GRAD: w1@GRAD) {trans_x = false, trans_y = false} role backward fwd 2
op 13 sum(X: [h@GRAD@RENAME@0, h@GRAD@RENAME@1]) -> (Out: h@GRAD) role backward
op 14 matmul_v2_grad(X: x, Y: w0, Out@GRAD: h@GRAD) -> (X@GRAD: [], Y@GRAD: w0@GRAD) {trans_x = false, trans_y = false} role backward fwd 1
`
	if got := backwardText(m); got != want {
		t.Errorf("backward ops:\n%s\nwant:\n%s", got, want)
	}
	if want := []ir.ParamGrad{pg("w0", "w0@GRAD"), pg("w1", "w1@GRAD")}; !slices.Equal(m.ParamGrads, want) {
		t.Errorf("params-grads %v, want %v", m.ParamGrads, want)
	}
	r := rand.New(rand.NewPCG(5, 6))
	feed := sim.Scope{}
	for _, n := range []string{"x", "w0", "w1", "frozen"} {
		v := m.Main.Global().Var(n)
		tt := sim.Zeros(ir.F64, v.Type.Shape...)
		for i := range tt.Data {
			tt.Data[i] = 2*r.Float64() - 1
		}
		feed[n] = tt
	}
	checkGrads(t, fwd, m, feed, "loss", []string{"w0", "w1"})
}

// A var read twice by one op (x * x) gets two parts, summed at the end.
func TestAppendBackwardSumAtEnd(t *testing.T) {
	m := ir.NewModule("square")
	b := ir.NewBuilder(m)
	b.Param("w", ir.Tensor(ir.F64, 3)).WithFlags(ir.FlagTrainable)
	b.Var("sq", ir.Tensor(ir.F64, 3))
	b.Var("loss", ir.Tensor(ir.F64))
	b.Op("elementwise_mul", ir.Slots("X", "w", "Y", "w"), ir.Slots("Out", "sq"), ir.A("axis", ir.Int(-1)))
	b.Op("reduce_sum", ir.Slots("X", "sq"), ir.Slots("Out", "loss"), ir.A("reduce_all", ir.Bool(true)))
	fwd := m.Clone()
	if err := appendBackward(t, m, "loss"); err != nil {
		t.Fatal(err)
	}
	if err := ir.Verify(m); err != nil {
		t.Fatal(err)
	}
	ops := m.Main.Global().Ops
	if last := ir.PrintOp(ops[len(ops)-1]); last != "op 6 sum(X: [w@GRAD@RENAME@0, w@GRAD@RENAME@1]) -> (Out: w@GRAD) role backward" {
		t.Errorf("last op %s", last)
	}
	feed := sim.Scope{"w": sim.MustFromData(ir.F64, []int64{3}, []float64{0.5, -1, 2})}
	checkGrads(t, fwd, m, feed, "loss", []string{"w"})
}

// Integer and stop_gradient inputs get no gradient; an annotated module
// stays annotated.
func TestAppendBackwardNoGradAndDist(t *testing.T) {
	m := ir.NewModule("emb")
	b := ir.NewBuilder(m)
	b.Mesh("dp", []int{2}, []string{"dp"}, []int{0, 1})
	b.Var("ids", ir.Tensor(ir.I64, 4, 3)).WithDist("dp", 0, -1).WithFlags(ir.FlagIsData)
	b.Param("emb", ir.Tensor(ir.F32, 10, 8)).WithDist("dp", -1, -1).WithFlags(ir.FlagTrainable)
	b.Var("pos", ir.Tensor(ir.F32, 4, 3, 8)).WithDist("dp", 0, -1, -1).WithFlags(ir.FlagStopGradient)
	b.Var("e", ir.Tensor(ir.F32, 4, 3, 8)).WithDist("dp", 0, -1, -1)
	b.Var("s", ir.Tensor(ir.F32, 4, 3, 8)).WithDist("dp", 0, -1, -1)
	b.Var("loss", ir.Tensor(ir.F32)).WithDist("dp").WithPartial(0, ir.ReduceAvg)
	b.Annotate(b.Op("lookup_table_v2", ir.Slots("Ids", "ids", "W", "emb"), ir.Slots("Out", "e")), "default", 0)
	b.Annotate(b.Op("elementwise_add", ir.Slots("X", "e", "Y", "pos"), ir.Slots("Out", "s"), ir.A("axis", ir.Int(-1))), "elementwise", 0)
	b.Annotate(b.Op("mean", ir.Slots("X", "s"), ir.Slots("Out", "loss")), "default", 0)
	if err := b.Err(); err != nil {
		t.Fatal(err)
	}
	if err := appendBackward(t, m, "loss"); err != nil {
		t.Fatal(err)
	}
	if err := ir.Verify(m); err != nil {
		t.Fatal(err)
	}
	want := `op 4 fill_constant() -> (Out: loss@GRAD) {dtype = 5, shape = [], value = 1.0} role backward|loss dist @dp impl default:0 [-> loss@GRAD: []]
op 5 mean_grad(X: s, Out@GRAD: loss@GRAD) -> (X@GRAD: s@GRAD) role backward fwd 3 dist @dp impl default:0 [s: [0, -1, -1], loss@GRAD: [] -> s@GRAD: [0, -1, -1]]
op 6 elementwise_add_grad(X: e, Y: pos, Out@GRAD: s@GRAD) -> (X@GRAD: e@GRAD, Y@GRAD: []) {axis = -1} role backward fwd 2 dist @dp impl elementwise:0 [e: [0, -1, -1], pos: [0, -1, -1], s@GRAD: [0, -1, -1] -> e@GRAD: [0, -1, -1]]
op 7 lookup_table_v2_grad(Ids: ids, W: emb, Out@GRAD: e@GRAD) -> (W@GRAD: emb@GRAD) role backward fwd 1 dist @dp impl default:0 [ids: [0, -1], emb: [-1, -1], e@GRAD: [0, -1, -1] -> emb@GRAD: [-1, -1]]
`
	if got := backwardText(m); got != want {
		t.Errorf("backward ops:\n%s\nwant:\n%s", got, want)
	}
	for _, n := range []string{"ids@GRAD", "pos@GRAD"} {
		if m.Main.Global().Var(n) != nil {
			t.Errorf("%s declared", n)
		}
	}
	if d := m.Main.Global().Var("loss@GRAD").Dist; d == nil || d.IsPartial() || d.Mesh != "dp" {
		t.Errorf("loss@GRAD dist %+v, want @dp[] not partial", d)
	}
	if want := []ir.ParamGrad{pg("emb", "emb@GRAD")}; !slices.Equal(m.ParamGrads, want) {
		t.Errorf("params-grads %v, want %v", m.ParamGrads, want)
	}
}

func TestAppendBackwardErrors(t *testing.T) {
	noMaker := func() *ir.Module {
		m := ir.NewModule("max")
		b := ir.NewBuilder(m)
		b.Param("w", ir.Tensor(ir.F32, 3)).WithFlags(ir.FlagTrainable)
		b.Var("z", ir.Tensor(ir.F32, 3)).WithFlags(ir.FlagStopGradient)
		b.Var("mx", ir.Tensor(ir.F32, 3))
		b.Var("loss", ir.Tensor(ir.F32))
		b.Op("elementwise_max", ir.Slots("X", "w", "Y", "z"), ir.Slots("Out", "mx"), ir.A("axis", ir.Int(-1)))
		b.Op("mean", ir.Slots("X", "mx"), ir.Slots("Out", "loss"))
		return m
	}
	for _, tc := range []struct {
		name, loss string
		m          *ir.Module
		want       string
	}{
		{"unknown-loss", "nope", mlp(), `loss var "nope" is not declared`},
		{"no-grad-maker", "loss", noMaker(), "op 1 elementwise_max: no gradient defined"},
		{"dropout-without-mask", "loss", func() *ir.Module {
			m := ir.NewModule("dropout")
			b := ir.NewBuilder(m)
			b.Param("w", ir.Tensor(ir.F32, 3)).WithFlags(ir.FlagTrainable)
			b.Var("d", ir.Tensor(ir.F32, 3))
			b.Var("loss", ir.Tensor(ir.F32))
			b.Op("dropout", ir.Slots("X", "w"), ir.Slots("Out", "d"), ir.A("dropout_prob", ir.Float(0.5)))
			b.Op("mean", ir.Slots("X", "d"), ir.Slots("Out", "loss"))
			return m
		}(), "op 1 dropout: no Mask output, which the grad reads"},
		{"integer-loss", "x", func() *ir.Module {
			m := ir.NewModule("int")
			ir.NewBuilder(m).Var("x", ir.Tensor(ir.I64, 2))
			return m
		}(), `loss var "x" is i64[2], not a float tensor`},
		{"undefined-loss", "x", func() *ir.Module {
			m := ir.NewModule("leaf")
			ir.NewBuilder(m).Var("x", ir.Tensor(ir.F32, 2))
			return m
		}(), `no op of block 0 defines loss var "x"`},
		{"twice", "loss", func() *ir.Module {
			m := mlp()
			if _, err := passes.AppendBackward(m, "loss"); err != nil {
				t.Fatal(err)
			}
			return m
		}(), "already declared"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := appendBackward(t, tc.m, tc.loss)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
	t.Run("twice-names-the-same-var-every-time", func(t *testing.T) {
		// Every gradient name but the loss's is taken: the error names
		// the first var met in program order, whatever the order of the
		// map behind it.
		m := mlp()
		b := ir.NewBuilder(m)
		for _, v := range m.Main.Global().Vars() {
			if v.Name() != "loss" {
				b.Var(v.Name()+"@GRAD", v.Type)
			}
		}
		if err := b.Err(); err != nil {
			t.Fatal(err)
		}
		var first string
		for i := range 20 {
			err := appendBackward(t, m.Clone(), "loss")
			if err == nil {
				t.Fatal("append-backward ran twice")
			}
			if i == 0 {
				first = err.Error()
			} else if err.Error() != first {
				t.Fatalf("run %d: %v\nrun 1: %s", i+1, err, first)
			}
		}
		if want := `var "fc0.w@GRAD" is already declared`; !strings.Contains(first, want) {
			t.Errorf("error %s, want one about the first var met, %s", first, want)
		}
	})
	t.Run("taken-name-changes-nothing", func(t *testing.T) {
		m := mlp()
		ir.NewBuilder(m).Var("fc0.b@GRAD", ir.Tensor(ir.F64, 2))
		before := m.Clone()
		err := appendBackward(t, m, "loss")
		if err == nil || !strings.Contains(err.Error(), `var "fc0.b@GRAD" is already declared`) {
			t.Fatalf("error %v", err)
		}
		if !ir.Equal(m, before) {
			t.Errorf("module changed by a failed append-backward:\n%s", ir.Print(m))
		}
	})
	t.Run("empty-loss", func(t *testing.T) {
		pl := passes.DefaultRegistry().MustParse("append-backward")
		err := (&passes.Manager{}).Run(context.Background(), pl, mlp())
		var pe *passes.PassError
		if !errors.As(err, &pe) || !strings.Contains(err.Error(), "option loss is required") {
			t.Fatalf("error %v", err)
		}
	})
}

func TestAppendBackwardOrder(t *testing.T) {
	_, err := passes.DefaultRegistry().Parse("partition-vars,append-backward{loss=loss}")
	if err == nil || !strings.Contains(err.Error(), "append-backward") {
		t.Fatalf("append-backward after partition-vars: error %v", err)
	}
}

func BenchmarkAppendBackward(b *testing.B) {
	for _, n := range []int{10000, 100000} {
		m := irgen.ForwardMLP(n)
		b.Run("ops="+strconv.Itoa(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				c := m.Clone()
				if _, err := passes.AppendBackward(c, "loss"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestForwardMLP checks the benchmark input differentiates and verifies.
func TestForwardMLP(t *testing.T) {
	m := irgen.ForwardMLP(41)
	if got := m.Main.NumOps(); got != 41 {
		t.Errorf("%d ops, want 41", got)
	}
	st, err := passes.AppendBackward(m, "loss")
	if err != nil {
		t.Fatal(err)
	}
	if err := ir.Verify(m); err != nil {
		t.Fatal(err)
	}
	if st.GradOps != 41 || st.SumOps != 9 {
		t.Errorf("stats %+v, want 41 grad ops and 9 sums", st)
	}
	if len(m.ParamGrads) != 20 {
		t.Errorf("%d params-grads, want 20", len(m.ParamGrads))
	}
}

// goldenInput returns the input module of a golden case.
func goldenInput(t *testing.T, name string) *ir.Module {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "golden", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(data), "-- input.dpir --\n")
	if !ok {
		t.Fatalf("%s: no input.dpir", name)
	}
	text, _, _ := strings.Cut(rest, "\n-- ")
	m, err := ir.Parse(name, []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// The hand-written backward sections of the golden cases are what
// append-backward writes for their forward ops: ids, grad vars with their
// dists, grad ops with their dists.
func TestAppendBackwardGoldens(t *testing.T) {
	for _, name := range []string{"dp_mlp.txtar", "megatron_2d.txtar"} {
		t.Run(name, func(t *testing.T) {
			want := goldenInput(t, name)
			// Strip everything but the forward ops and vars.
			m := goldenInput(t, name)
			b := m.Main.Global()
			b.Ops = slices.DeleteFunc(b.Ops, func(op *ir.Op) bool { return !op.Role.IsForward() })
			for _, op := range b.Ops {
				op.Role = ir.RoleForward
			}
			for _, v := range slices.Clone(b.Vars()) {
				if strings.HasSuffix(v.Name(), "@GRAD") {
					b.RemoveVar(v.Name())
				}
			}
			m.ParamGrads = nil
			if err := appendBackward(t, m, "loss"); err != nil {
				t.Fatal(err)
			}
			if err := ir.Verify(m); err != nil {
				t.Fatal(err)
			}
			// The golden has sgd ops after the backward ones.
			wb := want.Main.Global()
			wb.Ops = slices.DeleteFunc(wb.Ops, func(op *ir.Op) bool { return op.Role.IsOptimize() })
			// Compared: all ops, the grad var declarations (as a set: the
			// golden declares them in its own order), the params-grads.
			summary := func(m *ir.Module) string {
				var decls []string
				for _, v := range m.Main.Global().Vars() {
					if strings.HasSuffix(v.Name(), "@GRAD") {
						decls = append(decls, ir.PrintVar(v))
					}
				}
				slices.Sort(decls)
				var sb strings.Builder
				for _, op := range m.Main.Global().Ops {
					sb.WriteString(ir.PrintOp(op) + "\n")
				}
				for _, pg := range m.ParamGrads {
					sb.WriteString("grads " + pg.Param + " -> " + pg.Grad + "\n")
				}
				return strings.Join(decls, "\n") + "\n" + sb.String()
			}
			if got, w := summary(m), summary(want); got != w {
				t.Errorf("got:\n%s\nwant:\n%s", got, w)
			}
		})
	}
}
