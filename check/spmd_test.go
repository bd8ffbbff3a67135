package check_test

import (
	"context"
	"testing"

	"github.com/distpass/distpass/check"
	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/lower"
	"github.com/distpass/distpass/passes"
)

// TestSPMDCases: every spmd_* golden case (the rule-based impl spmd:0,
// and the row-parallel matmul with a partial Out) partitions into
// programs that check proves equal to the serial one; the training cases
// compare every param grad, the rule-based ones partial [d:avg].
func TestSPMDCases(t *testing.T) {
	for _, tc := range []struct {
		name        string
		grads       int
		partialGrad []string // grads whose dist is partial (compared reduced)
	}{
		{"spmd_matmul_2d", 0, nil},
		{"spmd_ops", 0, nil},
		{"spmd_row_partial", 0, nil},
		{"spmd_train_dpmp", 2, []string{"w1@GRAD"}},
		{"spmd_train_dpsp", 1, []string{"w@GRAD"}},
		{"spmd_train_ln", 3, []string{"p@GRAD", "g@GRAD", "be@GRAD"}},
		{"spmd_square_2d", 0, nil},
		{"spmd_row_partial_square", 0, nil},
		{"spmd_train_seq", 1, []string{"v@GRAD"}},
		{"spmd_fill", 0, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := goldenInput(t, tc.name)
			rep, err := check.Run(context.Background(), m, check.Options{Steps: 1})
			if err != nil {
				t.Fatal(err)
			}
			if err := rep.Err(); err != nil {
				t.Fatal(err)
			}
			if got := rep.Count("grad"); got != tc.grads {
				t.Errorf("%d grads compared, want %d", got, tc.grads)
			}
			for _, g := range tc.partialGrad {
				v := m.Main.Global().Var(g)
				if v == nil || v.Dist == nil || len(v.Dist.Partial) == 0 || v.Dist.Partial[0].Reduce != ir.ReduceAvg {
					t.Errorf("%s is not partial avg in the case: %v", g, v)
				}
			}
		})
	}
}

// TestSPMDGradIsAnAverage: the ranks' grads of a rule-based matmul are
// their own losses' grads, whose serial value is their average over dp:
// the same programs with w1@GRAD declared a sum over dp (what the grad
// rule alone says) fail the check, by twice the grad.
func TestSPMDGradIsAnAverage(t *testing.T) {
	m := goldenInput(t, "spmd_train_dpmp")
	mods, err := passes.PartitionAll(context.Background(), m, lower.DefaultRegistry())
	if err != nil {
		t.Fatal(err)
	}
	ranks := passes.Ranks(m)
	rep, err := check.RunParts(context.Background(), m, ranks, mods, check.Options{})
	if err != nil || rep.Err() != nil {
		t.Fatalf("as partitioned: %v %v", err, rep.Err())
	}
	for _, pm := range mods {
		v := pm.Main.Global().Var("w1@GRAD")
		v.Dist.Partial = []ir.Partial{{Dim: 0, Reduce: ir.ReduceSum}}
	}
	// Placement is the serial module's: the parts' partial state is not
	// taken at its word.
	_, err = check.RunParts(context.Background(), m, ranks, mods, check.Options{})
	if want := "rank 0: main var w1@GRAD is @w[-1, 1] partial [0], the serial module has it @w[-1, 1] partial [0:avg]"; err == nil || err.Error() != want {
		t.Errorf("w1@GRAD declared a sum over dp: %v, want %q", err, want)
	}
}
