package passes_test

import (
	"context"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/distpass/distpass/check"
	"github.com/distpass/distpass/interop/paddle"
	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/passes"
	"github.com/distpass/distpass/sim"
)

// smallInference is an inference program as Paddle saves one: feed and
// fetch ops, persistable weights, a -1 batch.
const smallInference = `module small
program main {
  block 0 {
    persist feed : feed_list
    persist fetch : fetch_list
    var x : f64[-1, 4] lod 0
    persist w : f64[4, 5]
    persist fc.b_0 : f64[5]
    var h : f64[-1, 5]
    var a : f64[-1, 5]
    var r : f64[-1, 5]
    var rx : f64[0, -1, 5]
    var p : f64[-1, 5]
    op 1 feed(X: feed) -> (Out: x) {col = 0}
    op 2 mul(X: x, Y: w) -> (Out: h) {x_num_col_dims = 1, y_num_col_dims = 1}
    op 3 elementwise_add(X: h, Y: fc.b_0) -> (Out: a) {axis = 1}
    op 4 reshape2(X: a) -> (Out: r, XShape: rx) {shape = [-1, 5]}
    op 5 relu(X: r) -> (Out: p) {is_test = true}
    op 6 fetch(X: p) -> (Out: fetch) {col = 0}
  }
}
`

// TestMakeTrainableSmall pins the whole output on a small program: feed
// and fetch gone with their list vars, x a data input of the new shape,
// every shape after it re-inferred (reshape2's -1 and XShape's 0
// included), w and the bias trainable params initialised by Paddle's
// defaults (Xavier uniform with limit sqrt(6/(4+5)), 0), is_test false,
// the label and the loss.
func TestMakeTrainableSmall(t *testing.T) {
	m := parseModule(t, smallInference)
	if err := run(t, testRegistry(t), "make-trainable{shape=4x4,seed=7},verify", m); err != nil {
		t.Fatal(err)
	}
	want := `module small

program main {
  block 0 {
    var x : f64[4, 4] lod 0 {is_data, stop_gradient}
    param w : f64[4, 5] {trainable}
    param fc.b_0 : f64[5] {trainable}
    var h : f64[4, 5]
    var a : f64[4, 5]
    var r : f64[4, 5]
    var rx : f64[0, 4, 5]
    var p : f64[4, 5]
    var label : i64[4, 1] {is_data, stop_gradient}
    var p.softmax_0 : f64[4, 5]
    var p.xent_0 : f64[4, 1]
    var loss : f64[]
    op 2 mul(X: x, Y: w) -> (Out: h) {x_num_col_dims = 1, y_num_col_dims = 1} role forward
    op 3 elementwise_add(X: h, Y: fc.b_0) -> (Out: a) {axis = 1} role forward
    op 4 reshape2(X: a) -> (Out: r, XShape: rx) {shape = [-1, 5]} role forward
    op 5 relu(X: r) -> (Out: p) {is_test = false} role forward
    op 8 softmax_with_cross_entropy(Logits: p, Label: label) -> (Softmax: p.softmax_0, Loss: p.xent_0) {axis = -1, ignore_index = -100, soft_label = false} role forward
    op 9 mean(X: p.xent_0) -> (Out: loss) role forward|loss
  }
}

program startup {
  block 0 {
    param w : f64[4, 5] {trainable}
    param fc.b_0 : f64[5] {trainable}
    op 6 uniform_random() -> (Out: w) {dtype = 6, max = 0.816496580927726, min = -0.816496580927726, seed = 7, shape = [4, 5]} role forward
    op 7 fill_constant() -> (Out: fc.b_0) {dtype = 6, shape = [5], value = 0.0} role forward
  }
}
`
	if got := string(ir.Print(m)); got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	if lim := math.Sqrt(6.0 / 9); lim != 0.816496580927726 {
		t.Fatalf("the Xavier limit of [4, 5] is %v", lim)
	}
}

// runStartup runs m's startup program in the simulator and checks that it
// writes every persistable of main, with main's shape.
func runStartup(t *testing.T, m *ir.Module) sim.Scope {
	t.Helper()
	scope := sim.Scope{}
	if err := sim.NewInterp(sim.DefaultKernels()).RunProgram(m.Startup, scope); err != nil {
		t.Fatal(err)
	}
	for _, v := range m.Main.Global().Vars() {
		if !v.Persistable() || !v.Type.IsTensor() {
			continue
		}
		got := scope[v.Name()]
		if got == nil {
			t.Fatalf("startup does not write %s", v.Name())
		}
		if !slices.Equal(got.Shape, v.Type.Shape) {
			t.Fatalf("startup writes %s as %v, main declares %v", v.Name(), got.Shape, v.Type.Shape)
		}
	}
	return scope
}

