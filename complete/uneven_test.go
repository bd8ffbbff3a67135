package complete_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/distpass/distpass/complete"
)

// unevenModule: an inference-style data var of unknown batch (-1) split
// on a 4-rank mesh, added to a bias of batch 6, which 4 does not divide.
const unevenModule = `module uneven
mesh world shape [4] dims [dp] ranks [0, 1, 2, 3]
program main {
  block 0 {
    var x : f32[-1, 8] @world[0, -1] {is_data, stop_gradient}
    param b : f32[6, 8] {trainable}
    var y : f32[6, 8]
    var z : f32[6, 8]
    op 2 elementwise_add(X: x, Y: b) -> (Out: y) {axis = -1} role forward
    op 3 relu(X: y) -> (Out: z) role forward
  }
}
`

// TestUnevenListed: mesh dim 0 (4 ranks) is not propagated to the dims
// of size 6 it does not divide: the bias stays replicated, and both the
// bias's dim and the sum's are listed in Uneven, in the order met.
func TestUnevenListed(t *testing.T) {
	m := parseModule(t, "uneven.dpir", unevenModule)
	rep, err := complete.Complete(m, complete.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := mappingOf(t, m, "b"); got != "@world[-1, -1]" {
		t.Errorf("b completed as %s, want @world[-1, -1]", got)
	}
	want := []complete.Uneven{
		{Op: 2, OpType: "elementwise_add", Var: "y", Dim: 0, Size: 6, MeshDim: 0, Ways: 4},
		{Op: 2, OpType: "elementwise_add", Var: "b", Dim: 0, Size: 6, MeshDim: 0, Ways: 4},
	}
	if !slices.Equal(rep.Uneven, want) {
		t.Errorf("uneven %+v, want %+v", rep.Uneven, want)
	}
	line := "uneven: op 2 elementwise_add: b dim 0 (size 6) stays replicated: mesh dim 0 has 4 ranks\n"
	if txt := reportText(t, rep); !containsLine(txt, line) {
		t.Errorf("report lacks %q:\n%s", line, txt)
	}
}

// containsLine reports whether line (with its newline) is a whole line
// of text.
func containsLine(text, line string) bool {
	return slices.Contains(strings.SplitAfter(text, "\n"), line)
}
