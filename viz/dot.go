package viz

import (
	"bytes"
	"fmt"
	"strconv"

	"github.com/emicklei/dot"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/ops"
)

// Options say what to draw.
type Options struct {
	// Blocks lists the blocks to draw; nil or empty draws them all. Vars a
	// drawn block uses but an undrawn ancestor declares are drawn outside
	// every cluster, dotted, marked with the declaring block; nothing else
	// of an undrawn block appears. Indices the program lacks are named in
	// the note node.
	Blocks []int

	// HideVars draws ops only: data flows op -> op, from the op that last
	// wrote a var to each op that reads it, and the edge is labelled with
	// the var's name.
	HideVars bool

	// MaxNodes caps the number of op and var nodes; 0 (or less) is no cap.
	// A capped drawing keeps the first nodes in program order, an op
	// always together with the var nodes it is the first to use, and adds
	// a note node saying how many ops and vars were left out.
	MaxNodes int
}

// Graph is the DOT text of one program of a module.
type Graph struct {
	Program string // the program's name: "main" or "startup"
	DOT     []byte
}

// ModuleDOT draws each program of m, in the module's canonical order
// (main, then startup).
func ModuleDOT(m *ir.Module, opts Options) []Graph {
	var gs []Graph
	for _, p := range m.Programs() {
		gs = append(gs, Graph{Program: p.Name, DOT: DOT(p, opts)})
	}
	return gs
}

// DOT draws p as one Graphviz digraph. The output depends only on p and
// opts: drawing the same program, or a clone of it, gives the same bytes.
func DOT(p *ir.Program, opts Options) []byte {
	return build(p, opts).emit()
}

// emit hands the kept nodes and edges to emicklei/dot in program order.
//
// emicklei/dot names nodes n1, n2, ... in the order they are created
// (clusters take numbers from the same sequence) and writes a graph's
// nodes sorted by the key they were created with and its edges grouped by
// their tail's key. Keys here are zero-padded positions in d.nodes, so the
// written order is program order and the names depend only on the
// program and the options.
func (d *drawing) emit() []byte {
	p := d.p
	g := dot.NewGraph(dot.Directed)
	var buf []byte
	buf = append(buf, "program "...)
	buf = appendName(buf, p.Name)
	g.ID(string(appendDOTString(nil, buf)))
	if p.Rank >= 0 {
		buf = append(buf, " rank "...)
		buf = strconv.AppendInt(buf, int64(p.Rank), 10)
	}
	g.Attr("label", dot.Literal(appendDOTString(nil, buf)))
	g.Attr("labelloc", "t")
	g.Attr("compound", "true") // for lhead on sub-block edges
	// Rank the whole graph at once rather than cluster by cluster: with
	// the per-cluster ranking, edges that cycle between clusters make
	// Graphviz 2.43 fail ("trouble in init_rank") or warn ("Unable to
	// reclaim box space").
	g.Attr("newrank", "true")

	// One cluster per block that has a kept node, in block order. Blocks
	// are sibling clusters, not nested: the label names the parent.
	clusters := make([]*dot.Graph, len(p.Blocks))
	head := make([]int, len(p.Blocks)) // the node sub-block edges point at
	for i := range head {
		head[i] = -1
	}
	for i, nd := range d.nodes[:d.kept] {
		if nd.block < 0 {
			continue
		}
		if h := head[nd.block]; h < 0 || nd.kind == nodeOp && d.nodes[h].kind != nodeOp {
			head[nd.block] = i
		}
	}
	for bi, b := range p.Blocks {
		if head[bi] < 0 {
			continue
		}
		c := g.Subgraph(fmt.Sprintf("block %09d", bi), dot.ClusterOption{})
		c.Attr("label", dot.Literal(appendDOTString(nil, blockLabel(nil, b))))
		c.Attr("style", "rounded")
		c.Attr("color", faintColor)
		clusters[bi] = c
	}

	dn := make([]dot.Node, d.kept)
	var key []byte
	for i, nd := range d.nodes[:d.kept] {
		parent := g
		if nd.block >= 0 {
			parent = clusters[nd.block]
		}
		key = fmt.Appendf(key[:0], "%09d", i)
		n := parent.Node(string(key))
		buf = d.label(buf[:0], nd)
		n.Attr("label", dot.Literal(appendDOTString(nil, buf)))
		styleNode(n, nd)
		dn[i] = n
	}

	for _, e := range d.edges {
		to, lhead := e.to, ""
		if e.to < 0 {
			to = head[e.block]
			if to < 0 {
				continue // the block's nodes were all cut
			}
			if d.nodes[e.from].block != e.block {
				lhead = clusters[e.block].GetID()
			}
		}
		if e.from >= d.kept || to >= d.kept {
			continue
		}
		var de dot.Edge
		if e.inPlace {
			// An in-place update (sgd's ParamOut, a loop-carried var)
			// closes a cycle, and dot would rank the var below its
			// readers. Written var -> op with the arrow drawn at the var,
			// the edge looks the same and ranks like a read.
			// (constraint=false would do the same, but Graphviz 2.43
			// fails with "trouble in init_rank" on it inside clusters.)
			de = dn[to].Edge(dn[e.from]).Attr("dir", "back")
		} else {
			de = dn[e.from].Edge(dn[to])
		}
		if e.label != "" {
			de.Attr("label", dot.Literal(appendDOTString(nil, appendName(buf[:0], e.label))))
		}
		if e.sub {
			de.Attr("style", "dashed")
			de.Attr("color", faintColor)
			de.Attr("fontcolor", faintColor)
			if lhead != "" {
				de.Attr("lhead", lhead)
			}
		}
	}

	if note := d.note(); len(note) > 0 {
		n := g.Node("note")
		n.Attr("label", dot.Literal(appendDOTString(nil, note)))
		n.Attr("shape", "note")
		n.Attr("style", "filled")
		n.Attr("fillcolor", noteFill)
		n.Attr("color", collectiveColor)
		n.Attr("fontcolor", collectiveColor)
		n.Attr("fontsize", "18")
		n.Attr("penwidth", "2")
	}

	var out bytes.Buffer
	out.Grow(1024 + 120*len(dn) + 40*len(d.edges)) // about what a line takes
	g.Write(&out)
	return trimLines(out.Bytes())
}

