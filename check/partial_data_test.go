package check_test

import (
	"context"
	"strings"
	"testing"

	"github.com/distpass/distpass/check"
	"github.com/distpass/distpass/ir"
)

// TestPartialDataInput: a data var declared partial is fed to each rank
// as a part, the parts reducing to the serial value, so that an op that
// carries the partial on (scale, linear) checks, and one that reads the
// part as the whole (relu, annotated so by hand) does not: check would
// prove a reshard from a partial input alone.
func TestPartialDataInput(t *testing.T) {
	const text = `module p
mesh world shape [2, 2] dims [a, b] ranks [0, 1, 2, 3]
program main {
  block 0 {
    var x : f64[4, 6] @world[0, -1] partial [1:REDUCE] {is_data, stop_gradient}
    var y : f64[4, 6] @world[0, -1] partial [1:REDUCE]
    op 1 scale(X: x) -> (Out: y) {bias = 0.0, bias_after_scale = true, scale = 3.0} role forward
         dist @world impl elementwise:0 [x: [0, -1] -> y: [0, -1]]
  }
}
`
	for _, r := range []string{"sum", "avg", "max", "min"} {
		src := strings.ReplaceAll(text, "REDUCE", r)
		if r == "max" || r == "min" {
			// scale by a negative factor would swap them: assign carries them.
			src = strings.Replace(src, "scale(X: x) -> (Out: y) {bias = 0.0, bias_after_scale = true, scale = 3.0}", "assign(X: x) -> (Out: y)", 1)
		}
		m, err := ir.Parse("p.dpir", []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		rep, err := check.Run(context.Background(), m, check.Options{})
		if err != nil {
			t.Fatalf("%s: %v", r, err)
		}
		if err := rep.Err(); err != nil {
			t.Errorf("%s: %v", r, err)
		}
		if rep.Count("activation") == 0 {
			t.Errorf("%s: y was not compared", r)
		}
	}
	// Read as a whole value by a kernel that is not linear (relu,
	// annotated so by hand, which check-annotations refuses): the parts'
	// relus do not reduce to the relu, and check, run on per-rank
	// programs made by hand, says so.
	wrong := strings.ReplaceAll(strings.ReplaceAll(text, "REDUCE", "sum"),
		"scale(X: x) -> (Out: y) {bias = 0.0, bias_after_scale = true, scale = 3.0}", "relu(X: x) -> (Out: y)")
	m, err := ir.Parse("w.dpir", []byte(wrong))
	if err != nil {
		t.Fatal(err)
	}
	ranks := []int{0, 1, 2, 3}
	var mods []*ir.Module
	for _, r := range ranks {
		pm := m.Clone()
		pm.Main.Rank = r
		g := pm.Main.Global()
		for _, v := range g.Vars() {
			v.Type.Shape = []int64{2, 6} // dim 0 split in two
		}
		mods = append(mods, pm)
	}
	rep, err := check.RunParts(context.Background(), m, ranks, mods, check.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Err() == nil {
		t.Error("relu of the parts of a partial x checked as relu of x")
	}
}
