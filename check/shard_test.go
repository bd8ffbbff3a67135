package check

import (
	"testing"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/sim"
)

// TestShardScopesErrorIsStable: when several fed values cannot be
// sharded, the error names the first by name, on every run, not the
// one a map happened to yield first.
func TestShardScopesErrorIsStable(t *testing.T) {
	m, err := ir.ParseString("r0", `program main rank 0 { block 0 {
  var a : f64[2] @nope[0]
  var b : f64[2] @nope[0]
  var c : f64[2] @nope[0]
  var d : f64[2] @nope[0]
}}`)
	if err != nil {
		t.Fatal(err)
	}
	init := sim.Scope{}
	for _, n := range []string{"d", "c", "b", "a"} {
		init[n] = sim.Zeros(ir.F64, 2)
	}
	for range 20 {
		_, err := shardScopes(m, []*ir.Module{m}, []int{0}, init)
		if err == nil || err.Error() != "rank 0: feeding a: unknown mesh nope" {
			t.Fatalf("err = %v", err)
		}
	}
}
