package custom_test

import (
	"fmt"

	"github.com/distpass/distpass/custom"
	"github.com/distpass/distpass/ops"
)

// A definition file's op type goes into the op table with its grad op
// type, and prints its rule as the file writes it (ShardingDoc) and as
// the rule built on a sample op prints itself (Rule).
func ExampleDefine() {
	src := `optype example_gap {
  input X
  output Out
  rule (X: nchw) -> (Out: nc11) avg
  meaning {
    reduce_mean(X: X) -> (Out: Out) {dim = [2, 3], keep_dim = true}
  }
}
`
	ts, err := custom.Parse("example.dpop", []byte(src))
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := custom.Define(ts...); err != nil {
		fmt.Println(err)
		return
	}
	d := ops.Lookup("example_gap")
	fmt.Println(d.Family, d.ShardingDoc)
	fmt.Println(d.Rule())
	fmt.Println(d.GradType(), ops.Lookup(d.GradType()) != nil)
	// Output:
	// custom (X: nchw) -> (Out: nc11) avg
	// (X: nchw) -> (Out: nc11) avg  [for 4-D X]
	// example_gap_grad true
}
