package passes_test

import (
	"math"
	"strings"
	"testing"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/passes"
)

// TestAppendOptimizerMomentum pins the whole output on a small annotated
// module: the op, the shared learning rate, the velocity declared in main
// and startup with its initialiser, and the dists.
func TestAppendOptimizerMomentum(t *testing.T) {
	const src = `mesh world shape [2] dims [mp] ranks [0, 1]
program main {
  block 0 {
    param w : f64[4, 2] @world[-1, 0] {trainable}
    var w@GRAD : f64[4, 2] @world[-1, 0]
    op 1 fill_constant() -> (Out: w@GRAD) {dtype = 6, shape = [4, 2], value = 1.0} role backward
         dist @world impl default:0 [-> w@GRAD: [-1, 0]]
  }
}
program startup {
  block 0 {
    param w : f64[4, 2] @world[-1, 0] {trainable}
    op 2 fill_constant() -> (Out: w) {dtype = 6, shape = [4, 2], value = 0.5}
  }
}
grads w -> w@GRAD
`
	m := parseModule(t, src)
	if err := run(t, testRegistry(t), "append-optimizer{type=momentum,lr=0.25},verify,check-annotations", m); err != nil {
		t.Fatal(err)
	}
	want := `mesh world shape [2] dims [mp] ranks [0, 1]

program main {
  block 0 {
    param w : f64[4, 2] @world[-1, 0] {trainable}
    var w@GRAD : f64[4, 2] @world[-1, 0]
    persist learning_rate_0 : f64[1] @world[-1]
    persist w_velocity_0 : f64[4, 2] @world[-1, 0]
    op 1 fill_constant() -> (Out: w@GRAD) {dtype = 6, shape = [4, 2], value = 1.0} role backward
         dist @world impl default:0 [-> w@GRAD: [-1, 0]]
    op 5 momentum(Param: w, Grad: w@GRAD, LearningRate: learning_rate_0, Velocity: w_velocity_0) -> (ParamOut: w, VelocityOut: w_velocity_0) {mu = 0.9, use_nesterov = false} role optimize
         dist @world impl default:0 [w: [-1, 0], w@GRAD: [-1, 0], learning_rate_0: [-1], w_velocity_0: [-1, 0] -> w: [-1, 0], w_velocity_0: [-1, 0]]
  }
}

program startup {
  block 0 {
    param w : f64[4, 2] @world[-1, 0] {trainable}
    persist learning_rate_0 : f64[1] @world[-1]
    persist w_velocity_0 : f64[4, 2] @world[-1, 0]
    op 2 fill_constant() -> (Out: w) {dtype = 6, shape = [4, 2], value = 0.5} role forward
    op 3 fill_constant() -> (Out: learning_rate_0) {dtype = 6, shape = [1], value = 0.25} role forward
    op 4 fill_constant() -> (Out: w_velocity_0) {dtype = 6, shape = [4, 2], value = 0.0} role forward
  }
}

grads w -> w@GRAD
`
	if got := string(ir.Print(m)); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

func TestAppendOptimizerErrors(t *testing.T) {
	const src = `program main {
  block 0 {
    param w : f32[4] {trainable}
  }
}
`
	for _, c := range []struct{ pipeline, want string }{
		{"append-optimizer", "no params-grads: run append-backward first"},
	} {
		m := parseModule(t, src)
		err := run(t, testRegistry(t), c.pipeline, m)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want %q", c.pipeline, err, c.want)
		}
	}
	// The pipeline parser refuses these options (TestPipelineErrors);
	// the Go API refuses them too.
	withGrads := strings.Replace(src, "{trainable}\n", "{trainable}\n    var w@GRAD : f32[4]\n", 1) + "grads w -> w@GRAD\n"
	for _, c := range []struct {
		typ  string
		lr   float64
		want string
	}{
		{"lars", 0.01, `unknown optimizer type "lars" (want sgd, momentum or adam)`},
		{"sgd", math.NaN(), "learning rate NaN: want a finite number above 0"},
		{"adam", math.Inf(1), "learning rate +Inf: want a finite number above 0"},
		{"sgd", 0, "learning rate 0: want a finite number above 0"},
		{"momentum", -0.1, "learning rate -0.1: want a finite number above 0"},
	} {
		m := parseModule(t, withGrads)
		before := string(ir.Print(m))
		if _, err := passes.AppendOptimizer(m, c.typ, c.lr); err == nil || err.Error() != c.want {
			t.Errorf("AppendOptimizer(%s, %v): err = %v, want %s", c.typ, c.lr, err, c.want)
		}
		if string(ir.Print(m)) != before {
			t.Errorf("AppendOptimizer(%s, %v) changed the module", c.typ, c.lr)
		}
	}
}
