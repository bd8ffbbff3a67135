package spmd_test

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/distpass/distpass/spmd"
	"github.com/google/go-cmp/cmp"
)

// reshapeRow is one application of the rule: forward from X's mapping
// (ReshapeSharding) or reverse from Out's (ReshapeShardingReverse).
type reshapeRow struct {
	name    string
	in, out []int64
	mapping []int // X's forward, Out's reverse
	mesh    []int
	reverse bool
	wantIn  []int // forward: wanted of X; reverse: X's mapping
	wantOut []int // forward: Out's mapping; reverse: wanted of Out
}

func runReshapeRows(t *testing.T, rows []reshapeRow) {
	t.Helper()
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			var in, out []int
			var err error
			if r.reverse {
				in, out, err = spmd.ReshapeShardingReverse(r.in, r.out, r.mapping, r.mesh)
			} else {
				in, out, err = spmd.ReshapeSharding(r.in, r.mapping, r.out, r.mesh)
			}
			if err != nil {
				t.Fatalf("%v to %v, mapping %v: %v", r.in, r.out, r.mapping, err)
			}
			if d := cmp.Diff(r.wantIn, in); d != "" {
				t.Errorf("%v to %v, mapping %v: X mapping (-want +got):\n%s", r.in, r.out, r.mapping, d)
			}
			if d := cmp.Diff(r.wantOut, out); d != "" {
				t.Errorf("%v to %v, mapping %v: Out mapping (-want +got):\n%s", r.in, r.out, r.mapping, d)
			}
		})
	}
}

func sh(d ...int64) []int64 { return append([]int64{}, d...) }
func dm(d ...int) []int     { return append([]int{}, d...) }

// TestReshapeShardingNotes: the examples of completion-notes.md §2.2
// "reshape".
func TestReshapeShardingNotes(t *testing.T) {
	runReshapeRows(t, []reshapeRow{
		{name: "split_divides", in: sh(8, 1024, 768), out: sh(8, 1024, 12, 64), mapping: dm(0, -1, 1), mesh: dm(2, 2),
			wantIn: dm(0, -1, 1), wantOut: dm(0, -1, 1, -1)},
		{name: "split_does_not_divide", in: sh(8, 1024, 768), out: sh(8, 1024, 12, 64), mapping: dm(0, -1, 1), mesh: dm(2, 8),
			wantIn: dm(0, -1, -1), wantOut: dm(0, -1, -1, -1)},
		{name: "flatten_second_member", in: sh(8, 1024, 768), out: sh(8192, 768), mapping: dm(-1, 0, -1), mesh: dm(2, 2),
			wantIn: dm(-1, -1, -1), wantOut: dm(-1, -1)},
	})
}

