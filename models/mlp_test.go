package models

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/distpass/distpass/analysis"
	"github.com/distpass/distpass/check"
	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/passes"
)

type strategyCase struct {
	strategy string
	shape    []int
	dims     []string
}

var strategyCases = []strategyCase{
	{"dp", []int{2}, []string{"dp"}},
	{"dp", []int{4}, []string{"dp"}},
	{"mp", []int{2}, []string{"mp"}},
	{"dp,mp", []int{2, 2}, []string{"dp", "mp"}},
	{"dp,mp", []int{2, 4}, []string{"dp", "mp"}},
}

func (c strategyCase) name() string {
	return fmt.Sprintf("%s@%v", c.strategy, c.shape)
}

// checkAnnotations runs the check-annotations analysis on m.
func checkAnnotations(t *testing.T, m *ir.Module) {
	t.Helper()
	rep, err := analysis.Get[*analysis.AnnotationReport](analysis.NewCache(m), analysis.Annotations)
	if err != nil {
		t.Fatal(err)
	}
	if err := rep.Err(); err != nil {
		t.Fatalf("check-annotations: %v", err)
	}
}

// TestMLPTrainingChecks partitions every strategy with every optimizer and
// runs three training steps serially and on every rank.
func TestMLPTrainingChecks(t *testing.T) {
	for _, c := range strategyCases {
		for _, opt := range []string{"sgd", "adam", "momentum"} {
			for _, dt := range []ir.DType{ir.F32, ir.F64} {
				if dt == ir.F64 && (opt != "adam" || c.strategy != "dp,mp") {
					continue // one f64 run is enough
				}
				t.Run(c.name()+"/"+opt+"/"+dt.String(), func(t *testing.T) {
					cfg := MLPConfig{Layers: 4, Hidden: 16, Batch: 8, DType: dt}
					m, err := MLPTraining(cfg, c.strategy, Mesh(c.shape, c.dims), opt)
					if err != nil {
						t.Fatal(err)
					}
					if err := ir.Verify(m); err != nil {
						t.Fatal(err)
					}
					checkAnnotations(t, m)
					rep, err := check.Run(context.Background(), m, check.Options{Steps: 3})
					if err != nil {
						t.Fatal(err)
					}
					if err := rep.Err(); err != nil {
						t.Fatal(err)
					}
					if n := len(rep.Rows); n == 0 {
						t.Fatal("check compared nothing")
					}
				})
			}
		}
	}
}

// TestMLPForwardOnly: the forward module verifies, has no grads, no
// optimizer and no dists, and every strategy annotates it completely.
func TestMLPForwardOnly(t *testing.T) {
	for _, c := range strategyCases {
		t.Run(c.name(), func(t *testing.T) {
			m := MLP(MLPConfig{Layers: 2})
			if err := ir.Verify(m); err != nil {
				t.Fatal(err)
			}
			for _, op := range m.Main.Global().Ops {
				if !op.Role.IsForward() || op.Dist != nil {
					t.Fatalf("%s: role %s, dist %v", op, op.Role, op.Dist)
				}
			}
			if len(m.ParamGrads) != 0 || len(m.Meshes) != 0 {
				t.Fatal("forward module has params-grads or meshes")
			}
			if err := Annotate(m, c.strategy, Mesh(c.shape, c.dims)); err != nil {
				t.Fatal(err)
			}
			if err := ir.Verify(m); err != nil {
				t.Fatal(err)
			}
			checkAnnotations(t, m)
		})
	}
}

// TestMLPParamGrads: every trainable param appears exactly once.
func TestMLPParamGrads(t *testing.T) {
	m, err := MLPTraining(MLPConfig{Layers: 3}, "dp", Mesh([]int{2}, []string{"dp"}), "sgd")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, pg := range m.ParamGrads {
		seen[pg.Param]++
		if pg.Grad != pg.Param+"@GRAD" || m.Main.Global().Var(pg.Grad) == nil {
			t.Errorf("param %s: grad %q", pg.Param, pg.Grad)
		}
	}
	var trainable []string
	for _, v := range m.Main.Global().Vars() {
		if v.Kind == ir.KindParam && v.Has(ir.FlagTrainable) {
			trainable = append(trainable, v.Name())
			if seen[v.Name()] != 1 {
				t.Errorf("param %s appears %d times in params-grads", v.Name(), seen[v.Name()])
			}
		}
	}
	if len(trainable) != 6 || len(m.ParamGrads) != 6 {
		t.Errorf("trainable %v, params-grads %v", trainable, m.ParamGrads)
	}
}

