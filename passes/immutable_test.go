package passes_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/diff"

	"github.com/distpass/distpass/internal/corpus"
	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/models"
	"github.com/distpass/distpass/passes"
	"github.com/distpass/distpass/viz"
)

// The partition passes, like every pass, work in place: Manager.Run and
// Partition change the module they are given, by contract, and their
// callers clone first (the serial module is never changed). What those
// entry points owe the serial module is that a run on a clone reaches
// nothing of the original: no memory shared with it, no state kept
// between runs. PartitionAll and PartitionClasses clone themselves, and
// owe more: the module passed in is byte-identical after, and what they
// return shares no memory with it. The tests below hold each entry point
// to its part over the corpus (every golden case's input and the example
// models), printing and hashing the input before and after.

// immutablePipelines are run over every case of the corpus, with R the
// case's first rank, and so is every other pass of the default registry
// alone (allPipelines): a new pass is covered without a line here. Many
// fail on many cases (append-backward on a module that has its backward,
// annotate-data-parallel on an annotated one): the input must survive
// a failure as well.
var immutablePipelines = []string{
	"check-annotations,partition-vars{rank=R},lower-forward,lower-backward,lower-optimizer,relink-block-attrs,remap-params-grads,verify",
	"partition{rank=R},collective-dialect{style=pir},dce,canonicalize-names,verify",
	"repeat{count=2}(dce,canonicalize-names),verify",
	"append-backward{loss=loss}",
	"append-optimizer{type=adam}",
	"annotate-data-parallel{shape=2}",
}

// forwardOnly is an MLP with no backward, no optimizer and no
// annotations, for the pipeline that builds a training program.
func forwardOnly() corpus.Case {
	return corpus.Case{
		Name:     "model/mlp-forward",
		Module:   models.MLP(models.MLPConfig{Layers: 2, Hidden: 8, Batch: 4, DType: ir.F64}),
		Pipeline: "append-backward{loss=loss},annotate-data-parallel{shape=2},append-optimizer{type=momentum,lr=0.1},check-annotations,partition{rank=$RANK},verify",
		Ranks:    []int{1},
	}
}

// instruments returns one of each instrument that observes a run without
// steering it, writing what it reports nowhere (or under dir). Not
// VerifyEach, which steers: it stops a run at the pass that breaks the
// IR, where a plain run goes on to fail later (or not at all).
func instruments(dir string) []passes.Instrument {
	return []passes.Instrument{
		&passes.Reproducer{Path: filepath.Join(dir, "repro.dpir")},
		&passes.PrintIR{W: io.Discard, Before: []string{"all"}, After: []string{"all"}},
		&passes.PrintChanged{W: io.Discard},
		&passes.Counters{W: io.Discard},
		&passes.TimePasses{W: io.Discard},
		// Without Render: the drawings are viz's, whose own test holds
		// them to the same rule; writing them here costs seconds.
		&passes.DumpDir{Dir: filepath.Join(dir, "dump")},
		&viz.Recorder{Name: "test"},
	}
}

// TestPipelinesLeaveTheInputAlone runs each case's own pipeline (for each
// of its ranks) and the immutablePipelines through the manager on a clone
// of the case's module, and checks that the original prints and hashes as
// before. Some runs are repeated under every observing instrument, which
// must leave the original alone too and change nothing of the result:
// same text, same error.
func TestPipelinesLeaveTheInputAlone(t *testing.T) {
	reg := passes.DefaultRegistry()
	pipelines := allPipelines(t, reg, immutablePipelines)
	dir := t.TempDir()
	for _, c := range append(corpus.All(t), forwardOnly()) {
		t.Run(c.Name, func(t *testing.T) {
			snap := corpus.Take(c.Module)
			// The case's pipeline for its first rank and the first of
			// immutablePipelines run under the instruments too: the
			// others add passes, not instruments' paths, at their cost.
			type job struct {
				text    string
				observe bool
			}
			var jobs []job
			for i, r := range c.Ranks {
				jobs = append(jobs, job{c.PipelineFor(r), i == 0})
			}
			for i, p := range pipelines {
				jobs = append(jobs, job{strings.ReplaceAll(p, "rank=R", "rank="+strconv.Itoa(c.Ranks[0])), i == 0})
			}
			for _, j := range jobs {
				text := j.text
				pl, err := reg.Parse(text)
				if err != nil {
					t.Fatal(err)
				}
				plain := c.Module.Clone()
				errPlain := (&passes.Manager{}).Run(context.Background(), pl, plain)
				if !snap.Unchanged(t, c.Module, text) {
					return
				}
				if !j.observe {
					continue
				}
				observed := c.Module.Clone()
				errObserved := (&passes.Manager{Instruments: instruments(dir)}).Run(context.Background(), pl, observed)
				if !snap.Unchanged(t, c.Module, text+" under instruments") {
					return
				}
				// The reproducer names itself at the end of the error.
				repro := " (reproducer: " + filepath.Join(dir, "repro.dpir") + ")"
				if fmt.Sprint(errPlain) != strings.TrimSuffix(fmt.Sprint(errObserved), repro) {
					t.Errorf("%s: the instruments changed the outcome:\nplain:    %v\nobserved: %v", text, errPlain, errObserved)
				}
				if a, b := ir.Print(plain), ir.Print(observed); errPlain == nil && !bytes.Equal(a, b) {
					t.Errorf("%s: the instruments changed the result:\n%s", text, diff.Diff("plain", a, "observed", b))
				}
			}
		})
	}
}

