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