func tensor(t *testing.T, dt ir.DType, shape []int64, data []float64) *sim.Tensor {
	t.Helper()
	x, err := sim.FromData(dt, shape, data)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// forwardSmall is smallInference's output by hand: relu(x·w + b).
func forwardSmall(x, w, b *sim.Tensor) [][]float64 {
	out := make([][]float64, 4)
	for i := range 4 {
		out[i] = make([]float64, 5)
		for j := range 5 {
			s := b.Data[j]
			for k := range 4 {
				s += x.Data[i*4+k] * w.Data[k*5+j]
			}
			out[i][j] = math.Max(s, 0)
		}
	}
	return out
}

var smallX = []float64{0.5, -1, 2, 0.25, 1, 1, -0.5, 0, -2, 0.75, 1.5, -1, 0.1, 0.2, 0.3, 0.4}

// The startup the pass builds runs in the simulator: w uniform in
// (-limit, limit), seeded (the same values twice), b zero; and the loss
// on the output is softmax cross entropy, averaged, as computed by hand.
func TestMakeTrainableRunsXent(t *testing.T) {
	m := parseModule(t, smallInference)
	if err := run(t, testRegistry(t), "make-trainable{shape=4x4,seed=7}", m); err != nil {
		t.Fatal(err)
	}
	scope := runStartup(t, m)
	again := runStartup(t, m)
	w, b := scope["w"], scope["fc.b_0"]
	lim := math.Sqrt(6.0 / 9)
	distinct := map[float64]bool{}
	for i, v := range w.Data {
		if !(math.Abs(v) < lim) || v != again["w"].Data[i] {
			t.Fatalf("w[%d] = %v (again %v): want the same draw in (-%v, %v)", i, v, again["w"].Data[i], lim, lim)
		}
		distinct[v] = true
	}
	if len(distinct) < 20 {
		t.Fatalf("w has %d distinct values of 20", len(distinct))
	}
	for _, v := range b.Data {
		if v != 0 {
			t.Fatalf("b = %v, want zeros", b.Data)
		}
	}
	labels := []float64{3, 0, 4, 1}
	scope["x"] = tensor(t, ir.F64, []int64{4, 4}, smallX)
	scope["label"] = tensor(t, ir.I64, []int64{4, 1}, labels)
	if err := sim.NewInterp(sim.DefaultKernels()).RunProgram(m.Main, scope); err != nil {
		t.Fatal(err)
	}
	want := 0.0
	for i, row := range forwardSmall(scope["x"], w, b) {
		z := 0.0
		for _, v := range row {
			z += math.Exp(v)
		}
		want += (math.Log(z) - row[int(labels[i])]) / 4
	}
	if got := scope["loss"].Data[0]; math.Abs(got-want) > 1e-12 {
		t.Fatalf("loss = %v, want %v", got, want)
	}
}

// mse's loss is mean((out - label)^2), with a label shaped like the output.
func TestMakeTrainableRunsMSE(t *testing.T) {
	m := parseModule(t, smallInference)
	if err := run(t, testRegistry(t), "make-trainable{loss=mse,label=y,shape=4x4},verify", m); err != nil {
		t.Fatal(err)
	}
	g := m.Main.Global()
	if y := g.Var("y"); y == nil || y.Type.String() != "f64[4, 5]" || !y.Has(ir.FlagIsData|ir.FlagStopGradient) {
		t.Fatalf("label y = %v", y)
	}
	var types []string
	for _, op := range g.Ops {
		types = append(types, op.Type)
	}
	if want := "mul elementwise_add reshape2 relu elementwise_sub elementwise_mul mean"; strings.Join(types, " ") != want {
		t.Fatalf("ops %q, want %q", types, want)
	}
	if last := g.Ops[len(g.Ops)-1]; !last.Role.IsLoss() || last.Output("Out")[0] != passes.TrainableLossVar {
		t.Fatalf("last op %s role %s", ir.PrintOp(last), last.Role)
	}
	scope := runStartup(t, m)
	y := make([]float64, 20)
	for i := range y {
		y[i] = float64(i%7)/3 - 1
	}
	scope["x"] = tensor(t, ir.F64, []int64{4, 4}, smallX)
	scope["y"] = tensor(t, ir.F64, []int64{4, 5}, y)
	if err := sim.NewInterp(sim.DefaultKernels()).RunProgram(m.Main, scope); err != nil {
		t.Fatal(err)
	}
	want := 0.0
	for i, row := range forwardSmall(scope["x"], scope["w"], scope["fc.b_0"]) {
		for j, v := range row {
			d := v - y[i*5+j]
			want += d * d / 20
		}
	}
	if got := scope["loss"].Data[0]; math.Abs(got-want) > 1e-12 {
		t.Fatalf("loss = %v, want %v", got, want)
	}
}

// The trainable program goes on through the training pipeline: its loss
// is what append-backward differentiates, and both params get grads.
func TestMakeTrainableThenBackward(t *testing.T) {
	m := parseModule(t, smallInference)
	if err := run(t, testRegistry(t), "make-trainable{shape=4x4},append-backward{loss=loss},append-optimizer{type=sgd},verify", m); err != nil {
		t.Fatal(err)
	}
	want := []ir.ParamGrad{{Param: "w", Grad: "w@GRAD"}, {Param: "fc.b_0", Grad: "fc.b_0@GRAD"}}
	if !slices.Equal(m.ParamGrads, want) {
		t.Fatalf("params-grads %v, want %v", m.ParamGrads, want)
	}
}

// convBN has Paddle's conv and batch norm layers: the initialisers follow
// Paddle's defaults per slot, and the shapes follow the new input through
// conv2d, depthwise_conv2d, a global pool2d and a reshape2 with 0 and -1.
const convBN = `module convbn
program main {
  block 0 {
    persist feed : feed_list
    persist fetch : fetch_list
    var img : f32[-1, 3, 8, 8]
    persist conv_w : f32[4, 3, 3, 3]
    persist conv.b_0 : f32[4]
    var cb : f32[1, 4, 1, 1]
    var cbx : f32[0, 4]
    var c0 : f32[-1, 4, 8, 8]
    var c : f32[-1, 4, 8, 8]
    persist bn_scale : f32[4]
    persist bn_offset : f32[4]
    persist bn_mean : f32[4]
    persist bn_var : f32[4]
    var bn_sm : f32[4]
    var bn_sv : f32[4]
    var y : f32[-1, 4, 8, 8]
    persist dw_w : f32[4, 1, 3, 3]
    var d : f32[-1, 4, 4, 4]
    persist gate : f32[4]
    var e : f32[-1, 4, 4, 4]
    var pl : f32[-1, 4, 1, 1]
    var o : f32[-1, 4]
    var ox : f32[0, -1, 4, 1, 1]
    op 1 feed(X: feed) -> (Out: img) {col = 0}
    op 2 conv2d(Input: img, Filter: conv_w) -> (Output: c0) {strides = [1, 1], paddings = [1, 1], dilations = [1, 1], groups = 1, is_test = true}
    op 3 reshape2(X: conv.b_0) -> (Out: cb, XShape: cbx) {shape = [1, 4, 1, 1]}
    op 4 elementwise_add(X: c0, Y: cb) -> (Out: c) {axis = -1}
    op 5 batch_norm(X: c, Scale: bn_scale, Bias: bn_offset, Mean: bn_mean, Variance: bn_var) -> (Y: y, MeanOut: bn_mean, VarianceOut: bn_var, SavedMean: bn_sm, SavedVariance: bn_sv) {epsilon = 0.00001, momentum = 0.9, is_test = true}
    op 6 depthwise_conv2d(Input: y, Filter: dw_w) -> (Output: d) {strides = [2, 2], paddings = [1, 1], dilations = [1, 1], groups = 4}
    op 7 elementwise_mul(X: d, Y: gate) -> (Out: e) {axis = 1}
    op 8 pool2d(X: e) -> (Out: pl) {pooling_type = "avg", global_pooling = true, ksize = [1, 1]}
    op 9 reshape2(X: pl) -> (Out: o, XShape: ox) {shape = [0, -1]}
    op 10 fetch(X: o) -> (Out: fetch) {col = 0}
  }
}
`

func TestMakeTrainableConvBN(t *testing.T) {
	m := parseModule(t, convBN)
	if err := run(t, testRegistry(t), "make-trainable{shape=2x3x16x16},verify", m); err != nil {
		t.Fatal(err)
	}
	g := m.Main.Global()
	shapes := map[string]string{
		"img": "f32[2, 3, 16, 16]", "c0": "f32[2, 4, 16, 16]", "c": "f32[2, 4, 16, 16]", "y": "f32[2, 4, 16, 16]",
		"d": "f32[2, 4, 8, 8]", "e": "f32[2, 4, 8, 8]", "pl": "f32[2, 4, 1, 1]", "o": "f32[2, 4]", "ox": "f32[0, 2, 4, 1, 1]",
		"cb": "f32[1, 4, 1, 1]", "label": "i64[2, 1]", "loss": "f32[]",
	}
	for name, want := range shapes {
		if v := g.Var(name); v == nil || v.Type.String() != want {
			t.Errorf("var %s = %v, want %s", name, v, want)
		}
	}
	params := []string{"conv_w", "conv.b_0", "bn_scale", "bn_offset", "dw_w", "gate"}
	for _, name := range params {
		if v := g.Var(name); v.Kind != ir.KindParam || !v.Has(ir.FlagTrainable) {
			t.Errorf("%s is %s, want a trainable param", ir.PrintVar(v), v.Kind)
		}
	}
	for _, name := range []string{"bn_mean", "bn_var"} {
		if v := g.Var(name); v.Kind != ir.KindPersist || v.Has(ir.FlagTrainable) {
			t.Errorf("%s: want persistable state, not trainable", ir.PrintVar(v))
		}
	}
	for _, op := range g.Ops {
		if v, ok := op.Attrs.Bool("is_test"); ok && v {
			t.Errorf("%s keeps is_test", op)
		}
		if op.Attrs.Has("use_global_stats") {
			t.Errorf("%s has use_global_stats without batch-norm=global", op)
		}
	}
	frozen := parseModule(t, convBN)
	if err := run(t, testRegistry(t), "make-trainable{shape=2x3x16x16,batch-norm=global},verify", frozen); err != nil {
		t.Fatal(err)
	}
	if bn := frozen.Main.Global().Ops[3]; bn.Type != "batch_norm" || bn.Attrs.Get("use_global_stats") != ir.Bool(true) {
		t.Errorf("with batch-norm=global: %s", ir.PrintOp(bn))
	}
	// The startup's initialiser of each: its type and float attrs.
	type init struct {
		typ   string
		attrs map[string]float64
	}
	inits := map[string]init{}
	for _, op := range m.Startup.Global().Ops {
		in := init{op.Type, map[string]float64{}}
		for _, a := range []string{"mean", "std", "min", "max", "value"} {
			if f, ok := op.Attrs.Float(a); ok {
				in.attrs[a] = f
			}
		}
		inits[op.Output("Out")[0]] = in
	}
	fill := func(v float64) init { return init{"fill_constant", map[string]float64{"value": v}} }
	gate := math.Sqrt(6.0 / 8) // Xavier of a [4]: fan in = fan out = 4
	wantInits := map[string]init{
		"conv_w":    {"gaussian_random", map[string]float64{"mean": 0, "std": math.Sqrt(2.0 / 27)}},
		"dw_w":      {"gaussian_random", map[string]float64{"mean": 0, "std": math.Sqrt(2.0 / 36)}}, // C_in = 1 * groups 4
		"conv.b_0":  fill(0),                                                                        // Paddle's bias name
		"bn_scale":  fill(1),
		"bn_offset": fill(0),
		"bn_mean":   fill(0),
		"bn_var":    fill(1),
		"gate":      {"uniform_random", map[string]float64{"min": -gate, "max": gate}},
	}
	for name, want := range wantInits {
		if got := inits[name]; got.typ != want.typ || !maps.Equal(got.attrs, want.attrs) {
			t.Errorf("initialiser of %s: %v, want %v", name, got, want)
		}
	}
	if len(inits) != len(wantInits) {
		t.Errorf("startup initialises %d vars, want %d: %v", len(inits), len(wantInits), inits)
	}
	// Run it: the constants are exact, and the gaussian draws of the conv
	// filter have about the std Paddle's default asks for.
	scope := runStartup(t, m)
	for name, c := range map[string]float64{"bn_scale": 1, "bn_var": 1, "bn_mean": 0, "bn_offset": 0, "conv.b_0": 0} {
		for _, v := range scope[name].Data {
			if v != c {
				t.Fatalf("%s = %v, want all %v", name, scope[name].Data, c)
			}
		}
	}
	ss := 0.0
	for _, v := range scope["conv_w"].Data {
		ss += v * v
	}
	if sd, want := math.Sqrt(ss/108), math.Sqrt(2.0/27); math.Abs(sd-want) > 0.25*want {
		t.Fatalf("conv_w's draws have rms %v, want about %v", sd, want)
	}
}

// Each refusal names what stops it, and leaves the module as it was.
func TestMakeTrainableRefuses(t *testing.T) {
	edit := func(old, new string) string {
		if !strings.Contains(smallInference, old) {
			t.Fatalf("no %q in the program", old)
		}
		return strings.Replace(smallInference, old, new, 1)
	}
	cases := []struct {
		name, src, opts, want string
	}{
		{"quant", edit(`op 5 relu(X: r) -> (Out: p) {is_test = true}`,
			`var q : f64[1]
    op 5 fake_quantize_abs_max(X: r) -> (Out: p, OutScale: q) {bit_length = 8}`), "",
			"quantization ops Paddle gives no gradient (an int8 model's; quantisation-aware training's quantise-dequantise ops and scale observer train): op 5 fake_quantize_abs_max"},
		{"pir", edit(`op 1 feed(X: feed) -> (Out: x) {col = 0}`, `op 1 pd_op.data() -> (out0: x) {name = "x"}`), "",
			"a PIR program's inputs and outputs: make-trainable reads a ProgramDesc's feed and fetch ops, not op 1 pd_op.data (var x)"},
		{"two fetches", edit(`op 6 fetch(X: p) -> (Out: fetch) {col = 0}`,
			`op 6 fetch(X: p) -> (Out: fetch) {col = 0}
    op 7 fetch(X: h) -> (Out: fetch) {col = 1}`), "",
			"2 fetch ops (of p, h): choose with output=NAME (p or h), or several with output=NAME:W;NAME:W (the loss their weighted sum)"},
		{"no fetch", edit(`op 6 fetch(X: p) -> (Out: fetch) {col = 0}`, ``), "",
			"no fetch op: make-trainable puts the loss on the fetched var"},
		{"feed not from a feed list", edit(`op 1 feed(X: feed) -> (Out: x) {col = 0}`, `op 1 feed(X: fc.b_0) -> (Out: x) {col = 0}`), "",
			"op 1 feed: X fc.b_0 has type f64[5], want a feed_list"},
		{"fetch of two", edit(`op 6 fetch(X: p) -> (Out: fetch)`, `op 6 fetch(X: [p, h]) -> (Out: fetch)`), "",
			"op 6 fetch: slot X has 2 args, want 1"},
		{"fed var written", edit(`op 5 relu(X: r) -> (Out: p)`, `op 5 relu(X: r) -> (Out: x)`), "",
			"op 5 relu writes the fed var x: a data input is only read"},
		{"label taken", smallInference, "label=h", "var h is already declared: make-trainable declares it (choose another label=)"},
		{"rank", smallInference, "shape=4", "shape=[4]: data input x has rank 2 (f64[-1, 4] lod 0)"},
		{"bad shape", smallInference, "shape=4x-1", `shape "4x-1": dim "-1" is not an integer above 0 (want dims joined by x, as 8x3x32x32)`},
		{"baked batch", edit(`{shape = [-1, 5]}`, `{shape = [1, 5]}`), "shape=4x4",
			"shape=: op 4 reshape2: inconsistent inputs: X a [4, 5] (20 elements) does not reshape to [1, 5] (5 elements) (its shape attr [1, 5] bakes in dims of the exported shape; make-trainable rewrites only an exported dim 0 of X that changed)"},
		{"no inference", edit(`op 5 relu(X: r)`, `op 5 gap(X: r)`), "shape=4x4",
			"shape=: op 5 gap reads a var whose shape changed, and the op table has no shape inference for gap"},
		{"two inputs", edit(`op 1 feed(X: feed) -> (Out: x) {col = 0}`, `var x2 : f64[-1, 4]
    op 1 feed(X: feed) -> (Out: x) {col = 0}
    op 11 feed(X: feed) -> (Out: x2) {col = 1}`), "shape=4x4",
			"shape=: the program has 2 data inputs (x, x2), want one"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := ir.Parse("test.dpir", []byte(c.src))
			if err != nil {
				t.Fatal(err)
			}
			before := string(ir.Print(m))
			err = run(t, testRegistry(t), "make-trainable{"+c.opts+"}", m)
			if err == nil || !strings.HasSuffix(err.Error(), c.want) {
				t.Fatalf("err = %v\nwant it to end with %s", err, c.want)
			}
			if after := string(ir.Print(m)); after != before {
				t.Fatalf("a refusal changed the module:\n%s", after)
			}
		})
	}
}

