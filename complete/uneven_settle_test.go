package complete_test

import (
	"strings"
	"testing"

	"github.com/distpass/distpass/complete"
)

// TestUnevenNeverSettled: the fixpoint lists y's dim 0 as uneven, and
// settling keeps it so: a mesh dim that does not divide a dim is never
// propagated. y and z stay replicated, op 2 reads x as [-1, -1] (a
// reshard, listed) and b as it is.
func TestUnevenNeverSettled(t *testing.T) {
	m := parseModule(t, "uneven.dpir", unevenModule)
	rep, err := complete.Complete(m, complete.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"y", "z"} {
		if got := mappingOf(t, m, v); got != "@world[-1, -1]" {
			t.Errorf("%s completed as %s, want @world[-1, -1] (6 over 4 ranks is uneven)", v, got)
		}
	}
	// x, split on its unknown batch, is read by op 2 whole: the one
	// reshard the module needs, listed, and what check-annotations names.
	if len(rep.Reshards) != 1 || rep.Reshards[0].Var != "x" || rep.Reshards[0].Op != 2 {
		t.Errorf("reshards %+v, want op 2's read of x", rep.Reshards)
	}
	if err := annotationsErr(m); err == nil || !strings.Contains(err.Error(), "op 2 elementwise_add: reads x as [-1, -1]") || strings.Count(err.Error(), "\n") > 0 {
		t.Errorf("check-annotations: %v, want only op 2's read of x", err)
	}
}
