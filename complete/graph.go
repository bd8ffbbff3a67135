package complete

import (
	"github.com/distpass/distpass/analysis/opdef"
	"github.com/distpass/distpass/ir"
)

// graph is the main program as completion sees it: its dense-tensor
// vars numbered in block order, its ops in settling order with their
// args resolved to those numbers.
type graph struct {
	m     *ir.Module
	p     *ir.Program
	vars  []*ir.Var
	block []int32 // the block each var is declared in
	ids   map[*ir.Var]int32
	ops   []opNode
	// users lists, per var, the fixpoint ops (indices into fwd) that read
	// or write it.
	userStart []int32
	users     []int32
	fwd       []int32 // the ops the fixpoint runs: forward ops, in program order
}

// opNode is one op: its block, its args (inputs then outputs in slot
// order, -1 for an arg that is not a dense tensor), its mesh and rule.
type opNode struct {
	op      *ir.Op
	idx     int32 // its index in graph.ops
	block   *ir.Block
	args    []int32
	nIn     int
	mesh    *ir.ProcessMesh
	rule    opdef.ShardingRule
	ruleErr error
	fixed   bool // annotated by the user: its dist is kept
}

func (n *opNode) ins() []int32  { return n.args[:n.nIn] }
func (n *opNode) outs() []int32 { return n.args[n.nIn:] }

// buildGraph numbers m's main program.
func buildGraph(m *ir.Module) *graph {
	g := &graph{m: m, p: m.Main, ids: map[*ir.Var]int32{}}
	for bi, b := range g.p.Blocks {
		if b == nil {
			continue
		}
		for _, v := range b.Vars() {
			if v.Type.IsTensor() {
				g.ids[v] = int32(len(g.vars))
				g.vars = append(g.vars, v)
				g.block = append(g.block, int32(bi))
			}
		}
	}
	// Settling order: a block's ops in order, an op that owns sub-blocks
	// after their ops (the sub-block reads what the op's block defined
	// before it).
	seen := make([]bool, len(g.p.Blocks))
	var walk func(bi int)
	walk = func(bi int) {
		if bi < 0 || bi >= len(g.p.Blocks) || seen[bi] || g.p.Blocks[bi] == nil {
			return
		}
		seen[bi] = true
		b := g.p.Blocks[bi]
		for _, op := range b.Ops {
			if op == nil {
				continue
			}
			for sb := range op.SubBlocks {
				walk(sb)
			}
			n := g.node(b, op)
			n.idx = int32(len(g.ops))
			g.ops = append(g.ops, n)
		}
	}
	walk(0)
	for bi := range g.p.Blocks {
		walk(bi) // blocks no op refers to
	}
	return g
}

func (g *graph) node(b *ir.Block, op *ir.Op) opNode {
	n := opNode{op: op, block: b}
	resolve := func(name string) {
		id := int32(-1)
		if v := g.p.LookupVar(b, name); v != nil {
			if x, ok := g.ids[v]; ok {
				id = x
			}
		}
		n.args = append(n.args, id)
	}
	for a := range op.InputNames {
		resolve(a)
	}
	n.nIn = len(n.args)
	for a := range op.OutputNames {
		resolve(a)
	}
	return n
}

// indexUsers fills users from fwd.
func (g *graph) indexUsers() {
	count := make([]int32, len(g.vars)+1)
	for _, i := range g.fwd {
		for _, v := range g.ops[i].args {
			if v >= 0 {
				count[v+1]++
			}
		}
	}
	for i := 1; i < len(count); i++ {
		count[i] += count[i-1]
	}
	g.userStart = count
	g.users = make([]int32, count[len(count)-1])
	next := append([]int32(nil), count[:len(g.vars)]...)
	for k, i := range g.fwd {
		for _, v := range g.ops[i].args {
			if v >= 0 {
				g.users[next[v]] = int32(k)
				next[v]++
			}
		}
	}
}

func (g *graph) usersOf(v int32) []int32 { return g.users[g.userStart[v]:g.userStart[v+1]] }