// TestMLPStrategyMappings pins the dist of a few vars and ops per strategy.
func TestMLPStrategyMappings(t *testing.T) {
	type want struct{ name, text string }
	cases := []struct {
		c     strategyCase
		vars  []want
		impls map[string]string // op type and fwd position -> the impl completion picks
	}{
		{strategyCases[0], []want{
			{"x", "@world[0, -1]"}, {"w_0", "@world[-1, -1]"}, {"b_0", "@world[-1]"},
			{"mm_0", "@world[0, -1]"}, {"loss", "@world[] partial [0:avg]"}, {"w_0@GRAD", "@world[-1, -1]"},
		}, map[string]string{"matmul_v2#0": "default:0", "relu#0": "default:0", "mean#0": "default:0", "matmul_v2_grad#0": "default:0"}},
		{strategyCases[2], []want{
			{"x", "@world[-1, -1]"}, {"w_0", "@world[-1, 0]"}, {"b_0", "@world[0]"}, {"relu_0", "@world[-1, 0]"},
			{"w_1", "@world[0, -1]"}, {"b_1", "@world[-1]"}, {"add_1", "@world[-1, -1]"}, {"loss", "@world[]"},
		}, map[string]string{"matmul_v2#0": "matmul_v2:0", "matmul_v2#1": "matmul_v2:1", "relu#0": "elementwise:0",
			"elementwise_add#1": "default:0", "mean#0": "default:0", "matmul_v2_grad#0": "matmul_v2:1"}},
		{strategyCases[3], []want{
			{"x", "@world[0, -1]"}, {"w_0", "@world[-1, 1]"}, {"b_0", "@world[1]"}, {"mm_0", "@world[0, 1]"},
			{"w_1", "@world[1, -1]"}, {"add_1", "@world[0, -1]"}, {"loss", "@world[] partial [0:avg]"},
			{"relu_0@GRAD", "@world[0, 1]"},
		}, map[string]string{"matmul_v2#0": "matmul_v2:0", "matmul_v2#1": "matmul_v2:1", "fill_constant#0": "default:0"}},
	}
	for _, tc := range cases {
		t.Run(tc.c.name(), func(t *testing.T) {
			m := MLP(MLPConfig{Layers: 2})
			if _, err := passes.AppendBackward(m, "loss"); err != nil {
				t.Fatal(err)
			}
			if err := Annotate(m, tc.c.strategy, Mesh(tc.c.shape, tc.c.dims)); err != nil {
				t.Fatal(err)
			}
			g := m.Main.Global()
			for _, w := range tc.vars {
				v := g.Var(w.name)
				if v == nil {
					t.Fatalf("no var %s", w.name)
				}
				// The var's text is "var NAME : TYPE DIST {flags}".
				line := varLine(t, m, w.name)
				if !strings.Contains(line, " "+w.text) || strings.Contains(strings.TrimPrefix(line, w.text), "partial") && !strings.Contains(w.text, "partial") {
					t.Errorf("var %s: %q, want %s", w.name, line, w.text)
				}
			}
			count := map[string]int{}
			for _, op := range g.Ops {
				k := fmt.Sprintf("%s#%d", op.Type, count[op.Type])
				count[op.Type]++
				if want, ok := tc.impls[k]; ok {
					if got := fmt.Sprintf("%s:%d", op.Dist.ImplType, op.Dist.ImplIndex); got != want {
						t.Errorf("%s (%s): impl %s, want %s", op, k, got, want)
					}
				}
			}
		})
	}
}

func varLine(t *testing.T, m *ir.Module, name string) string {
	t.Helper()
	for _, line := range strings.Split(string(ir.Print(m)), "\n") {
		f := strings.Fields(line)
		if len(f) > 2 && (f[0] == "var" || f[0] == "param" || f[0] == "persist") && f[1] == name {
			return strings.TrimSpace(line)
		}
	}
	t.Fatalf("no var line for %s", name)
	return ""
}