// TestReshapeShardingCases covers every case Paddle's code distinguishes,
// forward and reverse.
func TestReshapeShardingCases(t *testing.T) {
	runReshapeRows(t, []reshapeRow{
		// Same dims: each input dim is its output dim.
		{name: "identity", in: sh(4, 6), out: sh(4, 6), mapping: dm(1, 0), mesh: dm(2, 3),
			wantIn: dm(1, 0), wantOut: dm(1, 0)},
		// A dim its mesh dim does not divide still maps onto an output dim of its own size.
		{name: "same_size_uneven", in: sh(6), out: sh(6), mapping: dm(0), mesh: dm(4),
			wantIn: dm(0), wantOut: dm(0)},

		// Merges: only the leftmost member of a flatten keeps its sharding.
		{name: "merge_leftmost", in: sh(8, 1024, 768), out: sh(8192, 768), mapping: dm(0, -1, 1), mesh: dm(2, 2),
			wantIn: dm(0, -1, 1), wantOut: dm(0, 1)},
		{name: "merge_both_sharded", in: sh(4, 6), out: sh(24), mapping: dm(0, 1), mesh: dm(2, 3),
			wantIn: dm(0, -1), wantOut: dm(0)},
		{name: "merge_third_member", in: sh(2, 3, 4), out: sh(24), mapping: dm(-1, -1, 0), mesh: dm(2),
			wantIn: dm(-1, -1, -1), wantOut: dm(-1)},
		// Departure from Paddle (which gives [0] / [0]): 6 rows over 4 ranks
		// are not the 24 elements over 4 ranks.
		{name: "merge_uneven_leftmost", in: sh(6, 4), out: sh(24), mapping: dm(0, -1), mesh: dm(4),
			wantIn: dm(-1, -1), wantOut: dm(-1)},
		{name: "merge_even_leftmost", in: sh(6, 4), out: sh(24), mapping: dm(0, -1), mesh: dm(3),
			wantIn: dm(0, -1), wantOut: dm(0)},

		// Splits: only the first piece, and only if its size divides.
		{name: "split_first_piece", in: sh(768), out: sh(12, 64), mapping: dm(0), mesh: dm(4),
			wantIn: dm(0), wantOut: dm(0, -1)},
		{name: "split_first_piece_does_not_divide", in: sh(768), out: sh(12, 64), mapping: dm(0), mesh: dm(8),
			wantIn: dm(-1), wantOut: dm(-1, -1)},
		{name: "split_size1_piece", in: sh(6), out: sh(2, 1, 3), mapping: dm(0), mesh: dm(2),
			wantIn: dm(0), wantOut: dm(0, -1, -1)},

		// Split and merge ([8,4] -> [2,16]: Split(Flatten(0,1), [2,16])).
		{name: "split_merge_leftmost", in: sh(8, 4), out: sh(2, 16), mapping: dm(0, -1), mesh: dm(2),
			wantIn: dm(0, -1), wantOut: dm(0, -1)},
		{name: "split_merge_second", in: sh(8, 4), out: sh(2, 16), mapping: dm(-1, 0), mesh: dm(2),
			wantIn: dm(-1, -1), wantOut: dm(-1, -1)},
		{name: "split_merge_piece_does_not_divide", in: sh(8, 4), out: sh(2, 16), mapping: dm(0, -1), mesh: dm(4),
			wantIn: dm(-1, -1), wantOut: dm(-1, -1)},
		// The first piece (2) decides, not the leftmost dim (6, which 3 divides).
		{name: "split_merge_piece_not_dim", in: sh(6, 4), out: sh(2, 12), mapping: dm(0, -1), mesh: dm(3),
			wantIn: dm(-1, -1), wantOut: dm(-1, -1)},

		// Size-1 dims.
		{name: "size1_in_dropped_from_flatten", in: sh(1, 4, 2), out: sh(8), mapping: dm(-1, 0, -1), mesh: dm(2),
			wantIn: dm(-1, 0, -1), wantOut: dm(0)},
		{name: "size1_in_sharded_unused", in: sh(1, 8), out: sh(8), mapping: dm(0, -1), mesh: dm(2),
			wantIn: dm(-1, -1), wantOut: dm(-1)},
		{name: "size1_in_to_size1_out", in: sh(1, 8), out: sh(1, 8), mapping: dm(0, 1), mesh: dm(2, 2),
			wantIn: dm(0, 1), wantOut: dm(0, 1)},
		{name: "size1_out_first", in: sh(8), out: sh(1, 8), mapping: dm(0), mesh: dm(2),
			wantIn: dm(0), wantOut: dm(-1, 0)},
		{name: "size1_out_last", in: sh(8), out: sh(8, 1), mapping: dm(0), mesh: dm(2),
			wantIn: dm(0), wantOut: dm(0, -1)},

		// 0-d.
		{name: "0d_to_1", in: sh(), out: sh(1), mapping: dm(), mesh: dm(2),
			wantIn: dm(), wantOut: dm(-1)},
		{name: "1_to_0d", in: sh(1), out: sh(), mapping: dm(0), mesh: dm(2),
			wantIn: dm(-1), wantOut: dm()},
		{name: "0d_to_0d", in: sh(), out: sh(), mapping: dm(), mesh: dm(2),
			wantIn: dm(), wantOut: dm()},

		// A zero-size tensor is replicated.
		{name: "zero_size", in: sh(0, 4), out: sh(0, 2, 2), mapping: dm(-1, 0), mesh: dm(2),
			wantIn: dm(-1, -1), wantOut: dm(-1, -1, -1)},

		// Dynamic dims (-1), forward.
		{name: "dyn_batch_split", in: sh(-1, 768), out: sh(-1, 12, 64), mapping: dm(0, 1), mesh: dm(2, 4),
			wantIn: dm(0, 1), wantOut: dm(0, 1, -1)},
		// Out's -1 is the attr's -1 (1024 times X's): flatten, 1024 divides.
		{name: "dyn_merge_batch_seq", in: sh(-1, 1024, 768), out: sh(-1, 768), mapping: dm(0, -1, 1), mesh: dm(2, 2),
			wantIn: dm(0, -1, 1), wantOut: dm(0, 1)},
		// Out's -1 is 2 times X's -1.
		{name: "dyn_split_known_piece", in: sh(-1, 4), out: sh(2, -1), mapping: dm(0, -1), mesh: dm(2),
			wantIn: dm(0, -1), wantOut: dm(0, -1)},
		// Paddle walks [256] -> [64, 4] and keeps [0, -1]; the piece is a/4,
		// which 4 need not divide (a = 8).
		{name: "dyn_piece_unknown", in: sh(-1), out: sh(-1, 4), mapping: dm(0), mesh: dm(4),
			wantIn: dm(-1), wantOut: dm(-1, -1)},
		// Paddle's 256 makes dim 1 look like out dim 1; for a = 2 they differ.
		{name: "dyn_false_match", in: sh(-1, 256, 4), out: sh(256, -1, 4), mapping: dm(-1, 0, -1), mesh: dm(2),
			wantIn: dm(-1, -1, -1), wantOut: dm(-1, -1, -1)},
		// Out's -1 is 2a and 2 divides it, but a elements come before X's
		// dim 1 and 256 before Out's.
		{name: "dyn_false_match_prefix", in: sh(-1, 512, 4), out: sh(256, -1, 4), mapping: dm(-1, 0, -1), mesh: dm(2),
			wantIn: dm(-1, -1, -1), wantOut: dm(-1, -1, -1)},
		// Same shapes, dim 0: as many elements before, 2 divides 256.
		{name: "dyn_prefix_equal", in: sh(-1, 256, 4), out: sh(256, -1, 4), mapping: dm(0, -1, -1), mesh: dm(2),
			wantIn: dm(0, -1, -1), wantOut: dm(0, -1, -1)},
		// Out's -1 looks like a copy of X's but is the attr's -1 (2a).
		{name: "dyn_attr_minus1_at_copy", in: sh(-1, 6), out: sh(-1, 3), mapping: dm(0, -1), mesh: dm(2),
			wantIn: dm(0, -1), wantOut: dm(0, -1)},
		// Either -1 of Out may be the attr's (2a or 2b): not known which.
		{name: "dyn_ambiguous", in: sh(-1, -1, 6), out: sh(-1, -1, 3), mapping: dm(0, -1, -1), mesh: dm(2),
			wantIn: dm(-1, -1, -1), wantOut: dm(-1, -1, -1)},
		// Out's dims not determined ([a, b] to [ab/3, 3]): replicated.
		{name: "dyn_undetermined", in: sh(-1, -1), out: sh(-1, 3), mapping: dm(0, -1), mesh: dm(2),
			wantIn: dm(-1, -1), wantOut: dm(-1, -1)},

		// Reverse: the same trees from Out to X.
		{name: "rev_identity", in: sh(4, 6), out: sh(4, 6), mapping: dm(1, 0), mesh: dm(2, 3), reverse: true,
			wantIn: dm(1, 0), wantOut: dm(1, 0)},
		{name: "rev_merge_leftmost", in: sh(8, 1024, 768), out: sh(8, 1024, 12, 64), mapping: dm(0, -1, 1, -1), mesh: dm(2, 2), reverse: true,
			wantIn: dm(0, -1, 1), wantOut: dm(0, -1, 1, -1)},
		{name: "rev_merge_second", in: sh(8, 1024, 768), out: sh(8, 1024, 12, 64), mapping: dm(0, -1, -1, 1), mesh: dm(2, 2), reverse: true,
			wantIn: dm(0, -1, -1), wantOut: dm(0, -1, -1, -1)},
		{name: "rev_merge_uneven_leftmost", in: sh(24), out: sh(6, 4), mapping: dm(0, -1), mesh: dm(4), reverse: true,
			wantIn: dm(-1), wantOut: dm(-1, -1)},
		{name: "rev_split_first_piece", in: sh(8, 1024, 768), out: sh(8192, 768), mapping: dm(0, -1), mesh: dm(2), reverse: true,
			wantIn: dm(0, -1, -1), wantOut: dm(0, -1)},
		{name: "rev_split_does_not_divide", in: sh(8, 1024, 768), out: sh(8192, 768), mapping: dm(0, -1), mesh: dm(16), reverse: true,
			wantIn: dm(-1, -1, -1), wantOut: dm(-1, -1)},
		{name: "rev_split_merge_leftmost", in: sh(8, 4), out: sh(2, 16), mapping: dm(0, -1), mesh: dm(2), reverse: true,
			wantIn: dm(0, -1), wantOut: dm(0, -1)},
		{name: "rev_split_merge_second", in: sh(8, 4), out: sh(2, 16), mapping: dm(-1, 0), mesh: dm(2), reverse: true,
			wantIn: dm(-1, -1), wantOut: dm(-1, -1)},
		{name: "rev_split_merge_piece_does_not_divide", in: sh(8, 4), out: sh(2, 16), mapping: dm(0, -1), mesh: dm(16), reverse: true,
			wantIn: dm(-1, -1), wantOut: dm(-1, -1)},
		{name: "rev_size1_in", in: sh(1, 8), out: sh(8), mapping: dm(0), mesh: dm(2), reverse: true,
			wantIn: dm(-1, 0), wantOut: dm(0)},
		{name: "rev_size1_out", in: sh(8), out: sh(1, 8), mapping: dm(-1, 0), mesh: dm(2), reverse: true,
			wantIn: dm(0), wantOut: dm(-1, 0)},
		{name: "rev_size1_out_sharded", in: sh(8), out: sh(1, 8), mapping: dm(0, -1), mesh: dm(2), reverse: true,
			wantIn: dm(-1), wantOut: dm(-1, -1)},
		{name: "rev_size1_to_size1", in: sh(1, 8), out: sh(1, 8), mapping: dm(0, -1), mesh: dm(2), reverse: true,
			wantIn: dm(0, -1), wantOut: dm(0, -1)},
		{name: "rev_merge_both_sharded", in: sh(24), out: sh(4, 6), mapping: dm(0, 1), mesh: dm(2, 3), reverse: true,
			wantIn: dm(0), wantOut: dm(0, -1)},
		{name: "rev_size1_piece_dropped", in: sh(6), out: sh(2, 1, 3), mapping: dm(0, -1, -1), mesh: dm(2), reverse: true,
			wantIn: dm(0), wantOut: dm(0, -1, -1)},
		// Departure from Paddle (which gives X [0, -1]): Out's 2 rows over 3
		// ranks are not X's 6 rows over 3 ranks.
		{name: "rev_split_merge_uneven", in: sh(6, 4), out: sh(2, 12), mapping: dm(0, -1), mesh: dm(3), reverse: true,
			wantIn: dm(-1, -1), wantOut: dm(-1, -1)},
		{name: "rev_0d", in: sh(), out: sh(1), mapping: dm(0), mesh: dm(2), reverse: true,
			wantIn: dm(), wantOut: dm(-1)},
		{name: "rev_zero_size", in: sh(0, 4), out: sh(0, 2, 2), mapping: dm(0, -1, -1), mesh: dm(2), reverse: true,
			wantIn: dm(-1, -1), wantOut: dm(-1, -1, -1)},
		{name: "rev_dyn_batch_merge", in: sh(-1, 768), out: sh(-1, 12, 64), mapping: dm(0, 1, -1), mesh: dm(2, 2), reverse: true,
			wantIn: dm(0, 1), wantOut: dm(0, 1, -1)},
		// Out [2a, 3] on dim 0 gives X [a, 6] a/2 rows only if 2 divides a.
		{name: "rev_dyn_piece_unknown", in: sh(-1, 6), out: sh(-1, 3), mapping: dm(0, -1), mesh: dm(2), reverse: true,
			wantIn: dm(-1, -1), wantOut: dm(-1, -1)},
		{name: "rev_to_0d", in: sh(1), out: sh(), mapping: dm(), mesh: dm(2), reverse: true,
			wantIn: dm(-1), wantOut: dm()},
		{name: "rev_dyn_false_match", in: sh(-1, 256, 4), out: sh(256, -1, 4), mapping: dm(-1, 0, -1), mesh: dm(2), reverse: true,
			wantIn: dm(-1, -1, -1), wantOut: dm(-1, -1, -1)},
	})
}

