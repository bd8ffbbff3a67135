package check_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/distpass/distpass/check"
	"github.com/distpass/distpass/ir"
)

// TestReshardSerialRuns: a serial module with a reshard runs (the
// reshard is the identity serially) against per-rank programs that
// lower it by hand, while partitioning the module refuses it.
func TestReshardSerialRuns(t *testing.T) {
	src, err := os.ReadFile("../testdata/bad/reshard_partition.dpir")
	if err != nil {
		t.Fatal(err)
	}
	m, err := ir.Parse("serial", src)
	if err != nil {
		t.Fatal(err)
	}
	// Each rank holds its rows of h and all-gathers them into r.
	var mods []*ir.Module
	for rank := range 2 {
		text := fmt.Sprintf(`mesh world shape [2] dims [dp] ranks [0, 1]
group 0 ranks [0, 1]
program main rank %d {
  block 0 {
    var x : f32[2, 8] @world[0, -1] {is_data, stop_gradient}
    var h : f32[2, 8] @world[0, -1]
    var r : f32[4, 8] @world[-1, -1]
    var y : f32[4, 8] @world[-1, -1]
    op 1 relu(X: x) -> (Out: h)
    op 2 c_allgather(X: h) -> (Out: r) {nranks = 2, ring_id = 0}
    op 3 relu(X: r) -> (Out: y)
  }
}`, rank)
		pm, err := ir.Parse(fmt.Sprintf("rank%d", rank), []byte(text))
		if err != nil {
			t.Fatal(err)
		}
		mods = append(mods, pm)
	}
	opts := check.Options{Deadline: 10 * time.Second}
	rep, err := check.RunParts(context.Background(), m, []int{0, 1}, mods, opts)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Err() != nil || rep.Count("activation") == 0 {
		t.Errorf("check -parts: err %v, %d activations compared", rep.Err(), rep.Count("activation"))
	}
	_, err = check.Run(context.Background(), m, opts)
	if want := "op 2 reshard: no lowering for reshard yet"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("check: err %v, want it to hold %q", err, want)
	}
}
