package ir_test

import (
	"bytes"
	"testing"

	"github.com/distpass/distpass/internal/irgen"
	"github.com/distpass/distpass/ir"
)

// TestHashFollowsPrint: over random modules and small edits, two modules
// hash equal exactly when they print equal.
func TestHashFollowsPrint(t *testing.T) {
	var prev *ir.Module
	for seed := range uint64(300) {
		m := irgen.Random(seed)
		if ir.Hash(m) != ir.Hash(m.Clone()) {
			t.Fatalf("seed %d: clone hashes differently", seed)
		}
		parsed, err := ir.Parse("h.dpir", ir.Print(m))
		if err != nil {
			t.Fatal(err)
		}
		if ir.Hash(m) != ir.Hash(parsed) {
			t.Fatalf("seed %d: re-parsed module hashes differently", seed)
		}
		if prev != nil && ir.Hash(m) == ir.Hash(prev) && !bytes.Equal(ir.Print(m), ir.Print(prev)) {
			t.Fatalf("seed %d: different modules hash equal", seed)
		}
		prev = m
	}
	m := irgen.Synthetic(50)
	base := ir.Hash(m)
	edits := []func(m *ir.Module){
		func(m *ir.Module) { m.Main.Global().Ops[3].Attrs.Set("axis", ir.Int(0)) },
		func(m *ir.Module) { m.Main.Global().Ops[3].Role = ir.RoleBackward },
		func(m *ir.Module) { m.Main.Global().Ops[3].Inputs[0].Args[0] = "x" },
		func(m *ir.Module) { m.Main.Global().Vars()[2].Dist.DimsMapping[0]++ },
		func(m *ir.Module) { m.Main.Global().Vars()[2].Type.Shape[0]++ },
		func(m *ir.Module) { m.Main.Global().Ops = m.Main.Global().Ops[1:] },
		func(m *ir.Module) { m.Startup = nil },
		func(m *ir.Module) { m.ParamGrads = m.ParamGrads[1:] },
		func(m *ir.Module) { m.Groups = append(m.Groups, ir.Group{ID: 1, Ranks: []int{0, 1}}) },
		func(m *ir.Module) { m.Main.Global().Ops[0].Dist.ImplIndex = 2 },
	}
	for i, edit := range edits {
		c := m.Clone()
		edit(c)
		if ir.Hash(c) == base {
			t.Errorf("edit %d does not change the hash", i)
		}
	}
}

func BenchmarkHash(b *testing.B) {
	for _, n := range benchSizes {
		m := irgen.Synthetic(n)
		b.Run("ops="+itoa(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				ir.Hash(m)
			}
		})
	}
}