// TestReshapeShardingPaddle ports the cases of Paddle's
// test/auto_parallel/spmd_rules/test_reshape_rule.py @0ab6998c (mesh
// [[0, 1, 2], [3, 4, 5]], i.e. sizes [2, 3]). Paddle passes the attr
// shape; we pass Out's shape as the op table infers it from that attr (0 copies
// X's dim, -1 when not known), and where Paddle's test passes the attr
// as Out's shape in infer_backward, likewise.
func TestReshapeShardingPaddle(t *testing.T) {
	x := sh(6, 12, 48, 24)
	mesh := dm(2, 3)
	runReshapeRows(t, []reshapeRow{
		// test_reshape_infer_forward
		{name: "fwd/1x72x48x4x6_a", in: x, out: sh(1, 72, 48, 4, 6), mapping: dm(0, -1, 1, -1), mesh: mesh,
			wantIn: dm(0, -1, 1, -1), wantOut: dm(-1, 0, 1, -1, -1)},
		{name: "fwd/1x72x48x4x6_b", in: x, out: sh(1, 72, 48, 4, 6), mapping: dm(-1, 0, -1, 1), mesh: mesh,
			wantIn: dm(-1, -1, -1, -1), wantOut: dm(-1, -1, -1, -1, -1)},
		{name: "fwd/1x72x48x4x6_c", in: x, out: sh(1, 72, 48, 4, 6), mapping: dm(1, -1, -1, 0), mesh: mesh,
			wantIn: dm(1, -1, -1, 0), wantOut: dm(-1, 1, -1, 0, -1)},
		{name: "fwd/3x24x6x8x24_a", in: x, out: sh(3, 24, 6, 8, 24), mapping: dm(0, 1, -1, -1), mesh: mesh,
			wantIn: dm(-1, -1, -1, -1), wantOut: dm(-1, -1, -1, -1, -1)},
		{name: "fwd/3x24x6x8x24_b", in: x, out: sh(3, 24, 6, 8, 24), mapping: dm(1, -1, -1, 0), mesh: mesh,
			wantIn: dm(1, -1, -1, 0), wantOut: dm(1, -1, -1, -1, 0)},
		// attr [3, 24, 6, -1, 24]: the op table infers 8; a caller passing -1 gets the same.
		{name: "fwd/3x24x6x-1x24", in: x, out: sh(3, 24, 6, 8, 24), mapping: dm(-1, -1, 0, 1), mesh: mesh,
			wantIn: dm(-1, -1, 0, 1), wantOut: dm(-1, -1, 0, -1, 1)},
		{name: "fwd/3x24x6x-1x24_unresolved", in: x, out: sh(3, 24, 6, -1, 24), mapping: dm(-1, -1, 0, 1), mesh: mesh,
			wantIn: dm(-1, -1, 0, 1), wantOut: dm(-1, -1, 0, -1, 1)},
		// attr [1, 72, 0, 4, 6].
		{name: "fwd/1x72x0x4x6", in: x, out: sh(1, 72, 48, 4, 6), mapping: dm(1, -1, -1, 0), mesh: mesh,
			wantIn: dm(1, -1, -1, 0), wantOut: dm(-1, 1, -1, 0, -1)},
		{name: "fwd/identity", in: x, out: x, mapping: dm(-1, -1, 0, 1), mesh: mesh,
			wantIn: dm(-1, -1, 0, 1), wantOut: dm(-1, -1, 0, 1)},
		{name: "fwd/72x3x16x24_a", in: x, out: sh(72, 3, 16, 24), mapping: dm(0, -1, 1, -1), mesh: mesh,
			wantIn: dm(0, -1, 1, -1), wantOut: dm(0, 1, -1, -1)},
		{name: "fwd/72x3x16x24_b", in: x, out: sh(72, 3, 16, 24), mapping: dm(1, -1, 0, -1), mesh: mesh,
			wantIn: dm(1, -1, -1, -1), wantOut: dm(1, -1, -1, -1)},
		{name: "fwd/1x72x48x4x6_to_x", in: sh(1, 72, 48, 4, 6), out: x, mapping: dm(-1, 1, -1, 0, -1), mesh: mesh,
			wantIn: dm(-1, 1, -1, 0, -1), wantOut: dm(1, -1, -1, 0)},
		// attr [0, 0, -1, 192].
		{name: "fwd/8x1024x3072", in: sh(8, 1024, 3072), out: sh(8, 1024, 16, 192), mapping: dm(0, 1, -1), mesh: mesh,
			wantIn: dm(0, 1, -1), wantOut: dm(0, 1, -1, -1)},
		{name: "fwd/dyn_a", in: sh(-1, -1, 3072), out: sh(-1, -1, -1, 192), mapping: dm(0, 1, -1), mesh: mesh,
			wantIn: dm(0, 1, -1), wantOut: dm(0, 1, -1, -1)},
		{name: "fwd/dyn_a_declared", in: sh(-1, -1, 3072), out: sh(-1, -1, 16, 192), mapping: dm(0, 1, -1), mesh: mesh,
			wantIn: dm(0, 1, -1), wantOut: dm(0, 1, -1, -1)},
		{name: "fwd/dyn_b", in: sh(-1, -1, 3072), out: sh(-1, -1, -1, 192), mapping: dm(0, -1, 1), mesh: mesh,
			wantIn: dm(0, -1, -1), wantOut: dm(0, -1, -1, -1)},
		{name: "fwd/dyn_c", in: sh(-1, -1, 3072), out: sh(-1, -1, -1, 192), mapping: dm(1, -1, 0), mesh: mesh,
			wantIn: dm(1, -1, 0), wantOut: dm(1, -1, 0, -1)},
		// attr [0, 0, 6, 2048]: the size-1 dim keeps its mapping.
		{name: "fwd/1x2048x12288", in: sh(1, 2048, 12288), out: sh(1, 2048, 6, 2048), mapping: dm(0, -1, 1), mesh: mesh,
			wantIn: dm(0, -1, 1), wantOut: dm(0, -1, 1, -1)},

		// test_reshape_infer_backward
		{name: "bwd/1x72x48x4x6_a", in: x, out: sh(1, 72, 48, 4, 6), mapping: dm(-1, 0, 1, -1, -1), mesh: mesh, reverse: true,
			wantIn: dm(0, -1, 1, -1), wantOut: dm(-1, 0, 1, -1, -1)},
		{name: "bwd/1x72x48x4x6_b", in: x, out: sh(1, 72, 48, 4, 6), mapping: dm(-1, -1, -1, -1, -1), mesh: mesh, reverse: true,
			wantIn: dm(-1, -1, -1, -1), wantOut: dm(-1, -1, -1, -1, -1)},
		{name: "bwd/1x72x48x4x6_c", in: x, out: sh(1, 72, 48, 4, 6), mapping: dm(-1, 1, -1, 0, -1), mesh: mesh, reverse: true,
			wantIn: dm(1, -1, -1, 0), wantOut: dm(-1, 1, -1, 0, -1)},
		{name: "bwd/3x24x6x8x24_a", in: x, out: sh(3, 24, 6, 8, 24), mapping: dm(1, -1, -1, -1, 0), mesh: mesh, reverse: true,
			wantIn: dm(1, -1, -1, 0), wantOut: dm(1, -1, -1, -1, 0)},
		{name: "bwd/3x24x6x8x24_b", in: x, out: sh(3, 24, 6, 8, 24), mapping: dm(-1, -1, 0, -1, 1), mesh: mesh, reverse: true,
			wantIn: dm(-1, -1, 0, 1), wantOut: dm(-1, -1, 0, -1, 1)},
		{name: "bwd/identity", in: x, out: x, mapping: dm(-1, -1, 0, 1), mesh: mesh, reverse: true,
			wantIn: dm(-1, -1, 0, 1), wantOut: dm(-1, -1, 0, 1)},
		{name: "bwd/72x3x16x24_a", in: x, out: sh(72, 3, 16, 24), mapping: dm(0, 1, -1, -1), mesh: mesh, reverse: true,
			wantIn: dm(0, -1, 1, -1), wantOut: dm(0, 1, -1, -1)},
		{name: "bwd/72x3x16x24_b", in: x, out: sh(72, 3, 16, 24), mapping: dm(1, -1, -1, -1), mesh: mesh, reverse: true,
			wantIn: dm(1, -1, -1, -1), wantOut: dm(1, -1, -1, -1)},
		{name: "bwd/1x72x48x4x6_d", in: x, out: sh(1, 72, 48, 4, 6), mapping: dm(-1, 0, -1, -1, 1), mesh: mesh, reverse: true,
			wantIn: dm(0, -1, -1, -1), wantOut: dm(-1, 0, -1, -1, -1)},
		{name: "bwd/3x24x6x8x24_c", in: x, out: sh(3, 24, 6, 8, 24), mapping: dm(-1, 1, -1, -1, 0), mesh: mesh, reverse: true,
			wantIn: dm(-1, -1, -1, 0), wantOut: dm(-1, -1, -1, -1, 0)},
		{name: "bwd/8x1024x3072", in: sh(8, 1024, 3072), out: sh(8, 1024, 16, 192), mapping: dm(0, 1, -1, -1), mesh: mesh, reverse: true,
			wantIn: dm(0, 1, -1), wantOut: dm(0, 1, -1, -1)},
		{name: "bwd/dyn_a", in: sh(-1, -1, 3072), out: sh(-1, -1, -1, 192), mapping: dm(0, 1, -1, -1), mesh: mesh, reverse: true,
			wantIn: dm(0, 1, -1), wantOut: dm(0, 1, -1, -1)},
		// Departure: Paddle expects X [0, -1, 1] and Out [0, -1, 1, -1] (its
		// reverse flatten has no divisibility check). Out's 16 rows over 3
		// ranks are not X's 3072 columns over 3 ranks, so we replicate.
		{name: "bwd/dyn_b", in: sh(-1, -1, 3072), out: sh(-1, -1, -1, 192), mapping: dm(0, -1, 1, -1), mesh: mesh, reverse: true,
			wantIn: dm(0, -1, -1), wantOut: dm(0, -1, -1, -1)},
	})
}

