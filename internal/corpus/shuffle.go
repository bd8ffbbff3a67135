package corpus

import (
	"fmt"
	"math/rand/v2"

	"github.com/distpass/distpass/analysis"
	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/ops"
)

// ShuffleOps reorders the ops of every block of m's programs, in place,
// into a random order that keeps every dependency, as the Go compiler's
// checkFunc shuffles independent values to flush out order-dependent
// passes. It returns how many ops changed position.
//
// Two ops of a block depend on each other when one writes a var the
// other reads or writes (def-use, use-def and def-def, from
// analysis.DefUse, names resolved through the block chain; var attrs
// count as reads); the earlier stays first. Some ops are barriers that
// nothing crosses: ops with side effects (collectives, I/O, checks,
// control flow: ops.HasSideEffects), ops that own a sub-block (their
// sub-block reads and writes vars their slots need not list), and the
// loss-grad op (role backward|loss), since lowering syncs the
// data-parallel grads of the backward ops it has seen after it, a rule
// of op order rather than of data. Between barriers the order is a
// random topological order of the dependency graph. The module computes
// what it computed before: each op reads the same values.
func ShuffleOps(m *ir.Module, rng *rand.Rand) (int, error) {
	cache := analysis.NewCache(m)
	du, err := analysis.Get[*analysis.DefUseInfo](cache, analysis.DefUse)
	if err != nil {
		return 0, err
	}
	// Every order is computed on the module as it is, then applied: the
	// def-use lists name positions.
	type plan struct {
		b     *ir.Block
		order []int
	}
	var plans []plan
	moved := 0
	for _, p := range m.Programs() {
		for _, b := range p.Blocks {
			order := shuffleBlock(p, b, du, rng)
			for i, j := range order {
				if i != j {
					moved++
				}
			}
			plans = append(plans, plan{b, order})
		}
	}
	for _, pl := range plans {
		ops := make([]*ir.Op, len(pl.order))
		for i, j := range pl.order {
			ops[i] = pl.b.Ops[j]
		}
		pl.b.Ops = ops
	}
	return moved, nil
}

func isBarrier(op *ir.Op) bool {
	if ops.HasSideEffects(op.Type) || op.Role.IsLossGrad() {
		return true
	}
	for range op.SubBlocks {
		return true
	}
	return false
}

// shuffleBlock returns a new order of b's ops: order[i] is the position
// of the op to put at i.
func shuffleBlock(p *ir.Program, b *ir.Block, du *analysis.DefUseInfo, rng *rand.Rand) []int {
	n := len(b.Ops)
	preds := make([][]int, n) // earlier ops that op i depends on
	for i, op := range b.Ops {
		add := func(refs []analysis.OpRef) {
			for _, r := range refs {
				if int(r.Block) == b.Index && int(r.Pos) < i {
					preds[i] = append(preds[i], int(r.Pos))
				}
			}
		}
		for a := range op.InputNames {
			add(du.Defs(p, b.Index, a))
		}
		for _, a := range attrVars(op) {
			add(du.Defs(p, b.Index, a))
		}
		for a := range op.OutputNames {
			add(du.Uses(p, b.Index, a))
			add(du.Defs(p, b.Index, a))
		}
	}
	order := make([]int, 0, n)
	start := 0
	for i := 0; i <= n; i++ {
		if i < n && !isBarrier(b.Ops[i]) {
			continue
		}
		order = append(order, topoShuffle(start, i, preds, rng)...)
		if i < n {
			order = append(order, i)
		}
		start = i + 1
	}
	if len(order) != n {
		panic(fmt.Sprintf("corpus: shuffled %d ops of %d", len(order), n))
	}
	return order
}

// topoShuffle orders the ops [lo, hi) in a random topological order of
// preds (those before lo are placed already).
func topoShuffle(lo, hi int, preds [][]int, rng *rand.Rand) []int {
	indeg := make([]int, hi-lo)
	succs := make([][]int, hi-lo)
	for i := lo; i < hi; i++ {
		for _, j := range preds[i] {
			if j >= lo {
				indeg[i-lo]++
				succs[j-lo] = append(succs[j-lo], i)
			}
		}
	}
	var ready, out []int
	for i := lo; i < hi; i++ {
		if indeg[i-lo] == 0 {
			ready = append(ready, i)
		}
	}
	for len(ready) > 0 {
		k := rng.IntN(len(ready))
		i := ready[k]
		ready[k] = ready[len(ready)-1]
		ready = ready[:len(ready)-1]
		out = append(out, i)
		for _, s := range succs[i-lo] {
			if indeg[s-lo]--; indeg[s-lo] == 0 {
				ready = append(ready, s)
			}
		}
	}
	return out
}

// attrVars lists the vars an op's attrs name (Paddle's VAR attributes).
func attrVars(op *ir.Op) []string {
	var out []string
	for _, a := range op.Attrs {
		switch v := a.Value.(type) {
		case ir.VarRef:
			out = append(out, string(v))
		case ir.VarRefs:
			out = append(out, v...)
		}
	}
	return out
}
