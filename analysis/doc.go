// Package analysis computes read-only facts about an ir.Module, on
// demand and cached, for the passes that transform it: which ops define
// and use each var, what role each op plays, which forward op and var
// each grad op and grad var belongs to, whether the module is completely
// annotated, and each var's local shape on a rank.
//
// # Analyzers
//
// An Analyzer is a value: a kebab-case Name ("def-use",
// "local-shapes{rank=3}"), a Doc, the analyzers it Requires, and a Run
// function that receives its Inputs (the module and the results of its
// requirements) and returns a result or an error. Validate checks a set
// of analyzers up front: names, docs, acyclic requirements.
//
// A Cache computes the results for one module, once each, and keeps them
// until they are invalidated:
//
//	cache := analysis.NewCache(m)
//	du, err := analysis.Get[*analysis.DefUseInfo](cache, analysis.DefUse)
//	...
//	cache.Invalidate(pass.Preserved()...) // after each pass
//
// Results are keyed by name, so two analyzers with one name are one
// analysis (LocalShapes(3) returns the same analyzer each time anyway).
// Errors are cached like results. Invalidate keeps only what a pass
// preserved, and drops a preserved analysis whose requirement is not
// kept; Closure gives the set to preserve for analyses kept true. A
// Cache is safe for concurrent use, and computes distinct analyses in
// parallel. Stats reports hits and misses per analyzer.
//
// # The analyses
//
//	Index           *IndexInfo          names resolved: vars numbered and indexed, op args resolved, ops by id
//	DefUse          *DefUseInfo         Defs, Uses of each var; Users of an op
//	Roles           *RoleInfo           each op's RoleClass; first loss and loss-grad op and counts per block
//	GradMaps        *GradInfo           grad op -> forward op, grad var -> var, param <-> grad
//	Annotations     *AnnotationReport   every missing or unusable dist annotation
//	LocalShapes(r)  *LocalShapeInfo     each var's shape on rank r, and whether r is in its mesh
//	Comm            *CommReport         a partitioned module's collectives, their groups, axes and bytes
//	Memory          *MemoryReport       a partitioned module's parameter, persistable and activation bytes
//
// Annotations is check-annotations' list (AnnotationReport says each
// rule). Among them, rank-local positions (localindex.go): a var's dist
// says local [d] (ir.TensorDist.Local) when its values index each rank's
// own rows split along mesh dim d, and the checker derives, op by op,
// which vars are such positions (assign_pos over rows split along d;
// integer arithmetic, casts and views of a local [d] var) and holds each
// var's local dims to that both ways, naming the var, before it checks
// the gathers, scatters and reshards that read them by those dims.
//
// Index does the bulk of the name hashing, once; the others require it
// and work on the numbers it hands out. Each analysis costs O(ops + vars +
// args) time and a few dozen allocations, a number that grows only
// logarithmically with the module; see BenchmarkAnalyses.
//
// # Communication cost
//
// Comm and Memory describe a partitioned module (main's Rank set, the
// group table filled): they fail on a serial one. A var's declared shape
// is then its local shape, which is what they read (LocalShapes is for
// serial modules, whose declared shapes are global).
//
// Comm lists every collective (ops.IsCollective) of main and startup, all
// blocks, in program order, and every sync_batch_norm and
// sync_batch_norm_grad, which all-reduce inside their kernel, with the
// bytes this rank moves for one run of it. With n the size of the op's
// group and size the local bytes (elements × dtype size) of its payload,
// as each collective's record states it (ops.Def.Cost):
//
//	c_allreduce_*, all_reduce, mp_allreduce_sum   2(n-1)/n × size(X)    ring allreduce: reduce-scatter, then allgather
//	c_allgather, all_gather, c_concat,            (n-1)/n × size(Out)   ring allgather: receive the n-1 other shards
//	  partial_allgather
//	c_reducescatter, reduce_scatter               (n-1)/n × size(X)
//	alltoall, all_to_all, c_alltoall              (n-1)/n × size(X)     keep 1/n, send the rest
//	c_broadcast, broadcast                        (n-1)/n × size(X)     the ring algorithm's cost: n-1 of the n ranks
//	                                                                    forward the whole payload, averaged over the ranks
//	c_reduce_*, c_scatter                         (n-1)/n × size(X)     as broadcast, in reverse or in slices
//	global_scatter, global_gather                 data-dependent        (n-1)/n × size(X) when X's rows are known
//	send_v2, p_send / recv_v2, p_recv             size(X) / size(Out)
//	partial_send / partial_recv                   size / num
//	c_identity, c_split, barrier                  0                     local (c_split keeps its slice)
//	sync_batch_norm, sync_batch_norm_grad         2(n-1)/n × (2C+1)·s   one all-reduce of the per-channel sums and the
//	                                                                    element count, C = len(Scale), s = 8 for an f64
//	                                                                    X, else 4; 0 with running statistics (is_test)
//
// A group of one rank moves 0. Figures are rounded to whole bytes, half
// up (computed in integers, as k(n-1)q + round(k(n-1)r/n) for size =
// qn + r), op by op; totals are sums of the rounded figures, so they add
// up to the column. A payload with a dim of unknown size (-1) has no
// figure: the op is marked DataDependent, which is the rule for the MoE
// exchanges, whose row blocks are decided by the routing at run time
// (check.MeasureTraffic measures them). CollectiveBytes is the table as
// a function, but for sync_batch_norm, whose buffer is the op's own.
//
// The group is the ring_id's entry in the module's group table (a
// point-to-point op with a peer attr: this rank and the peer; ring 0 for
// a sync_batch_norm without ring_id, as Paddle). Its axis is the name of
// the first mesh dim whose group for this rank is that rank list,
// looking in the op's mesh first, then in every mesh in order; else
// "world" when the group is every rank of the module, else "group N" for
// ring N ("p2p" for a peer pair without a ring). Totals are per program
// (main per training step, startup once), per axis and per collective
// type.
//
// Memory sums the local bytes of main's dense vars in three classes:
// parameters (kind param), other persistables, and the non-persistable
// vars (activations, grads and temporaries, all counted at once, so an
// upper bound rather than a peak); a var with a dim of -1 is left out
// and counted as unknown.
//
// Ops are located by OpRef (block index and position) within their
// program, vars identified by VarID (program, declaring block, name).
// Both stay valid while the result that gave them out is cached: a pass
// that moves ops or vars does not preserve the analyses.
//
// The analyses read the module and never write it, so several caches
// may analyse one module from several goroutines. They do not verify it either: names that
// resolve to nothing and other broken rules are skipped or reported as
// the analysis says, never a panic; ir.Verify reports them.
package analysis
