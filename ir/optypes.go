package ir

import "slices"

// collectiveTypes lists, sorted, the op types that communicate between ranks: the
// c_* collectives Paddle's static graphs use, the newer un-prefixed names,
// point-to-point transfers and the MoE dispatch ops. It is an explicit list
// rather than a prefix rule because c_* also names compute ops:
// c_embedding looks up a local vocabulary shard and sends nothing, and
// c_softmax_with_cross_entropy is a fused kernel, not a collective. Stream
// syncs (c_sync_calc_stream, c_sync_comm_stream, c_wait_comm) move no data
// and are not listed either. Generic names that also name tensor ops
// (reduce, scatter) are left out.
var collectiveTypes = []string{
	"all_gather",
	"all_reduce",
	"all_to_all",
	"alltoall",
	"barrier",
	"broadcast",
	"c_allgather",
	"c_allreduce_avg",
	"c_allreduce_max",
	"c_allreduce_min",
	"c_allreduce_prod",
	"c_allreduce_sum",
	"c_alltoall",
	"c_broadcast",
	"c_concat",
	"c_identity",
	"c_reduce_avg",
	"c_reduce_max",
	"c_reduce_min",
	"c_reduce_prod",
	"c_reduce_sum",
	"c_reducescatter",
	"c_scatter",
	"c_split",
	"global_gather",
	"global_scatter",
	"mp_allreduce_sum",
	"p_recv",
	"p_send",
	"partial_allgather",
	"partial_recv",
	"partial_send",
	"recv_v2",
	"reduce_scatter",
	"send_v2",
}

// IsCollective reports whether ops of type t communicate between ranks. A
// collective must run on every rank of its group, so no pass may drop one
// on some ranks only.
func IsCollective(t string) bool {
	_, ok := slices.BinarySearch(collectiveTypes, t)
	return ok
}

// sideEffects lists op types that act beyond their outputs: I/O, checks
// and control flow. Dead-code elimination keeps them.
var sideEffects = map[string]bool{
	"feed": true, "fetch": true, "fetch_v2": true, "print": true, "assert": true, "save": true,
	"save_combine": true, "load": true, "load_combine": true, "while": true, "conditional_block": true,
	"check_finite_and_unscale": true, "update_loss_scaling": true,
}

// HasSideEffects reports whether ops of type t matter beyond the values
// they write: collectives, I/O, checks and control flow.
func HasSideEffects(t string) bool { return sideEffects[t] || IsCollective(t) }
