package passes_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/distpass/distpass/check"
	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/models"
	"github.com/distpass/distpass/passes"
)

// TestMoERankOrders: the MoE training step (top-2, f64) on the meshes
// [2] (ep) and [2, 2] (dp, ep), in every order of their ranks (issue
// 37, finding 6). The exchanges' rings list their members ascending
// while the experts follow mesh coordinates, so where some ep group
// holds its members in another order than its ids, partition refuses
// the exchange, naming the op, the group and the coordinates; elsewhere
// check passes (f64, a tolerance of 1e-12) and partition -all equals
// partition -rank R on every rank. Before, [2] with ranks [1, 0]
// partitioned and its loss was off by 1e-3.
func TestMoERankOrders(t *testing.T) {
	checked, refused := 0, 0
	for _, mc := range []struct {
		strategy string
		shape    []int
		dims     []string
	}{{"ep", []int{2}, []string{"ep"}}, {"dp,ep", []int{2, 2}, []string{"dp", "ep"}}} {
		n := 1
		for _, s := range mc.shape {
			n *= s
		}
		ids := make([]int, n)
		for i := range ids {
			ids[i] = i
		}
		for _, ord := range permutations(ids) {
			mesh := &ir.ProcessMesh{Name: "world", Shape: mc.shape, DimNames: mc.dims, ProcessIDs: ord}
			m, err := models.MoETraining(models.MoEConfig{Tokens: 16, TopK: 2, DType: ir.F64}, mc.strategy, mesh, "sgd")
			if err != nil {
				t.Fatal(err)
			}
			where := mc.strategy + " on ranks " + ir.FormatInts(ord)
			axis := len(mc.shape) - 1
			ascending := true
			for _, r := range ord {
				c, _ := mesh.Coord(r)
				g, _ := mesh.Group(axis, r)
				if slices.Index(g, r) != c[axis] {
					ascending = false
				}
			}
			rep, err := check.Run(context.Background(), m, check.Options{Tol: 1e-12})
			if !ascending {
				if err == nil || !strings.Contains(err.Error(), "global_scatter") && !strings.Contains(err.Error(), "alltoall") ||
					!strings.Contains(err.Error(), "holds its members at coordinates") {
					t.Errorf("%s: check: %v, want the exchange refused for its member order", where, err)
				}
				if _, err := passes.PartitionAll(context.Background(), m, nil); err == nil {
					t.Errorf("%s: partitioned, want the exchange refused", where)
				}
				refused++
				continue
			}
			if err != nil {
				t.Fatalf("%s: check: %v", where, err)
			}
			if err := rep.Err(); err != nil || rep.Count("loss") != 1 {
				t.Errorf("%s: check: %v (%d losses compared)", where, err, rep.Count("loss"))
			}
			sameOnEveryRank(t, where, m)
			checked++
		}
	}
	if checked == 0 || refused == 0 {
		t.Errorf("%d orders checked, %d refused: want some of each", checked, refused)
	}
	t.Logf("%d rank orders checked, %d refused", checked, refused)
}
