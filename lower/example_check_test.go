package lower_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/distpass/distpass/check"
	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/lower"
	"github.com/distpass/distpass/passes"
)

// ExampleImpl's impl lowers right (the simulated ranks match the serial
// run), and its Compatible refuses, through the lowering, a relu whose
// output is split.
func TestExampleImplIsRight(t *testing.T) {
	reg := lower.DefaultRegistry()
	reg.Register("relu", gatherRows())
	m, err := ir.Parse("relu.dpir", []byte(reluSrc))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := check.Run(context.Background(), m, check.Options{Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	if err := rep.Err(); err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(rep.Rows, func(r check.Row) bool { return r.Var == "y" }) {
		t.Errorf("y was not compared: %+v", rep.Rows)
	}
	split, err := ir.Parse("relu.dpir", []byte(strings.NewReplacer("y : f32[4, 8] @m[-1, -1]", "y : f32[4, 8] @m[0, -1]",
		"y: [-1, -1]", "y: [0, -1]").Replace(reluSrc)))
	if err != nil {
		t.Fatal(err)
	}
	_, err = passes.PartitionAll(context.Background(), split, reg)
	if want := "main block 0: op 1 relu: impl relu:0 (gather_rows) does not fit: gather_rows needs Out replicated; it has dims_mapping [0 -1]"; err == nil || err.Error() != want {
		t.Errorf("split Out: %v\nwant %s", err, want)
	}
}
