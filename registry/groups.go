package registry

import (
	"slices"

	"github.com/distpass/distpass/ir"
)

// BuildGroups returns the module-wide process-group table: group 0 is the
// whole world (every rank of every mesh, ascending); then, mesh by mesh,
// axis by axis, one group per slice along the axis, numbered in that
// order, a rank list seen before keeping its first id. It depends only on
// the meshes, so every rank builds the same table and names the same
// group by the same ring id.
func BuildGroups(meshes []*ir.ProcessMesh) []ir.Group {
	var world []int
	for _, pm := range meshes {
		world = append(world, pm.ProcessIDs...)
	}
	slices.Sort(world)
	world = slices.Compact(world)
	groups := []ir.Group{{ID: 0, Ranks: world}}
	seen := map[string]bool{key(world): true}
	for _, pm := range meshes {
		for axis := range pm.Shape {
			for _, g := range pm.Groups(axis) {
				if k := key(g); !seen[k] {
					seen[k] = true
					groups = append(groups, ir.Group{ID: len(groups), Ranks: g})
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