func TestReshapeShardingErrors(t *testing.T) {
	for _, c := range []struct {
		name    string
		in, out []int64
		mapping []int
		mesh    []int
		reverse bool
		want    string
	}{
		{"elements", sh(2, 3), sh(4, 2), dm(-1, -1), dm(2), false,
			"reshape [2, 3] to [4, 2]: X has 6 elements, Out 8"},
		{"elements_reverse", sh(2, 3), sh(4, 2), dm(-1, -1), dm(2), true,
			"reshape [2, 3] to [4, 2]: X has 6 elements, Out 8"},
		{"zero_size_elements", sh(0, 3), sh(2), dm(-1, -1), dm(2), false,
			"reshape [0, 3] to [2]: X has 0 elements, Out 2"},
		{"mapping_rank", sh(2, 3), sh(6), dm(0), dm(2), false,
			"reshape [2, 3] to [6]: X dims_mapping [0] has length 1, X has 2 dims"},
		{"mapping_rank_reverse", sh(2, 3), sh(6), dm(0, -1), dm(2), true,
			"reshape [2, 3] to [6]: Out dims_mapping [0, -1] has length 2, Out has 1 dims"},
		{"mesh_dim_range", sh(2, 3), sh(6), dm(0, 2), dm(2, 2), false,
			"reshape [2, 3] to [6]: X dims_mapping [0, 2] uses mesh dim 2, the mesh has 2 dims"},
		{"mesh_dim_negative", sh(2, 3), sh(6), dm(-2, -1), dm(2), false,
			"reshape [2, 3] to [6]: X dims_mapping [-2, -1] uses mesh dim -2, the mesh has 1 dims"},
		{"mesh_dim_twice", sh(2, 4), sh(8), dm(0, 0), dm(2), false,
			"reshape [2, 4] to [8]: X dims_mapping [0, 0] uses mesh dim 0 twice"},
		{"mesh_size", sh(2, 4), sh(8), dm(0, -1), dm(2, 0), false,
			"reshape [2, 4] to [8]: mesh dim 1 has size 0"},
		{"bad_dim", sh(2, -3), sh(6), dm(-1, -1), dm(2), false,
			"reshape [2, -3] to [6]: dim -3 is neither a size nor -1"},
		// Paddle's test_reshape_rule.py: attr [3, 24, 6, -1, -1] raises.
		{"two_inferred", sh(6, 12, 48, 24), sh(3, 24, 6, -1, -1), dm(-1, -1, -1, -1), dm(2, 3), false,
			"reshape [6, 12, 48, 24] to [3, 24, 6, -1, -1]: Out has 2 -1 dims that copy no unknown dim of X"},
		{"too_many_in", sh(1<<40, 1<<30), sh(1), dm(-1, -1), dm(2), false,
			"reshape [1099511627776, 1073741824] to [1]: X has more than 2^62 elements"},
		{"too_many_out", sh(4), sh(1<<40, 1<<30), dm(-1), dm(2), false,
			"reshape [4] to [1099511627776, 1073741824]: Out has more than 2^62 elements"},
		{"inferred_not_whole", sh(6), sh(-1, 4), dm(-1), dm(2), false,
			"reshape [6] to [-1, 4]: 6 elements do not fill Out's -1 dim"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var err error
			if c.reverse {
				_, _, err = spmd.ReshapeShardingReverse(c.in, c.out, c.mapping, c.mesh)
			} else {
				_, _, err = spmd.ReshapeSharding(c.in, c.mapping, c.out, c.mesh)
			}
			if err == nil || err.Error() != c.want {
				t.Errorf("error %v, want %q", err, c.want)
			}
		})
	}
}

