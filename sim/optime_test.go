package sim

import (
	"maps"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/distpass/distpass/ir"
)

// Interp.OpTime sees every op a kernel runs once per run, an op of a
// loop body at every iteration, and never the while op itself.
func TestInterpOpTime(t *testing.T) {
	m := parseFile(t, "../examples/while_loop.dpir")
	seen := map[int64]int{}
	ip := NewInterp(nil)
	ip.OpTime = func(op *ir.Op, d time.Duration) {
		if d < 0 {
			t.Errorf("%s: took %v", op, d)
		}
		seen[op.ID]++
	}
	for range 2 {
		if err := ip.RunProgram(m.Main, Scope{"x": Zeros(ir.F32, 4, 8)}); err != nil {
			t.Fatal(err)
		}
	}
	// Two runs of: ops 1-3 once, the loop's ten iterations of ops 5-8.
	want := map[int64]int{1: 2, 2: 2, 3: 2, 5: 20, 6: 20, 7: 20, 8: 20}
	if !maps.Equal(seen, want) {
		t.Errorf("ops seen %v, want %v", seen, want)
	}
}

// SPMD.OpTime sees each rank's ops once per run, collectives included,
// from the ranks' goroutines at once (run it with -race), and RankDone
// each rank once.
func TestSPMDOpTime(t *testing.T) {
	r0 := head + `program main rank 0 { block 0 {
  var a : f64[2, 2]
  var b : f64[2, 2]
  var s : f64[2, 2]
  op 1 scale(X: a) -> (Out: b) {scale = 2.0, bias = 0.0, bias_after_scale = true}
  op 2 c_allreduce_sum(X: b) -> (Out: s) {ring_id = 0}
  op 3 scale(X: s) -> (Out: a) {scale = 0.5, bias = 0.0, bias_after_scale = true}
}}`
	r1 := strings.Replace(r0, "program main rank 0", "program main rank 1", 1)
	mods := rankModules(t, r0, r1)
	type key struct {
		rank int
		op   int64
	}
	var mu sync.Mutex
	seen := map[key]int{}
	done := map[int]int{}
	s := &SPMD{Deadline: 5 * time.Second,
		OpTime: func(rank int, op *ir.Op, d time.Duration) {
			mu.Lock()
			seen[key{rank, op.ID}]++
			mu.Unlock()
		},
		RankDone: func(rank int) {
			mu.Lock()
			done[rank]++
			mu.Unlock()
		}}
	scopes := []Scope{{"a": td(sh(2, 2), 1, 2, 3, 4)}, {"a": td(sh(2, 2), 4, 3, 2, 1)}}
	for range 3 {
		var err error
		if scopes, err = s.RunProgram("main", []int{0, 1}, mods, scopes); err != nil {
			t.Fatal(err)
		}
	}
	want := map[key]int{}
	for rank := range 2 {
		for op := int64(1); op <= 3; op++ {
			want[key{rank, op}] = 3
		}
	}
	if !maps.Equal(seen, want) {
		t.Errorf("ops seen %v, want %v", seen, want)
	}
	if !maps.Equal(done, map[int]int{0: 3, 1: 3}) {
		t.Errorf("ranks done %v, want each 3 times", done)
	}
	// The step ran as without the hooks: a becomes a0+a1, then doubles.
	if got := scopes[0]["a"]; !equalData(got.Data, []float64{20, 20, 20, 20}) {
		t.Errorf("a = %v", got)
	}
}
