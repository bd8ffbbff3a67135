package check_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/distpass/distpass/check"
	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/passes"
)

// slicedParamSrc multiplies the data by a param of the batch's shape:
// completion slices w along dp before the multiply (each rank reads the
// rows of its batch), so w's grad is each rank's own rows, resharded
// back (gathered) into w's placement: the grad of a param, though the
// grad op's input is the slice w.reshard_0, not w.
const slicedParamSrc = `module sliced
mesh world shape [2, 2] dims [dp, mp] ranks RANKS

program main {
  block 0 {
    var x : f32[4, 6, 4, 4] @world[0, 1, -1, -1] {is_data, stop_gradient}
    param w : f32[4, 6, 4, 4] @world[-1, WMP, -1, -1] {trainable}
    var h : f32[4, 6, 4, 4]
    var m : f32[4, 6, 1, 1]
    var z : f32[4, 6, 1, 1]
    var loss : f32[]
    op 1 elementwise_mul(X: x, Y: w) -> (Out: h) {axis = -1} role forward
    op 2 reduce_mean(X: h) -> (Out: m) {dim = [2, 3], keep_dim = true} role forward
    op 3 tanh(X: m) -> (Out: z) role forward
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

// TestSlicedParamGradsAreScaled: the grad of a param sliced along the
// batch axis before its op holds each rank's own rows, for its own loss:
// the data-parallel sync scales it by 1/|dp| (the loss being the dp
// ranks' mean), without summing, before the reshard gathers it. The sync
// knows it for a param's grad by the reshards that lead it into w@GRAD,
// not by the grad op's input (a slice of w). It was left unscaled, twice
// too large, and partition accepted it.
func TestSlicedParamGradsAreScaled(t *testing.T) {
	for _, ranks := range []string{"[0, 1, 2, 3]", "[2, 0, 3, 1]"} {
		for _, wmp := range []string{"1", "-1"} {
			for _, f64 := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/w_mp=%s/f64=%v", ranks, wmp, f64), func(t *testing.T) {
					src := strings.NewReplacer("RANKS", ranks, "WMP", wmp).Replace(slicedParamSrc)
					m, err := ir.ParseString("sliced.dpir", src)
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
					if !strings.Contains(string(ir.Print(m)), "reshard(X: w) -> (Out: w.reshard_0)") {
						t.Fatal("completion does not slice w before the multiply: the premise of the test")
					}
					rep, err := check.Run(context.Background(), m, check.Options{Steps: 2})
					if err != nil {
						t.Fatal(err)
					}
					if err := rep.Err(); err != nil {
						t.Fatal(err)
					}
					if rep.Count("grad") < 1 || rep.Count("param") < 1 {
						t.Fatalf("compared %d grads and %d params, want w's", rep.Count("grad"), rep.Count("param"))
					}
				})
			}
		}
	}
}
