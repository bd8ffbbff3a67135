package ir

// collectives lists the op types that communicate between ranks, in both
// the Paddle "c_" dialect and the newer names. A collective must run on
// every rank of its group, so no pass may drop one on some ranks only.
var collectives = map[string]bool{
	"c_allreduce_sum": true, "c_allreduce_max": true, "c_allreduce_min": true, "c_allreduce_prod": true,
	"c_identity": true, "c_allgather": true, "c_concat": true, "c_split": true, "c_broadcast": true,
	"c_reducescatter": true, "c_reduce_sum": true, "c_alltoall": true,
	"all_reduce": true, "all_gather": true, "broadcast": true, "reduce_scatter": true, "reduce": true,
	"alltoall": true, "all_to_all": true, "global_scatter": true, "global_gather": true,
	"send_v2": true, "recv_v2": true, "partial_send": true, "partial_recv": true, "barrier": true,
}

// IsCollective reports whether ops of type t communicate between ranks.
func IsCollective(t string) bool { return collectives[t] }

// sideEffects lists op types that act beyond their outputs: I/O, checks
// and control flow. Dead-code elimination keeps them.
var sideEffects = map[string]bool{
	"feed": true, "fetch": true, "fetch_v2": true, "print": true, "assert": true, "save": true,
	"save_combine": true, "load": true, "load_combine": true, "while": true, "conditional_block": true,
	"check_finite_and_unscale": true, "update_loss_scaling": true,
}

// HasSideEffects reports whether ops of type t matter beyond the values
// they write: collectives, I/O, checks and control flow.
func HasSideEffects(t string) bool { return sideEffects[t] || collectives[t] }
