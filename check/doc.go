// Package check proves a partition right by running it: it partitions
// every rank, runs the serial training step and the SPMD step (every
// rank at once, collectives included) from identical values, and compares
// the loss, the parameters after the update, their gradients and every
// forward activation, shard by shard.
//
// MeasureTraffic runs one SPMD training step the same way and records the
// bytes each collective moved on each rank (through sim.SPMD's Observe
// hook), which is how the data-dependent MoE exchanges get a figure; see
// analysis.Comm for the static one.
package check
