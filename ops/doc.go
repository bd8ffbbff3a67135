// Package ops is the table of op definitions: for each op type the IR
// knows, its input and output slots as Paddle names them (required,
// optional, variadic), its attrs (kind, default, allowed values), how
// its outputs' dtypes and shapes follow from its inputs (with -1 for an
// unknown dim and Paddle's broadcasting and axis rules), whether it is
// elementwise, a reduction or a view, and its gradient: the grad op's
// type and how its slots relate to the forward op's.
//
// Definitions are Go values, one file per op family (matmul.go,
// elementwise.go, conv.go, ...), registered in one list (families in
// table.go). The grad op of a def whose Grad is data is derived from it
// (its slots, attrs and inference); a grad op built by Emit is an op
// type of its own.
//
// A def may also give the op's sharding rule (Sharding, and ShardingDoc):
// how its inputs' and outputs' dims relate when they are split over a
// mesh, in both directions, as Paddle's phi SPMD rules say
// (InferSpmd and InferSpmdReverse). Rules are built from package spmd,
// the algebra of shardings, which names no op type. Most rules are an
// spmd.Einsum: a letter per dim of each arg, merged (spmd.Merge) as
// Paddle's ShardingMergeForTensors does; a letter only inputs have is
// contracted, and makes the outputs partial. ShardingRuleOf builds an
// op's rule from its types and attrs.
//
// A rule prints itself (spmd.ShardingRule's Notation) in the notation
// custom ops' definition files state (spmd.Notation). The builders are
// rank-polymorphic code, so Def.Rule prints a def's rule by building it
// on sample ops of the def (RuleSample: its required slots, its attr
// defaults, inputs of a rank) at consecutive ranks and folding the
// leading dims that vary into "..."; a rule whose attrs pin dims from
// the front (a reduction over dim 0) prints as an instance, named. What
// it prints is what `distpass ops` and docs/rules.md show; ShardingDoc
// is the prose beside it: the Paddle rule it follows, and why.
// A gather or scatter whose index holds positions into each rank's own
// rows (assign_pos's, and what the KeepsIndex ops make of them) has
// another rule, LocalIndexRule, which its caller chooses by the index
// var's dist: local [d] (ir.TensorDist.Local) says its values index the
// rows of each rank split along mesh dim d, and the rows the op indexes
// stay split along d.
//
// A def may also check what an op needs beyond its types (Check: the
// reshard's two dists).
//
// An attr of kind int (ints) is Paddle's 32-bit int (std::vector<int>),
// one of kind long (longs) its int64_t; Verify refuses an int attr's
// value outside int32's range. In a per-rank program Verify also holds
// each collective to the module's group table (rankcheck.go).
//
// Everything that needs to know an op type reads this table: Verify
// (slots, attr kinds and ranges and declared shapes against inference), autodiff's
// grad makers, the simulator's kernel set (checked against it in a
// test), `distpass ops` and README's op list. It imports only packages
// ir and spmd, so that every layer above may.
package ops