// allPipelines returns pipelines and, for every pass of reg that none of
// them names, a pipeline of that pass alone with its defaults: a rank
// option gets R, a nested pass the sub-pipeline verify.
func allPipelines(t *testing.T, reg *passes.Registry, pipelines []string) []string {
	t.Helper()
	covered := map[string]bool{}
	var cover func(pl *passes.Pipeline)
	cover = func(pl *passes.Pipeline) {
		for _, st := range pl.Steps {
			covered[st.Pass.Name] = true
			if st.Sub != nil {
				cover(st.Sub)
			}
		}
	}
	for _, text := range pipelines {
		pl, err := reg.Parse(strings.ReplaceAll(text, "rank=R", "rank=0"))
		if err != nil {
			t.Fatal(err)
		}
		cover(pl)
	}
	out := slices.Clone(pipelines)
	for _, p := range reg.Passes() {
		if covered[p.Name] {
			continue
		}
		text := p.Name
		for _, o := range p.Options {
			if o.Name == "rank" {
				text += "{rank=R}"
			}
		}
		if p.Nested {
			text += "(verify)"
		}
		out = append(out, text)
	}
	return out
}

// TestPartitionEntryPointsLeaveTheInputAlone: Partition on a clone, for
// each rank; PartitionAll; PartitionClasses and each rank's module built
// from its classes. After each the input prints and hashes as before; and
// after overwriting every byte of every module they returned in place
// (corpus.Scribble), it still does: they share no memory with it. A
// rank's module from the classes shares none with its class either: a
// second Module(rank) after scribbling the first gives the first's text.
func TestPartitionEntryPointsLeaveTheInputAlone(t *testing.T) {
	ctx := context.Background()
	for _, c := range corpus.All(t) {
		t.Run(c.Name, func(t *testing.T) {
			m := c.Module
			snap := corpus.Take(m)
			for _, r := range c.Ranks {
				cl := m.Clone()
				err := passes.Partition(cl, nil, r)
				snap.Unchanged(t, m, fmt.Sprintf("Partition(clone, rank %d)", r))
				if err == nil {
					corpus.Scribble(cl)
					snap.Unchanged(t, m, fmt.Sprintf("scribbling Partition(clone, rank %d)", r))
				}
			}

			mods, errAll := passes.PartitionAll(ctx, m, nil)
			snap.Unchanged(t, m, "PartitionAll")
			for _, pm := range mods {
				corpus.Scribble(pm)
			}
			snap.Unchanged(t, m, "scribbling PartitionAll's modules")

			cs, errClasses := passes.PartitionClasses(ctx, m, nil, nil)
			snap.Unchanged(t, m, "PartitionClasses")
			if (errAll == nil) != (errClasses == nil) {
				t.Fatalf("PartitionAll: %v, but PartitionClasses: %v", errAll, errClasses)
			}
			if errClasses != nil {
				return
			}
			for _, r := range cs.Ranks() {
				first, err := cs.Module(r)
				if err != nil {
					t.Fatal(err)
				}
				text := ir.Print(first)
				corpus.Scribble(first)
				snap.Unchanged(t, m, fmt.Sprintf("scribbling PartitionClasses' module of rank %d", r))
				again, err := cs.Module(r)
				if err != nil {
					t.Fatal(err)
				}
				corpus.Snapshot{Text: text, Hash: ir.Hash(again)}.Unchanged(t, again,
					fmt.Sprintf("scribbling the first Module(%d) of the classes", r))
			}
			for _, cl := range cs.Classes {
				for _, pm := range append([]*ir.Module{cl.Module}, cl.Plain...) {
					if pm != nil {
						corpus.Scribble(pm)
					}
				}
			}
			snap.Unchanged(t, m, "scribbling PartitionClasses' modules")
		})
	}
}
