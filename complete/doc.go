// Package complete is sharding completion: from a few annotated tensors
// (the data split on dp, these weights on mp) it infers the dist of
// every var and op of a module's main program, and picks each op's
// dist-op impl, as Paddle's Completer does, with the op table's sharding
// rules (ops).
//
// It works in four steps, each deterministic (program order, no map
// order), and reports what it decided:
//
//  1. Meshes. In settling order, an op without a mesh takes its first
//     annotated arg's (inputs, then outputs: the user placed it), else
//     its first arg's that its producer gave one, else, for a source (a
//     fill), its first reader's, else the nearest op's before it, else
//     after it; its args without a mesh take the op's. With one mesh,
//     everything is on it.
//  2. Fixpoint. Every forward op's rule runs both ways (Forward on its
//     inputs' mappings, Backward on its outputs') over a lattice where a
//     var's dim only goes from replicated-and-open to split along a mesh
//     dim, and an annotated var is closed. A dim takes the first mesh dim
//     proposed to it; a later, different one loses and is listed with
//     both origins (a Conflict), as is a mesh dim that does not divide
//     the dim (Uneven: it stays replicated). Ops are visited in sweeps,
//     forward then backward in program order, only those whose args
//     changed, under a cap on the visits. Nothing flows back into
//     another mesh; an input on another mesh of the same shape (the
//     previous pipeline stage) is read with its placement.
//  3. Settling. In program order (a sub-block's ops before the op that
//     owns it), each forward op takes what its rule requires of its
//     inputs given their settled dists and its outputs' fixpoint
//     mappings (a mesh dim that would split an output dim it does not
//     divide splits none of its args), and gives its outputs the rule's
//     mappings and partials. What the op requires is its op dist; a
//     var's dist is its producer's (an unproduced var's is what its
//     consumers proposed, completed by its first reader's requirement).
//     Where the two differ the module needs a reshard there, listed in
//     the report (Reshard), except where the op reads a partial value as
//     it is: a linear op carries it into Out (ops.PassesPartial), as a
//     sum does parts partial alike (a var's grad parts), an MoE op reads
//     its own part (the op table's OwnPart trait). The impl is the
//     first that fits (lower.Fitter), asked as the op will read its
//     inputs once resharded, in a fixed order: the op type's own impls,
//     default, elementwise (for elementwise ops), spmd:0; an impl that
//     reduces its rule's partial output itself (lower.Impl.Reduces)
//     makes it whole unless Options.Lazy.
//     Rank-local positions are a var's dist's local dims
//     (ir.TensorDist.Local): completion gives assign_pos's Out local [d]
//     when the op reads its X's rows split along mesh dim d, and an
//     integer output of an op that keeps indices (ops.KeepsIndex:
//     integer arithmetic, casts, views) its first local input's, in the
//     fixpoint as mappings grow and again as each op settles; a var the
//     user annotated keeps its own, local dims or none. A gather or
//     scatter whose index var is local [d] on the op's mesh runs
//     ops.LocalIndexRule instead of its rule, in the fixpoint and
//     settling alike: the rows it indexes stay split along d (the MoE
//     dispatch reads each rank's own tokens, and its combine writes
//     each rank's own slots). Where they cannot be (a given local [d]
//     over rows no rank splits), check-annotations refuses the module,
//     naming the var or the op.
//  4. Backward and optimizer ops follow their forward ops: a grad op
//     takes its forward op's mesh and impl, each forward var its forward
//     op's mapping, X@GRAD its forward var's, and its grads are whole
//     (the impls' backward reduces them); the grad op of an op the
//     rule-based impl lowers runs its own rule instead, on the forward
//     vars as its forward op read and wrote them (an input it
//     all-gathers stays gathered, its weight split), its grads partial
//     as the rule says, averaged along the mesh dims the loss averages
//     over (lower.SPMDGradPartial). Grad ops without a
//     forward op (sum, the loss grad) and optimizer ops run their rules
//     on their settled inputs (an optimizer's state follows its Param).
//
// A var or op that already has a dist keeps it: completion is
// incremental, so completing, appending the backward and completing
// again gives the grads their dists, and an op a user annotated (an MoE
// exchange placed on the experts' mesh) is kept as written while the rest completes around it. One exception:
// a grad var whose dist is its forward var's mesh and mapping, not
// partial (what append-backward copies onto a grad of an annotated var),
// keeps that mapping but takes the partial state its writer gives (a
// rule-based grad op leaves a param grad partial over the batch's mesh
// dims), and its readers that need it whole get a reshard. A reshard op
// without an impl is given the op dist its vars say (Out's mesh, each
// var's mapping, impl reshard:0) and kept, and is never itself listed as
// a reshard needed. An op type
// without a rule is a barrier: its args replicated, listed in the
// report. Ops that would build equal rules share one, and a rule's
// answers are kept by its mappings: a model repeats its layers.
package complete
