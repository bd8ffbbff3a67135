package corpus_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/distpass/distpass/internal/corpus"
	"github.com/distpass/distpass/ir"
)

// TestCorpus: the corpus holds every golden case and the models, each
// module verifies (but the golden error cases', which may be broken on
// purpose), and each model case is a multi-rank annotated training module.
func TestCorpus(t *testing.T) {
	cs := corpus.All(t)
	var golden, models int
	for _, c := range cs {
		switch {
		case strings.HasPrefix(c.Name, "golden/"):
			golden++
		case strings.HasPrefix(c.Name, "model/"):
			models++
			if len(c.Ranks) < 2 || c.Module.Main.Global().NumVars() == 0 || len(c.Module.ParamGrads) == 0 {
				t.Errorf("%s: %d ranks, %d params: not a multi-rank training module", c.Name, len(c.Ranks), len(c.Module.ParamGrads))
			}
		}
		if err := ir.Verify(c.Module); err != nil && !c.WantErr {
			t.Errorf("%s: %v", c.Name, err)
		}
	}
	if golden < 20 || models != 6 {
		t.Errorf("%d golden cases and %d models", golden, models)
	}
}

// TestScribble: Scribble changes every var and op line of the module it
// is given, and nothing of a clone's original (Clone shares no memory).
func TestScribble(t *testing.T) {
	for _, c := range corpus.All(t) {
		m := c.Module
		snap := corpus.Take(m)
		cl := m.Clone()
		corpus.Scribble(cl)
		snap.Unchanged(t, m, c.Name+": scribbling a clone")
		before := strings.Split(string(snap.Text), "\n")
		after := strings.Split(string(ir.Print(cl)), "\n")
		if len(before) != len(after) {
			t.Fatalf("%s: scribbling changed the line count", c.Name)
		}
		for i, line := range before {
			f := strings.Fields(line)
			if len(f) > 0 && (f[0] == "var" || f[0] == "param" || f[0] == "persist" || f[0] == "op") && line == after[i] {
				t.Errorf("%s: Scribble left %q as it was", c.Name, line)
			}
		}
		if bytes.Equal(snap.Text, ir.Print(cl)) {
			t.Errorf("%s: Scribble changed nothing", c.Name)
		}
	}
}
