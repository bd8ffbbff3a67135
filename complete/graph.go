package complete

import (
	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/spmd"
)

// graph is the main program as completion sees it: its vars numbered
// in block order (block b's from varOff[b]), its ops in settling order
// with their args resolved to those numbers.
type graph struct {
	m      *ir.Module
	p      *ir.Program
	vars   []*ir.Var
	dense  []bool  // the var is a dense tensor: the lattice's domain
	varOff []int32 // per block, the number of its first var
	ops    []opNode
	// users lists, per var, the fixpoint ops (indices into fwd) that read
	// or write it.
	userStart []int32
	users     []int32
	fwd       []int32 // the ops the fixpoint runs: forward ops, in program order
}

// opNode is one op: its block, its args (inputs then outputs in slot
// order, -1 for an arg that is not a dense tensor) and their vars, its
// mesh and rule.
type opNode struct {
	op      *ir.Op
	idx     int32 // its index in graph.ops
	block   *ir.Block
	args    []int32
	argVars []*ir.Var // nil for a name no block declares
	nIn     int
	mesh    *ir.ProcessMesh
	rule    spmd.ShardingRule
	ruleErr error
	fixed   bool // annotated by the user: its dist is kept
	// ruleBuilt says rule and ruleErr are set; ruleID is the rule's
	// number in the memo, -1 for a rule of its own.
	ruleBuilt bool
	ruleID    int32
	// gradOf is, for a grad op of an op the rule-based impl lowers, its
	// forward op's dist: it settles by its own rule with that impl.
	gradOf *ir.OpDist
	// passes says the op carries its partial X into Out (passPartial).
	passes bool
}

func (n *opNode) ins() []int32  { return n.args[:n.nIn] }
func (n *opNode) outs() []int32 { return n.args[n.nIn:] }

// buildGraph numbers m's main program.
func buildGraph(m *ir.Module) *graph {
	g := &graph{m: m, p: m.Main, varOff: make([]int32, len(m.Main.Blocks))}
	nargs, nops := 0, 0
	for bi, b := range g.p.Blocks {
		g.varOff[bi] = int32(len(g.vars))
		if b == nil {
			continue
		}
		for _, v := range b.Vars() {
			g.vars = append(g.vars, v)
			g.dense = append(g.dense, v != nil && v.Type.IsTensor())
		}
		for _, op := range b.Ops {
			if op != nil {
				nops++
				for _, s := range op.Inputs {
					nargs += len(s.Args)
				}
				for _, s := range op.Outputs {
					nargs += len(s.Args)
				}
			}
		}
	}
	g.ops = make([]opNode, 0, nops)
	args := make([]int32, 0, nargs)
	argVars := make([]*ir.Var, 0, nargs)
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
			n := opNode{op: op, block: b, idx: int32(len(g.ops)), fixed: op.Dist != nil && op.Dist.ImplType != ""}
			start := len(args)
			for a := range op.InputNames {
				args, argVars = g.resolve(args, argVars, b, a)
			}
			n.nIn = len(args) - start
			for a := range op.OutputNames {
				args, argVars = g.resolve(args, argVars, b, a)
			}
			n.args = args[start:len(args):len(args)]
			n.argVars = argVars[start:len(argVars):len(argVars)]
			g.ops = append(g.ops, n)
		}
	}
	walk(0)
	for bi := range g.p.Blocks {
		walk(bi) // blocks no op refers to
	}
	return g
}

// resolve appends the number and var of name as block b sees it.
func (g *graph) resolve(args []int32, vars []*ir.Var, b *ir.Block, name string) ([]int32, []*ir.Var) {
	for seen := 0; b != nil && seen <= len(g.p.Blocks); seen++ {
		if i := b.VarIndex(name); i >= 0 {
			id := g.varOff[b.Index] + int32(i)
			v := g.vars[id]
			if !g.dense[id] {
				id = -1
			}
			return append(args, id), append(vars, v)
		}
		b = g.p.Block(b.Parent)
	}
	return append(args, -1), append(vars, nil)
}

// id returns the number of var v of the main program, if it is a dense
// tensor.
func (g *graph) id(v *ir.Var) (int32, bool) {
	for bi, b := range g.p.Blocks {
		if b == nil {
			continue
		}
		if i := b.VarIndex(v.Name()); i >= 0 && b.Vars()[i] == v {
			id := g.varOff[bi] + int32(i)
			return id, g.dense[id]
		}
	}
	return -1, false
}

// lookup returns a name lookup for op n's rule: its args' vars in slot
// order, as the op table asks for them, any other name through the
// block chain.
func (g *graph) lookup(n *opNode) func(string) *ir.Var {
	k := 0
	return func(name string) *ir.Var {
		if k < len(n.argVars) && n.argVars[k] != nil && n.argVars[k].Name() == name {
			k++
			return n.argVars[k-1]
		}
		return g.p.LookupVar(n.block, name)
	}
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
