package check_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/distpass/distpass/check"
	"github.com/distpass/distpass/internal/corpus"
)

// TestRunLeavesTheInputAlone: check.Run and check.MeasureTraffic, which
// partition, run and compare the module, leave it printing and hashing as
// before, over every case of the corpus (the golden inputs and the
// example models), whether they succeed or not. The runnable cases pass
// the check, and the models' checks compare something.
func TestRunLeavesTheInputAlone(t *testing.T) {
	ctx := context.Background()
	for _, c := range corpus.All(t) {
		t.Run(c.Name, func(t *testing.T) {
			if c.Repeats() {
				t.Skip("under the race detector, the model GPTs stand for this one")
			}
			m := c.Module
			snap := corpus.Take(m)
			rep, err := check.Run(ctx, m, check.Options{Deadline: 10 * time.Second})
			snap.Unchanged(t, m, "check.Run")
			if c.Runnable {
				if err == nil {
					err = rep.Err()
				}
				if err != nil {
					t.Errorf("check: %v", err)
				} else if len(rep.Rows) == 0 && strings.HasPrefix(c.Name, "model/") {
					t.Error("check compared nothing")
				}
			}
			_, err = check.MeasureTraffic(ctx, m, check.Options{Deadline: 10 * time.Second})
			snap.Unchanged(t, m, "check.MeasureTraffic")
			if c.Runnable && err != nil {
				t.Errorf("measure: %v", err)
			}
		})
	}
}
