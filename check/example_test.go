package check_test

import (
	"context"
	"fmt"

	"github.com/distpass/distpass/check"
	"github.com/distpass/distpass/models"
)

// Prove a partition right: an MLP on a 2x2 dp×mp mesh, three adam steps,
// serial against SPMD.
func ExampleRun() {
	m, err := models.MLPTraining(models.MLPConfig{Layers: 2, Hidden: 8, Batch: 4}, "dp,mp",
		models.Mesh([]int{2, 2}, []string{"dp", "mp"}), "adam")
	if err != nil {
		fmt.Println(err)
		return
	}
	rep, err := check.Run(context.Background(), m, check.Options{Steps: 3})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(len(rep.Ranks), "ranks:", rep.Count("param"), "params,", rep.Count("state"), "other persistables,",
		rep.Count("startup"), "startup values,", rep.Replicas, "replica comparisons; mismatch:", rep.Err())
	// Output:
	// 4 ranks: 4 params, 17 other persistables, 21 startup values, 261 replica comparisons; mismatch: <nil>
}
