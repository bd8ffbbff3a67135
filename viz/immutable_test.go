package viz_test

import (
	"context"
	"fmt"
	"io"
	"os/exec"
	"testing"

	"github.com/distpass/distpass/internal/corpus"
	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/passes"
	"github.com/distpass/distpass/viz"
)

// fakeDot finds a "dot" that reads its input and writes nothing, so that
// the explorer builds every drawing's DOT without paying Graphviz.
func fakeDot(string) (string, error) { return exec.LookPath("true") }

// TestDrawingLeavesTheModuleAlone: DOT and ModuleDOT, capped or not, of
// every case of the corpus and of each rank's partitioned module, leave
// the module printing and hashing as before.
func TestDrawingLeavesTheModuleAlone(t *testing.T) {
	for _, c := range corpus.All(t) {
		mods := []*ir.Module{c.Module}
		parts, err := passes.PartitionAll(context.Background(), c.Module, nil)
		if err == nil {
			mods = append(mods, parts...)
		}
		for i, m := range mods {
			snap := corpus.Take(m)
			for _, opts := range []viz.Options{{}, {MaxNodes: 30}, {Blocks: []int{0}}} {
				for _, p := range m.Programs() {
					viz.DOT(p, opts)
				}
				viz.ModuleDOT(m, opts)
				snap.Unchanged(t, m, fmt.Sprintf("%s module %d: DOT %+v", c.Name, i, opts))
			}
		}
	}
}

// TestExplorerLeavesTheModulesAlone records each case's pipeline for its
// first rank on a clone: the input the recorder keeps is the module as
// it was, and every version keeps its hash after the run goes on and
// after the run's module is overwritten in place (corpus.Scribble), so
// the recorder's copies share no memory with the module. Writing the
// page changes no version, nor the serial module.
func TestExplorerLeavesTheModulesAlone(t *testing.T) {
	reg := passes.DefaultRegistry()
	for _, c := range corpus.All(t) {
		t.Run(c.Name, func(t *testing.T) {
			snap := corpus.Take(c.Module)
			run := c.Module.Clone()
			tr, _ := record(t, reg, "rank", c.PipelineFor(c.Ranks[0]), run)
			if len(tr.Versions) == 0 {
				t.Fatal("nothing recorded")
			}
			snap.Unchanged(t, tr.Versions[0].Module, "the recorder's input version")
			corpus.Scribble(run)
			for _, v := range tr.Versions {
				if h := ir.Hash(v.Module); h != v.Hash {
					t.Errorf("version %s: hash %016x, recorded %016x: it shares memory with the module of the run", v.Label, h, v.Hash)
				}
			}
			snaps := make([]corpus.Snapshot, len(tr.Versions))
			for i, v := range tr.Versions {
				snaps[i] = corpus.Take(v.Module)
			}
			if err := viz.WriteExplorer(io.Discard, []*viz.Trace{tr}, viz.ExplorerOptions{LookPath: fakeDot, MaxNodes: 30}); err != nil {
				t.Fatal(err)
			}
			for i, v := range tr.Versions {
				snaps[i].Unchanged(t, v.Module, "WriteExplorer, version "+v.Label)
			}
			snap.Unchanged(t, c.Module, "recording a clone's run")
		})
	}
}