// blockLabel is a cluster's label: "block 1 (parent 0, forward 0)".
func blockLabel(buf []byte, b *ir.Block) []byte {
	buf = append(buf, "block "...)
	buf = strconv.AppendInt(buf, int64(b.Index), 10)
	if b.Parent >= 0 || b.Forward >= 0 {
		buf = append(buf, " ("...)
		if b.Parent >= 0 {
			buf = append(buf, "parent "...)
			buf = strconv.AppendInt(buf, int64(b.Parent), 10)
		}
		if b.Forward >= 0 {
			if b.Parent >= 0 {
				buf = append(buf, ", "...)
			}
			buf = append(buf, "forward "...)
			buf = strconv.AppendInt(buf, int64(b.Forward), 10)
		}
		buf = append(buf, ')')
	}
	return buf
}

// label appends the text of node nd; lines are separated by '\n'.
//
//	op 1 matmul_v2          x                     x
//	matmul_v2:0 recompute   f32[8, 16]            undeclared
//	                        @world[0, -1]
func (d *drawing) label(buf []byte, nd node) []byte {
	switch nd.kind {
	case nodeOp:
		op := nd.op
		buf = append(buf, "op "...)
		buf = strconv.AppendInt(buf, op.ID, 10)
		buf = append(buf, ' ')
		buf = appendName(buf, op.Type)
		if od := op.Dist; od != nil && (od.ImplType != "" || od.Recompute) {
			buf = append(buf, '\n')
			if od.ImplType != "" {
				buf = appendName(buf, od.ImplType)
				buf = append(buf, ':')
				buf = strconv.AppendInt(buf, int64(od.ImplIndex), 10)
				if od.Recompute {
					buf = append(buf, ' ')
				}
			}
			if od.Recompute {
				buf = append(buf, "recompute"...)
			}
		}
		if op.Type == ops.ReshardType {
			buf = d.reshardLabel(append(buf, '\n'), nd)
		}
	case nodeVar, nodeOuter:
		v := nd.v
		buf = appendName(buf, v.Name())
		buf = append(buf, '\n')
		buf = appendType(buf, v.Type)
		if v.Dist != nil {
			buf = append(buf, '\n')
			buf = appendTensorDist(buf, v.Dist)
		}
		if nd.kind == nodeOuter {
			buf = append(buf, "\nin block "...)
			buf = strconv.AppendInt(buf, int64(nd.ref), 10)
		}
	case nodeUndeclared:
		buf = appendName(buf, nd.name)
		buf = append(buf, "\nundeclared"...)
	case nodeEmpty:
		buf = append(buf, "empty block"...)
	case nodeMissing:
		buf = append(buf, "no block "...)
		buf = strconv.AppendInt(buf, int64(nd.ref), 10)
	}
	return buf
}

