// Package spmd is the algebra of shardings that the op table's rules
// are made of. A tensor's sharding is a dims_mapping: per tensor dim, the
// mesh dim it is split along, or -1; a value may also be partial along
// some mesh dims, each rank holding a part awaiting a reduction.
//
// It holds:
//
//   - ShardingRule, the relation of an op's input and output mappings in
//     both directions, and Sharding, what a rule gives;
//   - Einsum, the rule of most ops: a letter per dim of each arg, the
//     mappings merged letter by letter (Merge, LetterMap), a letter that
//     only inputs have making the outputs partial;
//   - Notation, the one notation of rules: what a custom op's
//     definition file states (ParseNotation) and what every rule prints
//     (ShardingRule.Notation), "..." standing for leading dims (Expand);
//   - ExactPartial: which partial states a dtype holds exactly;
//   - ReshapeSharding and ReshapeShardingReverse: which dims keep their
//     sharding when a reshape regroups them;
//   - NeedsReshard and SameMesh: whether an op sees a var otherwise than
//     as it is, so that its data must move first;
//   - PlanReshard: the steps (Step, StepKind) that turn one placement of
//     a tensor into another on one mesh, each mesh dim's Place given by
//     PlacesOf and turned back into a dist by DistOf.
//
// It names no op type: what an op is (its slots, its traits, whether it
// reads its own part of a partial value) is the op table's, package ops,
// whose callers pass it in. Package ops builds each op type's rule from
// this package; completion, check-annotations, insert-reshards and the
// lowering (package lower) read the rules and the rest of it. It
// imports only package ir.
package spmd