func TestAnnotateErrors(t *testing.T) {
	mesh2 := Mesh([]int{2}, []string{"mp"})
	cases := []struct {
		name, strategy string
		layers         int
		mesh           *ir.ProcessMesh
		want           string
	}{
		{"odd mp", "mp", 3, mesh2, "needs an even number of layers"},
		{"unknown", "pp", 2, mesh2, `unknown strategy "pp"`},
		{"no dp dim", "dp,mp", 2, mesh2, "needs a mesh dim named dp"},
		{"nil mesh", "dp", 2, nil, "a named mesh is required"},
		{"uneven", "dp", 2, Mesh([]int{3}, []string{"dp"}), "var x: dim 0 of size 8 does not split evenly over mesh dim dp of size 3"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := MLP(MLPConfig{Layers: c.layers})
			before := ir.Print(m)
			err := Annotate(m, c.strategy, c.mesh)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want %q", err, c.want)
			}
			if string(ir.Print(m)) != string(before) {
				t.Error("a failed Annotate changed the module")
			}
		})
	}
	if _, err := MLPTraining(MLPConfig{Layers: 3}, "mp", mesh2, "sgd"); err == nil {
		t.Error("MLPTraining: odd mp layers accepted")
	}
	if _, err := MLPTraining(MLPConfig{}, "dp", Mesh([]int{2}, []string{"dp"}), "rmsprop"); err == nil ||
		!strings.Contains(err.Error(), `unknown optimizer type "rmsprop"`) {
		t.Errorf("MLPTraining with rmsprop: %v", err)
	}
}

// TestOptimizerOps pins the op each optimizer appends for w_0, and the
// startup initialisers of its state.
func TestOptimizerOps(t *testing.T) {
	cases := []struct {
		opt, op string
		init    []string
	}{
		{"sgd", `op 19 sgd(Param: w_0, Grad: w_0@GRAD, LearningRate: learning_rate_0) -> (ParamOut: w_0) role optimize dist @world impl default:0 [w_0: [-1, 1], w_0@GRAD: [-1, 1], learning_rate_0: [-1] -> w_0: [-1, 1]]`, []string{
			`op 18 fill_constant() -> (Out: learning_rate_0) {dtype = 5, shape = [1], value = 0.01} role forward`,
		}},
		{"momentum", `op 20 momentum(Param: w_0, Grad: w_0@GRAD, LearningRate: learning_rate_0, Velocity: w_0_velocity_0) -> (ParamOut: w_0, VelocityOut: w_0_velocity_0) {mu = 0.9, use_nesterov = false} role optimize dist @world impl default:0 [w_0: [-1, 1], w_0@GRAD: [-1, 1], learning_rate_0: [-1], w_0_velocity_0: [-1, 1] -> w_0: [-1, 1], w_0_velocity_0: [-1, 1]]`, []string{
			`op 18 fill_constant() -> (Out: learning_rate_0) {dtype = 5, shape = [1], value = 0.01} role forward`,
			`op 19 fill_constant() -> (Out: w_0_velocity_0) {dtype = 5, shape = [16, 16], value = 0.0} role forward`,
		}},
		{"adam", `op 23 adam(Param: w_0, Grad: w_0@GRAD, LearningRate: learning_rate_0, Moment1: w_0_moment1_0, Moment2: w_0_moment2_0, Beta1Pow: w_0_beta1_pow_acc_0, Beta2Pow: w_0_beta2_pow_acc_0) -> (ParamOut: w_0, Moment1Out: w_0_moment1_0, Moment2Out: w_0_moment2_0, Beta1PowOut: w_0_beta1_pow_acc_0, Beta2PowOut: w_0_beta2_pow_acc_0) {beta1 = 0.9, beta2 = 0.999, epsilon = 1e-08} role optimize dist @world impl default:0 [w_0: [-1, 1], w_0@GRAD: [-1, 1], learning_rate_0: [-1], w_0_moment1_0: [-1, 1], w_0_moment2_0: [-1, 1], w_0_beta1_pow_acc_0: [-1], w_0_beta2_pow_acc_0: [-1] -> w_0: [-1, 1], w_0_moment1_0: [-1, 1], w_0_moment2_0: [-1, 1], w_0_beta1_pow_acc_0: [-1], w_0_beta2_pow_acc_0: [-1]]`, []string{
			`op 18 fill_constant() -> (Out: learning_rate_0) {dtype = 5, shape = [1], value = 0.01} role forward`,
			`op 19 fill_constant() -> (Out: w_0_moment1_0) {dtype = 5, shape = [16, 16], value = 0.0} role forward`,
			`op 20 fill_constant() -> (Out: w_0_moment2_0) {dtype = 5, shape = [16, 16], value = 0.0} role forward`,
			`op 21 fill_constant() -> (Out: w_0_beta1_pow_acc_0) {dtype = 5, shape = [1], value = 0.9} role forward`,
			`op 22 fill_constant() -> (Out: w_0_beta2_pow_acc_0) {dtype = 5, shape = [1], value = 0.999} role forward`,
		}},
	}
	for _, c := range cases {
		t.Run(c.opt, func(t *testing.T) {
			m, err := MLPTraining(MLPConfig{}, "dp,mp", Mesh([]int{2, 2}, []string{"dp", "mp"}), c.opt)
			if err != nil {
				t.Fatal(err)
			}
			var got string
			n := 0
			for _, op := range m.Main.Global().Ops {
				if op.Role.IsOptimize() {
					n++
					if op.Input("Param")[0] == "w_0" {
						got = ir.PrintOp(op)
					}
				}
			}
			if n != len(m.ParamGrads) {
				t.Errorf("%d optimizer ops for %d params", n, len(m.ParamGrads))
			}
			if got != c.op {
				t.Errorf("w_0's optimizer op:\n%s\nwant:\n%s", got, c.op)
			}
			inits := map[string]string{}
			for _, op := range m.Startup.Global().Ops {
				inits[op.Output("Out")[0]] = ir.PrintOp(op)
			}
			for _, w := range c.init {
				out := strings.TrimSuffix(strings.SplitN(w, "(Out: ", 2)[1], "")
				out = out[:strings.Index(out, ")")]
				if inits[out] != w {
					t.Errorf("startup init of %s:\n%s\nwant:\n%s", out, inits[out], w)
				}
				if m.Startup.Global().Var(out) == nil || m.Main.Global().Var(out) == nil {
					t.Errorf("%s not declared in main and startup", out)
				}
			}
		})
	}
}

