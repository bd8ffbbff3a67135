package check_test

import (
	"strings"
	"testing"

	"github.com/distpass/distpass/check"
)

// TestReportTable: the table's columns line up whatever the length of a
// var name (a name past the old fixed width of 28 pushed its row's
// figures out of line), and the errors are right-aligned.
func TestReportTable(t *testing.T) {
	long := "encoder.layer_11.attention.output.dense.w_0@GRAD"
	rep := &check.Report{Ranks: []int{0, 1}, Steps: 1, Rows: []check.Row{
		{Var: "loss", Kind: "loss", MaxAbs: 3.27e-11, MaxRel: 1e-12, Rank: -1},
		{Var: long, Kind: "grad", MaxAbs: 0, MaxRel: 0, Rank: -1},
		{Var: "w", Kind: "param", MaxAbs: 0.5, MaxRel: 0.25, Tol: 1e-5, Rank: 1},
	}}
	var sb strings.Builder
	if err := rep.Write(&sb); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(sb.String(), "\n")
	want := []string{
		"check: 2 ranks, 1 step(s)",
		"kind   var                                                max abs   max rel",
		"loss   loss                                              3.27e-11     1e-12  ok",
		"grad   " + long + "         0         0  ok",
		"param  w                                                      0.5      0.25  MISMATCH on rank 1",
	}
	for i, w := range want {
		if i >= len(lines) || lines[i] != w {
			t.Fatalf("report:\n%s\nline %d: want\n%s", sb.String(), i, w)
		}
	}
}
