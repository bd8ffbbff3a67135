package check_test

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/distpass/distpass/check"
	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/lower"
	"github.com/distpass/distpass/passes"
)

// Progress sees the stages in order, each SPMD step's ranks done once
// each; OpTime sees every op run, from the ranks at once (run it with
// -race); and neither changes the report.
func TestProgressAndOpTime(t *testing.T) {
	src, err := os.ReadFile("../examples/mlp_dp_mp.dpir")
	if err != nil {
		t.Fatal(err)
	}
	m, err := ir.Parse("mlp_dp_mp.dpir", src)
	if err != nil {
		t.Fatal(err)
	}
	plain, err := check.Run(context.Background(), m, check.Options{Steps: 2})
	if err != nil {
		t.Fatal(err)
	}
	var (
		events []string
		mu     sync.Mutex
		ops    = map[string]int{}
		ranks  []int
	)
	opts := check.Options{Steps: 2,
		Progress: func(ev check.Event) {
			// Which rank ends first varies: below, each must end once.
			rank := ev.Rank
			if ev.Stage == "spmd" && ev.Done > 0 {
				rank = 9
				ranks = append(ranks, ev.Rank)
				if ev.Done == ev.Total {
					slices.Sort(ranks)
					if !slices.Equal(ranks, []int{0, 1, 2, 3}) {
						t.Errorf("step %d: ranks done %v, want each of 0-3 once", ev.Step, ranks)
					}
					ranks = nil
				}
			}
			events = append(events, fmt.Sprintf("%s %d/%d %d/%d %d", ev.Stage, ev.Step, ev.Steps, ev.Done, ev.Total, rank))
		},
		OpTime: func(rank int, op *ir.Op, d time.Duration) {
			mu.Lock()
			ops[op.Type]++
			mu.Unlock()
		}}
	timed, err := check.Run(context.Background(), m, opts)
	if err != nil {
		t.Fatal(err)
	}
	// One lowering: the four ranks are one class.
	// The startups, then step by step: serial, the ranks, the comparison.
	want := []string{"partition 0/0 1/1 -1", "startup 0/0 0/0 -1", "spmd 0/2 0/4 -1"}
	for step := 1; step <= 2; step++ {
		want = append(want, fmt.Sprintf("serial %d/2 0/0 -1", step), fmt.Sprintf("spmd %d/2 0/4 -1", step))
		for done := 1; done <= 4; done++ {
			want = append(want, fmt.Sprintf("spmd %d/2 %d/4 9", step, done))
		}
		want = append(want, fmt.Sprintf("compare %d/2 0/0 -1", step))
	}
	if !slices.Equal(events, want) {
		t.Errorf("events:\n%s\nwant:\n%s", strings.Join(events, "\n"), strings.Join(want, "\n"))
	}
	// The serial startup once and main twice, and every rank's: no loops.
	mods, err := passes.PartitionAll(context.Background(), m, lower.DefaultRegistry())
	if err != nil {
		t.Fatal(err)
	}
	runs := map[string]int{}
	for _, pm := range append([]*ir.Module{m}, mods...) {
		for p, times := range map[*ir.Program]int{pm.Startup: 1, pm.Main: 2} {
			if p == nil {
				continue
			}
			for _, b := range p.Blocks {
				for _, op := range b.Ops {
					runs[op.Type] += times
				}
			}
		}
	}
	if !maps.Equal(ops, runs) {
		t.Errorf("OpTime saw the op types run %v times, want %v", ops, runs)
	}
	var a, b bytes.Buffer
	if err := plain.Write(&a); err != nil {
		t.Fatal(err)
	}
	if err := timed.Write(&b); err != nil {
		t.Fatal(err)
	}
	if a.String() != b.String() {
		t.Errorf("report with the hooks:\n%s\nwithout:\n%s", b.String(), a.String())
	}
}
