package check_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/distpass/distpass/check"
	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/passes"
)

// reshardSerial all-gathers h, split along dp, into a replicated r.
const reshardSerial = `mesh world shape [2] dims [dp] ranks [0, 1]
program main {
  block 0 {
    var x : f32[4, 8] @world[0, -1] {is_data, stop_gradient}
    var h : f32[4, 8] @world[0, -1]
    var r : f32[4, 8] @world[-1, -1]
    var y : f32[4, 8] @world[-1, -1]
    op 1 relu(X: x) -> (Out: h)
         dist @world [x: [0, -1] -> h: [0, -1]]
    op 2 reshard(X: h) -> (Out: r) {origin = "op 3 relu X"}
         dist @world impl reshard:0 [h: [0, -1] -> r: [-1, -1]]
    op 3 relu(X: r) -> (Out: y)
         dist @world [r: [-1, -1] -> y: [-1, -1]]
  }
}`

// TestReshardSerialRuns: a serial module with a reshard runs (the
// reshard is the identity serially) against per-rank programs that
// lower it by hand, and against its own partition, which lowers the
// reshard to the one all-gather written by hand.
func TestReshardSerialRuns(t *testing.T) {
	m, err := ir.Parse("serial", []byte(reshardSerial))
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
	rep, err = check.Run(context.Background(), m, opts)
	if err != nil || rep.Err() != nil || rep.Count("activation") == 0 {
		t.Fatalf("check: %v %v, %d activations compared", err, rep.Err(), rep.Count("activation"))
	}
	parts, err := passes.PartitionAll(context.Background(), m, nil)
	if err != nil {
		t.Fatal(err)
	}
	for rank, pm := range parts {
		var types []string
		for _, op := range pm.Main.Global().Ops {
			types = append(types, op.Type)
		}
		if got := strings.Join(types, " "); got != "relu c_allgather relu" {
			t.Errorf("rank %d: ops %s, want relu c_allgather relu", rank, got)
		}
	}
}
