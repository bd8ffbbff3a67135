package sim

import (
	"strings"
	"testing"
	"time"

	"github.com/distpass/distpass/ir"
)

const reshardSrc = `mesh m shape [2] dims [x] ranks [0, 1]
program main%s { block 0 {
 var a : f64[2, 2] @m[0, -1]
 var b : f64[2, 2] @m[-1, -1]
 var c : f64[2, 2] @m[-1, -1]
 op 1 reshard(X: a) -> (Out: b)
 op 2 relu(X: b) -> (Out: c)
}}`

// TestReshardSerial: serially a reshard is the identity, and the value
// does not alias its input.
func TestReshardSerial(t *testing.T) {
	m, err := ir.Parse("serial", []byte(strings.Replace(reshardSrc, "%s", "", 1)))
	if err != nil {
		t.Fatal(err)
	}
	a := MustFromData(ir.F64, []int64{2, 2}, []float64{1, -2, 3, -4})
	s, err := NewInterp(nil).RunModule(m, Scope{"a": a})
	if err != nil {
		t.Fatal(err)
	}
	if d, err := MaxAbsDiff(s["b"], a); err != nil || d != 0 {
		t.Errorf("b = %v, want a = %v", s["b"], a)
	}
	if d, err := MaxAbsDiff(s["c"], MustFromData(ir.F64, []int64{2, 2}, []float64{1, 0, 3, 0})); err != nil || d != 0 {
		t.Errorf("c = %v", s["c"])
	}
	if &s["b"].Data[0] == &a.Data[0] {
		t.Error("b aliases a")
	}
}

// TestReshardSPMDRefused: a reshard left in a per-rank program is not the
// identity on the rank's part; the runner refuses it instead of running
// it as one.
func TestReshardSPMDRefused(t *testing.T) {
	mods := rankModules(t, strings.Replace(reshardSrc, "%s", " rank 0", 1), strings.Replace(reshardSrc, "%s", " rank 1", 1))
	scopes := []Scope{{"a": Zeros(ir.F64, 1, 2)}, {"a": Zeros(ir.F64, 1, 2)}}
	err := runWithin(t, 20*time.Second, &SPMD{Deadline: time.Minute}, []int{0, 1}, mods, scopes)
	want := "op 1 reshard: an unlowered reshard: a per-rank program cannot run one (partition lowers them)"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("err = %v\nwant it to hold %q", err, want)
	}
}
