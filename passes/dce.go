package passes

import (
	"fmt"
	"strings"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/ops"
)

// DCEPass removes ops whose results nobody reads, then vars nothing
// refers to.
func DCEPass() *Pass {
	return &Pass{
		Name: "dce",
		Doc: `remove ops whose outputs nobody reads, and unused vars
An op is kept when it has side effects (collectives, I/O, control flow:
ops.HasSideEffects), owns a sub-block, has no outputs, has the loss role,
or writes a persistable, a no-shape var, a grad of the params-grads list,
or a var named in keep. Others are removed when no remaining op reads any
of their outputs (an op reading its own output in place does not count)
and no remaining op names them as its fwd, repeating until nothing
changes; a read in a sub-block counts. Then vars
that no op of the program refers to are removed, unless persistable, data
(is_data) or named in the params-grads list or keep. A name in keep that
no block declares is an error (a misspelling would keep nothing). Counts
ops-removed and vars-removed.`,
		Options: []Option{{Name: "keep", Kind: OptString, Default: "", Doc: "vars to keep alive, separated by ';'"}},
		Run: func(ctx *Context, m *ir.Module) error {
			keep := map[string]bool{}
			for _, k := range strings.Split(ctx.String("keep"), ";") {
				if k == "" {
					continue
				}
				// A misspelt name would keep nothing, and the var meant
				// would be removed without a word.
				if !declaredAnywhere(m, k) {
					return fmt.Errorf("keep names %s, which no block of main or startup declares", k)
				}
				keep[k] = true
			}
			for _, pg := range m.ParamGrads {
				keep[pg.Param] = true
				if pg.Grad != "" {
					keep[pg.Grad] = true
				}
			}
			for _, p := range m.Programs() {
				ops, vars := dceProgram(p, keep)
				ctx.Count("ops-removed", ops)
				ctx.Count("vars-removed", vars)
			}
			return nil
		},
	}
}

// declaredAnywhere reports whether some block of some program declares name.
func declaredAnywhere(m *ir.Module, name string) bool {
	for _, p := range m.Programs() {
		for _, b := range p.Blocks {
			if b.Var(name) != nil {
				return true
			}
		}
	}
	return false
}

func dceProgram(p *ir.Program, keep map[string]bool) (opsRemoved, varsRemoved int) {
	// readers counts, per name, the live ops that read it (names, not
	// declarations: a conservative choice where blocks shadow names).
	readers := map[string]int{}
	for _, b := range p.Blocks {
		for _, op := range b.Ops {
			for a := range op.InputNames {
				readers[a]++
			}
		}
	}
	// fwdRefs counts, per op id, the live ops whose fwd names it: a grad
	// op's link to its forward op keeps that op, whose inputs the grad
	// reads and whose role the verifier checks.
	fwdRefs := map[int64]int{}
	for _, b := range p.Blocks {
		for _, op := range b.Ops {
			if op.Fwd != 0 {
				fwdRefs[op.Fwd]++
			}
		}
	}
	dead := map[*ir.Op]bool{}
	for changed := true; changed; {
		changed = false
		for bi := len(p.Blocks) - 1; bi >= 0; bi-- {
			b := p.Blocks[bi]
			for i := len(b.Ops) - 1; i >= 0; i-- {
				op := b.Ops[i]
				if dead[op] || isRoot(p, b, op, keep) || readByOthers(op, readers) || fwdRefs[op.ID] > 0 {
					continue
				}
				dead[op] = true
				changed = true
				for a := range op.InputNames {
					readers[a]--
				}
				if op.Fwd != 0 {
					fwdRefs[op.Fwd]--
				}
			}
		}
	}
	used := map[string]bool{}
	for _, b := range p.Blocks {
		kept := b.Ops[:0]
		for _, op := range b.Ops {
			if dead[op] {
				opsRemoved++
				continue
			}
			kept = append(kept, op)
			for a := range op.InputNames {
				used[a] = true
			}
			for a := range op.OutputNames {
				used[a] = true
			}
		}
		clear(b.Ops[len(kept):])
		b.Ops = kept
	}
	for _, b := range p.Blocks {
		var drop []string
		for _, v := range b.Vars() {
			if !used[v.Name()] && !keep[v.Name()] && !v.Persistable() && !v.Has(ir.FlagIsData) {
				drop = append(drop, v.Name())
			}
		}
		for _, n := range drop {
			b.RemoveVar(n)
			varsRemoved++
		}
	}
	return opsRemoved, varsRemoved
}

// isRoot reports whether op must stay whatever reads its outputs.
func isRoot(p *ir.Program, b *ir.Block, op *ir.Op, keep map[string]bool) bool {
	if ops.HasSideEffects(op.Type) || op.Role&ir.RoleLoss != 0 || len(op.Outputs) == 0 {
		return true
	}
	for range op.SubBlocks {
		return true
	}
	n := 0
	for a := range op.OutputNames {
		n++
		if keep[a] {
			return true
		}
		v := p.LookupVar(b, a)
		if v == nil || v.Persistable() || !v.Type.IsTensor() {
			return true // undeclared: not ours to judge; the verifier reports it
		}
	}
	return n == 0
}

// readByOthers reports whether a live op other than op itself reads one of
// op's outputs.
func readByOthers(op *ir.Op, readers map[string]int) bool {
	for a := range op.OutputNames {
		self := 0
		for in := range op.InputNames {
			if in == a {
				self++
			}
		}
		if readers[a] > self {
			return true
		}
	}
	return false
}
