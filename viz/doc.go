// Package viz draws programs as Graphviz DOT, through
// github.com/emicklei/dot. DOT draws one program as one digraph;
// ModuleDOT draws each program of a module, main first, then startup.
// Render the text with Graphviz: dot -Tsvg main.dot > main.svg. It also
// writes the pass explorer, an HTML page of a pipeline's runs.
//
// # What a drawing shows
//
// Each block is a cluster labelled "block N", with its parent and forward
// block when it has them ("block 3 (parent 0, forward 1)"). Clusters are
// siblings, not nested: the label names the parent, and a broken parent
// chain (a cycle, a bad index) needs no special case.
//
// An op is a box labelled "op <id> <type>" and, when it has an OpDist,
// its implementation ("matmul_v2:0", "recompute" when set). Its fill says
// its role: blue forward, orange backward, green optimize (any role with
// the optimize bit, such as optimize|lrsched), pink the loss op
// (forward|loss), pale pink the op that seeds the loss gradient
// (backward|loss), grey anything else (rpc, dist, lrsched alone).
// Collectives (c_allreduce_sum, c_identity, send_v2, global_scatter, ...:
// one list in style.go; c_embedding is not one) are square boxes with a
// thick red border; other ops have rounded corners.
//
// A var is drawn once, in the cluster of the block that declares it, even
// when ops of sub-blocks use it. Its label is its name, its type and its
// distribution as the text format writes them:
//
//	x
//	f32[8, 16]
//	@world[0, -1] partial [0:avg]
//
// Plain vars are ellipses, persistables grey cylinders, params yellow
// cylinders. A name no block on the parent chain declares (a broken
// module) is a dashed grey ellipse labelled "undeclared"; drawing never
// fails.
//
// Data flows along edges var -> op for inputs and op -> var for outputs.
// An edge is labelled with its slot's name when the op has more than one
// slot on that side; with a single slot the arrow says it all. An output
// that the op also reads (sgd's ParamOut, an in-place increment, a while
// op's loop-carried vars) is written var -> op with dir=back: it looks the
// same but does not drag the var below the ops that read it.
//
// An op whose attrs refer to a block (sub_block = ^1) has a dashed grey
// edge, labelled with the attr's name, to that block's cluster: the edge
// ends at the cluster's border (lhead) and is routed to the cluster's
// first op, or its first node when it has no op; a block without ops and
// vars shows an "empty block" text node so that its cluster is drawn. An
// op that refers to its own block gets a plain edge to that first node
// (Graphviz rejects lhead when the tail is inside the cluster). A ref to a
// block the program lacks ends at a dashed "no block N" box.
//
// # Options
//
// Options.Blocks draws only the listed blocks. Vars they use that an
// undrawn ancestor declares are drawn outside every cluster, dotted, with
// a last line "in block N"; nothing else of an undrawn block appears, and
// sub-block edges to undrawn blocks are left out.
//
// Options.HideVars draws ops only. An edge goes from the op that last
// wrote a var to each op that reads it, labelled with the var's name.
// "Last" is straight-line order: earlier in the same block, else before
// the op that owns the block, in the owner's block, and so on outward.
// Loop back edges are not drawn, and reads of vars no op wrote (feeds,
// params) draw nothing.
//
// Options.MaxNodes caps the op and var nodes. Nodes are taken in program
// order (block by block, each op followed by the var nodes it is the
// first to use, then the declared vars no op used), an op never separated
// from those vars, until the next op would pass the cap. A yellow note
// node with red text then says what was cut:
//
//	showing 14 of 43 ops and 25 of 54 vars (MaxNodes 40)
//	29 ops and 29 vars omitted
//
// # Output
//
// The text depends only on the program and the options: the same program,
// a Clone of it, or the same module re-parsed from its text give the same
// bytes. Nodes and edges are handed to emicklei/dot in program order under
// zero-padded keys, so its sorted output is program order and its node
// names (n1, n2, ... in creation order) are stable; no map is ever ranged
// over, and AddToSameRank is not used. Trailing tabs and blank lines that
// emicklei/dot writes are stripped.
//
// Labels are plain DOT strings. Names appear as the text format spells
// them (Go-quoted unless they match [A-Za-z_][A-Za-z0-9_.@]*), so control
// characters and bytes that are not UTF-8 appear as escapes; the DOT
// string then escapes quotes, backslashes and '&' (Graphviz decodes HTML
// entities even in plain labels). The output is valid UTF-8; the tests
// render every drawing they make with dot and fail on any warning. The
// graph sets newrank=true: without it Graphviz 2.43 fails ("trouble in
// init_rank") or warns on some edges that cycle between clusters.
//
// # The pass explorer
//
// After the Go compiler's ssa.html: a Recorder, an instrument of the pass
// manager, records a run (the module before the pipeline and after every
// execution, nested ones included), and WriteExplorer writes the Traces of
// one or more runs as one self-contained HTML page, a tab per run ("rank
// 0", "rank 1", ...). distpass html and distpass run -html write it.
//
// Each tab has a column per execution that changed the module, the input
// first. Whether an execution changed it is decided by ir.Hash; one that
// changed nothing is listed in the header of the column before ("also:
// dce (#3), verify (#4)"), and one a gate skipped is listed as skipped.
// A failed execution always has a column of its own, framed in red, with
// its error (and its stack when it panicked); the module is as it left it.
//
// A column shows the module as ir.Print writes it, a line per row. The
// lines that differ from the column before (a line diff through
// github.com/rogpeppe/go-internal/diff) are green, and a red rule marks
// where lines were removed. Var names (declared, in slots, in op dists, in
// grads) and op ids (after op and fwd) are spans, class var with
// data-var=NAME (as printed) and class op with data-op=PROGRAM:ID: a
// click highlights that var or op in every column and drawing, in the
// next of eight colours, and a second click clears it. A click on a
// column's title folds it.
//
// In the column of an execution of the complete pass (its note under
// passes.CompleteReportNote answers ExplainVar), each var declaration of
// the main program is class orig and its title says where the var's
// mapping came from, a line per dim: the annotation and the ops it
// flowed through; a click on its name also shows that text below the
// line (a pre of class origin). viz asks the note through an interface
// of its own, not package complete.
//
// Under the text is the drawing of main's block 0 (DOT with
// ExplorerOptions.MaxNodes), inline SVG from Graphviz's dot, found with
// ExplorerOptions.LookPath and run with a timeout. Without dot the page
// says so in place of each drawing, and works otherwise. The page has no
// external resources; it depends only on the traces and the options,
// byte for byte, except for the SVG, which is what the installed Graphviz
// makes.
package viz
