package complete_test

import (
	"strings"
	"testing"

	"github.com/distpass/distpass/complete"
)

// TestKeptOpReshards: an op the user annotated keeps its dist, and where
// it reads a var otherwise than the var's dist (the bias, which op 1 gave
// mesh dim 0 first) the report lists the reshard, as check-annotations
// refuses the module there.
func TestKeptOpReshards(t *testing.T) {
	m := parseModule(t, "conflict.dpir", conflictModule("[1, -1]"))
	rep, err := complete.Complete(m, complete.Options{})
	if err != nil {
		t.Fatal(err)
	}
	line := "reshard: op 2 elementwise_add reads bias as [1, -1], which is [0, -1]\n"
	if txt := reportText(t, rep); !containsLine(txt, line) || len(rep.Reshards) != 1 {
		t.Errorf("report lacks %q (alone):\n%s", line, txt)
	}
	err = annotationsErr(m)
	if want := "op 2 elementwise_add: reads bias as [1, -1] but bias is @world[0, -1]"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("check-annotations: %v, want it to say %q", err, want)
	}
}
