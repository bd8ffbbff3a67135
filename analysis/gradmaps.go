package analysis

import (
	"iter"
	"sort"
	"strings"

	"github.com/distpass/distpass/ir"
)

// GradMaps relates the backward pass to the forward pass: grad ops to
// their forward ops, grad vars to their vars, params to their grads.
var GradMaps = &Analyzer{
	Name: "grad-maps",
	Doc: "GradMaps maps each grad op to its forward op (through fwd), each grad var to its var " +
		"(by Paddle's x@GRAD naming) and each param to its grad (from the params-grads list).",
	Requires: []*Analyzer{Index},
	Run: func(p *Inputs) (any, error) {
		return buildGradMaps(p.Module, p.Result(Index).(*IndexInfo)), nil
	},
}

// OpPair is a grad op and its forward op.
type OpPair struct {
	Grad, Fwd OpRef
}

// GradInfo is the result of GradMaps.
//
// A grad op is a non-forward op with a fwd id; its forward op is the op
// of the same program, in any block, with that id, when that op's role
// is forward or forward|loss. A grad op whose fwd names no such op is
// dangling.
//
// A grad var is a var named x@GRAD, or x@GRAD@RENAME@k (a partial grad
// that backward sums into x@GRAD), whose var x exists: x resolved from
// the grad var's block through the parent chain or, for a grad block,
// from its forward block. The same rule applies to x itself, so
// x@GRAD@GRAD is the grad of x@GRAD.
//
// Params and grads come from the module's params-grads list, resolved in
// main: in block 0 or, failing that, the first block that declares the
// name. Entries whose param is not declared are left out.
type GradInfo struct {
	x     *IndexInfo
	progs []gradProg // parallel to x.progs
	// The params-grads list of main, by gid: the entries in list order
	// (grad -1: none), the first grad of each param and the first param
	// of each grad (-1: none).
	pg              []gidPair
	gradOf, paramOf []int32
	mainNum         int
}

type gradProg struct {
	ops      []OpPair // in program order of Grad
	dangling []OpRef
	// The grad ops of forward op number k: byFwd[fwdStart[k]:fwdStart[k+1]].
	fwdStart []int32
	byFwd    []OpRef
	// Grad var gid -> var gid, sorted by grad gid; and the grads of var
	// gid g: gradsOf[varStart[g]:varStart[g+1]].
	vars              []gidPair
	varStart, gradsOf []int32
}

type gidPair struct{ a, b int32 }

