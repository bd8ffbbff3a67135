// Package check proves a partition right by running it: it partitions
// every rank as partition -all writes it, runs every rank's startup and
// compares it with the serial startup's shard by shard, exactly, then
// runs the serial training step and the SPMD step (every rank at once,
// collectives included) step by step and compares, after each, the
// loss, the parameters, their gradients, every other persistable and
// every forward activation, shard by shard on every rank. Placement is
// the serial module's: a rank its mesh places a block on must hold it,
// ranks holding the same block must hold the same bits, and a part that
// declares a serial var or mesh otherwise is refused. Values compare
// within DefaultTol over Floor (integers exactly).
//
// MeasureTraffic runs one SPMD training step the same way and records the
// bytes each collective moved on each rank (through sim.SPMD's Observe
// hook), which is how the data-dependent MoE exchanges get a figure; see
// analysis.Comm for the static one.
package check
