package complete_test

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/distpass/distpass/check"
	"github.com/distpass/distpass/complete"
	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/models"
)

// TestAcceptedImpliesRight: random annotations of the data vars and a
// third of the params of the MLP and the GPT on a 2×2 mesh (each dim
// split along a random mesh dim or not, where it divides), completed:
// whatever
// check-annotations then accepts, check proves; whatever it refuses is
// a reshard the report lists. Completion never fails on them.
func TestAcceptedImpliesRight(t *testing.T) {
	n := 24
	if testing.Short() || raceEnabled {
		n = 6
	}
	mesh := models.Mesh([]int{2, 2}, []string{"dp", "mp"})
	build := []func() (*ir.Module, error){
		func() (*ir.Module, error) {
			return models.MLPTraining(models.MLPConfig{Layers: 2, Hidden: 8, Batch: 4, DType: ir.F64}, "dp,mp", mesh, "sgd")
		},
		func() (*ir.Module, error) {
			cfg := models.TinyGPT()
			cfg.Layers, cfg.Hidden, cfg.Vocab, cfg.Seq, cfg.DType = 1, 8, 16, 4, ir.F64
			return models.GPTTraining(cfg, "dp,mp", mesh, "sgd")
		},
	}
	rng := rand.New(rand.NewPCG(25, 1))
	accepted, refused := 0, 0
	for i := range n {
		m, err := build[i%len(build)]()
		if err != nil {
			t.Fatal(err)
		}
		strip(m, nil)
		for _, v := range m.Main.Global().Vars() {
			if v.Dist == nil {
				continue
			}
			if v.Kind == ir.KindParam && rng.IntN(3) > 0 {
				v.Dist = nil // two params in three left to completion
				continue
			}
			dm := make([]int, len(v.Type.Shape))
			for d := range dm {
				dm[d] = -1
			}
			for k := range 2 {
				d := rng.IntN(len(dm) + 1)
				if d < len(dm) && dm[d] < 0 && v.Type.Shape[d]%2 == 0 && rng.IntN(2) == 0 {
					dm[d] = k
				}
			}
			v.Dist.DimsMapping = dm
		}
		for _, v := range m.Startup.Global().Vars() {
			v.Dist = nil
		}
		rep, err := complete.Complete(m, complete.Options{})
		if err != nil {
			t.Errorf("case %d: %v", i, err)
			continue
		}
		if annotationsErr(m) != nil {
			refused++
			if testing.Verbose() {
				t.Logf("case %d: %d reshards, first %+v", i, len(rep.Reshards), rep.Reshards[0])
			}
			if len(rep.Reshards) == 0 {
				t.Errorf("case %d: check-annotations refuses it, but the report lists no reshard: %v", i, annotationsErr(m))
			}
			continue
		}
		accepted++
		cr, err := check.Run(context.Background(), m, check.Options{})
		if err != nil {
			t.Errorf("case %d: %v", i, err)
			continue
		}
		if err := cr.Err(); err != nil {
			t.Errorf("case %d: accepted but wrong: %v\n%s", i, err, ir.Print(m))
		}
	}
	t.Logf("%d accepted and proven, %d needing reshards", accepted, refused)
	if accepted == 0 {
		t.Error("no case was accepted")
	}
}
