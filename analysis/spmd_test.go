package analysis_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/distpass/distpass/ir"
)

// goldenInput returns the input module of golden case name.
func goldenInput(t *testing.T, name string) *ir.Module {
	t.Helper()
	ar, err := txtar.ParseFile(filepath.Join("..", "golden", "testdata", name+".txtar"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range ar.Files {
		if f.Name == "input.dpir" {
			return parse(t, string(f.Data))
		}
	}
	t.Fatalf("%s has no input", name)
	return nil
}

// TestAnnotationsSPMD: check-annotations accepts the modules whose only
// unusual parts are rule-based ops (spmd:0) and partial outputs that
// their rules give: a square matmul's partial Out (of its operands'
// shape), a row-parallel matmul_v2:1's, and param grads of a sequence
// split over dp (no batch on dim 0) that spmd:0 leaves partial [0:avg]
// without a sync. Each was refused before.
func TestAnnotationsSPMD(t *testing.T) {
	for _, name := range []string{"spmd_square_2d", "spmd_row_partial_square", "spmd_train_seq",
		"spmd_matmul_2d", "spmd_ops", "spmd_row_partial", "spmd_train_dpmp", "spmd_train_dpsp", "spmd_train_ln", "spmd_fill"} {
		if got := problems(t, goldenInput(t, name)); len(got) != 0 {
			t.Errorf("%s: %d problems:\n%s", name, len(got), strings.Join(got, "\n"))
		}
	}
}

// TestAnnotationsSPMDOnly: what spmd:0 is excused from is still refused
// for other impls: the same sequence-split step with its matmul lowered
// by matmul_v2:2 (whose grad sync averages over the batch on dim 0), and
// a partial output that no rule gives (relu of a whole value).
func TestAnnotationsSPMDOnly(t *testing.T) {
	m := goldenInput(t, "spmd_train_seq")
	for _, op := range m.Main.Global().Ops {
		if op.Type == "matmul_v2" || op.Type == "matmul_v2_grad" {
			op.Dist.ImplType, op.Dist.ImplIndex = "matmul_v2", 2
		}
	}
	want := "main block 0: op 7 matmul_v2_grad: the loss loss is @w[] partial [0:avg], an average over mesh dim 0 (dp), but the data-parallel sync leaves v@GRAD alone: no activation input has its dim 0 (the batch) split along it"
	if got := problems(t, m); len(got) != 1 || got[0] != want {
		t.Errorf("matmul_v2:2: %q, want %q", got, want)
	}
	// The grad op's own dist says spmd:0, but the lowering takes its impl
	// from its forward op: matmul_v2:2's sync rule holds.
	m = goldenInput(t, "spmd_train_seq")
	for _, op := range m.Main.Global().Ops {
		if op.Type == "matmul_v2" {
			op.Dist.ImplType, op.Dist.ImplIndex = "matmul_v2", 2
		}
	}
	want = "main block 0: op 7 matmul_v2_grad: the loss loss is @w[] partial [0:avg], an average over mesh dim 0 (dp), but the data-parallel sync leaves v@GRAD alone: no activation input has its dim 0 (the batch) split along it"
	if got := problems(t, m); len(got) != 1 || got[0] != want {
		t.Errorf("matmul_v2:2 forward, spmd:0 grad op: %q, want %q", got, want)
	}
	m = parse(t, `mesh w shape [2] dims [x] ranks [0, 1]
program main {
  block 0 {
    var a : f64[4, 4] @w[0, -1]
    var c : f64[4, 4] @w[-1, -1] partial [0]
    op 1 relu(X: a) -> (Out: c) role forward
         dist @w impl spmd:0 [a: [0, -1] -> c: [-1, -1]]
  }
}
`)
	want = "main block 0: op 1 relu: writes c as a whole value but c is @w[-1, -1] partial [0]: no input is partial or sharded along mesh dim 0: the data would have to be resharded"
	if got := problems(t, m); len(got) != 1 || got[0] != want {
		t.Errorf("relu: %q, want %q", got, want)
	}
}
