package complete_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/distpass/distpass/check"
	"github.com/distpass/distpass/complete"
	"github.com/distpass/distpass/ir"
)

// annotateRandomly strips m (as strip does, keeping nothing) and gives a
// random few of the main program's block-0 dense forward vars (no grad,
// no scalar, no persistable but params) a random mapping
// that divides their dims, each mesh dim on one dim at most.
func annotateRandomly(m *ir.Module, r *rand.Rand) []string {
	strip(m, func(*ir.Var) bool { return false })
	pm := m.Meshes[0]
	var spelled []string
	for _, v := range m.Main.Global().Vars() {
		if !v.Type.IsTensor() || strings.Contains(v.Name(), "@GRAD") || len(v.Type.Shape) == 0 || v.Kind == ir.KindPersist || r.IntN(4) != 0 {
			continue
		}
		dm := make([]int, len(v.Type.Shape))
		for d := range dm {
			dm[d] = -1
		}
		for k, ways := range pm.Shape {
			d := r.IntN(len(dm) + 1)
			if d < len(dm) && dm[d] < 0 && v.Type.Shape[d] > 0 && v.Type.Shape[d]%int64(ways) == 0 {
				dm[d] = k
			}
		}
		v.Dist = &ir.TensorDist{Mesh: pm.Name, DimsMapping: dm}
		spelled = append(spelled, v.Name()+ir.FormatInts(dm))
	}
	return spelled
}

// readsLine matches check-annotations' message for an op that reads or
// gives a var otherwise than its dist.
var readsLine = regexp.MustCompile(`op (\d+) [a-z0-9_]+: (?:reads|writes) (\S+) as `)

// TestRandomAnnotations completes the zoo's modules with random few vars
// annotated (mappings that divide): completion never panics; what it
// cannot do it refuses; no var or op dist it writes splits a dim
// unevenly; every read or write check-annotations refuses is a reshard
// the report lists, and it refuses nothing else in a module that needs
// none; and a module check-annotations accepts checks.
func TestRandomAnnotations(t *testing.T) {
	seeds := 6
	if testing.Short() {
		seeds = 2
	}
	for _, c := range zoo() {
		for seed := range seeds {
			r := rand.New(rand.NewPCG(uint64(seed), 25))
			m, err := c.build()
			if err != nil {
				t.Fatal(err)
			}
			ann := annotateRandomly(m, r)
			what := fmt.Sprintf("%s, seed %d (%s)", c.name, seed, strings.Join(ann, ", "))
			var rep *complete.Report
			func() {
				defer func() {
					if p := recover(); p != nil {
						t.Errorf("%s: panic: %v", what, p)
					}
				}()
				rep, err = complete.Complete(m, complete.Options{})
			}()
			if rep == nil {
				if err != nil {
					t.Logf("%s: refused: %v", what, err)
				}
				continue
			}
			aerr := annotationsErr(m)
			if aerr == nil {
				if strings.HasPrefix(c.name, "moe") {
					continue
				}
				cr, err := check.Run(context.Background(), m, check.Options{})
				if err == nil {
					err = cr.Err()
				}
				if err != nil {
					t.Errorf("%s: check-annotations accepts, check: %v", what, err)
				}
				continue
			}
			for _, line := range strings.Split(aerr.Error(), "\n") {
				if strings.Contains(line, "does not split evenly") {
					t.Errorf("%s: completion split a dim unevenly: %s", what, line)
					continue
				}
				mm := readsLine.FindStringSubmatch(line)
				if mm == nil {
					// What check-annotations says past the reshards (a
					// grad sync it judges without them) waits for them.
					if len(rep.Reshards) == 0 {
						t.Errorf("%s: check-annotations: %s; the report lists no reshard", what, line)
					}
					continue
				}
				if !slices.ContainsFunc(rep.Reshards, func(x complete.Reshard) bool {
					return fmt.Sprint(x.Op) == mm[1] && x.Var == mm[2]
				}) {
					t.Errorf("%s: check-annotations: %s; the report lists no such reshard", what, line)
				}
			}
		}
	}
}
