package passes_test

import (
	"bytes"
	"testing"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/passes"
	"github.com/distpass/distpass/registry"
)

// partitionStepByStep runs the partition passes one by one through their
// exported entry points, as a pipeline of the single passes does: the
// lowering looks every name up, without the annotation check's index.
func partitionStepByStep(m *ir.Module, reg *registry.Registry, rank int) error {
	if err := passes.PartitionVars(m, rank); err != nil {
		return err
	}
	for _, ph := range []passes.LowerPhase{passes.LowerForward, passes.LowerBackward, passes.LowerOptimizer} {
		if err := passes.Lower(m, reg, ph); err != nil {
			return err
		}
	}
	if err := passes.RelinkBlockAttrs(m); err != nil {
		return err
	}
	return passes.RemapParamsGrads(m)
}

// Partition starts each op's lowering with the vars its index resolved
// (registry.Lowering.Bind); the lowering that looks every name up gives the
// same bytes, for every rank of every golden case and example model.
func TestPartitionIndexedArgsChangeNothing(t *testing.T) {
	compared := 0
	for name, m := range classCases(t) {
		for _, r := range passes.Ranks(m) {
			got := m.Clone()
			if err := passes.Partition(got, nil, r); err != nil {
				continue // the annotation check, which the steps skip, refused it
			}
			want := m.Clone()
			if err := partitionStepByStep(want, nil, r); err != nil {
				t.Fatalf("%s rank %d: Partition succeeds, the steps fail: %v", name, r, err)
			}
			if g, w := ir.Print(got), ir.Print(want); !bytes.Equal(g, w) {
				t.Errorf("%s rank %d: Partition differs from the step-by-step lowering:\n%s\nwant\n%s", name, r, g, w)
			}
			compared++
		}
	}
	if compared < 40 {
		t.Errorf("only %d ranks compared", compared)
	}
}

// Vars removed, or replaced by another of the same name, while the
// lowering runs: the ops lowered after it see the block as it is, as the
// step-by-step lowering does. Replaced, z was a parameter when indexed
// and is a plain var once op 1 is lowered, so op 2's lowering must not
// broadcast it at startup; removed, w was the block's last var, past the
// end of its var list once op 1 is lowered.
func TestPartitionIndexedArgsAfterVarsChange(t *testing.T) {
	src := `mesh m shape [2] dims [dp] ranks [0, 1]
program main {
  block 0 {
    var x : f32[4, 8] @m[-1, -1]
    var y : f32[4, 8] @m[-1, -1]
    param z : f32[4, 8] @m[-1, -1] {trainable}
    var w : f32[4, 8] @m[-1, -1]
    op 1 relu(X: x) -> (Out: y)
         dist @m impl default:1 [x: [-1, -1] -> y: [-1, -1]]
    op 2 relu(X: z) -> (Out: w)
         dist @m impl default:0 [z: [-1, -1] -> w: [-1, -1]]
  }
}
`
	m, err := ir.Parse("t.dpir", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	for name, change := range map[string]func(b *ir.Block) error{
		"z replaced": func(b *ir.Block) error {
			old := b.Var("z")
			if !b.RemoveVar("z") {
				t.Fatal("no var z to remove")
			}
			return b.AddVar(declarable(ir.Var{Type: old.Type, Dist: old.Dist}, "z"))
		},
		"w removed": func(b *ir.Block) error {
			if !b.RemoveVar("w") {
				t.Fatal("no var w to remove")
			}
			return nil
		},
	} {
		t.Run(name, func(t *testing.T) {
			reg := registry.DefaultRegistry()
			base := registry.DefaultImpl()
			reg.Register(registry.DefaultType, &registry.Impl{
				Name: "changer", Compatible: base.Compatible, Backward: base.Backward,
				Forward: func(ctx *registry.Lowering, op *ir.Op) error {
					if err := change(ctx.Block); err != nil {
						return err
					}
					return base.Forward(ctx, op)
				},
			})
			got := m.Clone()
			if err := passes.Partition(got, reg, 0); err != nil {
				t.Fatal(err)
			}
			want := m.Clone()
			if err := partitionStepByStep(want, reg, 0); err != nil {
				t.Fatal(err)
			}
			g := ir.Print(got)
			if w := ir.Print(want); !bytes.Equal(g, w) {
				t.Errorf("Partition differs from the step-by-step lowering:\n%s\nwant\n%s", g, w)
			}
			if want := name == "w removed"; bytes.Contains(g, []byte("broadcast z")) != want {
				t.Errorf("broadcast of z: %v, want %v:\n%s", !want, want, g)
			}
		})
	}
}

// declarable is v named name, for a block to declare.
func declarable(v ir.Var, name string) *ir.Var {
	v = v.Named(name)
	return &v
}
