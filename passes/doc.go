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
// verify-each, print-before/print-after, print-changed (a unified diff,
// only when the structural hash changed), time-passes, counters,
// bisect-limit, dump-dir and the crash reproducer. The run loop is short:
// instruments before, run, invalidate the analyses the pass does not
// preserve, instruments after (verification among them).
package passes
