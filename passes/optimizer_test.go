package passes_test

import (
	"strings"
	"testing"

	"github.com/distpass/distpass/ir"
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
		{"append-optimizer{type=lars}", `unknown optimizer type "lars"`},
	} {
		m := parseModule(t, src)
		err := run(t, testRegistry(t), c.pipeline, m)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want %q", c.pipeline, err, c.want)
		}
	}
}