// owners gives, for each element (by flat index) of a tensor of shape
// sharded by mapping, the chunk it belongs to along each mesh dim (-1
// where it is on every rank of that mesh dim); chunks are Paddle's
// ceil(d/n) blocks.
func owners(shape []int64, mapping, mesh []int) [][]int {
	n := int64(1)
	for _, d := range shape {
		n *= d
	}
	own := make([][]int, n)
	for f := range n {
		o := make([]int, len(mesh))
		for k := range o {
			o[k] = -1
		}
		rest := f
		for i := len(shape) - 1; i >= 0; i-- {
			idx := rest % shape[i]
			rest /= shape[i]
			if m := mapping[i]; m >= 0 {
				chunk := (shape[i] + int64(mesh[m]) - 1) / int64(mesh[m])
				o[m] = int(idx / chunk)
			}
		}
		own[f] = o
	}
	return own
}

// randFactors splits n into k dims (1s included) at random.
func randFactors(rng *rand.Rand, n int64, k int) []int64 {
	s := make([]int64, k)
	for i := range s {
		s[i] = 1
	}
	for p := int64(2); n > 1; {
		if n%p != 0 {
			p++
			continue
		}
		if k == 0 {
			return nil
		}
		s[rng.IntN(k)] *= p
		n /= p
	}
	return s
}

