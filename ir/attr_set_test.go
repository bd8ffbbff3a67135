package ir_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/distpass/distpass/ir"
)

// Set keeps a list sorted with unique names, the last value winning, for
// names given in any order, on short lists (scanned from the end) and
// long ones (searched) alike.
func TestAttrsSetAnyOrder(t *testing.T) {
	var given []ir.Attr
	for i, name := range []string{"ring_id", "bias", "use_calc_stream", "origin", "ring_id", "axis",
		"k", "b", "z", "a", "origin", "m", "c"} {
		given = append(given, ir.A(name, ir.Int(int64(i))))
	}
	for r := range given {
		rot := append(append([]ir.Attr{}, given[r:]...), given[:r]...)
		for n := range len(rot) + 1 {
			var got ir.Attrs
			last := map[string]ir.Value{}
			for _, a := range rot[:n] {
				got.Set(a.Name, a.Value)
				last[a.Name] = a.Value
			}
			var want ir.Attrs
			for name, v := range last {
				want = append(want, ir.A(name, v))
			}
			slices.SortFunc(want, func(a, b ir.Attr) int { return strings.Compare(a.Name, b.Name) })
			if !slices.Equal(got, want) {
				t.Errorf("rotation %d, %d attrs: Set gives %v, want %v", r, n, fmt.Sprint(got), fmt.Sprint(want))
			}
		}
	}
}
