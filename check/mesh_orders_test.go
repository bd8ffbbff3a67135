package check_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/distpass/distpass/check"
	"github.com/distpass/distpass/models"
)

// TestRunOnMeshesOfEveryShape: data and tensor parallelism checked on
// meshes of two and three dims, dp on any mesh dim and of another size
// than mp, with ranks ascending, descending and rotated. A lowering that
// divides by the wrong mesh dim's size, or takes blocks in id order
// rather than coordinate order, fails one of them.
func TestRunOnMeshesOfEveryShape(t *testing.T) {
	meshes := []struct {
		shape []int
		dims  []string
	}{
		{[]int{4, 2}, []string{"dp", "mp"}},
		{[]int{2, 4}, []string{"mp", "dp"}},
		{[]int{2, 2, 2}, []string{"x", "dp", "mp"}},
		{[]int{2, 2, 2}, []string{"mp", "x", "dp"}},
	}
	orders := map[string]func([]int) []int{
		"ascending":  func(r []int) []int { return r },
		"descending": func(r []int) []int { s := slices.Clone(r); slices.Reverse(s); return s },
		"rotated":    func(r []int) []int { return append(slices.Clone(r[1:]), r[0]) },
	}
	for _, mc := range meshes {
		for _, name := range []string{"ascending", "descending", "rotated"} {
			mesh := models.Mesh(mc.shape, mc.dims)
			mesh.ProcessIDs = orders[name](mesh.ProcessIDs)
			t.Run(fmt.Sprintf("%v%v/%s", mc.shape, mc.dims, name), func(t *testing.T) {
				m, err := models.MLPTraining(models.MLPConfig{Layers: 2, Hidden: 8, Batch: 8}, "dp,mp", mesh, "adam")
				if err != nil {
					t.Fatal(err)
				}
				rep, err := check.Run(context.Background(), m, check.Options{Steps: 2})
				if err != nil {
					t.Fatal(err)
				}
				if err := rep.Err(); err != nil {
					t.Fatal(err)
				}
				if rep.Count("param") == 0 || rep.Count("grad") == 0 || rep.Count("state") == 0 || rep.Replicas == 0 {
					t.Fatalf("compared %d params, %d grads, %d state, %d replicas", rep.Count("param"), rep.Count("grad"), rep.Count("state"), rep.Replicas)
				}
			})
		}
	}
}
