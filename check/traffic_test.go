package check

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/distpass/distpass/analysis"
	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/lower"
	"github.com/distpass/distpass/models"
	"github.com/distpass/distpass/passes"
	"github.com/distpass/distpass/sim"
)

// TestMeasureTrafficMatchesStatic: where the static report has a figure
// (every collective of the MLP), the measured step moves exactly that,
// op by op and rank by rank, startup included.
func TestMeasureTrafficMatchesStatic(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "examples", "mlp_dp_mp.dpir"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := ir.Parse("mlp_dp_mp.dpir", src)
	if err != nil {
		t.Fatal(err)
	}
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
		if len(rep.Ops) != 6 {
			t.Errorf("rank %d: %d collectives, want 6", rep.Rank, len(rep.Ops))
		}
		for _, op := range rep.Ops {
			got, ok := tr.Bytes(rep.Rank, op.ID)
			if !ok || op.DataDependent || got != op.Bytes {
				t.Errorf("rank %d op %d %s: measured %d (ran: %v), static %d", rep.Rank, op.ID, op.Type, got, ok, op.Bytes)
			}
		}
	}
	if _, ok := tr.Bytes(0, 1); ok {
		t.Error("op 1 (matmul_v2) has a measurement")
	}
}

// TestMeasureMoEExchange measures the MoE layer of `distpass example moe
// -batch 4 -experts 4 -topk 2` (ep = 2) and checks its exchanges against
// the routing of the serial run.
//
// x [4, 4] is split along ep by rows: rank r holds tokens 2r and 2r+1.
// w1 and w2 [4, …] are split along ep by expert: rank r holds experts 2r
// and 2r+1. Every token goes to its top-2 experts, so rank 0's forward
// global_scatter (op 16) sends to rank 1 one row of 4 f32 columns (16 B)
// per (token, choice) of tokens 0 and 1 whose expert is 2 or 3; the
// choices on experts 0 and 1 stay on rank 0 and are free (and likewise
// from rank 1 to rank 0). The serial
// top_k gives the choices (check.Run proves the ranks' equal its
// shards). Every other exchange of the step carries the same rows
// between the same two ranks, back or forth: rank 1's global_gather
// (op 20) returns the expert outputs of those rows to rank 0; rank 0's
// global_scatter of their grads (op 40, the backward of op 20) sends
// them to rank 1 again; rank 1's global_gather (op 44, the backward of
// op 16) returns the input grads. With the default seed the serial top-k
// is [3 1 | 2 3 | 0 1 | 2 0] (tokens 0 … 3), so each rank sends 3 rows
// to the other: 3 × 4 × 4 = 48 B per exchange. The count alltoall (op 10) moves
// (n-1)/n of its i64[4] input: 16 B.
func TestMeasureMoEExchange(t *testing.T) {
	m, err := models.MoETraining(models.MoEConfig{Tokens: 4, Model: 4, Experts: 4, TopK: 2}, "ep",
		models.Mesh([]int{2}, []string{"ep"}), "sgd")
	if err != nil {
		t.Fatal(err)
	}
	tr, err := MeasureTraffic(context.Background(), m, Options{})
	if err != nil {
		t.Fatal(err)
	}

	// The serial step, fed as MeasureTraffic feeds it.
	opts := Options{Seed: 1, Kernels: sim.DefaultKernels()}
	scope, _, err := initialValues(m, opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := sim.NewInterp(opts.Kernels).RunProgram(m.Main, scope); err != nil {
		t.Fatal(err)
	}
	topi := scope["topi"]
	if topi == nil || len(topi.Data) != 8 {
		t.Fatalf("topi = %v", topi)
	}
	// The figure below is computed from topi; the doc's 48 B is this
	// top-k's value, checked so that the doc stays true.
	if got := fmt.Sprint(topi.Data); got != "[3 1 2 3 0 1 2 0]" {
		t.Errorf("serial top-k %s, the doc says [3 1 2 3 0 1 2 0]", got)
	}
	// Rows rank `from` routes to the other rank: choices of its tokens
	// (2·from and 2·from+1, entries 4·from … 4·from+3 of topi) for the
	// other rank's experts.
	sent := func(from int) int64 {
		var rows int64
		for _, e := range topi.Data[4*from : 4*from+4] {
			if int(e)/2 != from {
				rows++
			}
		}
		return rows
	}
	for from := range 2 {
		to := 1 - from
		want := sent(from) * 4 * 4 // rows × 4 columns × 4 B
		t.Logf("serial top-k %v: rank %d routes %d of its 4 rows to rank %d: %d B", topi.Data, from, sent(from), to, want)
		for _, c := range []struct {
			rank int
			op   int64
		}{{from, 16}, {to, 20}, {from, 40}, {to, 44}} {
			if got, ok := tr.Bytes(c.rank, c.op); !ok || got != want {
				t.Errorf("rank %d op %d: measured %d B (ran: %v), want %d", c.rank, c.op, got, ok, want)
			}
		}
	}
	for rank := range 2 {
		if got, _ := tr.Bytes(rank, 10); got != 16 {
			t.Errorf("rank %d alltoall of the counts: %d B, want 16", rank, got)
		}
	}
}