// paddleFixtures are the outcomes of make-trainable on every Paddle
// program of the import testdata (the shared fixtures hold the same
// files): "" passes verify after it, anything else is the end of its
// refusal. The MobileNets pool their last 7×7 map with a fixed 7×7
// window, which a 32×32 image shrinks to 1×1; at 224×224 both pass (v2's
// last reshape2 bakes in Paddle's traced batch of 1, which becomes 0).
var paddleFixtures = []struct {
	file, shape, want string
}{
	{"demo_custom_gap.pdmodel", "2x3x32x32", "shape=: op 8 gap reads a var whose shape changed, and the op table has no shape inference for gap"},
	{"lite_conv_bn_relu.pdmodel", "2x3x32x32", ""},
	{"lite_mobilenetv1.pdmodel", "2x3x32x32", "shape=: op 83 pool2d: inconsistent inputs: X batch_norm_26.tmp_3 [2, 1024, 1, 1]: dim 2 of size 1, padded by 0+0, is smaller than the window 7"},
	{"lite_mobilenetv1.pdmodel", "2x3x224x224", ""},
	{"lite_mobilenetv2.pdmodel", "2x3x32x32", "shape=: op 151 pool2d: inconsistent inputs: X conv2d_34.tmp_2 [2, 1792, 1, 1]: dim 2 of size 1, padded by 0+0, is smaller than the window 7"},
	{"lite_mobilenetv2.pdmodel", "2x3x224x224", ""},
	{"lite_resnet50.pdmodel", "2x3x32x32", ""},
	{"lite_resnet_cifar.pdmodel", "2x3x32x32", ""},
	{"slim_mobilenetv1_int8.pdmodel", "2x3x32x32", ""},
	{"visualdl_mobilenetv1.pdmodel", "2x3x32x32", ""},
	{"p2o_pir_ifelse.json", "2x3x32x32", "a PIR program's inputs and outputs: make-trainable reads a ProgramDesc's feed and fetch ops, not op 1 pd_op.data (var 0), op 2 pd_op.data (var 1), op 28 pd_op.fetch (var v29), op 29 pd_op.fetch (var v30)"},
	{"p2o_pir_thresholded_relu.json", "2x3x32x32", "a PIR program's inputs and outputs: make-trainable reads a ProgramDesc's feed and fetch ops, not op 1 pd_op.data (var 0), op 5 pd_op.fetch (var v5)"},
}

