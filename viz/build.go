package viz

import (
	"github.com/distpass/distpass/ir"
)

// A drawing is built in two steps. build walks the program in program
// order and lists every node and edge the picture would have, grouped into
// units that must be kept or cut together (an op and the var nodes it
// introduces); cut applies MaxNodes by keeping a prefix of the units; emit
// (dot.go) then hands the survivors to emicklei/dot in the same order.
// Nothing here ranges over a map: maps only answer "is there a node for
// this already".

type nodeKind uint8

const (
	nodeOp         nodeKind = iota
	nodeVar                 // a var, drawn in the block that declares it
	nodeOuter               // a var declared in a block that is not drawn
	nodeUndeclared          // a name no block on the chain declares
	nodeEmpty               // stands for a block with no ops and no vars
	nodeMissing             // a block ref to a block the program lacks
)

type node struct {
	kind  nodeKind
	block int // the cluster it is drawn in; -1: outside every cluster
	op    *ir.Op
	v     *ir.Var
	name  string // nodeUndeclared: the name
	ref   int    // nodeOuter: the declaring block; nodeMissing: the block index
}

type edge struct {
	from, to int    // node indices; to is -1 for a sub-block edge, resolved at emission
	label    string // slot name, var name (HideVars) or attr name (sub-block edges)
	sub      bool   // an edge from an op to a block it refers to
	inPlace  bool   // an output edge to a var the op also reads
	block    int    // sub-block edges: the block referred to
}

type drawing struct {
	p        *ir.Program
	opts     Options
	selected []bool // by block index: drawn
	badSel   []int  // Blocks entries that name no block

	nodes []node
	edges []edge
	units []int // end (exclusive) of each unit in nodes, ascending

	varNodes   map[*ir.Var]int
	undeclared map[blockName]int
	missing    map[int]int
	opNodes    map[*ir.Op]int // HideVars: the node of each drawn op

	// After cut: nodes[:kept] and the edges among them are drawn.
	kept int
}

type blockName struct {
	block int
	name  string
}

func build(p *ir.Program, opts Options) *drawing {
	nOps, nVars, nArgs := 0, 0, 0
	for _, b := range p.Blocks {
		if b == nil {
			continue
		}
		nOps += len(b.Ops)
		nVars += b.NumVars()
		for _, op := range b.Ops {
			if op != nil {
				nArgs += len(op.Inputs) + len(op.Outputs) // a guess: slots mostly hold one arg
			}
		}
	}
	d := &drawing{
		p:          p,
		opts:       opts,
		selected:   make([]bool, len(p.Blocks)),
		nodes:      make([]node, 0, nOps+nVars+1),
		edges:      make([]edge, 0, nArgs),
		units:      make([]int, 0, nOps+nVars+1),
		varNodes:   make(map[*ir.Var]int, nVars),
		undeclared: map[blockName]int{},
		missing:    map[int]int{},
	}
	if len(opts.Blocks) == 0 {
		for i := range d.selected {
			d.selected[i] = true
		}
	}
	for _, bi := range opts.Blocks {
		switch {
		case bi >= 0 && bi < len(p.Blocks):
			d.selected[bi] = true
		case !containsInt(d.badSel, bi):
			d.badSel = append(d.badSel, bi)
		}
	}
	if opts.HideVars {
		d.opNodes = make(map[*ir.Op]int, nOps)
	}
	for bi, b := range p.Blocks {
		if b == nil || !d.selected[bi] {
			continue
		}
		d.block(bi, b)
	}
	if opts.HideVars {
		d.dataFlow()
	}
	d.cut()
	return d
}

func containsInt(xs []int, x int) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func (d *drawing) add(n node) int {
	d.nodes = append(d.nodes, n)
	return len(d.nodes) - 1
}

func (d *drawing) endUnit() {
	if n := len(d.nodes); len(d.units) == 0 || d.units[len(d.units)-1] < n {
		d.units = append(d.units, n)
	}
}

// block lists block bi's nodes: each op as a unit with the var nodes it is
// the first to use, then the declared vars no op used, one unit each.
func (d *drawing) block(bi int, b *ir.Block) {
	empty := true
	for _, op := range b.Ops {
		if op == nil {
			continue
		}
		empty = false
		o := d.add(node{kind: nodeOp, block: bi, op: op})
		if d.opNodes != nil {
			d.opNodes[op] = o
		} else {
			for _, s := range op.Inputs {
				label := slotLabel(op.Inputs, s)
				for _, a := range s.Args {
					d.edges = append(d.edges, edge{from: d.varNode(bi, a), to: o, label: label})
				}
			}
			for _, s := range op.Outputs {
				label := slotLabel(op.Outputs, s)
				for _, a := range s.Args {
					d.edges = append(d.edges, edge{from: o, to: d.varNode(bi, a), label: label, inPlace: op.Reads(a)})
				}
			}
		}
		d.subBlockEdges(o, op)
		d.endUnit()
	}
	if d.opNodes == nil {
		for _, v := range b.Vars() {
			if v == nil {
				continue
			}
			empty = false
			if _, ok := d.varNodes[v]; !ok {
				d.varNodes[v] = d.add(node{kind: nodeVar, block: bi, v: v})
				d.endUnit()
			}
		}
	}
	if empty {
		d.add(node{kind: nodeEmpty, block: bi})
		d.endUnit()
	}
}

// slotLabel is the label of the edges of slot s: its name, unless it is
// the op's only slot on that side, where the name says nothing the
// direction of the edge does not.
func slotLabel(slots []ir.Slot, s ir.Slot) string {
	if len(slots) == 1 {
		return ""
	}
	return s.Name
}

