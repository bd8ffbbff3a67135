package check_test

import (
	"strings"
	"testing"

	"github.com/distpass/distpass/ops"
)

// activationSrc: an activation between two tensor-parallel matmuls, its
// input split by columns along mp and by rows along dp, so that the
// unary rule carries both splits, and a training step proves its kernel
// and grad kernel on every rank's block.
const activationSrc = `module act
mesh world shape [2, 2] dims [dp, mp] ranks RANKS

program main {
  block 0 {
    var x : f32[4, 6] {is_data, stop_gradient}
    param w1 : f32[6, 8] @world[-1, 1] {trainable}
    param w2 : f32[8, 3] @world[1, -1] {trainable}
    var h : f32[4, 8]
    var a : f32[4, 8]
    var sq : f32[4, 8]
    var p : f32[4, 8]
    var o : f32[4, 3]
    var loss : f32[]
    op 1 matmul_v2(X: x, Y: w1) -> (Out: h) {trans_x = false, trans_y = false} role forward
PRE    op 2 ACT(X: IN) -> (Out: a) role forward
    op 3 matmul_v2(X: a, Y: w2) -> (Out: o) {trans_x = false, trans_y = false} role forward
    op 4 mean(X: o) -> (Out: loss) role forward|loss
  }
}

program startup {
  block 0 {
    param w1 : f32[6, 8] {trainable}
    param w2 : f32[8, 3] {trainable}
    op 1 uniform_random() -> (Out: w1) {dtype = 5, max = 1.0, min = -1.0, seed = 3, shape = [6, 8]} role forward
    op 2 uniform_random() -> (Out: w2) {dtype = 5, max = 1.0, min = -1.0, seed = 4, shape = [8, 3]} role forward
  }
}
`

// positiveDomain are the activations defined for positive X only: they
// read square(h) + 0.5 (positivePre).
var positiveDomain = map[string]bool{"log": true, "sqrt": true, "rsqrt": true, "reciprocal": true}

const positivePre = `    op 5 square(X: h) -> (Out: sq) role forward
    op 6 scale(X: sq) -> (Out: p) {bias = 0.5} role forward
`

// TestActivationsTrainDistributed: every unary elementwise op of the
// table with a gradient, its attrs at their defaults, trains a step under
// dp×mp (completed from data and weights), in two rank orders and in f32
// and f64, and check proves every value each rank holds.
func TestActivationsTrainDistributed(t *testing.T) {
	var types []string
	for _, d := range ops.All() {
		required := 0
		for _, s := range d.Inputs {
			if !s.Optional {
				required++
			}
		}
		if d.Grad != nil && ops.Has(d.Type, ops.Elementwise) && required == 1 && d.Inputs[0].Name == "X" && len(d.Outputs) == 1 {
			types = append(types, d.Type)
		}
	}
	for _, want := range []string{"relu", "swish", "silu", "hard_sigmoid", "hard_swish", "exp", "sqrt", "pow", "erf"} {
		if !strings.Contains(" "+strings.Join(types, " ")+" ", " "+want+" ") {
			t.Fatalf("%s is not among the activations found (%v): the selection is wrong", want, types)
		}
	}
	for _, typ := range types {
		for _, ranks := range []string{"[0, 1, 2, 3]", "[2, 0, 3, 1]"} {
			for _, f64 := range []bool{false, true} {
				name := typ + "/" + ranks
				if f64 {
					name += "/f64"
				}
				t.Run(name, func(t *testing.T) {
					pre, x := "", "h"
					if positiveDomain[typ] {
						pre, x = positivePre, "p"
					}
					src := strings.NewReplacer("ACT", typ, "RANKS", ranks, "PRE", pre, "IN", x).Replace(activationSrc)
					provenDataParallel(t, src, f64)
				})
			}
		}
	}
}
