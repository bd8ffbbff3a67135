package passes_test

import (
	"context"
	"fmt"
	"os"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/passes"
)

// Parse a pipeline, run it with an instrument, and read the result.
func ExampleManager() {
	m, err := ir.Parse("tiny.dpir", []byte(`program main {
  block 0 {
    var x : f32[4] {is_data}
    var fc.tmp_7 : f32[4]
    var dead.tmp_3 : f32[4]
    var y : f32[4]
    op 1 relu(X: x) -> (Out: fc.tmp_7)
    op 2 scale(X: x) -> (Out: dead.tmp_3) {scale = 2.0}
    op 3 mean(X: fc.tmp_7) -> (Out: y) role forward|loss
  }
}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	pl, err := passes.DefaultRegistry().Parse("verify,dce,canonicalize-names")
	if err != nil {
		fmt.Println(err)
		return
	}
	pm := &passes.Manager{Instruments: []passes.Instrument{passes.VerifyEach{}, &passes.Counters{W: os.Stdout}}}
	if err := pm.Run(context.Background(), pl, m); err != nil {
		fmt.Println(err)
		return
	}
	os.Stdout.Write(ir.Print(m))
	// Output:
	// pass counters for verify,dce,canonicalize-names
	//   added removed changed  pass
	//       0       0       0  verify (#1)
	//       0       1       0  dce (#2) ops-removed=1 vars-removed=1
	//       0       0       2  canonicalize-names (#3) vars-renamed=1
	// program main {
	//   block 0 {
	//     var x : f32[4] {is_data}
	//     var fc.tmp_0 : f32[4]
	//     var y : f32[4]
	//     op 1 relu(X: x) -> (Out: fc.tmp_0) role forward
	//     op 3 mean(X: fc.tmp_0) -> (Out: y) role forward|loss
	//   }
	// }
}

// A malformed pipeline is an error with its column.
func ExampleRegistry_Parse() {
	_, err := passes.DefaultRegistry().Parse("verify,dce{keep=loss,agressive=true}")
	fmt.Println(err)
	// Output:
	// pipeline:1:22: pass dce has no option "agressive" (options: keep)
}
