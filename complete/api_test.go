package complete_test

import (
	"strings"
	"testing"

	"github.com/distpass/distpass/complete"
	"github.com/distpass/distpass/ir"
)

// TestUnreadableDistsRefused: a module the Go API hands over unverified,
// with a var or an op mapping that names a mesh dim its mesh lacks, or
// of another rank than its var's, is an error naming them, never a
// panic.
func TestUnreadableDistsRefused(t *testing.T) {
	for _, c := range []struct {
		edit func(m *ir.Module)
		want string
	}{
		{func(m *ir.Module) { m.Main.Global().Var("x").Dist.DimsMapping = []int{3, -1} }, "var x: dims_mapping [3, -1] does not fit"},
		{func(m *ir.Module) { m.Main.Global().Var("x").Dist.DimsMapping = []int{0} }, "var x: dims_mapping [0] does not fit its rank 2"},
		{func(m *ir.Module) {
			m.Main.Global().Ops[0].Dist = &ir.OpDist{Mesh: "world", ImplType: "default",
				Inputs: []ir.ArgDist{{Name: "x", DimsMapping: []int{0, 5}}}}
		}, "op 1 relu: x's dims_mapping [0, 5] does not fit"},
	} {
		m, err := ir.Parse("m.dpir", []byte(`module m
mesh world shape [2] dims [dp] ranks [0, 1]
program main {
  block 0 {
    var x : f32[4, 8] @world[0, -1] {is_data}
    var y : f32[4, 8]
    op 1 relu(X: x) -> (Out: y) role forward
  }
}
`))
		if err != nil {
			t.Fatal(err)
		}
		c.edit(m)
		if _, err := complete.Complete(m, complete.Options{}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("err = %v, want %q", err, c.want)
		}
	}
}
