// Package custom adds op types to distpass without editing it: from a
// definition file (Parse, Load), or from Go (ops.Add and sim.Register,
// which Define calls for a parsed file).
//
// A definition file states, for each op type, its slots and attrs, one
// rule in a printable notation that gives both the outputs' shapes and
// how the op distributes, and the op's meaning as ops distpass knows.
// The meaning gives the simulator the op's kernel, and autodiff its
// gradient: the grad op's kernel differentiates the meaning with the
// same append-backward the programs go through. Completion and the
// lowering read the rule as they read a built-in op's, and check proves
// the result by running the meaning.
//
// The format, one statement a line, # to the end of a line a comment:
//
//	optype gap {
//	  doc "the mean of each (n, c) plane of X, kept as [n, c, 1, 1]"
//	  input X
//	  output Out
//	  attr test_attr1 : ints = [1, 2, 3]
//	  attr test_attr2 : int
//	  rule (X: nchw) -> (Out: nc11) avg
//	  meaning {
//	    reduce_mean(X: X) -> (Out: Out) {dim = [2, 3], keep_dim = true}
//	  }
//	}
//
// input NAME [nograd] declares an input slot (nograd: no gradient flows
// into it, an index or a label); output NAME an output slot; each slot
// takes one arg. attr NAME : KIND [= VALUE] declares an attr of a kind of
// the text format (int, long, float, float64, bool, string and their
// lists), with a default written as the text format writes values.
//
// The rule spells every slot's dims with one character each: a lowercase
// letter is a dim that may be split over a mesh dim (pass-through when an
// output has it, a reduction when only inputs do: the outputs are then
// partial along its mesh dim, reduced by the rule's last word, sum, avg,
// max or min; sum when omitted); an uppercase letter a dim that must stay
// whole (need-replication); 1 a dim of size 1, never split. An output's
// dims are the sizes of its letters in the inputs, and 1 for a 1; an
// uppercase letter only outputs have is a whole dim whose size the
// meaning gives. A slot's dims may start with ... for any number of
// leading dims, split like lowercase letters: right-aligned and shared
// across the inputs that have it, an output's the longest input's (as
// matmul's batch dims: rule (X: ...mk, Y: ...kn) -> (Out: ...mn) sum).
// After the reduction, words set what an einsum rule may: strict (a mesh
// dim on two dims is an error, where the merge otherwise keeps the
// first), strict-backward (so in Backward only), no-partial (the op
// reduces its partials itself), select:LETTERS (letters that pick a
// slice, not summed). The notation is package spmd's (spmd.Notation),
// the one the built-in rules print themselves in (distpass ops TYPE,
// docs/rules.md); a free slot (*) is theirs only.
//
// The meaning is ops in the text format's op syntax without ids:
// type(Slot: arg, ...) -> (Slot: arg) {attrs}. An arg named as a slot of
// the op type is that slot's tensor; any other name is a temporary,
// written before it is read. Every output slot is written; no input slot
// is. Names with @ are reserved. The outputs' dtypes are the meaning's,
// their shapes the rule's, and verify refuses an op whose meaning infers
// another shape than its rule.
package custom