func buildGradMaps(m *ir.Module, x *IndexInfo) *GradInfo {
	g := &GradInfo{x: x, progs: make([]gradProg, len(x.progs)), mainNum: -1}
	for i, pi := range x.progs {
		gp := &g.progs[i]
		n := 0 // grad ops: counted first, since growing the list costs more
		for _, b := range pi.p.Blocks {
			if b != nil {
				for _, op := range b.Ops {
					if op != nil && op.Fwd != 0 && !op.Role.IsForward() {
						n++
					}
				}
			}
		}
		gp.ops = make([]OpPair, 0, n)
		for bi, b := range pi.p.Blocks {
			if b == nil {
				continue
			}
			for pos, op := range b.Ops {
				if op == nil || op.Fwd == 0 || op.Role.IsForward() {
					continue
				}
				ref := OpRef{int32(bi), int32(pos)}
				if f, ok := pi.forwardOp(op.Fwd); ok {
					gp.ops = append(gp.ops, OpPair{Grad: ref, Fwd: f})
				} else {
					gp.dangling = push(gp.dangling, ref)
				}
			}
		}
		var order []int32
		gp.fwdStart, order = group(int(pi.nops), len(gp.ops), func(j int) int32 { return pi.opNum(gp.ops[j].Fwd) })
		gp.byFwd = make([]OpRef, len(order))
		for j, o := range order {
			gp.byFwd[j] = gp.ops[o].Grad
		}

		// In a training program about every other var is a grad var.
		gp.vars = make([]gidPair, 0, pi.nvars/2+16)
		for bi := range pi.blocks {
			b := &pi.blocks[bi]
			if b.b == nil {
				continue
			}
			vars := b.b.Vars()
			for j, v := range vars[:min(len(vars), int(b.nvars))] {
				if v == nil {
					continue
				}
				if base, ok := gradBase(v.Name()); ok {
					if fg := pi.resolveForward(bi, base); fg >= 0 {
						gp.vars = push(gp.vars, gidPair{b.varOff + int32(j), fg})
					}
				}
			}
		}
		gp.varStart, order = group(int(pi.nvars), len(gp.vars), func(j int) int32 { return gp.vars[j].b })
		gp.gradsOf = make([]int32, len(order))
		for j, o := range order {
			gp.gradsOf[j] = gp.vars[o].a
		}
	}

	if m != nil && m.Main != nil {
		g.mainNum = x.progNum(m.Main)
		pi := x.progs[g.mainNum]
		both := make([]int32, 2*pi.nvars)
		for i := range both {
			both[i] = -1
		}
		g.gradOf, g.paramOf = both[:pi.nvars:pi.nvars], both[pi.nvars:]
		g.pg = make([]gidPair, 0, len(m.ParamGrads))
		for _, e := range m.ParamGrads {
			p := pi.anyBlock(e.Param)
			if p < 0 {
				continue
			}
			gr := int32(-1)
			if e.Grad != "" {
				gr = pi.anyBlock(e.Grad)
			}
			g.pg = append(g.pg, gidPair{p, gr})
			if g.gradOf[p] < 0 {
				g.gradOf[p] = gr
			}
			if gr >= 0 && g.paramOf[gr] < 0 {
				g.paramOf[gr] = p
			}
		}
	}
	return g
}

// forwardOp returns the op with id when its role is forward.
func (pi *progIndex) forwardOp(id int64) (OpRef, bool) {
	r, ok := pi.op(id)
	if !ok {
		return OpRef{}, false
	}
	if op := r.Op(pi.p); op == nil || !op.Role.IsForward() {
		return OpRef{}, false
	}
	return r, true
}

// resolveForward resolves the var of a grad var of block bi: through
// bi's parent chain, then through its forward block's.
func (pi *progIndex) resolveForward(bi int, name string) int32 {
	if g := pi.resolve(bi, name); g >= 0 {
		return g
	}
	if b := pi.blocks[bi].b; b != nil && b.Forward >= 0 && b.Forward < len(pi.blocks) && b.Forward != bi {
		return pi.resolve(b.Forward, name)
	}
	return -1
}

// gradBase returns x for x@GRAD and x@GRAD@RENAME@k.
func gradBase(name string) (string, bool) {
	const grad, rename = "@GRAD", "@RENAME@"
	s := name
	if i := strings.Index(s, rename); i >= 0 {
		if i+len(rename) == len(s) {
			return "", false
		}
		s = s[:i]
	}
	base, ok := strings.CutSuffix(s, grad)
	return base, ok && base != ""
}

// OpPairs returns every grad op of prog with its forward op, in program
// order of the grad ops. The slice must not be modified.
func (g *GradInfo) OpPairs(prog *ir.Program) []OpPair {
	if i := g.x.progNum(prog); i >= 0 {
		ops := g.progs[i].ops
		return ops[:len(ops):len(ops)]
	}
	return nil
}

// Forward returns the forward op of the grad op at grad in prog.
func (g *GradInfo) Forward(prog *ir.Program, grad OpRef) (OpRef, bool) {
	i := g.x.progNum(prog)
	if i < 0 {
		return OpRef{}, false
	}
	ops := g.progs[i].ops
	k := sort.Search(len(ops), func(k int) bool { return compareRefs(ops[k].Grad, grad) >= 0 })
	if k < len(ops) && ops[k].Grad == grad {
		return ops[k].Fwd, true
	}
	return OpRef{}, false
}