// TestAppendOptimizerF64: the learning rate and the state follow f64 params.
func TestAppendOptimizerF64(t *testing.T) {
	m, err := MLPTraining(MLPConfig{DType: ir.F64}, "dp", Mesh([]int{2}, []string{"dp"}), "adam")
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"learning_rate_0", "w_0_moment1_0", "b_1_beta2_pow_acc_0"} {
		if v := m.Startup.Global().Var(n); v == nil || v.Type.DType != ir.F64 {
			t.Errorf("startup var %s: %v", n, v)
		}
	}
}

// TestAppendOptimizerErrors: an empty params-grads list and an unknown type.
func TestAppendOptimizerErrors(t *testing.T) {
	m := MLP(MLPConfig{})
	if _, err := passes.AppendOptimizer(m, "sgd", 0.01); err == nil || err.Error() != "no params-grads: run append-backward first" {
		t.Errorf("no params-grads: %v", err)
	}
	if _, err := passes.AppendBackward(m, "loss"); err != nil {
		t.Fatal(err)
	}
	before := ir.Print(m)
	if _, err := passes.AppendOptimizer(m, "lamb", 0.01); err == nil || !strings.Contains(err.Error(), `"lamb"`) {
		t.Errorf("unknown type: %v", err)
	}
	if _, err := passes.AppendOptimizer(m, "sgd", 0.1); err != nil {
		t.Fatal(err)
	}
	if _, err := passes.AppendOptimizer(m, "sgd", 0.1); err == nil || !strings.Contains(err.Error(), "learning_rate_0 already declared") {
		t.Errorf("second run: %v", err)
	}
	if string(before) == string(ir.Print(m)) {
		t.Error("append-optimizer changed nothing")
	}
}

// TestAppendOptimizerPipeline runs the pass through the default registry,
// with its option and counter, on an unannotated module.
func TestAppendOptimizerPipeline(t *testing.T) {
	m := MLP(MLPConfig{Layers: 1})
	if _, err := passes.AppendBackward(m, "loss"); err != nil {
		t.Fatal(err)
	}
	r := passes.DefaultRegistry()
	pl, err := r.Parse("append-optimizer{type=momentum,lr=0.5},verify")
	if err != nil {
		t.Fatal(err)
	}
	var buf strings.Builder
	if err := (&passes.Manager{Instruments: []passes.Instrument{&passes.Counters{W: &buf}}}).Run(context.Background(), pl, m); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "optimizer-ops=2") {
		t.Errorf("counters:\n%s", buf.String())
	}
	lr := m.Startup.Global().Ops[len(m.Startup.Global().Ops)-3]
	if got := ir.PrintOp(lr); !strings.Contains(got, "value = 0.5") {
		t.Errorf("lr init: %s", got)
	}
	for _, op := range m.Main.Global().Ops {
		if op.Role.IsOptimize() && (op.Type != "momentum" || op.Dist != nil) {
			t.Errorf("%s: dist %v", op, op.Dist)
		}
	}
	if _, err := r.Parse("partition-vars,append-optimizer"); err == nil {
		t.Error("append-optimizer after partition-vars accepted")
	}
}
