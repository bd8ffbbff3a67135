package check

import (
	"context"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/distpass/distpass/internal/corpus"
	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/sim"
)

// TestShuffledOpsComputeAlike is the numeric half of the shuffle test
// (passes' TestShuffledOpsPartitionAlike is the structural half). For
// every runnable case of the corpus, with its ops shuffled as
// corpus.ShuffleOps does:
//   - the serial program computes bit for bit what the original does,
//     from the same fed values: every var the step writes has the same
//     dtype, shape and data. This is what makes the shuffle legal; and
//   - the check passes on the shuffled module: every rank's program,
//     partitioned from it, runs in the simulator (so the ranks agree on
//     the order of the collectives the lowering inserted, which the
//     structural half cannot see) and matches the serial program.
func TestShuffledOpsComputeAlike(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	for _, c := range corpus.All(t) {
		if !c.Runnable {
			continue
		}
		t.Run(c.Name, func(t *testing.T) {
			if c.Repeats() {
				t.Skip("under the race detector, the model GPTs stand for this one")
			}
			q := c.Module.Clone()
			if _, err := corpus.ShuffleOps(q, rng); err != nil {
				t.Fatal(err)
			}
			opts := Options{Seed: 1}
			want, err := serialStep(c.Module, opts)
			if err != nil {
				t.Fatal(err)
			}
			got, err := serialStep(q, opts)
			if err != nil {
				t.Fatalf("shuffled: %v", err)
			}
			if !slices.Equal(slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want))) {
				t.Fatalf("the shuffled step wrote other vars")
			}
			for name, w := range want {
				g := got[name]
				if g.DType != w.DType || !slices.Equal(g.Shape, w.Shape) || !slices.Equal(g.Data, w.Data) {
					t.Errorf("%s differs after the shuffled step (%s%v) from after the original (%s%v)", name, g.DType, g.Shape, w.DType, w.Shape)
				}
			}

			rep, err := Run(context.Background(), q, Options{Deadline: 10 * time.Second})
			if err == nil {
				err = rep.Err()
			}
			if err != nil {
				t.Fatalf("check of the shuffled module: %v", err)
			}
		})
	}
}

// serialStep runs m's startup and one step of main from the values
// check feeds, and returns every value.
func serialStep(m *ir.Module, opts Options) (sim.Scope, error) {
	scope, _, err := initialValues(m, opts)
	if err != nil {
		return nil, err
	}
	if err := sim.NewInterp(nil).RunProgram(m.Main, scope); err != nil {
		return nil, err
	}
	return scope, nil
}
