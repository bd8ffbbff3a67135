package sim

import (
	"testing"

	"github.com/distpass/distpass/ir"
)

// TestLayerNormStatsShape: a layer_norm whose statistics are declared
// with the dims before begin_norm_axis ([B, S], Paddle 3's shape) gets
// them in that shape, the values those of the flattened [B*S] ones, and
// its grad reads either; a declared shape of the same size but other
// dims is not bent to fit.
func TestLayerNormStatsShape(t *testing.T) {
	src := func(stats string) string {
		return `program main { block 0 {
 var x : f64[2, 3, 4]
 var sc : f64[4]
 var bi : f64[4]
 var y : f64[2, 3, 4]
 var m : f64` + stats + `
 var v : f64` + stats + `
 var g : f64[2, 3, 4]
 var dx : f64[2, 3, 4]
 op 1 layer_norm(X: x, Scale: sc, Bias: bi) -> (Y: y, Mean: m, Variance: v) {begin_norm_axis = 2, epsilon = 1e-05}
 op 2 layer_norm_grad(X: x, Scale: sc, Bias: bi, Mean: m, Variance: v, Y@GRAD: g) -> (X@GRAD: dx) {begin_norm_axis = 2, epsilon = 1e-05}
}}`
	}
	feed := func() Scope {
		x := Zeros(ir.F64, 2, 3, 4)
		g := Zeros(ir.F64, 2, 3, 4)
		for i := range x.Data {
			x.Data[i] = float64(i%5) - 1.5
			g.Data[i] = float64(i%3) - 1
		}
		return Scope{"x": x, "g": g, "sc": Full(ir.F64, 1.5, 4), "bi": Full(ir.F64, 0.5, 4)}
	}
	flat, err := NewInterp(nil).RunModule(parseModule(t, src("[6]")), feed())
	if err != nil {
		t.Fatal(err)
	}
	folded, err := NewInterp(nil).RunModule(parseModule(t, src("[2, 3]")), feed())
	if err != nil {
		t.Fatal(err)
	}
	if got := folded["m"].Shape; len(got) != 2 || got[0] != 2 || got[1] != 3 {
		t.Errorf("Mean shape %v, want [2 3]", got)
	}
	for _, name := range []string{"m", "v", "y", "dx"} {
		a, b := flat[name], folded[name]
		if len(a.Data) != len(b.Data) {
			t.Fatalf("%s: %d values against %d", name, len(a.Data), len(b.Data))
		}
		for i := range a.Data {
			if a.Data[i] != b.Data[i] {
				t.Errorf("%s[%d]: %v flattened, %v folded", name, i, a.Data[i], b.Data[i])
				break
			}
		}
	}
	if _, err := NewInterp(nil).RunModule(parseModule(t, src("[3, 2]")), feed()); err == nil {
		t.Error("statistics declared [3, 2] for an X of [2, 3, 4] ran")
	}
}

func parseModule(t *testing.T, src string) *ir.Module {
	t.Helper()
	m, err := ir.Parse("test.dpir", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return m
}
