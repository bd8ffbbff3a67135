package passes_test

import (
	"slices"
	"testing"

	"github.com/distpass/distpass/analysis"
	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/passes"
)

// TestAnalysesCachedAndInvalidated: an analysis computed by one pass is
// reused by the next while passes preserve it, and recomputed after a pass
// that does not.
func TestAnalysesCachedAndInvalidated(t *testing.T) {
	runs := 0
	opCount := &analysis.Analyzer{
		Name: "op-count",
		Doc:  "counts the ops of main, for tests",
		Run: func(p *analysis.Inputs) (any, error) {
			runs++
			return p.Module.Main.NumOps(), nil
		},
	}
	var seen []int
	use := func(name string, preserve bool) *passes.Pass {
		p := &passes.Pass{
			Name: name, Doc: "reads op-count, for tests",
			Run: func(ctx *passes.Context, _ *ir.Module) error {
				n, err := analysis.Get[int](ctx.Analyses, opCount)
				seen = append(seen, n)
				return err
			},
		}
		if preserve {
			p.Preserves = []*analysis.Analyzer{opCount}
		}
		return p
	}
	r := testRegistry(t, use("use-keep", true), use("use-drop", false), addDeadOp())
	m := loadExample(t, "mlp_dp_mp.dpir")
	if err := run(t, r, "use-keep,use-keep,verify,use-drop,use-keep,add-dead-op,use-keep", m); err != nil {
		t.Fatal(err)
	}
	// use-keep computes (1); use-keep and verify (which preserves all)
	// keep it; use-drop reuses it, then drops it; use-keep recomputes (2);
	// add-dead-op preserves nothing; use-keep recomputes (3) and sees the
	// added op.
	if runs != 3 {
		t.Errorf("op-count ran %d times, want 3", runs)
	}
	if got, want := seen, []int{11, 11, 11, 11, 12}; !slices.Equal(got, want) {
		t.Errorf("passes saw %v, want %v", got, want)
	}
}
