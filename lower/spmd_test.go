package lower

import (
	"slices"
	"strings"
	"testing"

	"github.com/distpass/distpass/ir"
)

func TestSPMDGradPartial(t *testing.T) {
	avg0 := &ir.TensorDist{Mesh: "w", DimsMapping: []int{}, Partial: []ir.Partial{{Dim: 0, Reduce: ir.ReduceAvg}}}
	for _, tc := range []struct {
		rule []ir.Partial
		loss *ir.TensorDist
		want []ir.Partial
	}{
		{nil, avg0, nil},
		// The dp contraction of a weight's grad: an average.
		{[]ir.Partial{{Dim: 0}}, avg0, []ir.Partial{{Dim: 0, Reduce: ir.ReduceAvg}}},
		// An mp contraction stays a sum.
		{[]ir.Partial{{Dim: 1}}, avg0, []ir.Partial{{Dim: 1}}},
		{[]ir.Partial{{Dim: 1}, {Dim: 0}}, avg0, []ir.Partial{{Dim: 0, Reduce: ir.ReduceAvg}, {Dim: 1}}},
		// No loss, or a loss partial as a sum: sums.
		{[]ir.Partial{{Dim: 0}}, nil, []ir.Partial{{Dim: 0}}},
		{[]ir.Partial{{Dim: 0}}, &ir.TensorDist{Partial: []ir.Partial{{Dim: 0}}}, []ir.Partial{{Dim: 0}}},
	} {
		rule := slices.Clone(tc.rule)
		if got := SPMDGradPartial(tc.rule, tc.loss); !slices.Equal(got, tc.want) {
			t.Errorf("SPMDGradPartial(%v, %v) = %v, want %v", tc.rule, tc.loss, got, tc.want)
		}
		if !slices.Equal(rule, tc.rule) {
			t.Errorf("SPMDGradPartial changed its argument %v", rule)
		}
	}
}

// TestSPMDFits: completion asks a Fitter of spmd:0 on a forward op before
// any rank is lowered; it holds the op to its rule then as the lowering
// does.
func TestSPMDFits(t *testing.T) {
	src := `mesh w shape [2, 2] dims [x, y] ranks [0, 1, 2, 3]
program main {
  block 0 {
    var a : f64[4, 8] @w[-1, 0]
    param b : f64[8, 6] @w[0, 1] {trainable}
    var c : f64[4, 6] @w[-1, 1] PARTIAL
    op 1 matmul_v2(X: a, Y: b) -> (Out: c) {trans_x = false, trans_y = false} role forward
         dist @w impl spmd:0 [a: [-1, 0], b: [0, 1] -> c: [-1, 1]]
  }
}
`
	for _, tc := range []struct{ partial, want string }{
		{"partial [0]", ""},
		{"", "op 1 matmul_v2: rule_based needs Out c [-1, 1] partial [0] as its rule mk,kn->mn gives; its dist says [-1, 1] and not partial"},
		{"partial [0:avg]", "op 1 matmul_v2: rule_based needs Out c [-1, 1] partial [0] as its rule mk,kn->mn gives; its dist says [-1, 1] partial [0:avg]"},
	} {
		text := []byte(strings.ReplaceAll(src, "PARTIAL", tc.partial))
		m, err := ir.Parse("t", text)
		if err != nil {
			t.Fatal(err)
		}
		b := m.Main.Global()
		got := ""
		if err := DefaultRegistry().Fitter(m).Fits(b, b.Ops[0], SPMDType, 0); err != nil {
			got = err.Error()
		}
		if got != tc.want {
			t.Errorf("%q: Fits = %q, want %q", tc.partial, got, tc.want)
		}
	}
}
