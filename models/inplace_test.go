package models_test

import (
	"testing"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/models"
	"github.com/distpass/distpass/passes"
)

// A module the builders and autodiff made is partitioned in place just
// as its printed and parsed copy is: no two ops share a slice, so a
// lowering that renames one op's arg (a column-parallel matmul reading
// c_identity's output) renames no other op's.
func TestPartitionInPlaceOfBuiltModule(t *testing.T) {
	for _, ranks := range [][2]int{{2, 4}, {8, 8}} {
		m, err := models.SyntheticGPTMesh(3000, 1, ranks[0], ranks[1])
		if err != nil {
			t.Fatal(err)
		}
		text := ir.Print(m)
		parsed, err := ir.ParseString("gpt.dpir", string(text))
		if err != nil {
			t.Fatal(err)
		}
		for _, rank := range []int{0, ranks[0]*ranks[1] - 1} {
			want := parsed.Clone()
			if err := passes.Partition(want, nil, rank); err != nil {
				t.Fatalf("%dx%d rank %d, parsed: %v", ranks[0], ranks[1], rank, err)
			}
			got, err := models.SyntheticGPTMesh(3000, 1, ranks[0], ranks[1]) // partitioned in place, as built
			if err != nil {
				t.Fatal(err)
			}
			if err := passes.Partition(got, nil, rank); err != nil {
				t.Fatalf("%dx%d rank %d, as built: %v", ranks[0], ranks[1], rank, err)
			}
			if g, w := string(ir.Print(got)), string(ir.Print(want)); g != w {
				t.Fatalf("%dx%d rank %d: the module as built partitions differently from its parsed copy", ranks[0], ranks[1], rank)
			}
		}
	}
}
