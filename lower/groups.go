package lower

import (
	"slices"

	"github.com/distpass/distpass/ir"
)

// BuildGroups returns the module-wide process-group table: group 0 is the
// whole world (every rank of every mesh, ascending); then, mesh by mesh,
// axis by axis, one group per slice along the axis, numbered in that
// order, a rank list seen before keeping its first id; last, for every
// two meshes of one shape (in declaration order), the pair of ranks at
// each coordinate, the group of a reshard's point-to-point move between
// them. It depends only on the meshes, so every rank builds the same
// table and names the same group by the same ring id.
func BuildGroups(meshes []*ir.ProcessMesh) []ir.Group {
	var world []int
	for _, pm := range meshes {
		world = append(world, pm.ProcessIDs...)
	}
	slices.Sort(world)
	world = slices.Compact(world)
	groups := []ir.Group{{ID: 0, Ranks: world}}
	seen := map[string]bool{key(world): true}
	add := func(g []int) {
		if k := key(g); !seen[k] {
			seen[k] = true
			groups = append(groups, ir.Group{ID: len(groups), Ranks: g})
		}
	}
	for _, pm := range meshes {
		for axis := range pm.Shape {
			for _, g := range pm.Groups(axis) {
				add(g)
			}
		}
	}
	for i, a := range meshes {
		for _, b := range meshes[i+1:] {
			if !slices.Equal(a.Shape, b.Shape) || len(a.ProcessIDs) != len(b.ProcessIDs) {
				continue
			}
			for p, x := range a.ProcessIDs {
				if y := b.ProcessIDs[p]; x != y {
					add([]int{min(x, y), max(x, y)})
				}
			}
		}
	}
	return groups
}

func key(ranks []int) string {
	b := make([]byte, 0, 4*len(ranks))
	for _, r := range ranks {
		b = append(b, byte(r>>24), byte(r>>16), byte(r>>8), byte(r))
	}
	return string(b)
}
