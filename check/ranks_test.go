package check_test

import (
	"context"
	"testing"

	"github.com/distpass/distpass/check"
	"github.com/distpass/distpass/models"
)

// A mesh of more ranks than check simulates is refused up front, by Run
// and by MeasureTraffic, before anything is partitioned.
func TestMaxRanks(t *testing.T) {
	n := check.MaxRanks + 1
	m, err := models.MLPTraining(models.MLPConfig{Layers: 1, Hidden: 4, Batch: n}, "dp", models.Mesh([]int{n}, []string{"dp"}), "sgd")
	if err != nil {
		t.Fatal(err)
	}
	const want = "the module's meshes have 4097 ranks: check simulates at most check.MaxRanks (4096)"
	if _, err := check.Run(context.Background(), m, check.Options{}); err == nil || err.Error() != want {
		t.Errorf("Run: %v\nwant %s", err, want)
	}
	if _, err := check.MeasureTraffic(context.Background(), m, check.Options{}); err == nil || err.Error() != want {
		t.Errorf("MeasureTraffic: %v\nwant %s", err, want)
	}
}
