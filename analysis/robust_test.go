package analysis_test

import (
	"testing"

	"github.com/distpass/distpass/analysis"
	"github.com/distpass/distpass/internal/irgen"
	"github.com/distpass/distpass/ir"
)

// TestAnalysesOnMalformedModules runs every analysis on random modules
// that break rules of every kind (unresolved names, repeated ids, dists
// that do not fit, odd names) and on degenerate ones: none may panic.
// LocalShapes, Comm and Memory may fail; the others always succeed.
func TestAnalysesOnMalformedModules(t *testing.T) {
	mods := []*ir.Module{
		nil,
		{},
		{Main: &ir.Program{Name: "main"}},
		{Main: &ir.Program{Name: "main", Blocks: []*ir.Block{nil, {Index: 1, Parent: 1}}}},
		{Main: &ir.Program{Name: "main", Blocks: []*ir.Block{{Index: 0, Parent: -1, Ops: []*ir.Op{nil, {ID: -4}}}}}},
		{Meshes: []*ir.ProcessMesh{nil, {Name: "m", Shape: []int{0, -2}}}, Main: ir.NewProgram("main")},
	}
	for seed := range uint64(300) {
		mods = append(mods, irgen.Random(seed))
	}
	for i, m := range mods {
		c := analysis.NewCache(m)
		for _, a := range []*analysis.Analyzer{analysis.Index, analysis.DefUse, analysis.Roles,
			analysis.GradMaps, analysis.Annotations} {
			if _, err := c.Get(a); err != nil {
				t.Errorf("module %d: %v", i, err)
			}
		}
		for rank := range 3 {
			c.Get(analysis.LocalShapes(rank))
		}
		c.Get(analysis.Comm)
		c.Get(analysis.Memory)
		if m != nil && m.Main != nil {
			// As partitioned: the reports run past their first check.
			pm := m.Clone()
			pm.Main.Rank = 0
			pc := analysis.NewCache(pm)
			pc.Get(analysis.Comm)
			pc.Get(analysis.Memory)
		}
		if m == nil || m.Main == nil {
			continue
		}
		du, _ := analysis.Get[*analysis.DefUseInfo](c, analysis.DefUse)
		g, _ := analysis.Get[*analysis.GradInfo](c, analysis.GradMaps)
		for _, p := range m.Programs() {
			for bi, b := range p.Blocks {
				if b == nil {
					continue
				}
				for _, op := range b.Ops {
					du.Users(op)
				}
				for _, v := range b.Vars() {
					du.Uses(p, bi, v.Name())
					g.VarOfGrad(p, bi, v.Name())
					g.GradsOfVar(p, bi, v.Name())
				}
			}
		}
	}
}