// GradOps returns the grad ops of the forward op at fwd in prog, in
// program order. The slice must not be modified.
func (g *GradInfo) GradOps(prog *ir.Program, fwd OpRef) []OpRef {
	i := g.x.progNum(prog)
	if i < 0 {
		return nil
	}
	pi, gp := g.x.progs[i], &g.progs[i]
	k := pi.opNum(fwd)
	if k < 0 || gp.fwdStart[k] == gp.fwdStart[k+1] {
		return nil
	}
	return gp.byFwd[gp.fwdStart[k]:gp.fwdStart[k+1]:gp.fwdStart[k+1]]
}

// Dangling returns the ops of prog with a fwd id that names no forward
// op, in program order. The slice must not be modified.
func (g *GradInfo) Dangling(prog *ir.Program) []OpRef {
	if i := g.x.progNum(prog); i >= 0 {
		d := g.progs[i].dangling
		return d[:len(d):len(d)]
	}
	return nil
}

// VarOfGrad returns the var of the grad var name resolves to from block
// of prog.
func (g *GradInfo) VarOfGrad(prog *ir.Program, block int, name string) (VarID, bool) {
	i := g.x.progNum(prog)
	if i < 0 {
		return VarID{}, false
	}
	pi, vars := g.x.progs[i], g.progs[i].vars
	gid := pi.resolve(block, name)
	if gid < 0 {
		return VarID{}, false
	}
	k := sort.Search(len(vars), func(k int) bool { return vars[k].a >= gid })
	if k < len(vars) && vars[k].a == gid {
		return pi.id(vars[k].b), true
	}
	return VarID{}, false
}

// GradsOfVar returns the grad vars of the var name resolves to from
// block of prog (x@GRAD and its renamed parts), in declaration order.
func (g *GradInfo) GradsOfVar(prog *ir.Program, block int, name string) []VarID {
	i := g.x.progNum(prog)
	if i < 0 {
		return nil
	}
	pi, gp := g.x.progs[i], &g.progs[i]
	gid := pi.resolve(block, name)
	if gid < 0 {
		return nil
	}
	var out []VarID
	for _, gr := range gp.gradsOf[gp.varStart[gid]:gp.varStart[gid+1]] {
		out = append(out, pi.id(gr))
	}
	return out
}

// GradVars yields every grad var of prog with its var, in declaration
// order of the grad vars.
func (g *GradInfo) GradVars(prog *ir.Program) iter.Seq2[VarID, VarID] {
	return func(yield func(VarID, VarID) bool) {
		i := g.x.progNum(prog)
		if i < 0 {
			return
		}
		pi := g.x.progs[i]
		for _, p := range g.progs[i].vars {
			if !yield(pi.id(p.a), pi.id(p.b)) {
				return
			}
		}
	}
}

// ParamGrads yields each param of the params-grads list with its grad
// (the zero VarID when it has none), in list order.
func (g *GradInfo) ParamGrads() iter.Seq2[VarID, VarID] {
	return func(yield func(VarID, VarID) bool) {
		for _, p := range g.pg {
			if !yield(g.mainID(p.a), g.mainID(p.b)) {
				return
			}
		}
	}
}

func (g *GradInfo) mainID(gid int32) VarID {
	if gid < 0 || g.mainNum < 0 {
		return VarID{}
	}
	return g.x.progs[g.mainNum].id(gid)
}

// GradOfParam returns the grad of param by the params-grads list (the
// first entry's, if param is listed twice).
func (g *GradInfo) GradOfParam(param string) (VarID, bool) {
	if g.mainNum < 0 {
		return VarID{}, false
	}
	p := g.x.progs[g.mainNum].anyBlock(param)
	if p < 0 || g.gradOf[p] < 0 {
		return VarID{}, false
	}
	return g.mainID(g.gradOf[p]), true
}

// ParamOfGrad returns the param whose grad is grad by the params-grads
// list (the first, if several share it).
func (g *GradInfo) ParamOfGrad(grad string) (VarID, bool) {
	if g.mainNum < 0 {
		return VarID{}, false
	}
	gr := g.x.progs[g.mainNum].anyBlock(grad)
	if gr < 0 || g.paramOf[gr] < 0 {
		return VarID{}, false
	}
	return g.mainID(g.paramOf[gr]), true
}
