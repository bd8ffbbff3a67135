// Package irgen generates modules for tests and benchmarks: random modules
// that exercise every corner of the IR and its text format, and valid,
// training-shaped synthetic programs of a chosen size.
package irgen
