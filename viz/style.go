package viz

import (
	"slices"

	"github.com/distpass/distpass/ir"
)

// collectiveTypes lists, sorted, the op types drawn as communication: the
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

// isCollective reports whether ops of type typ communicate between ranks.
func isCollective(typ string) bool {
	_, ok := slices.BinarySearch(collectiveTypes, typ)
	return ok
}

// roleClass is the colour class of an op.
type roleClass uint8

// The colour classes, in the order roleClassOf tests them.
const (
	classLoss     roleClass = iota // forward|loss: computes the loss
	classLossGrad                  // backward|loss: seeds the backward pass
	classOptimize                  // any role with the optimize bit (optimize, optimize|lrsched)
	classBackward                  // any other role with the backward bit
	classForward                   // exactly forward
	classOther                     // rpc, dist, lrsched alone, unknown bits
)

// roleFill is the fill colour of each class: light tints, so that the
// black labels stay readable and a collective's red border stands out.
var roleFill = [...]string{
	classLoss:     "#f4a6bd", // pink
	classLossGrad: "#f9d3df", // pale pink
	classOptimize: "#c9e7c4", // green
	classBackward: "#fdd9b0", // orange
	classForward:  "#cfe2f3", // blue
	classOther:    "#e3e3e3", // grey
}

func roleClassOf(r ir.Role) roleClass {
	switch {
	case r.IsLoss():
		return classLoss
	case r.IsLossGrad():
		return classLossGrad
	case r.IsOptimize():
		return classOptimize
	case r.IsBackward():
		return classBackward
	case r == ir.RoleForward:
		return classForward
	}
	return classOther
}

// The other colours of a drawing.
const (
	collectiveColor = "#d62728" // border of a collective op
	paramFill       = "#fff2a8" // param vars
	persistFill     = "#e8e8e8" // other persistable vars
	faintColor      = "#8c8c8c" // undeclared and outer vars, sub-block edges, cluster borders
	noteFill        = "#fff59d" // the note on cuts and missing blocks
)
