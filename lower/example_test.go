package lower_test

import (
	"fmt"

	"github.com/distpass/distpass/lower"
)

// The built-in impls, by impl type and index: an op's dist names one as
// "matmul_v2:1".
func ExampleDefaultRegistry() {
	for _, c := range lower.DefaultRegistry().Containers() {
		if c.Type != "matmul_v2" && c.Type != "reshape2" {
			continue
		}
		for i, impl := range c.Impls {
			fmt.Printf("%s:%d %s\n", c.Type, i, impl.Name)
		}
	}
	// Output:
	// matmul_v2:0 column_parallel
	// matmul_v2:1 row_parallel
	// matmul_v2:2 replicate_parallel
	// reshape2:0 add_one_dim_back
	// reshape2:1 remove_one_dim_back
	// reshape2:2 same_dim_shape
}
