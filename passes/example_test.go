package passes_test

import (
	"context"
	"fmt"
	"os"
	"strings"

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
    var y : f32[1]
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
	//     var y : f32[1]
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

// Write a pass: a value with a name, a doc, its options and Run. This one
// counts the collectives of a given prefix and changes nothing, so it
// preserves every analysis. Registered beside the built-in passes (and
// their order rules), it composes with them in a pipeline, here after
// partition, whose seven steps the Counters instrument lists too.
func ExamplePass() {
	countCollectives := &passes.Pass{
		Name: "count-collectives",
		Doc:  "count the collectives of the main program\nCounts each op whose type starts with prefix.",
		Options: []passes.Option{{Name: "prefix", Kind: passes.OptString, Default: "c_",
			Doc: "the op type prefix of a collective"}},
		PreservesAll: true,
		Run: func(ctx *passes.Context, m *ir.Module) error {
			for _, b := range m.Main.Blocks {
				for _, op := range b.Ops {
					if strings.HasPrefix(op.Type, ctx.String("prefix")) {
						ctx.Count(op.Type, 1)
					}
				}
			}
			return nil
		},
	}
	builtin := passes.DefaultRegistry()
	reg, err := passes.NewRegistry(append(builtin.Passes(), countCollectives), builtin.OrderRules())
	if err != nil {
		fmt.Println(err)
		return
	}
	src, err := os.ReadFile("../examples/mlp_dp_mp.dpir") // dp × mp, with its backward and sgd
	if err != nil {
		fmt.Println(err)
		return
	}
	m, err := ir.Parse("mlp_dp_mp.dpir", src)
	if err != nil {
		fmt.Println(err)
		return
	}
	pl, err := reg.Parse("partition{rank=1},count-collectives")
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := (&passes.Manager{Instruments: []passes.Instrument{&passes.Counters{W: os.Stdout}}}).Run(context.Background(), pl, m); err != nil {
		fmt.Println(err)
	}
	// Output:
	// pass counters for partition{rank=1},count-collectives
	//   added removed changed  pass
	//       8       0       4  partition{rank=1} (#1)
	//       0       0       0    check-annotations (#2)
	//       0       0       2    partition-vars{rank=1} (#3)
	//       4       0       2    lower-forward (#4)
	//       4       0       0    lower-backward (#5)
	//       0       0       0    lower-optimizer (#6)
	//       0       0       0    relink-block-attrs (#7)
	//       0       0       0    remap-params-grads (#8)
	//       0       0       0  count-collectives (#9) c_allreduce_sum=3 c_identity=1
}
