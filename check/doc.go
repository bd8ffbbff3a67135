// Package check proves a partition right by running it: it partitions
// every rank, runs the serial training step and the SPMD step (every
// rank at once, collectives included) from identical values, and compares
// the loss, the parameters after the update, their gradients and every
// forward activation, shard by shard.
package check
