package lower

import (
	"strings"
	"testing"

	"github.com/distpass/distpass/ir"
)

// TestFitVerdictsAreShared: the default impl's rule check keeps its
// acceptances by what they depend on, so that a model's repeated layers
// are checked once; an op that differs in an attr, a mapping or a shape
// from an accepted one is checked anew, and refused when it should be.
func TestFitVerdictsAreShared(t *testing.T) {
	m, err := ir.ParseString("fits.dpir", `mesh world shape [2] dims [dp] ranks [0, 1]
program main {
  block 0 {
    var x : f32[4, 8] @world[0, -1] {is_data}
    var y1 : f32[4, 8] @world[0, -1]
    var y2 : f32[4, 8] @world[0, -1]
    var y3 : f32[4, 8] @world[0, -1]
    var x6 : f32[6, 8] @world[0, -1] {is_data}
    var y4 : f32[6, 8] @world[0, -1]
    op 1 softmax(X: x) -> (Out: y1) {axis = -1}
         dist @world impl default:0 [x: [0, -1] -> y1: [0, -1]]
    op 2 softmax(X: x) -> (Out: y2) {axis = -1}
         dist @world impl default:0 [x: [0, -1] -> y2: [0, -1]]
    op 3 softmax(X: x) -> (Out: y3) {axis = 0}
         dist @world impl default:0 [x: [0, -1] -> y3: [0, -1]]
    op 4 softmax(X: x6) -> (Out: y4) {axis = -1}
         dist @world impl default:0 [x6: [0, -1] -> y4: [0, -1]]
  }
}
`)
	if err != nil {
		t.Fatal(err)
	}
	f := DefaultRegistry().Fitter(m)
	b := m.Main.Global()
	for i, c := range []struct {
		want string // "" when it fits
		kept int    // acceptances kept after it
	}{
		{"", 1},
		{"", 1}, // op 1's verdict
		{"reads x as [-1, -1], not as its dims_mapping [0, -1]", 1},
		{"", 2}, // another shape: checked anew
	} {
		err := f.Fits(b, b.Ops[i], "default", 0)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("op %d: %v", i+1, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("op %d: %v, want an error containing %q", i+1, err, c.want)
		}
		if n := len(f.ctx.st.fits); n != c.kept {
			t.Errorf("after op %d: %d acceptances kept, want %d", i+1, n, c.kept)
		}
	}
}

// TestRuleFitVerdictsAreShared: ruleFit, which every Paddle-style impl
// asks, keeps its acceptances the same way, by impl too: matmuls alike
// share one, an impl that refuses what another accepted is asked anew,
// and so is a matmul whose Out is split otherwise (which the impl's own
// constraint lets through and the rule refuses).
func TestRuleFitVerdictsAreShared(t *testing.T) {
	m, err := ir.ParseString("rulefits.dpir", `mesh world shape [2] dims [mp] ranks [0, 1]
program main {
  block 0 {
    var x : f32[4, 8] @world[-1, -1] {is_data}
    param w1 : f32[8, 6] @world[-1, 0] {trainable}
    param w2 : f32[8, 6] @world[-1, 0] {trainable}
    param w3 : f32[8, 6] @world[-1, 0] {trainable}
    var y1 : f32[4, 6] @world[-1, 0]
    var y2 : f32[4, 6] @world[-1, 0]
    var y3 : f32[4, 6] @world[-1, -1]
    op 1 matmul_v2(X: x, Y: w1) -> (Out: y1) {trans_x = false, trans_y = false}
         dist @world impl matmul_v2:0 [x: [-1, -1], w1: [-1, 0] -> y1: [-1, 0]]
    op 2 matmul_v2(X: x, Y: w2) -> (Out: y2) {trans_x = false, trans_y = false}
         dist @world impl matmul_v2:0 [x: [-1, -1], w2: [-1, 0] -> y2: [-1, 0]]
    op 3 matmul_v2(X: x, Y: w3) -> (Out: y3) {trans_x = false, trans_y = false}
         dist @world impl matmul_v2:0 [x: [-1, -1], w3: [-1, 0] -> y3: [-1, -1]]
  }
}
`)
	if err != nil {
		t.Fatal(err)
	}
	f := DefaultRegistry().Fitter(m)
	b := m.Main.Global()
	for _, c := range []struct {
		op    int
		index int    // the matmul_v2 impl asked
		want  string // "" when it fits
		kept  int    // acceptances kept after it
	}{
		{0, 0, "", 1},
		{1, 0, "", 1}, // op 1's verdict
		{1, 2, "replicate_parallel", 1},
		{2, 0, "column_parallel", 1},
	} {
		err := f.Fits(b, b.Ops[c.op], "matmul_v2", c.index)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("op %d impl %d: %v", c.op+1, c.index, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("op %d impl %d: %v, want an error containing %q", c.op+1, c.index, err, c.want)
		}
		if n := len(f.ctx.st.fits); n != c.kept {
			t.Errorf("after op %d impl %d: %d acceptances kept, want %d", c.op+1, c.index, n, c.kept)
		}
	}
}
