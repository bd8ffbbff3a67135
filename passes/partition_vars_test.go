package passes

import (
	"testing"

	"github.com/distpass/distpass/analysis"
	"github.com/distpass/distpass/ir"
)

// indexedOut gives the var the index resolved an op's Out arg to, found
// past the op's inputs and the output slots before Out, and nothing once
// that var no longer has the name (partition-vars then looks it up).
func TestIndexedOut(t *testing.T) {
	m, err := ir.ParseString("out.dpir", `program main {
  block 0 {
  }
}
program startup {
  block 0 {
    var a : f32[4]
    var b : f32[4]
    var c : f32[4]
    var d : f32[4]
    op 1 fill_constant() -> (Out: a) {shape = [4]}
    op 2 weird(X: a, Y: b) -> (Mask: b, Out: c, Z: d) {shape = [4]}
  }
}`)
	if err != nil {
		t.Fatal(err)
	}
	idx, err := analysis.Get[*analysis.IndexInfo](analysis.NewCache(m), analysis.Index)
	if err != nil {
		t.Fatal(err)
	}
	s := m.Startup
	g := s.Global()
	var buf []*ir.Var
	for pos, want := range []string{"a", "c"} {
		if v := indexedOut(idx, &buf, s, pos, g.Ops[pos], want); v == nil || v != g.Var(want) {
			t.Errorf("op at %d: %v, want var %s", pos, v, want)
		}
	}
	if v := indexedOut(nil, &buf, s, 0, g.Ops[0], "a"); v != nil {
		t.Errorf("no index: %v, want nil", v)
	}
	if err := g.RenameVar("c", "c2"); err != nil {
		t.Fatal(err)
	}
	if v := indexedOut(idx, &buf, s, 1, g.Ops[1], "c"); v != nil {
		t.Errorf("after the rename: var %s, want nil", v.Name())
	}
	if v := indexedOut(idx, &buf, s, 7, g.Ops[1], "c"); v != nil {
		t.Errorf("a position with no op: var %s, want nil", v.Name())
	}
}
