package passes_test

import (
	"context"
	"strings"
	"testing"

	"github.com/distpass/distpass/passes"
)

// colParallelBatchOnMP is a column-parallel matmul (its weight split by
// columns on mp) whose X has the batch on mp too, and a relu after it,
// with their grads.
const colParallelBatchOnMP = `mesh world shape [2, 2] dims [dp, mp] ranks [0, 1, 2, 3]

program main {
  block 0 {
    var x : f32[4, 6] @world[1, -1] {is_data, stop_gradient}
    param w : f32[6, 8] @world[-1, 1] {trainable}
    var y : f32[4, 8] @world[1, -1]
    var z : f32[4, 8] @world[1, -1]
    var loss : f32[] @world[] partial [1:avg]
    op 1 matmul_v2(X: x, Y: w) -> (Out: y)
         dist @world impl matmul_v2:0 [x: [1, -1], w: [-1, 1] -> y: [1, -1]]
    op 2 relu(X: y) -> (Out: z)
         dist @world impl default:0 [y: [1, -1] -> z: [1, -1]]
    op 3 mean(X: z) -> (Out: loss) role forward|loss
         dist @world impl default:0 [z: [1, -1] -> loss: []]
  }
}
`

// check-annotations asks each op's impl whether it fits the op's dist,
// as lower-forward will: the column-parallel matmul with the batch on mp
// is refused there, naming the matmul and why, and partition fails at
// that step with the same message (not at a later op).
func TestCheckAnnotationsAsksImpls(t *testing.T) {
	const want = "main block 0: op 1 matmul_v2: impl matmul_v2:0 (column_parallel) does not fit: column_parallel needs Y w split [-1, -1] as its rule mk,kn->mn gives; its dist says [-1, 1] (the rule merges X x [1, -1], Y w [-1, 1]: mesh dim 1 splits another of their dims first)"
	m := parseModule(t, colParallelBatchOnMP)
	if err := run(t, testRegistry(t), "append-backward{loss=loss}", m); err != nil {
		t.Fatal(err)
	}
	err := run(t, testRegistry(t), "check-annotations", m)
	if err == nil || !strings.HasSuffix(err.Error(), "): "+want) {
		t.Fatalf("check-annotations: %v\nwant it to end with %s", err, want)
	}
	for _, rank := range []int{0, 3} {
		if err := passes.Partition(m.Clone(), nil, rank); err == nil || err.Error() != want {
			t.Errorf("partition rank %d: %v\nwant %s", rank, err, want)
		}
	}
	if _, err := passes.PartitionAll(context.Background(), m, nil); err == nil || err.Error() != want {
		t.Errorf("partition -all: %v\nwant %s", err, want)
	}
	// Annotated to fit (the batch on dp, Out split by columns on mp), the
	// same program passes.
	ok := strings.NewReplacer("x : f32[4, 6] @world[1, -1]", "x : f32[4, 6] @world[0, -1]",
		"y : f32[4, 8] @world[1, -1]", "y : f32[4, 8] @world[0, 1]",
		"x: [1, -1], w: [-1, 1] -> y: [1, -1]", "x: [0, -1], w: [-1, 1] -> y: [0, 1]",
		"impl default:0 [y: [1, -1] -> z: [1, -1]]", "impl elementwise:0 [y: [0, 1] -> z: [0, 1]]",
		"z : f32[4, 8] @world[1, -1]", "z : f32[4, 8] @world[0, 1]",
		"impl default:0 [z: [1, -1] -> loss: []]", "impl spmd:0 [z: [0, 1] -> loss: []]",
		"partial [1:avg]", "partial [0:avg, 1:avg]").Replace(colParallelBatchOnMP)
	m = parseModule(t, ok)
	if err := run(t, testRegistry(t), "check-annotations", m); err != nil {
		t.Errorf("a column-parallel matmul that fits: %v", err)
	}
	if _, err := passes.PartitionAll(context.Background(), m, nil); err != nil {
		t.Errorf("partition -all of a column-parallel matmul that fits: %v", err)
	}
}
