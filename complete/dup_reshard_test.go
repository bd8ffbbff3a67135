package complete_test

import (
	"testing"

	"github.com/distpass/distpass/complete"
)

// TestReshardOncePerVar: concat reads x twice
// (X: [x, x]); its dist has one mapping for x, and check-annotations
// names the reshard once, but the report lists it twice.
func TestReshardOncePerVar(t *testing.T) {
	m := parseModule(t, "concat.dpir", `module concat
mesh world shape [2, 2] dims [a, b] ranks [0, 1, 2, 3]
program main {
  block 0 {
    var x : f64[4, 8] @world[0, 1] {is_data, stop_gradient}
    var c : f64[4, 16]
    op 2 concat(X: [x, x]) -> (Out: c) {axis = 1} role forward
  }
}
`)
	rep, err := complete.Complete(m, complete.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Reshards) != 1 {
		t.Errorf("%d reshards, want concat's one of x:\n%s", len(rep.Reshards), reportText(t, rep))
	}
}
