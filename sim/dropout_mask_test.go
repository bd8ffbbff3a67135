package sim

import (
	"testing"

	"github.com/distpass/distpass/ir"
)

// TestDropoutWithoutMask: Mask is dispensable, as in Paddle's inference
// programs: a dropout that declares none runs, its Out as with one.
func TestDropoutWithoutMask(t *testing.T) {
	for _, impl := range []string{"downgrade_in_infer", "upscale_in_train"} {
		m, err := ir.ParseString("d.dpir", `program main {
  block 0 {
    var x : f32[2, 4]
    var a : f32[2, 4]
    var b : f32[2, 4]
    var mask : u8[2, 4]
    op 1 dropout(X: x) -> (Out: a) {dropout_prob = 0.25, is_test = true, dropout_implementation = "`+impl+`"}
    op 2 dropout(X: x) -> (Out: b, Mask: mask) {dropout_prob = 0.25, is_test = true, dropout_implementation = "`+impl+`"}
  }
}
`)
		if err != nil {
			t.Fatal(err)
		}
		x := td(sh(2, 4), 1, -2, 3, -4, 5, -6, 7, -8)
		x.DType = ir.F32
		s, err := Run(m, Scope{"x": x}, DefaultKernels())
		if err != nil {
			t.Fatalf("%s: %v", impl, err)
		}
		if d, err := MaxRelDiff(s["a"], s["b"], 1); err != nil || d != 0 {
			t.Errorf("%s: Out without Mask %v, with %v", impl, s["a"], s["b"])
		}
	}
}