// varNode returns the node of the var that name resolves to from block bi,
// adding it on first use: in the declaring block's cluster when that block
// is drawn, outside every cluster when it is not, and as an undeclared
// node in bi when no block on the parent chain declares it.
func (d *drawing) varNode(bi int, name string) int {
	v, decl := d.resolve(bi, name)
	if v == nil {
		key := blockName{bi, name}
		if n, ok := d.undeclared[key]; ok {
			return n
		}
		n := d.add(node{kind: nodeUndeclared, block: bi, name: name})
		d.undeclared[key] = n
		return n
	}
	if n, ok := d.varNodes[v]; ok {
		return n
	}
	nd := node{kind: nodeVar, block: decl, v: v}
	if !d.selected[decl] {
		nd = node{kind: nodeOuter, block: -1, v: v, ref: decl}
	}
	n := d.add(nd)
	d.varNodes[v] = n
	return n
}

// resolve finds the declaration of name from block bi up the parent
// chain, as Program.LookupVar does, and also says which block declares
// it. A parent chain with a cycle or a bad index ends the search.
func (d *drawing) resolve(bi int, name string) (*ir.Var, int) {
	blocks := d.p.Blocks
	for seen := 0; bi >= 0 && bi < len(blocks) && seen <= len(blocks); seen++ {
		b := blocks[bi]
		if b == nil {
			break
		}
		if v := b.Var(name); v != nil {
			return v, bi
		}
		bi = b.Parent
	}
	return nil, -1
}

// subBlockEdges adds an edge from op node o to every block o's attrs refer
// to, labelled with the attr's name. A ref to a drawn block is resolved at
// emission to the block's cluster; a ref to a block the program lacks gets
// a "no block N" node; a ref to a block that exists but is not drawn is
// left out.
func (d *drawing) subBlockEdges(o int, op *ir.Op) {
	for _, a := range op.Attrs {
		switch v := a.Value.(type) {
		case ir.BlockRef:
			d.subBlockEdge(o, a.Name, int(v))
		case ir.BlockRefs:
			for _, bi := range v {
				d.subBlockEdge(o, a.Name, bi)
			}
		}
	}
}

func (d *drawing) subBlockEdge(o int, attr string, bi int) {
	if bi >= 0 && bi < len(d.p.Blocks) && d.p.Blocks[bi] != nil {
		if d.selected[bi] {
			d.edges = append(d.edges, edge{from: o, to: -1, label: attr, sub: true, block: bi})
		}
		return
	}
	n, ok := d.missing[bi]
	if !ok {
		n = d.add(node{kind: nodeMissing, block: -1, ref: bi})
		d.missing[bi] = n
	}
	d.edges = append(d.edges, edge{from: o, to: n, label: attr, sub: true, block: -1})
}

// dataFlow adds the op -> op edges of a HideVars drawing: an edge from the
// op that last wrote a var to each op that reads it, labelled with the
// var's name. "Last" is in execution order as straight-line code sees it:
// earlier in the same block, or, for a sub-block, before the op that owns
// the block in the owner's block (and so on outward). Loop back edges are
// not drawn, and a var no op wrote before (a feed, a parameter) draws no
// edge. Edges between ops that are not both drawn are dropped.
func (d *drawing) dataFlow() {
	blocks := d.p.Blocks
	visited := make([]bool, len(blocks))
	var walk func(bi int, up *scope)
	walk = func(bi int, up *scope) {
		visited[bi] = true
		sc := &scope{last: map[string]*ir.Op{}, up: up}
		for _, op := range blocks[bi].Ops {
			if op == nil {
				continue
			}
			to, drawn := d.opNodes[op]
			first := len(d.edges)
			for name := range op.InputNames {
				from, ok := d.opNodes[sc.lookup(name)]
				if !drawn || !ok || d.hasEdge(first, from, to, name) {
					continue
				}
				d.edges = append(d.edges, edge{from: from, to: to, label: name})
			}
			for sub := range op.SubBlocks {
				if sub >= 0 && sub < len(blocks) && blocks[sub] != nil && !visited[sub] {
					walk(sub, sc)
				}
			}
			for name := range op.OutputNames {
				sc.last[name] = op
			}
		}
	}
	for bi, b := range blocks {
		if b != nil && !visited[bi] {
			walk(bi, nil)
		}
	}
}

// hasEdge reports whether edges[first:] already holds from -> to labelled
// label: an op that reads a var in two slots gets one edge.
func (d *drawing) hasEdge(first, from, to int, label string) bool {
	for _, e := range d.edges[first:] {
		if e.from == from && e.to == to && e.label == label {
			return true
		}
	}
	return false
}

// scope maps var names to the op that last wrote them in one block, with
// the scope of the block the owning op sits in above it.
type scope struct {
	last map[string]*ir.Op
	up   *scope
}

func (s *scope) lookup(name string) *ir.Op {
	for ; s != nil; s = s.up {
		if op, ok := s.last[name]; ok {
			return op
		}
	}
	return nil
}

// cut applies MaxNodes: it keeps the longest prefix of whole units that
// has at most MaxNodes nodes.
func (d *drawing) cut() {
	d.kept = len(d.nodes)
	if d.opts.MaxNodes <= 0 || len(d.nodes) <= d.opts.MaxNodes {
		return
	}
	d.kept = 0
	for _, end := range d.units {
		if end > d.opts.MaxNodes {
			break
		}
		d.kept = end
	}
}

// counts returns the number of op and var nodes among nodes[:n].
func (d *drawing) counts(n int) (ops, vars int) {
	for _, nd := range d.nodes[:n] {
		switch nd.kind {
		case nodeOp:
			ops++
		case nodeVar, nodeOuter, nodeUndeclared:
			vars++
		}
	}
	return ops, vars
}
