// Package sim is distpass's simulator: reference kernels for the op types
// the registry and the example models use (forward and grad), a serial
// interpreter that runs a module's startup and main programs, and Comm,
// where the ranks of an SPMD run meet for collectives. The SPMD runner,
// which executes every rank's partitioned program at once, builds on the
// same Tensor, Kernels and Interp types through Hooks and on Comm. An
// SPMD run's Observe hook sees every collective each rank runs, with its
// tensors (check.MeasureTraffic measures traffic with it); OpTime, on
// an Interp or an SPMD run, times every op's kernel (check's summary of
// where the time went on a terminal), and reads no clock when nil.
//
// # Values
//
// A Tensor is dense and row-major. Every dtype's values are held as
// float64: f32 (and f16/bf16, which the simulator does not model more
// finely) results are rounded to float32 after every kernel; integer
// dtypes are truncated toward zero and are exact up to 2^53; bool is 0 or
// 1. The rounding happens in the kernels DefaultKernels returns (each is
// wrapped), so a test calling a kernel of the table sees rounded values.
//
// # Kernels
//
// A Kernel maps an op and its input tensors, by slot name, to its output
// tensors by slot name. Kernels never modify their inputs. A kernel
// returns the output slots the op declares with args; a grad op's empty
// output slots (X@GRAD: []) need not be computed, and the interpreter
// ignores any slot the op does not declare.
//
// Random ops are pure functions of their seed attr. uniform_random and
// gaussian_random draw from math/rand/v2's PCG seeded with (seed, 0), one
// draw per element in row-major order: min + (max-min)*Float64() and
// mean + std*NormFloat64(). A seed of 0 is seed 0, not a fresh seed.
// dropout keeps element i when DropoutUniform(seed, i) >= dropout_prob.
// An op partitioned for a rank carries global_shape and shard_offset: it
// writes the block at shard_offset of the tensor it would draw with shape
// global_shape (i is then the element's linear index in that tensor), so
// each rank's program draws its part of the serial program's numbers.
//
// # Interpreter
//
// Interp runs a program's block 0 in order in one flat Scope: while re-runs
// its sub_block while its Condition is true, conditional_block runs its
// sub_block when Cond's first element is true. Sub-block vars live in the
// same scope (names are unique per module in the programs distpass
// builds). Collectives are handed to Hooks.Collective. Without one, a
// serial program (rank -1) runs them as a world of one rank: reductions,
// gathers and all-to-alls return their input, and global_scatter and
// global_gather exchange rows with themselves, which is the identity on
// rows sorted by expert; so a serial MoE program is well defined. A
// rank's program without the hook is an error. A kernel (or hook) that
// panics fails the run with a KernelPanic naming the op, not the process.
//
// Every tensor an op computes is compared with its var's declared dtype
// and shape (in a rank's program, the local shape; a -1 dim matches any
// size): a mismatch fails the run, naming the op, the var and both types.
// The while loops of one run of a program share one budget of work
// (Interp.MaxLoopOps, DefaultMaxLoopOps), so that nested loops cannot
// multiply their iterations into a run that never ends.
//
// # SPMD runs
//
// The k-th collective a rank issues on a group meets the k-th of every
// other member. Members must agree on the collective, its ring and, where
// the collective needs equal parts (all-reduces, broadcasts, all-gathers
// and concats, all-to-alls, and the row width of the MoE exchanges), on
// dtype and shape; members that carry an origin_op attr (the serial op
// whose lowering emitted the collective) must carry the same, so that a
// rank that swaps or drops one of two like collectives fails where they
// first meet. A send_v2 must meet its peer's recv_v2 on the same ring (a
// peer attr is the other rank's index in the ring's group, as in Paddle). A
// disagreement is an error naming both ranks and their ops. A rank whose
// program ends fails at once the collectives its peers wait for it in;
// once every rank still running waits in a collective that misses a
// member, the run fails at once as a deadlock, naming each wait; a wait
// also has a deadline (SPMD.Deadline), which bounds how long a rank may
// compute while its peers wait; and a panic in a rank's goroutine becomes
// that rank's error. So a broken partition ends in an error naming ranks
// and ops, never in a hang.
//
// # MoE exchanges
//
// global_scatter and global_gather (the SPMD runner, and the serial
// world of one) take X and two int64 count vectors of n_expert × world
// entries. Scatter sends local_count[i] consecutive rows of X to expert
// i % n_expert of member i / n_expert and lays out what it receives
// expert-major, then by source member; gather is the inverse. Every
// member joins each exchange, with zero rows if it has none, and the
// counts must agree pairwise (what j sends i is what i expects from j):
// a disagreement is an error naming both ranks, where NCCL would hang or
// corrupt.
package sim
