package spmd

import (
	"strings"
	"testing"
)

// TestReshapeTrans checks the trees Paddle's MakeReshapeDimTrans builds.
func TestReshapeTrans(t *testing.T) {
	for _, c := range []struct {
		src, tgt []int64
		want     string
	}{
		{[]int64{8, 1024, 768}, []int64{8, 1024, 12, 64},
			"InputDim(0) InputDim(1) Split(InputDim(2), [12, 64], 0) Split(InputDim(2), [12, 64], 1)"},
		{[]int64{8, 1024, 768}, []int64{8192, 768}, "Flatten(InputDim(0),InputDim(1)) InputDim(2)"},
		{[]int64{8, 4}, []int64{2, 16},
			"Split(Flatten(InputDim(0),InputDim(1)), [2, 16], 0) Split(Flatten(InputDim(0),InputDim(1)), [2, 16], 1)"},
		{[]int64{6, 12, 48, 24}, []int64{1, 72, 48, 4, 6},
			"Singleton() Flatten(InputDim(0),InputDim(1)) InputDim(2) Split(InputDim(3), [4, 6], 0) Split(InputDim(3), [4, 6], 1)"},
		{[]int64{6}, []int64{2, 1, 3}, "Split(InputDim(0), [2, 1, 3], 0) Singleton() Split(InputDim(0), [2, 1, 3], 2)"},
		{[]int64{1, 4, 2}, []int64{8}, "Flatten(InputDim(1),InputDim(2))"},
		{[]int64{2, 1, 3}, []int64{6}, "Flatten(InputDim(0),InputDim(2))"},
		{[]int64{1, 8}, []int64{1, 8}, "InputDim(0) InputDim(1)"},
		{[]int64{8}, []int64{8, 1}, "InputDim(0) Singleton()"},
		{[]int64{}, []int64{1}, "Singleton()"},
		{[]int64{1}, []int64{}, ""},
		{[]int64{}, []int64{}, ""},
	} {
		trans, ok := reshapeTrans(c.src, c.tgt)
		var s []string
		for _, tr := range trans {
			s = append(s, tr.String())
		}
		if got := strings.Join(s, " "); !ok || got != c.want {
			t.Errorf("%v to %v: %q (ok %v), want %q", c.src, c.tgt, got, ok, c.want)
		}
	}
	// Different element counts end the walk, never an index out of range.
	if _, ok := reshapeTrans([]int64{2, 3}, []int64{4, 2}); ok {
		t.Error("[2, 3] to [4, 2]: walked")
	}
}
