package passes_test

import (
	"runtime"
	"testing"

	"github.com/distpass/distpass/internal/irgen"
	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/models"
	"github.com/distpass/distpass/passes"
)

// Modules large enough for Partition's parallel steps (the index, the
// local shapes, the vars and the startup shapes) partition to the same
// bytes on one core as on four.
func TestPartitionSameOnOneAndManyCores(t *testing.T) {
	gpt, err := models.SyntheticGPTMesh(40000, 1, 2, 4)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(gpt.Startup.Global().Ops); n < 1<<14 {
		t.Fatalf("the GPT's startup has %d ops: too few for the parallel step", n)
	}
	for name, m := range map[string]*ir.Module{"mlp": irgen.MegatronMLP(40000, 2, 4), "gpt": gpt} {
		if n := m.Main.Global().NumVars(); n < 1<<14 {
			t.Fatalf("%s: %d vars: too few for the parallel steps", name, n)
		}
		partition := func(procs int) string {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
			c := m.Clone()
			if err := passes.Partition(c, nil, 5); err != nil {
				t.Fatal(err)
			}
			return string(ir.Print(c))
		}
		one := partition(1)
		if many := partition(4); many != one {
			t.Errorf("%s: rank 5 partitioned on four cores differs from the same on one", name)
		}
	}
}
