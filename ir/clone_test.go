package ir_test

import (
	"bytes"
	"testing"

	"github.com/distpass/distpass/internal/irgen"
	"github.com/distpass/distpass/ir"
)

// TestCloneIsDeep mutates every slice and pointer of a clone in place and
// checks that the original does not change.
func TestCloneIsDeep(t *testing.T) {
	for seed := range uint64(100) {
		m := irgen.Random(seed)
		before := ir.Print(m)
		c := m.Clone()
		if d := ir.Diff(m, c); d != "" {
			t.Fatalf("seed %d: clone differs:\n%s", seed, d)
		}
		scribble(c)
		if after := ir.Print(m); !bytes.Equal(before, after) {
			t.Fatalf("seed %d: mutating the clone changed the original", seed)
		}
		if bytes.Equal(before, ir.Print(c)) && len(before) > 200 {
			t.Fatalf("seed %d: scribble changed nothing; the test is blind", seed)
		}
	}
}

func scribble(m *ir.Module) {
	m.Name += "!"
	for _, pm := range m.Meshes {
		for i := range pm.Shape {
			pm.Shape[i]++
		}
		for i := range pm.DimNames {
			pm.DimNames[i] += "!"
		}
		for i := range pm.ProcessIDs {
			pm.ProcessIDs[i]++
		}
	}
	for i := range m.Groups {
		for j := range m.Groups[i].Ranks {
			m.Groups[i].Ranks[j]++
		}
	}
	for i := range m.ParamGrads {
		m.ParamGrads[i].Grad += "!"
	}
	for _, p := range m.Programs() {
		for _, b := range p.Blocks {
			for _, v := range b.Vars() {
				for i := range v.Type.Shape {
					v.Type.Shape[i]++
				}
				scribbleAttrs(v.Attrs)
				if v.Dist != nil {
					for i := range v.Dist.DimsMapping {
						v.Dist.DimsMapping[i]++
					}
					for i := range v.Dist.Partial {
						v.Dist.Partial[i].Dim++
					}
				}
				v.Flags ^= ir.FlagIsData
			}
			for _, op := range b.Ops {
				for _, ss := range [][]ir.Slot{op.Inputs, op.Outputs} {
					for i := range ss {
						for j := range ss[i].Args {
							ss[i].Args[j] += "!"
						}
					}
				}
				scribbleAttrs(op.Attrs)
				if d := op.Dist; d != nil {
					for _, as := range [][]ir.ArgDist{d.Inputs, d.Outputs} {
						for i := range as {
							for j := range as[i].DimsMapping {
								as[i].DimsMapping[j]++
							}
						}
					}
				}
				op.ID++
			}
		}
	}
}

func scribbleAttrs(as ir.Attrs) {
	for i := range as {
		switch v := as[i].Value.(type) {
		case ir.Ints:
			for j := range v {
				v[j]++
			}
		case ir.Floats:
			for j := range v {
				v[j]++
			}
		case ir.Bools:
			for j := range v {
				v[j] = !v[j]
			}
		case ir.Strings:
			for j := range v {
				v[j] += "!"
			}
		case ir.BlockRefs:
			for j := range v {
				v[j]++
			}
		}
	}
}