func TestMakeTrainablePaddleFixtures(t *testing.T) {
	dir := filepath.Join("..", "interop", "paddle", "testdata")
	files, _ := filepath.Glob(filepath.Join(dir, "*.pdmodel"))
	more, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	for _, f := range append(files, more...) {
		if !slices.ContainsFunc(paddleFixtures, func(c struct{ file, shape, want string }) bool { return c.file == filepath.Base(f) }) {
			t.Errorf("%s has no row in paddleFixtures", f)
		}
	}
	for _, c := range paddleFixtures {
		t.Run(c.file+"@"+c.shape, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(dir, c.file))
			if err != nil {
				t.Fatal(err)
			}
			var m *ir.Module
			if strings.HasSuffix(c.file, ".json") {
				m, err = paddle.ImportPIR(c.file, data)
			} else {
				m, err = paddle.Import(c.file, data)
			}
			if err != nil {
				t.Fatal(err)
			}
			err = run(t, testRegistry(t), "make-trainable{loss=softmax_with_cross_entropy,shape="+c.shape+"},verify", m)
			if c.want != "" {
				if err == nil || !strings.HasSuffix(err.Error(), c.want) {
					t.Fatalf("err = %v\nwant it to end with %s", err, c.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			g := m.Main.Global()
			params, data0 := 0, 0
			for _, v := range g.Vars() {
				if v.Kind == ir.KindParam {
					params++
				}
				if v.Has(ir.FlagIsData) && v.Name() != "label" {
					data0++
					if want, _ := passes.ParseShape(c.shape); !slices.Equal(v.Type.Shape, want) {
						t.Errorf("data input %s has shape %v, want %s", v.Name(), v.Type.Shape, c.shape)
					}
				}
				if v.Type.IsTensor() && !v.Persistable() && slices.Contains(v.Type.Shape, -1) {
					t.Errorf("%s still has an unknown dim", ir.PrintVar(v))
				}
			}
			for _, op := range g.Ops {
				if op.Type == "feed" || op.Type == "fetch" {
					t.Errorf("%s is left", op)
				}
			}
			if params == 0 || data0 != 1 || g.Var("loss") == nil {
				t.Fatalf("%d params, %d data inputs, loss %v", params, data0, g.Var("loss"))
			}
			// Its fc's bias add is fused in place (op 32 elementwise_add).
			if c.file == "slim_mobilenetv1_int8.pdmodel" && g.Var("linear_1.tmp_0.out_0") == nil {
				t.Error("the in-place elementwise_add's output was not renamed")
			}
			if c.file == "lite_conv_bn_relu.pdmodel" || c.file == "lite_resnet_cifar.pdmodel" {
				runStartup(t, m)
			}
		})
	}
}

// A program already written for training keeps what it has: its is_data
// input (there is no feed op) and its startup's initialisers, beside
// which make-trainable adds those missing.
func TestMakeTrainableKeepsStartup(t *testing.T) {
	src := strings.NewReplacer(
		"var x : f64[-1, 4] lod 0", "var x : f64[4, 4] {is_data}",
		"    op 1 feed(X: feed) -> (Out: x) {col = 0}\n", "",
		"    persist feed : feed_list\n", "",
	).Replace(smallInference) + `program startup {
  block 0 {
    persist w : f64[4, 5]
    op 20 fill_constant() -> (Out: w) {dtype = 6, shape = [4, 5], value = 0.5}
  }
}
`
	m := parseModule(t, src)
	if err := run(t, testRegistry(t), "make-trainable,verify", m); err != nil {
		t.Fatal(err)
	}
	want := `program startup {
  block 0 {
    param w : f64[4, 5] {trainable}
    param fc.b_0 : f64[5] {trainable}
    op 20 fill_constant() -> (Out: w) {dtype = 6, shape = [4, 5], value = 0.5} role forward
    op 21 fill_constant() -> (Out: fc.b_0) {dtype = 6, shape = [5], value = 0.0} role forward
  }
}
`
	if got := string(ir.Print(m)); !strings.HasSuffix(got, want) {
		t.Fatalf("got\n%s\nwant it to end with\n%s", got, want)
	}
	if x := m.Main.Global().Var("x"); !x.Has(ir.FlagIsData | ir.FlagStopGradient) {
		t.Fatalf("x = %s", ir.PrintVar(x))
	}
}

// The whole path of an imported program to a proven data-parallel
// training step: make-trainable, append-backward, annotate-data-parallel,
// append-optimizer, then check (serial against 2 ranks, 2 steps), with
// both losses.
func TestMakeTrainableChecksDataParallel(t *testing.T) {
	for _, loss := range []string{"softmax_with_cross_entropy", "mse"} {
		t.Run(loss, func(t *testing.T) {
			m := parseModule(t, smallInference)
			pipeline := "make-trainable{loss=" + loss + ",shape=4x4},append-backward{loss=loss},annotate-data-parallel{shape=2},append-optimizer{type=sgd,lr=0.1},verify"
			if err := run(t, testRegistry(t), pipeline, m); err != nil {
				t.Fatal(err)
			}
			rep := checkSteps(t, m, 2)
			if rep.Count("loss") != 1 || rep.Count("param") != 2 || rep.Count("grad") != 2 {
				t.Fatalf("compared %d loss, %d params, %d grads; want 1, 2, 2", rep.Count("loss"), rep.Count("param"), rep.Count("grad"))
			}
		})
	}
}

// An op in place (Paddle's fused inference programs have them) gets an
// output var of its own, and what reads it after follows, so that
// append-backward, which wants each var defined once, takes the program.
func TestMakeTrainableRenamesInPlace(t *testing.T) {
	src := strings.NewReplacer(
		"op 5 relu(X: r) -> (Out: p)", "op 5 relu(X: r) -> (Out: r)",
		"op 6 fetch(X: p)", "op 6 fetch(X: r)",
	).Replace(smallInference)
	m := parseModule(t, src)
	if err := run(t, testRegistry(t), "make-trainable{shape=4x4},append-backward{loss=loss},verify", m); err != nil {
		t.Fatal(err)
	}
	g := m.Main.Global()
	if v := g.Var("r.out_0"); v == nil || v.Type.String() != "f64[4, 5]" {
		t.Fatalf("r.out_0 = %v", v)
	}
	for _, want := range []string{
		"op 5 relu(X: r) -> (Out: r.out_0) {is_test = false} role forward",
		"op 8 softmax_with_cross_entropy(Logits: r.out_0, Label: label) -> (Softmax: r.out_0.softmax_0, Loss: r.out_0.xent_0) {axis = -1, ignore_index = -100, soft_label = false} role forward",
	} {
		if !slices.ContainsFunc(g.Ops, func(op *ir.Op) bool { return ir.PrintOp(op) == want }) {
			t.Errorf("no op %s in\n%s", want, ir.Print(m))
		}
	}
}

// A reshape2 exported with Paddle's traced batch of 1 baked into its
// shape attr keeps the new batch: its dim 0 becomes 0 (X's dim), and the
// step it is in checks data-parallel. A baked-in dim that is not X's
// exported dim 0 (here 5 elements of a row of 10) is still refused.
func TestMakeTrainableKeepsBatch(t *testing.T) {
	batch1 := strings.NewReplacer("[-1, ", "[1, ", "[0, -1, 5]", "[0, 1, 5]", "{shape = [-1, 5]}", "{shape = [1, 5]}").Replace(smallInference)
	m := parseModule(t, batch1)
	st, err := passes.MakeTrainable(m, passes.TrainableOptions{Loss: "softmax_with_cross_entropy", Label: "label", Shape: []int64{4, 4}, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	want := "op 4 reshape2(X: a) -> (Out: r, XShape: rx) {shape = [0, 5]} role forward"
	if !slices.ContainsFunc(m.Main.Global().Ops, func(op *ir.Op) bool { return ir.PrintOp(op) == want }) {
		t.Fatalf("no op %s in\n%s", want, ir.Print(m))
	}
	if r := m.Main.Global().Var("r"); r.Type.String() != "f64[4, 5]" {
		t.Fatalf("r = %s", r.Type)
	}
	if st.KeptBatch != 1 {
		t.Fatalf("KeptBatch = %d, want 1", st.KeptBatch)
	}
	if err := run(t, testRegistry(t), "verify,append-backward{loss=loss},annotate-data-parallel{shape=2},append-optimizer{type=sgd},verify", m); err != nil {
		t.Fatal(err)
	}
	checkSteps(t, m, 2)

	flat := strings.NewReplacer("{shape = [1, 5]}", "{shape = [1, 10]}", "var r : f64[1, 5]", "var r : f64[1, 10]").Replace(batch1)
	m = parseModule(t, flat)
	before := string(ir.Print(m))
	err = run(t, testRegistry(t), "make-trainable{shape=4x4}", m)
	if err == nil || !strings.Contains(err.Error(), "op 4 reshape2") {
		t.Fatalf("err = %v, want a refusal of op 4 reshape2", err)
	}
	if string(ir.Print(m)) != before {
		t.Fatal("a refusal changed the module")
	}
}

// checkSteps runs check on m for steps steps and fails t unless the
// SPMD step matches the serial one.
func checkSteps(t *testing.T, m *ir.Module, steps int) *check.Report {
	t.Helper()
	rep, err := check.Run(context.Background(), m, check.Options{Steps: steps})
	if err != nil {
		t.Fatal(err)
	}
	if err := rep.Err(); err != nil {
		t.Fatal(err)
	}
	return rep
}

// A classifier that ends in a softmax over its last axis is not softmaxed
// twice: softmax_with_cross_entropy reads the softmax's input, the
// logits, and the step checks data-parallel. A softmax over another
// axis is not a classifier's: the loss reads its output; over the batch
// (axis 0), annotate-data-parallel refuses it (it once annotated it, and
// the step diverged): completion reads its input whole.
func TestMakeTrainableLossOnLogits(t *testing.T) {
	for _, c := range []struct{ attrs, logits, refused string }{
		{"{axis = -1}", "r", ""},
		{"{axis = 1}", "r", ""},
		{"{axis = -1}+scale {scale = 1.0, bias = 0.0}", "r", ""},
		{"{axis = -1}+scale {scale = 2.0, bias = 0.0}", "p", ""},
		{"{axis = 0}", "p", "op 5 softmax: not provably batch-parallel: completion would reshard r from [0, -1] to [-1, -1]: the op does not compute on batch shards alone"},
	} {
		t.Run(c.attrs, func(t *testing.T) {
			// "attrs+scale attrs": the softmax, then a scale as Paddle's
			// save_inference_model adds.
			sm, sc, _ := strings.Cut(c.attrs, "+scale ")
			repl := "op 5 softmax(X: r) -> (Out: p) " + sm
			if sc != "" {
				repl = "op 5 softmax(X: r) -> (Out: s) " + sm + "\n    op 7 scale(X: s) -> (Out: p) " + sc
			}
			src := strings.Replace(smallInference, "op 5 relu(X: r) -> (Out: p) {is_test = true}", repl, 1)
			src = strings.Replace(src, "    var p : f64[-1, 5]\n", "    var p : f64[-1, 5]\n    var s : f64[-1, 5]\n", 1)
			m := parseModule(t, src)
			st, err := passes.MakeTrainable(m, passes.TrainableOptions{Loss: "softmax_with_cross_entropy", Label: "label", Shape: []int64{4, 4}, Seed: 1})
			if err != nil {
				t.Fatal(err)
			}
			var xent *ir.Op
			for _, op := range m.Main.Global().Ops {
				if op.Type == "softmax_with_cross_entropy" {
					xent = op
				}
			}
			if xent == nil || xent.Input("Logits")[0] != c.logits {
				t.Fatalf("the loss reads %v, want %s:\n%s", xent, c.logits, ir.Print(m))
			}
			if want := map[string]int{"r": 1, "p": 0}[c.logits]; st.Logits != want {
				t.Errorf("Logits = %d, want %d", st.Logits, want)
			}
			err = run(t, testRegistry(t), "verify,append-backward{loss=loss},annotate-data-parallel{shape=2},append-optimizer{type=sgd},verify", m)
			if c.refused != "" {
				if err == nil || !strings.HasSuffix(err.Error(), c.refused) {
					t.Fatalf("err = %v\nwant it to end with %s", err, c.refused)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			checkSteps(t, m, 2)
		})
	}
}
