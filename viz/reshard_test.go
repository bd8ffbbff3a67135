package viz_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/passes"
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

// TestReshardInExplorer: the explorer shows a reshard like any op, in the
// text and, with Graphviz, in the drawing with what it converts.
func TestReshardInExplorer(t *testing.T) {
	tr, err := record(t, passes.DefaultRegistry(), "reshard", "verify,complete", reshard(t))
	if err != nil {
		t.Fatal(err)
	}
	page := renderPage(t, viz.ExplorerOptions{LookPath: noDot}, tr)
	if !strings.Contains(page, `</span> reshard(X: <span class="var" data-var="h">h</span>)`) {
		t.Errorf("the page's text lacks the reshard")
	}
	if _, err := exec.LookPath("dot"); err != nil {
		if os.Getenv("DISTPASS_REQUIRE_DOT") != "" {
			t.Fatal("Graphviz dot not found, and DISTPASS_REQUIRE_DOT is set")
		}
		t.Skip("Graphviz dot not found: the rest, which draws, is not run")
	}
	page = renderPage(t, viz.ExplorerOptions{}, tr)
	if !strings.Contains(page, ">@a[&#45;1, &#45;1] &#45;&gt; @b[0, &#45;1]</text>") {
		t.Errorf("the page's drawing lacks the reshard's label")
	}
}