// reshardLabel appends what a reshard converts, its X's dist to its
// Out's: "@world[0, -1] -> @world[-1, -1]", with "?" for an end whose
// var or dist is missing (verify refuses that; the drawing still shows
// it).
func (d *drawing) reshardLabel(buf []byte, nd node) []byte {
	end := func(buf []byte, args []string) []byte {
		if len(args) == 1 {
			if v, _ := d.resolve(nd.block, args[0]); v != nil && v.Dist != nil {
				return appendTensorDist(buf, v.Dist)
			}
		}
		return append(buf, '?')
	}
	buf = end(buf, nd.op.Input("X"))
	buf = append(buf, " -> "...)
	return end(buf, nd.op.Output("Out"))
}

// styleNode sets shape and colours:
//
//   - ops are boxes filled by role (roleFill); collectives are square
//     boxes with a thick red border, reshards square boxes with a thick
//     dashed purple one (data moves there once they are lowered), other
//     ops rounded;
//   - vars are ellipses, other persistables grey cylinders, params yellow
//     cylinders;
//   - vars declared in an undrawn block are dotted, undeclared names and
//     missing blocks dashed and grey; an empty block is plain text.
func styleNode(n dot.Node, nd node) {
	switch nd.kind {
	case nodeOp:
		n.Attr("shape", "box")
		n.Attr("fillcolor", roleFill[roleClassOf(nd.op.Role)])
		switch {
		case ops.IsCollective(nd.op.Type):
			n.Attr("style", "filled,bold")
			n.Attr("color", collectiveColor)
			n.Attr("penwidth", "3")
		case nd.op.Type == ops.ReshardType:
			n.Attr("style", "filled,bold,dashed")
			n.Attr("color", reshardColor)
			n.Attr("penwidth", "3")
		default:
			n.Attr("style", "rounded,filled")
		}
	case nodeVar, nodeOuter:
		switch nd.v.Kind {
		case ir.KindParam:
			n.Attr("shape", "cylinder")
			n.Attr("style", "filled")
			n.Attr("fillcolor", paramFill)
		case ir.KindPersist:
			n.Attr("shape", "cylinder")
			n.Attr("style", "filled")
			n.Attr("fillcolor", persistFill)
		default:
			n.Attr("shape", "ellipse")
		}
		if nd.kind == nodeOuter {
			if nd.v.Persistable() {
				n.Attr("style", "filled,dotted")
			} else {
				n.Attr("style", "dotted")
			}
		}
	case nodeUndeclared, nodeMissing:
		n.Attr("shape", "ellipse")
		if nd.kind == nodeMissing {
			n.Attr("shape", "box")
		}
		n.Attr("style", "dashed")
		n.Attr("color", faintColor)
		n.Attr("fontcolor", faintColor)
	case nodeEmpty:
		n.Attr("shape", "plaintext")
		n.Attr("fontcolor", faintColor)
	}
}

// note returns the text of the note node, or nothing when all was drawn.
func (d *drawing) note() []byte {
	var buf []byte
	for _, bi := range d.badSel {
		if len(buf) > 0 {
			buf = append(buf, '\n')
		}
		buf = fmt.Appendf(buf, "no block %d in program ", bi)
		buf = appendName(buf, d.p.Name)
		buf = fmt.Appendf(buf, " (%d blocks)", len(d.p.Blocks))
	}
	if d.kept < len(d.nodes) {
		if len(buf) > 0 {
			buf = append(buf, '\n')
		}
		ops, vars := d.counts(len(d.nodes))
		keptOps, keptVars := d.counts(d.kept)
		if d.opts.HideVars {
			buf = fmt.Appendf(buf, "showing %d of %d ops (MaxNodes %d)\n%d ops omitted",
				keptOps, ops, d.opts.MaxNodes, ops-keptOps)
		} else {
			buf = fmt.Appendf(buf, "showing %d of %d ops and %d of %d vars (MaxNodes %d)\n%d ops and %d vars omitted",
				keptOps, ops, keptVars, vars, d.opts.MaxNodes, ops-keptOps, vars-keptVars)
		}
	}
	return buf
}

// trimLines drops the trailing tabs emicklei/dot leaves on its lines, and
// the lines that hold nothing else, in place. No label spans lines
// (appendDOTString escapes newlines), so this never touches a label.
func trimLines(b []byte) []byte {
	out := b[:0] // writes never overtake reads
	for len(b) > 0 {
		line := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		line = bytes.TrimRight(line, " \t")
		if len(line) == 0 {
			continue
		}
		out = append(out, line...)
		out = append(out, '\n')
	}
	return out
}
