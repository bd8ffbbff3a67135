package viz_test

import (
	"strings"
	"testing"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/viz"
)

// TestReshardLabelMissingDist: a reshard whose end has no dist (verify
// refuses it) is still drawn, with "?" for that end.
func TestReshardLabelMissingDist(t *testing.T) {
	m, err := ir.ParseString("m", `mesh m shape [2] dims [x] ranks [0, 1]
program main { block 0 {
 var a : f32[4] @m[0]
 var b : f32[4]
 op 1 reshard(X: a) -> (Out: b)
 op 2 reshard(X: b) -> (Out: c)
}}`)
	if err != nil {
		t.Fatal(err)
	}
	got := string(viz.DOT(m.Main, viz.Options{}))
	for _, want := range []string{`label="op 1 reshard\n@m[0] -> ?"`, `label="op 2 reshard\n? -> ?"`} {
		if !strings.Contains(got, want) {
			t.Errorf("the drawing lacks %s:\n%s", want, got)
		}
	}
}
