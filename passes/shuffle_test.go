package passes_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/diff"

	"github.com/distpass/distpass/internal/corpus"
	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/passes"
)

// The shuffle test, after the Go compiler's checkFunc shuffles: the ops
// of every corpus module are put in a random order that keeps every
// dependency (corpus.ShuffleOps: def-use from analysis.DefUse, with
// side-effecting ops, sub-block owners and the loss-grad op as
// barriers), and the case's pipeline runs for every rank on the shuffled
// module and on the original. The two results must agree up to the
// order of independent ops.
//
// "Agree" is corpus.Canon: each op with its attrs and dist, its inputs
// named by the op that produced them (by hash, so the whole upstream
// graph counts), the last writer of each serial var, the var table, the
// group table. Lowering hands out temp names and op ids in emission
// order, so a shuffle renames them; Canon names them by what defines
// them instead. It cannot say whether every rank issues its collectives
// in one order (a shuffle moves the collectives the lowering inserts);
// check's shuffle test runs the shuffled programs in the simulator for
// that, and for the numbers. A failing pipeline must fail alike: the
// same error lines, in any order.

// pipelineOut runs text over a clone of m: the result, or the error's
// lines, sorted.
func pipelineOut(t *testing.T, m *ir.Module, text string) (*ir.Module, []string) {
	t.Helper()
	pl, err := passes.DefaultRegistry().Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	c := m.Clone()
	if err := (&passes.Manager{}).Run(context.Background(), pl, c); err != nil {
		lines := strings.Split(err.Error(), "\n")
		slices.Sort(lines)
		return nil, lines
	}
	return c, nil
}

// shufflePipeline runs the passes that rewrite a partitioned program.
const shufflePipeline = "partition{rank=$RANK},collective-dialect{style=pir},dce,canonicalize-names,verify"

func TestShuffledOpsPartitionAlike(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	total := 0
	for _, c := range corpus.All(t) {
		if ir.Verify(c.Module) != nil {
			continue // broken on purpose: its def-use is no guide
		}
		t.Run(c.Name, func(t *testing.T) {
			// The case's pipeline, and one through the other passes
			// that rewrite a partitioned program.
			var texts []string
			for _, r := range c.Ranks {
				texts = append(texts, c.PipelineFor(r))
			}
			texts = append(texts, strings.ReplaceAll(shufflePipeline, "$RANK", fmt.Sprint(c.Ranks[0])))
			want := map[string][]string{}
			for _, text := range texts {
				p, errLines := pipelineOut(t, c.Module, text)
				if p == nil {
					want[text] = append([]string{"error"}, errLines...)
				} else {
					want[text] = corpus.Canon(p, c.Module)
				}
			}
			moved := 0
			for seed := range 3 {
				q := c.Module.Clone()
				n, err := corpus.ShuffleOps(q, rng)
				if err != nil {
					t.Fatal(err)
				}
				moved += n
				if err := ir.Verify(q); err != nil {
					t.Fatalf("shuffle %d broke the IR: %v", seed, err)
				}
				for _, text := range texts {
					p, errLines := pipelineOut(t, q, text)
					got := append([]string{"error"}, errLines...)
					if p != nil {
						got = corpus.Canon(p, c.Module)
					}
					if !slices.Equal(got, want[text]) {
						t.Errorf("shuffle %d (%d ops moved), %s: the result differs beyond op order:\n%s", seed, n, text,
							diff.Diff("original", []byte(strings.Join(want[text], "\n")), "shuffled", []byte(strings.Join(got, "\n"))))
					}
				}
			}
			if strings.HasPrefix(c.Name, "model/") && moved == 0 {
				t.Error("three shuffles moved no op")
			}
			total += moved
		})
	}
	if total < 1000 {
		t.Errorf("the shuffles moved %d ops in all: too few to test anything", total)
	}
}

// TestCanonSeesOrderThatMatters: the canonical form is blind to the
// order of independent ops only. Moving an op before the op that writes
// one of its inputs, in each rank's program of every model, changes it.
func TestCanonSeesOrderThatMatters(t *testing.T) {
	for _, c := range corpus.Models(t) {
		mods, err := passes.PartitionAll(context.Background(), c.Module, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range mods {
			want := corpus.Canon(m, c.Module)
			b := m.Main.Global()
			if !swapDependent(b) {
				t.Fatalf("%s rank %d: no op reads its predecessor's output", c.Name, m.Main.Rank)
			}
			if slices.Equal(corpus.Canon(m, c.Module), want) {
				t.Errorf("%s rank %d: swapping an op with the writer of its input left the canonical form as it was", c.Name, m.Main.Rank)
			}
		}
	}
}

// swapDependent swaps the first op that reads what the op just before it
// writes with that op.
func swapDependent(b *ir.Block) bool {
	for i := 1; i < len(b.Ops); i++ {
		for a := range b.Ops[i-1].OutputNames {
			if b.Ops[i].Reads(a) {
				b.Ops[i-1], b.Ops[i] = b.Ops[i], b.Ops[i-1]
				return true
			}
		}
	}
	return false
}
