package ir

import (
	"slices"
	"testing"
)

func TestCollectiveTypes(t *testing.T) {
	if !slices.IsSorted(collectiveTypes) || len(slices.Compact(slices.Clone(collectiveTypes))) != len(collectiveTypes) {
		t.Fatalf("collectiveTypes must be sorted and unique (IsCollective searches it): %q", collectiveTypes)
	}
	for _, typ := range []string{"c_allreduce_sum", "c_identity", "c_broadcast", "c_allgather", "c_concat", "c_split",
		"all_reduce", "all_gather", "broadcast", "reduce_scatter", "alltoall", "global_scatter", "global_gather",
		"send_v2", "recv_v2", "partial_send", "partial_recv"} {
		if !IsCollective(typ) {
			t.Errorf("%s is not a collective", typ)
		}
	}
	for _, typ := range []string{"c_embedding", "c_softmax_with_cross_entropy", "c_sync_comm_stream", "matmul_v2",
		"scatter", "reduce_sum", "", "c_allreduce_sum_grad"} {
		if IsCollective(typ) {
			t.Errorf("%s is a collective", typ)
		}
	}
}
