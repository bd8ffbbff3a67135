package sim

import (
	"math"
	"strings"
	"testing"

	"github.com/distpass/distpass/ir"
)

func TestTensorBasics(t *testing.T) {
	x := tf(sh(2, 3), 1, 2, 3, 4, 5, 6)
	if x.Numel() != 6 || x.At(1, 2) != 6 || x.At(0, 1) != 2 {
		t.Errorf("Numel/At wrong on %v", x)
	}
	if _, err := FromData(ir.F32, sh(2, 2), []float64{1}); err == nil {
		t.Error("FromData accepted a short data slice")
	}
	c := x.Clone()
	c.Data[0] = 9
	if x.Data[0] != 1 {
		t.Error("Clone shares data")
	}
	if got := x.String(); got != "f32[2, 3] [[1, 2, 3], [4, 5, 6]]" {
		t.Errorf("String = %q", got)
	}
	if got := Scalar(ir.I64, 2.7).String(); got != "i64[] 2" {
		t.Errorf("String = %q", got)
	}
	if !strings.Contains(Zeros(ir.F32, 100).String(), "100 elements") {
		t.Error("long String not elided")
	}
	s, err := x.Slice(1, 1, 3)
	if err != nil {
		t.Fatal(err)
	}
	wantT(t, "Slice", s, tf(sh(2, 2), 2, 3, 5, 6))
	a, _ := x.Slice(1, 0, 1)
	back, err := Concat(1, a, s)
	if err != nil {
		t.Fatal(err)
	}
	wantT(t, "Concat", back, x)
	r0, _ := x.Slice(0, 0, 1)
	r1, _ := x.Slice(0, 1, 2)
	rows, _ := Concat(0, r0, r1)
	wantT(t, "Concat rows", rows, x)
	if _, err := x.Slice(1, 2, 4); err == nil {
		t.Error("Slice past the end accepted")
	}
	if _, err := Concat(0, x, tf(sh(1, 2), 1, 2)); err == nil {
		t.Error("Concat of mismatched dims accepted")
	}
	y := tf(sh(2, 3), 1, 2, 3, 4, 5, 7)
	if d, _ := MaxAbsDiff(x, y); d != 1 {
		t.Errorf("MaxAbsDiff = %v", d)
	}
	if d, _ := MaxRelDiff(x, y, 1e-6); d != 1.0/7 {
		t.Errorf("MaxRelDiff = %v", d)
	}
	n := td(sh(1), math.NaN())
	if d, _ := MaxAbsDiff(n, td(sh(1), 0)); !math.IsInf(d, 1) {
		t.Errorf("NaN vs 0 diff = %v", d)
	}
	if !Equal(n, n.Clone()) || Equal(x, y) {
		t.Error("Equal wrong")
	}
	if _, err := MaxAbsDiff(x, s); err == nil {
		t.Error("MaxAbsDiff of different shapes accepted")
	}
	b := MustFromData(ir.Boolean, sh(3), []float64{0, 2, -1})
	i := MustFromData(ir.I32, sh(2), []float64{2.9, -2.9})
	if b.Data[1] != 1 || b.Data[2] != 1 || i.Data[0] != 2 || i.Data[1] != -2 {
		t.Errorf("rounding: %v %v", b, i)
	}
}
