package cli

import (
	"fmt"
	"io"
	"path/filepath"
	"testing"

	"github.com/distpass/distpass/internal/corpus"
	"github.com/distpass/distpass/passes"
)

// TestExplainLeavesTheModuleAlone: explain's two paths (partition each
// rank of a serial module and explain it; explain a partitioned module
// as it is, through the comm and memory analyzers) and partition -all
// (plain and shared) leave the module they are given printing and
// hashing as before, over every case of the corpus.
func TestExplainLeavesTheModuleAlone(t *testing.T) {
	for _, c := range corpus.All(t) {
		t.Run(c.Name, func(t *testing.T) {
			m := c.Module
			snap := corpus.Take(m)
			results := partitionAndExplain(m, passes.Ranks(m))
			snap.Unchanged(t, m, "explain -all")
			for _, r := range results {
				if r.err != nil {
					continue
				}
				if r.comm == nil || r.mem == nil {
					t.Fatalf("rank %d: no reports", r.rank)
				}
			}

			parts, err := passes.PartitionAll(t.Context(), m, nil)
			if err != nil {
				return
			}
			for i, pm := range parts {
				psnap := corpus.Take(pm)
				if e := explainModule(pm.Main.Rank, pm); e.err != nil {
					t.Errorf("rank %d: %v", pm.Main.Rank, e.err)
				}
				psnap.Unchanged(t, pm, fmt.Sprintf("explaining partitioned rank %d", i))
			}

			env := &Env{Stdout: io.Discard, Stderr: io.Discard}
			for _, f := range []struct{ shared, pdmodel bool }{{false, false}, {true, false}, {false, true}} {
				dir := filepath.Join(t.TempDir(), "out")
				if code := partitionAll(env, c.Name, m, dir, f.shared, f.pdmodel); code != ExitOK {
					t.Errorf("partition -all (shared %v, pdmodel %v): exit %d", f.shared, f.pdmodel, code)
				}
				snap.Unchanged(t, m, fmt.Sprintf("partition -all (shared %v, pdmodel %v)", f.shared, f.pdmodel))
			}
		})
	}
}
