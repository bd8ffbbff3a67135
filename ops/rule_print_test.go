package ops_test

import (
	"testing"

	"github.com/distpass/distpass/ops"
)

// TestRulePrinted pins the printed rules of well-known types: what the
// generation folds (matmul's batch dims, an elementwise op's every dim,
// an embedding's ids) and what it keeps an instance of (a reduction
// over dim 0, its default).
func TestRulePrinted(t *testing.T) {
	for typ, want := range map[string]string{
		"matmul_v2":       "(X: ...mk, Y: ...kn) -> (Out: ...mn) sum strict-backward  [trans_x = false, trans_y = false]",
		"relu":            "(X: ...) -> (Out: ...)",
		"reduce_sum":      "(X: ab) -> (Out: b) sum  [for 2-D X; dim = [0], keep_dim = false, reduce_all = false]",
		"softmax":         "(X: ...A) -> (Out: ...A) strict  [axis = -1]",
		"lookup_table_v2": "(W: kn, Ids: ...) -> (Out: ...n) sum strict  [is_sparse = false, padding_idx = long(-1)]",
		"matmul_v2_grad":  "(X: ...mk, Y: ...kn, Out@GRAD: ...mn) -> (X@GRAD: ...mk, Y@GRAD: ...kn)",
		"transpose2":      "(X: ab) -> (Out: ba, XShape: Aab)  [for 2-D X; axis = [1, 0]]",
		"feed":            "free",
	} {
		p := ops.Lookup(typ).Rule()
		if p == nil {
			t.Errorf("%s prints no rule", typ)
			continue
		}
		if got := p.String(); got != want {
			t.Errorf("%s's rule prints\n  %s\nwant\n  %s", typ, got, want)
		}
	}
}
