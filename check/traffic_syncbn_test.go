package check

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/distpass/distpass/analysis"
	"github.com/distpass/distpass/interop/paddle"
	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/lower"
	"github.com/distpass/distpass/passes"
)

// TestMeasureTrafficSyncBatchNorm: the all-reduces inside the
// sync_batch_norm and its grad of conv-bn-relu (batch 8 over dp = 4)
// are measured once each per step, on every rank, as the static report
// figures them: 2·3/4 × (2·32+1) × 4 B = 390 B. Nothing else changes.
func TestMeasureTrafficSyncBatchNorm(t *testing.T) {
	m := convBNReluDP(t)
	tr, err := MeasureTraffic(context.Background(), m, Options{})
	if err != nil {
		t.Fatal(err)
	}
	mods, err := passes.PartitionAll(context.Background(), m, lower.DefaultRegistry())
	if err != nil {
		t.Fatal(err)
	}
	for _, pm := range mods {
		rep, err := analysis.Get[*analysis.CommReport](analysis.NewCache(pm), analysis.Comm)
		if err != nil {
			t.Fatal(err)
		}
		syncBN := 0
		for _, op := range rep.Ops {
			got, ok := tr.Bytes(rep.Rank, op.ID)
			if !ok || op.DataDependent || got != op.Bytes {
				t.Errorf("rank %d op %d %s: measured %d (ran: %v), static %d", rep.Rank, op.ID, op.Type, got, ok, op.Bytes)
			}
			if analysis.AllReducesInside(op.Type) {
				syncBN++
				if op.Bytes != 390 {
					t.Errorf("rank %d op %d %s: %d B, want 390", rep.Rank, op.ID, op.Type, op.Bytes)
				}
			}
		}
		if syncBN != 2 {
			t.Errorf("rank %d: %d sync_batch_norm ops listed, want 2 (the op and its grad)", rep.Rank, syncBN)
		}
	}
}

// convBNReluDP is Paddle's conv-bn-relu fixture trained by sgd with
// batch 8 over dp = 4 (synchronised batch norm).
func convBNReluDP(t *testing.T) *ir.Module {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "interop", "paddle", "testdata", "lite_conv_bn_relu.pdmodel"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := paddle.Import("lite_conv_bn_relu.pdmodel", data)
	if err != nil {
		t.Fatal(err)
	}
	pl, err := passes.DefaultRegistry().Parse("make-trainable{loss=softmax_with_cross_entropy,shape=8x3x8x8}," +
		"append-backward{loss=loss},annotate-data-parallel{shape=4},append-optimizer{type=sgd}")
	if err != nil {
		t.Fatal(err)
	}
	if err := (&passes.Manager{}).Run(context.Background(), pl, m); err != nil {
		t.Fatal(err)
	}
	return m
}
