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
// GPT returns a pre-norm GPT decoder (embeddings, attention with a causal
// mask, gelu MLP, untied LM head, softmax_with_cross_entropy and a mean
// loss); AnnotateGPT and GPTTraining are its Annotate and MLPTraining.
// TinyGPT is the config tests run; GPT2Small and GPT3 are shapes for
// benchmarks.
//
// Besides ir, the package imports passes, for MLPTraining's and
// GPTTraining's append-backward and append-optimizer; passes must never import models.
package models
