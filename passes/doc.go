// Package passes holds distpass's pass infrastructure and its passes.
//
// A Pass is a value: a kebab-case name, a doc whose first line is a
// summary, typed options with defaults, the analyses it preserves, and Run.
// A Registry lists passes as data, with ordering rules ("a must run before
// b", each with its reason) as data too. A Pipeline is parsed from text,
//
//	verify,dce{keep=loss},repeat{count=2}(canonicalize-names,verify)
//
// where {…} holds options and (…) the sub-pipeline of a pass that takes
// one, and prints back to the same text.
//
// The Manager runs a pipeline over an ir.Module, in place, with
// Instruments in the style of MLIR's pass instrumentation, one per file:
// verify-each (which also fails a PreservesAll pass that changes the
// module's structural hash), print-before/print-after, print-changed (a unified diff,
// only when the structural hash changed), time-passes, counters,
// bisect-limit, dump-dir and the crash reproducer. The run loop is short:
// instruments before, run, invalidate the analyses the pass does not
// preserve, instruments after (verification among them).
//
// The partition passes turn an annotated serial module into one rank's
// program (Partition; PartitionAll for every rank, plainly). For many
// ranks, PartitionClasses lowers once per class of ranks that belong to
// the same meshes and answer alike what that lowering read of the rank
// (lower.RankRead), and relabels the rank-dependent attrs (ring ids,
// embedding offsets) for the others. Errors name the rank and the op
// (lower.OpError).
// Partitioning allocates a large part of the module's heap again per
// rank, and keeps little of what it reads alive: in a long-lived process
// that partitions small modules one after another, the live heap stays
// small and the default GOGC collects every run or two, so the collector
// (and, on a second core, the runtime returning memory to the system) can
// cost more than the lowering. The distpass command raises GOGC until its
// heap is large (internal/gctune). BENCHMARKS.md, at the repository's
// root, has the figures of partitioning and the commands that make them.
//
// The training passes append-backward and append-optimizer, and
// annotate-data-parallel (the data vars' batch split, then complete,
// refusing what does not run on batch shards alone), build what the
// partitioner takes; complete infers the dists, and insert-reshards makes each data movement they
// need an explicit reshard op.
package passes
