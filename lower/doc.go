// Package lower holds distpass's distributed-op implementations: how
// each annotated serial op becomes the ops of one rank.
//
// An Impl is a value: a name, a compatibility check that says why an op's
// mappings do not fit, and Forward and Backward lowerings that emit ops
// through a Lowering. A Container groups the impls of one impl type by index;
// a Registry holds the containers, filled by explicit Register calls
// (DefaultRegistry lists every built-in impl; nothing registers itself).
// Registry.Lower is the driver: it lowers one phase of a module's ops,
// and reports what the impls read of the rank (RankRead: Lowering.Rank,
// Lowering.Coord, a gather's member order, or Lowering.ShardStart put
// anywhere but a c_embedding's start_index), by which
// passes.PartitionClasses forms its classes: ranks that answer every read
// alike lower alike, but for the ring ids and embedding offsets that the
// classes relabel.
//
// The emitted sequences follow Paddle's older ("G1") partitioner, which is
// Megatron-LM's f/g scheme, without its c_identity markers in row-parallel
// and embedding backward. Every op a lowering inserts (or keeps and
// rewrites) carries an "origin" attr naming the impl and the reason, and
// an int "origin_op" attr, the id of the serial op lowered: what every
// rank's copy of a collective shares, so that the SPMD runner can tell
// two same-shaped collectives apart.
//
// A Paddle-flavoured impl accepts exactly the dists its op's sharding
// rule accepts, checked as the rule-based impl checks them (an impl that
// Reduces may also have the rule's partial output whole), plus a
// constraint of its own, one named predicate (the MoE exchanges and
// capacity ops, whose rules leave their counts and rows free, check
// those by hand).
//
// Besides the Paddle-flavoured impls, the generic rule-based impl (SPMD,
// impl spmd:0) lowers any op with a sharding rule (ops): each
// rank computes the op on its shards as the rule maps them, outputs
// partial where the rule says, and emits no collective; its grads are
// partial too, averaged where the loss is (SPMDGradPartial), and
// whatever must move is left to reshards.
//
// Reshard ops (impl reshard:0, Reshard) are lowered in every phase on
// the ranks of either end's mesh, and those of block 0 of the startup
// program with the forward phase, on the same lowering state (so that
// their rank reads count): on one mesh, a plan of per-mesh-dim
// steps (spmd.PlanReshard: slices first, then reduce-scatters,
// all-to-alls, all-reduces, gathers and pads, and last the local steps
// into partial states) moves
// few bytes and never goes through a replicated value where a direct
// step exists; across two meshes of one shape, the sender shrinks its
// part toward the destination, sends it to the rank at its coordinate
// (send_v2, peer being the index in the pair's ring), and the receiver
// does the rest. Ops of a mesh a rank is not in are dropped from its
// program: each pipeline stage keeps its own.
//
// Expert parallelism (expert_parallel impls of global_scatter,
// global_gather, alltoall, grouped_matmul, limit_by_capacity and
// prune_gate_by_capacity): the serial program's exchanges are a world of
// one; lowering points them at the group of the mesh dim their
// expert_axis attr names, and rewrites the capacity ops' worker counts.
// A ring lists its members ascending while the experts follow mesh
// coordinates, so an exchange whose group holds them in another order is
// refused (its member order is a rank read).
// Expert weights split along that dim are averaged over it without
// communication; see GroupedMatmulExpert for why.
package lower
