package sim

import (
	"strings"
	"testing"
	"time"

	"github.com/distpass/distpass/ir"
)

// TestSPMDReductions: the reductions the reshard lowering needs, over a
// group of two: c_allreduce_avg, c_allreduce_prod, c_reducescatter
// (the sum, each rank keeping its block of dim 0) and all_reduce by
// Paddle's reduce_type (sum, max, min, prod, avg: 3 and 4 once ran a
// min).
func TestSPMDReductions(t *testing.T) {
	r0 := head + `program main rank 0 { block 0 {
  var a : f64[2, 2]
  var avg : f64[2, 2]
  var prod : f64[2, 2]
  var rs : f64[1, 2]
  var rs2 : f64[1, 2]
  var t3 : f64[2, 2]
  var t4 : f64[2, 2]
  op 1 c_allreduce_avg(X: a) -> (Out: avg) {ring_id = 0}
  op 2 c_allreduce_prod(X: a) -> (Out: prod) {ring_id = 0}
  op 3 c_reducescatter(X: a) -> (Out: rs) {ring_id = 0, nranks = 2}
  op 4 reduce_scatter(x: a) -> (out: rs2) {reduce_type = 0, ring_id = 0, nranks = 2}
  op 5 all_reduce(x: a) -> (out: t3) {reduce_type = 3, ring_id = 0}
  op 6 all_reduce(x: a) -> (out: t4) {reduce_type = 4, ring_id = 0}
}}`
	r1 := strings.Replace(r0, "program main rank 0", "program main rank 1", 1)
	mods := rankModules(t, r0, r1)
	a0 := MustFromData(ir.F64, []int64{2, 2}, []float64{1, 2, 3, 4})
	a1 := MustFromData(ir.F64, []int64{2, 2}, []float64{10, 0, 30, 5})
	out, err := (&SPMD{Deadline: 5 * time.Second}).RunProgram("main", []int{0, 1}, mods, []Scope{{"a": a0}, {"a": a1}})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][2][]float64{
		"avg":  {{5.5, 1, 16.5, 4.5}, {5.5, 1, 16.5, 4.5}},
		"prod": {{10, 0, 90, 20}, {10, 0, 90, 20}},
		"rs":   {{11, 2}, {33, 9}},
		"rs2":  {{11, 2}, {33, 9}},
		"t3":   {{10, 0, 90, 20}, {10, 0, 90, 20}},
		"t4":   {{5.5, 1, 16.5, 4.5}, {5.5, 1, 16.5, 4.5}},
	}
	for name, w := range want {
		for rank := range 2 {
			if got := out[rank][name]; got == nil || !equalData(got.Data, w[rank]) {
				t.Errorf("rank %d %s = %v, want %v", rank, name, got, w[rank])
			}
		}
	}
}

// TestSPMDReduceTypeOutOfRange: an all_reduce of a reduce_type Paddle
// does not have is an error naming the op, not some other reduction.
func TestSPMDReduceTypeOutOfRange(t *testing.T) {
	r0 := head + `program main rank 0 { block 0 {
  var a : f64[2]
  var b : f64[2]
  op 1 all_reduce(x: a) -> (out: b) {reduce_type = 7, ring_id = 0}
}}`
	mods := rankModules(t, r0, strings.Replace(r0, "rank 0", "rank 1", 1))
	a := MustFromData(ir.F64, []int64{2}, []float64{1, 2})
	_, err := (&SPMD{Deadline: 5 * time.Second}).RunProgram("main", []int{0, 1}, mods, []Scope{{"a": a}, {"a": a}})
	if err == nil || !strings.Contains(err.Error(), "op 1 all_reduce: reduce_type 7 is none of sum (0), max (1), min (2), prod (3), avg (4)") {
		t.Errorf("err = %v", err)
	}
}