func randMapping(rng *rand.Rand, rank int, mesh []int) []int {
	m := make([]int, rank)
	free := rng.Perm(len(mesh))
	for i := range m {
		m[i] = -1
		if len(free) > 0 && rng.IntN(2) == 0 {
			m[i], free = free[0], free[1:]
		}
	}
	return m
}

// TestReshapeShardingExact checks on random reshapes that whatever the
// rule keeps sharded puts every element on the same ranks before and
// after the reshape (so each rank reshapes its own block), in both
// directions, also when dims are hidden as -1 the way the op table leaves them
// (copied unknown dims, and the attr's -1), and that the rule only ever
// replicates more than it is given.
func TestReshapeShardingExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(25, 2))
	meshes := [][]int{{2}, {3}, {4}, {2, 2}, {2, 3}, {3, 2, 2}}
	totals := []int64{1, 2, 4, 6, 8, 12, 16, 24, 36, 48, 64, 72, 96}
	kept := 0
	for iter := range 6000 {
		n := totals[rng.IntN(len(totals))]
		in := randFactors(rng, n, rng.IntN(4)+1)
		out := randFactors(rng, n, rng.IntN(4)+1)
		if iter%10 == 0 {
			in = randFactors(rng, n, 0)
			if in == nil {
				continue
			}
		}
		mesh := meshes[rng.IntN(len(meshes))]
		// Hidden: X's dims turned -1 and Out's copies of them at the same
		// position, then maybe one more Out dim (the attr's -1).
		hin, hout := append([]int64{}, in...), append([]int64{}, out...)
		if iter%2 == 1 {
			for i := range hin {
				if rng.IntN(3) == 0 {
					hin[i] = -1
					if i < len(hout) && hout[i] == in[i] {
						hout[i] = -1
					}
				}
			}
			if len(hout) > 0 && rng.IntN(2) == 0 {
				hout[rng.IntN(len(hout))] = -1
			}
		}
		inMap := randMapping(rng, len(in), mesh)
		outMap := randMapping(rng, len(out), mesh)
		// The rule takes a sharded unknown dim to divide by its mesh dim
		// (nothing can check it before run time): make it so.
		divides := func(hidden, shape []int64, m []int) bool {
			for i, d := range hidden {
				if d == -1 && m[i] >= 0 && shape[i]%int64(mesh[m[i]]) != 0 {
					return false
				}
			}
			return true
		}
		check := func(dir string, a []int64, am []int, b []int64, bm []int, given []int, wantA []int) {
			for i := range given {
				if wantA[i] != given[i] && wantA[i] != -1 {
					t.Fatalf("%s %v to %v (given %v %v): wanted %v changes a dim's mesh dim", dir, hin, hout, given, mesh, wantA)
				}
			}
			oa, ob := owners(a, am, mesh), owners(b, bm, mesh)
			for f := range oa {
				if !slices.Equal(oa[f], ob[f]) {
					t.Fatalf("%s %v to %v as %v to %v, mesh %v: %v and %v put element %d on chunks %v and %v",
						dir, in, out, hin, hout, mesh, am, bm, f, oa[f], ob[f])
				}
			}
			for _, m := range bm {
				if m >= 0 {
					kept++
					break
				}
			}
		}
		wantIn, gotOut, err := spmd.ReshapeSharding(hin, inMap, hout, mesh)
		if err == nil && divides(hin, in, inMap) {
			check("forward", in, wantIn, out, gotOut, inMap, wantIn)
		} else if iter%2 == 0 {
			t.Fatalf("forward %v to %v: %v", in, out, err)
		}
		gotIn, wantOut, err := spmd.ReshapeShardingReverse(hin, hout, outMap, mesh)
		if err == nil && divides(hout, out, outMap) {
			check("reverse", out, wantOut, in, gotIn, outMap, wantOut)
		} else if iter%2 == 0 {
			t.Fatalf("reverse %v to %v: %v", in, out, err)
		}
	}
	if kept < 1000 {
		t.Errorf("only %d results keep a dim sharded", kept)
	}
}
