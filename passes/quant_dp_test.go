package passes_test

import (
	"context"
	"strings"
	"testing"

	"github.com/distpass/distpass/check"
	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/passes"
)

// quantInference is a quantisation-aware inference program as
// PaddleSlim exports one: the input fake-quantised by the moving average
// of its max, stored (is_test), before a matmul.
const quantInference = `mesh world shape [2] dims [dp] ranks [0, 1]

program main {
  block 0 {
    var x : f64[8, 4] {is_data, stop_gradient}
    persist s : f64[1]
    persist st : f64[1]
    persist ac : f64[1]
    persist w : f64[4, 3]
    var q : f64[8, 4]
    var h : f64[8, 3]
    var y : f64[8, 3]
    op 1 fake_quantize_dequantize_moving_average_abs_max(X: x, InScale: s, InAccum: ac, InState: st) -> (Out: q, OutScale: s, OutState: st, OutAccum: ac) {bit_length = 8, is_test = true, moving_rate = 0.9, round_type = 0}
    op 2 matmul_v2(X: q, Y: w) -> (Out: h)
    op 3 relu(X: h) -> (Out: y)
  }
}

program startup {
  block 0 {
    persist s : f64[1]
    persist st : f64[1]
    persist ac : f64[1]
    persist w : f64[4, 3]
    op 4 fill_constant() -> (Out: s) {dtype = 6, shape = [1], value = 0.5}
    op 5 fill_constant() -> (Out: st) {dtype = 6, shape = [1], value = 1.0}
    op 6 fill_constant() -> (Out: ac) {dtype = 6, shape = [1], value = 0.5}
    op 7 uniform_random() -> (Out: w) {dtype = 6, max = 1.0, min = -1.0, seed = 3, shape = [4, 3]}
  }
}
`

// An int8 quantisation-aware inference model is data parallel: at test
// the moving-average fake-quantise op quantises by its stored scale,
// elementwise, so annotate-data-parallel keeps the batch split through
// it (it refused the op), each rank's program runs it on its shard with
// the scale and state replicated, and check holds the ranks to the
// serial program.
func TestQuantAwareInferenceDataParallel(t *testing.T) {
	m := parseModule(t, quantInference)
	if err := passes.AnnotateDataParallel(m, "world", 0, "dp"); err != nil {
		t.Fatal(err)
	}
	op := m.Main.Global().Ops[0]
	want := "dist @world impl default:0 [x: [0, -1], s: [-1], ac: [-1], st: [-1] -> q: [0, -1], s: [-1], st: [-1], ac: [-1]]"
	if got := ir.PrintOp(op); !strings.Contains(got, want) {
		t.Fatalf("%s\nwant %s", got, want)
	}
	mods, err := passes.PartitionAll(context.Background(), m, nil)
	if err != nil {
		t.Fatal(err)
	}
	for r, pm := range mods {
		g := pm.Main.Global()
		if q := g.Var("q"); q == nil || q.Type.Shape[0] != 4 {
			t.Errorf("rank %d: q is %v, want its 4 rows of the batch", r, q)
		}
		if g.Ops[0].Type != op.Type {
			t.Errorf("rank %d: first op %s", r, g.Ops[0])
		}
		for _, o := range g.Ops {
			if strings.HasPrefix(o.Type, "c_") {
				t.Errorf("rank %d: %s: data parallel inference needs no collective", r, o)
			}
		}
	}
	rep, err := check.Run(context.Background(), m, check.Options{Steps: 1, Tol: 1e-12})
	if err != nil {
		t.Fatal(err)
	}
	var sb strings.Builder
	if err := rep.Write(&sb); err != nil {
		t.Fatal(err)
	}
	if err := rep.Err(); err != nil {
		t.Fatalf("%v\n%s", err, sb.String())
	}
	if rep.Count("activation") < 3 {
		t.Fatalf("compared %d activations, want q, h and y\n%s", rep.Count("activation"), sb.String())
	}
}
