package analysis_test

import (
	"fmt"

	"github.com/distpass/distpass/analysis"
	"github.com/distpass/distpass/ir"
)

// A pass manager keeps one cache per module; passes ask it for facts,
// and after each pass it drops what the pass did not preserve.
func ExampleCache() {
	m, err := ir.ParseString("tiny.dpir", `
program main {
  block 0 {
    var x : f32[4]
    var y : f32[4]
    var z : f32[4]
    var loss : f32[]
    op 1 relu(X: x) -> (Out: y)
    op 2 scale(X: y) -> (Out: z) {scale = 2.0}
    op 3 mean(X: y) -> (Out: loss) role forward|loss
  }
}`)
	if err != nil {
		fmt.Println(err)
		return
	}
	cache := analysis.NewCache(m)

	// A pass asks for def-use facts: the cache computes them, and the
	// index they require.
	du, err := analysis.Get[*analysis.DefUseInfo](cache, analysis.DefUse)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range du.Uses(m.Main, 0, "y") {
		fmt.Println("y is used by", r.Op(m.Main))
	}

	// Another pass asks for them again, and for roles.
	analysis.Get[*analysis.DefUseInfo](cache, analysis.DefUse)
	roles, _ := analysis.Get[*analysis.RoleInfo](cache, analysis.Roles)
	fmt.Println("first loss op at position", roles.Block(m.Main, 0).FirstLoss)

	// A pass that preserves only roles has run.
	cache.Invalidate(analysis.Roles)
	fmt.Println("roles cached:", cache.Cached(analysis.Roles), "def-use cached:", cache.Cached(analysis.DefUse))
	analysis.Get[*analysis.DefUseInfo](cache, analysis.DefUse)

	for _, st := range cache.Stats() {
		fmt.Printf("%s: %d hits, %d misses\n", st.Name, st.Hits, st.Misses)
	}
	// Output:
	// y is used by op 2 scale
	// y is used by op 3 mean
	// first loss op at position 2
	// roles cached: true def-use cached: false
	// def-use: 1 hits, 2 misses
	// index: 0 hits, 2 misses
	// roles: 0 hits, 1 misses
}
