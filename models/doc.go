// Package models builds example programs: serial, forward-only modules
// that the autodiff and optimizer passes complete into training programs,
// and the sharding strategies that annotate them for partitioning.
//
// MLP returns a multi-layer perceptron (matmul_v2, elementwise_add, relu,
// then a mean loss) with its startup program. Annotate gives every var and
// op of such a module a distribution for a strategy: "dp" (data
// parallel), "mp" (Megatron tensor parallel) or "dp,mp" (both).
// MLPTraining puts the pieces together for tests and the CLI: the forward
// module, append-backward, the strategy and append-optimizer.
//
// Besides ir, the package imports passes, for MLPTraining's
// append-backward and append-optimizer; passes must never import models.
package models
