package ops_test

import (
	"fmt"
	"testing"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/models"
	"github.com/distpass/distpass/ops"
)

// TestGradFoldsReadTheRule holds the data-parallel sync's decision to
// the grad ops' rules: on the MLP under dp, a matmul's weight grad and
// an add's bias grad are partial along dp (each rank's part of the sum
// over the batch), the activation grads are not; and SyncOf sums what
// the rule folds and keeps what it does not, even a grad that is not
// split along the axis (which the batch-dim convention alone, without a
// rule, takes for a fold).
func TestGradFoldsReadTheRule(t *testing.T) {
	m, err := models.MLPTraining(models.MLPConfig{Layers: 2, Hidden: 8, Batch: 4}, "dp", models.Mesh([]int{2}, []string{"dp"}), "")
	if err != nil {
		t.Fatal(err)
	}
	b := m.Main.Global()
	lookup := func(n string) *ir.Var { return b.Var(n) }
	isParam := func(n string) bool { v := b.Var(n); return v != nil && v.Kind == ir.KindParam }
	never := func(string) bool { return false }
	got := map[string]string{}
	for _, op := range b.Ops {
		if op.Type != "matmul_v2_grad" && op.Type != "elementwise_add_grad" {
			continue
		}
		mapping := func(n string) []int {
			if mm, ok := op.Dist.InputMapping(n); ok {
				return mm
			}
			mm, _ := op.Dist.OutputMapping(n)
			return mm
		}
		folds := ops.GradFolds(op, lookup, mapping, []int{2}, 0)
		if folds == nil {
			t.Fatalf("%s: no folds: its rule is missing or refuses the mappings", op)
		}
		for _, s := range op.Outputs {
			for k, a := range s.Args {
				f := ops.FoldAt(folds, op, s, k)
				sync := ops.SyncOf(op, s, k, mapping(a), 0, f, isParam, never)
				got[op.Type+" "+s.Name] = fmt.Sprintf("fold %d sync %d", f, sync)
				// Whatever the op: a fold is summed, and what is not folded
				// is never summed.
				if (f == ops.FoldAlong) != (sync == ops.GradSummed) {
					t.Errorf("%s: %s %s: fold %d but sync %d", op, s.Name, a, f, sync)
				}
			}
		}
	}
	want := map[string]string{
		"matmul_v2_grad X@GRAD":       fmt.Sprintf("fold %d sync %d", ops.FoldNone, ops.GradKept),
		"matmul_v2_grad Y@GRAD":       fmt.Sprintf("fold %d sync %d", ops.FoldAlong, ops.GradSummed),
		"elementwise_add_grad X@GRAD": fmt.Sprintf("fold %d sync %d", ops.FoldNone, ops.GradKept),
		"elementwise_add_grad Y@GRAD": fmt.Sprintf("fold %d sync %d", ops.FoldAlong, ops.GradSummed),
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: %s, want %s", k, got[k], w)
		}
	}

	// The rule decides where the convention would not: a grad that is not
	// split along the axis, of which the rule says it is computed whole,
	// is kept; with no rule it is taken for a fold.
	s := ir.Slot{Name: "X@GRAD", Args: []string{"g"}}
	op := &ir.Op{Type: "relu_grad", Outputs: []ir.Slot{s}}
	if got := ops.SyncOf(op, s, 0, []int{-1, -1}, 0, ops.FoldNone, never, never); got != ops.GradKept {
		t.Errorf("a whole grad the rule does not fold: sync %d, want kept", got)
	}
	if got := ops.SyncOf(op, s, 0, []int{-1, -1}, 0, ops.FoldUnknown, never, never); got != ops.GradSummed {
		t.Errorf("a whole grad of an op without a rule: sync %d, want summed", got)
	}
}

// TestFoldMemoKeysWhatTheRuleReads: the memo answers as GradFolds does,
// for the same op and for its mappings changed (a key that left them out
// would answer the first op's folds).
func TestFoldMemoKeysWhatTheRuleReads(t *testing.T) {
	m, err := models.MLPTraining(models.MLPConfig{Layers: 2, Hidden: 8, Batch: 4}, "dp", models.Mesh([]int{2}, []string{"dp"}), "")
	if err != nil {
		t.Fatal(err)
	}
	b := m.Main.Global()
	lookup := func(n string) *ir.Var { return b.Var(n) }
	var memo ops.FoldMemo
	n := 0
	for _, op := range b.Ops {
		if op.Type != "matmul_v2_grad" {
			continue
		}
		answers := map[string]bool{}
		for _, whole := range []bool{false, true, false} {
			mapping := func(a string) []int {
				mm, ok := op.Dist.InputMapping(a)
				if !ok {
					mm, _ = op.Dist.OutputMapping(a)
				}
				if whole {
					w := make([]int, len(mm)) // nothing split: nothing folded
					for i := range w {
						w[i] = -1
					}
					return w
				}
				return mm
			}
			want := fmt.Sprint(ops.GradFolds(op, lookup, mapping, []int{2}, 0))
			answers[want] = true
			if got := fmt.Sprint(memo.GradFolds(op, lookup, lookup, mapping, []int{2}, 0)); got != want {
				t.Errorf("%s (whole: %v): memo %s, GradFolds %s", op, whole, got, want)
			}
			n++
		}
		if len(answers) != 2 {
			t.Fatalf("%s: the two mappings get %d answers, want 2: the test cannot tell a key without mappings", op, len(answers))
		}
	}
	if n == 0 {
		t.Fatal("no matmul_v2_grad")
	}
}
