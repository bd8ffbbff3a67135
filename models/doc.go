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
// MoE, AnnotateMoE and MoETraining are the same for a mixture-of-experts
// layer. TinyGPT is the config tests run; GPT2Small and GPT3 are shapes
// for benchmarks.
//
// A strategy is seed annotations plus completion: it states the data
// vars' batch split, the params' splits and, where the sharding rules
// cannot say it, a few ops' dists (the MoE exchanges between two meshes
// under "dp,ep"; under the sequence-parallel "mp,sp" and "dp,mp,sp", the
// ops at each tensor-parallel region's edge, where the sequence is
// gathered and reduce-scattered), and package complete infers every
// other dist and impl; a strategy completion would need a conflict, an
// uneven split or a reshard for (but those edges') is refused.
// complete's TestZoo holds the strategies to a record of the
// hand-written ones they replaced.
//
// Besides ir, the package imports passes, for the training programs'
// append-backward and append-optimizer, and complete; passes must never
// import models.
package models
