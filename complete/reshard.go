package complete

import (
	"slices"

	"github.com/distpass/distpass/ir"
)

// reshardDists gives each reshard op of p that has no impl yet its op
// dist, which follows from its vars: a reshard is not an op to complete,
// its two ends are what it converts (verify wants both vars' dists), so
// its op dist is on Out's mesh with each var's own mapping, impl
// reshard:0. Completed by its free rule instead, it would map both ends
// alike on X's mesh and contradict them. An end without a dist (the Go
// API may skip verify) leaves the op to the engine.
func reshardDists(p *ir.Program) {
	for _, b := range p.Blocks {
		if b == nil {
			continue
		}
		for _, op := range b.Ops {
			if op == nil || op.Type != "reshard" || op.Dist != nil && op.Dist.ImplType != "" {
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
			op.Dist = &ir.OpDist{Mesh: out.Dist.Mesh, ImplType: "reshard",
				Inputs:  []ir.ArgDist{{Name: x.Name(), DimsMapping: slices.Clone(x.Dist.DimsMapping)}},
				Outputs: []ir.ArgDist{{Name: out.Name(), DimsMapping: slices.Clone(out.Dist.DimsMapping)}}}
		}
	}
}
