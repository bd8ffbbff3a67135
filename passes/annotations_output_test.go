package passes_test

import (
	"strings"
	"testing"

	"github.com/distpass/distpass/analysis"
	"github.com/distpass/distpass/internal/corpus"
	"github.com/distpass/distpass/lower"
	"github.com/distpass/distpass/passes"
)

// TestPartitionOutputIsAnnotated: check-annotations holds the
// partitioner's own output of every example model to the rules it holds
// the serial module to (arg dists are the vars', partial values used as
// such, grads synced as the loss says): rank 0's program of each passes.
func TestPartitionOutputIsAnnotated(t *testing.T) {
	for _, c := range corpus.Models(t) {
		t.Run(c.Name, func(t *testing.T) {
			m := c.Module.Clone()
			if err := passes.Partition(m, lower.DefaultRegistry(), passes.Ranks(c.Module)[0]); err != nil {
				t.Fatal(err)
			}
			rep, err := analysis.Get[*analysis.AnnotationReport](analysis.NewCache(m), analysis.Annotations)
			if err != nil {
				t.Fatal(err)
			}
			// The even-split rule reads a program's shapes as serial ones:
			// a rank's local dims need not split again (a known limit of
			// check-annotations on partitioned programs, not held here).
			var bad []string
			for _, p := range rep.Problems {
				if msg := p.Error(); !strings.Contains(msg, "does not split evenly") {
					bad = append(bad, msg)
				}
			}
			if len(bad) > 0 {
				t.Errorf("rank 0's program:\n%s", strings.Join(bad, "\n"))
			}
		})
	}
}
