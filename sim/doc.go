// Package sim executes distpass programs on the CPU: reference kernels, a
// serial interpreter, and (growing) an SPMD runner whose ranks meet for
// collectives in a Comm, so that a partition can be proven right by
// running it against the serial program.
package sim
