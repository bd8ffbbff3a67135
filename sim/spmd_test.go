package sim

import (
	"fmt"
	"maps"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/distpass/distpass/ir"
)

func rankModules(t *testing.T, texts ...string) []*ir.Module {
	t.Helper()
	var ms []*ir.Module
	for i, s := range texts {
		m, err := ir.Parse("rank"+string(rune('0'+i)), []byte(s))
		if err != nil {
			t.Fatal(err)
		}
		ms = append(ms, m)
	}
	return ms
}

const head = "group 0 ranks [0, 1]\ngroup 1 ranks [0]\n"

func TestSPMDCollectives(t *testing.T) {
	r0 := head + `program main rank 0 { block 0 {
  var a : f64[2, 2]
  var s : f64[2, 2]
  var m : f64[2, 2]
  var g : f64[4, 2]
  var c : f64[2, 4]
  var b : f64[2, 2]
  var p : f64[2, 1]
  var q : f64[2, 2]
  var r : f64[2, 2]
  var rd : f64[2, 2]
  op 1 c_allreduce_sum(X: a) -> (Out: s) {ring_id = 0}
  op 2 c_allreduce_max(X: a) -> (Out: m) {ring_id = 0}
  op 3 c_allgather(X: a) -> (Out: g) {ring_id = 0, nranks = 2}
  op 4 c_concat(X: a) -> (Out: c) {ring_id = 0}
  op 5 c_broadcast(X: a) -> (Out: b) {ring_id = 0, root = 1}
  op 6 c_split(X: a) -> (Out: p) {ring_id = 0}
  op 7 alltoall(X: a) -> (Out: q) {ring_id = 0}
  op 8 send_v2(X: a) -> () {peer = 1, ring_id = 0}
  op 9 all_reduce(x: a) -> (out: r) {reduce_type = 0, ring_id = 0}
  op 10 all_reduce(x: a) -> (out: rd) {ring_id = 0}
}}`
	r1 := strings.Replace(strings.Replace(r0, "program main rank 0", "program main rank 1", 1),
		"op 8 send_v2(X: a) -> () {peer = 1, ring_id = 0}", "op 8 recv_v2() -> (Out: r8) {peer = 0, ring_id = 0}", 1)
	r1 = strings.Replace(r1, "var r : f64[2, 2]", "var r : f64[2, 2]\n  var r8 : f64[2, 2]", 1)
	mods := rankModules(t, r0, r1)
	a0 := MustFromData(ir.F64, []int64{2, 2}, []float64{1, 2, 3, 4})
	a1 := MustFromData(ir.F64, []int64{2, 2}, []float64{10, 0, 30, 5})
	out, err := (&SPMD{Deadline: 5 * time.Second}).RunProgram("main", []int{0, 1}, mods, []Scope{{"a": a0}, {"a": a1}})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][2][]float64{
		"s": {{11, 2, 33, 9}, {11, 2, 33, 9}},
		"r": {{11, 2, 33, 9}, {11, 2, 33, 9}},
		// reduce_type absent is the table's default, sum, as verify reads it.
		"rd": {{11, 2, 33, 9}, {11, 2, 33, 9}},
		"m":  {{10, 2, 30, 5}, {10, 2, 30, 5}},
		"g":  {{1, 2, 3, 4, 10, 0, 30, 5}, {1, 2, 3, 4, 10, 0, 30, 5}},
		"c":  {{1, 2, 10, 0, 3, 4, 30, 5}, {1, 2, 10, 0, 3, 4, 30, 5}},
		"b":  {{10, 0, 30, 5}, {10, 0, 30, 5}},
		"p":  {{1, 3}, {0, 5}},
		"q":  {{1, 2, 10, 0}, {3, 4, 30, 5}},
	}
	for name, w := range want {
		for rank := range 2 {
			got := out[rank][name]
			if got == nil || !equalData(got.Data, w[rank]) {
				t.Errorf("rank %d %s = %v, want %v", rank, name, got, w[rank])
			}
		}
	}
	if got := out[1]["r8"]; got == nil || !equalData(got.Data, []float64{1, 2, 3, 4}) {
		t.Errorf("recv_v2 got %v", got)
	}
}

func equalData(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestSPMDMismatchNamesRanksAndOps(t *testing.T) {
	r0 := head + "program main rank 0 { block 0 {\n var a : f64[2]\n var s : f64[2]\n op 1 c_allreduce_sum(X: a) -> (Out: s) {ring_id = 0}\n}}"
	r1 := head + "program main rank 1 { block 0 {\n var a : f64[3]\n var s : f64[3]\n op 4 c_allreduce_sum(X: a) -> (Out: s) {ring_id = 0}\n}}"
	mods := rankModules(t, r0, r1)
	_, err := (&SPMD{Deadline: 5 * time.Second}).RunProgram("main", []int{0, 1}, mods,
		[]Scope{{"a": Zeros(ir.F64, 2)}, {"a": Zeros(ir.F64, 3)}})
	if err == nil || !strings.Contains(err.Error(), "collective mismatch on group [0 1]: rank 0 op 1 c_allreduce_sum") ||
		!strings.Contains(err.Error(), "rank 1 op 4 c_allreduce_sum") {
		t.Fatalf("err = %v", err)
	}
}

// TestSPMDObserve: the observer sees every collective each rank runs,
// once per run (a loop body's at every iteration), with its tensors; a
// run without one is unchanged.
func TestSPMDObserve(t *testing.T) {
	prog := func(rank int) string {
		return head + `program main rank ` + string(rune('0'+rank)) + ` { block 0 {
  var a : f64[2]
  var s : f64[2]
  var i : i64[1]
  var n : i64[1]
  var c : bool[1]
  var g : f64[4]
  op 1 c_allreduce_sum(X: a) -> (Out: s) {ring_id = 0}
  op 2 fill_constant() -> (Out: i) {dtype = 3, shape = [1], value = 0.0}
  op 3 fill_constant() -> (Out: n) {dtype = 3, shape = [1], value = 3.0}
  op 4 less_than(X: i, Y: n) -> (Out: c)
  op 5 while(X: [i, n], Condition: c) -> (Out: [i, c]) {sub_block = ^1}
}
block 1 parent 0 {
  op 6 c_allgather(X: a) -> (Out: g) {nranks = 2, ring_id = 0}
  op 7 increment(X: i) -> (Out: i) {step = 1.0}
  op 8 less_than(X: i, Y: n) -> (Out: c)
}}`
	}
	mods := rankModules(t, prog(0), prog(1))
	var mu sync.Mutex
	seen := map[string]int{}
	spmd := &SPMD{Deadline: 5 * time.Second, Observe: func(rank int, op *ir.Op, in, out Args) {
		mu.Lock()
		defer mu.Unlock()
		key := fmt.Sprintf("rank %d op %d %s %v -> %v", rank, op.ID, op.Type, in["X"][0].Shape, out["Out"][0].Shape)
		seen[key]++
	}}
	scopes := []Scope{{"a": Zeros(ir.F64, 2)}, {"a": Zeros(ir.F64, 2)}}
	if _, err := spmd.RunProgram("main", []int{0, 1}, mods, scopes); err != nil {
		t.Fatal(err)
	}
	want := map[string]int{
		"rank 0 op 1 c_allreduce_sum [2] -> [2]": 1, "rank 1 op 1 c_allreduce_sum [2] -> [2]": 1,
		"rank 0 op 6 c_allgather [2] -> [4]": 3, "rank 1 op 6 c_allgather [2] -> [4]": 3,
	}
	if !maps.Equal(seen, want) {
		t.Errorf("observed %v, want %v", seen, want)
	}
}
