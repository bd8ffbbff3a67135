package complete

import (
	"slices"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/ops"
)

// reshardDists gives each reshard op of p that has no impl yet its op
// dist, which follows from its vars: a reshard is not an op to complete,
// its two ends are what it converts (verify wants both vars' dists), so
// its op dist is on Out's mesh with each var's own mapping (X's where
// Out's mesh has the mesh dims it names), impl reshard:0. Completed by its free rule instead, it would map both ends
// alike on X's mesh and contradict them. An end without a dist (the Go
// API may skip verify) leaves the op to the engine.
func reshardDists(m *ir.Module) {
	p := m.Main
	for _, b := range p.Blocks {
		if b == nil {
			continue
		}
		for _, op := range b.Ops {
			if op == nil || op.Type != ops.ReshardType || op.Dist != nil && op.Dist.ImplType != "" {
				continue
			}
			xs, outs := op.Input("X"), op.Output("Out")
			if len(xs) != 1 || len(outs) != 1 {
				continue
			}
			x, out := p.LookupVar(b, xs[0]), p.LookupVar(b, outs[0])
			if x == nil || out == nil || x.Dist == nil || out.Dist == nil {
				continue
			}
			op.Dist = &ir.OpDist{Mesh: out.Dist.Mesh, ImplType: ops.ReshardType,
				Outputs: []ir.ArgDist{{Name: out.Name(), DimsMapping: slices.Clone(out.Dist.DimsMapping)}}}
			if fitsMesh(x.Dist.DimsMapping, m.Mesh(out.Dist.Mesh)) {
				// X's mapping is on its own mesh: across to a mesh of fewer
				// dims the op dist (Out's mesh) cannot hold it, and its var's
				// dist says it.
				op.Dist.Inputs = []ir.ArgDist{{Name: x.Name(), DimsMapping: slices.Clone(x.Dist.DimsMapping)}}
			}
		}
	}
}

// fitsMesh reports whether every mesh dim m names is one of pm's.
func fitsMesh(m []int, pm *ir.ProcessMesh) bool {
	if pm == nil {
		return false
	}
	for _, k := range m {
		if k >= len(pm.Shape) {
			return false
		}
	}
	return true
}
