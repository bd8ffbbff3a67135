package complete

import (
	"errors"
	"fmt"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/lower"
	"github.com/distpass/distpass/ops"
	"github.com/distpass/distpass/spmd"
)

// Options tune a completion.
type Options struct {
	// Registry holds the impls completion picks from (nil: the default).
	Registry *lower.Registry
	// Lazy keeps a partial result partial even where the op's impl can
	// reduce it itself (a row-parallel matmul's Out): whoever needs it
	// whole pays, by a reshard. By default such an impl reduces it.
	Lazy bool
	// MaxVisits caps the fixpoint's op visits (0: a bound from the
	// module's size, which a monotone fixpoint never reaches).
	MaxVisits int
}

// engine is one completion of one module.
type engine struct {
	m    *ir.Module
	g    *graph
	s    state
	reg  *lower.Registry
	opts Options
	rep  *Report
	// impls lists the candidates of each op type, built on first use.
	impls map[string][]implRef
	byID  map[int64]int32
	fit   *lower.Fitter
	slab  slab
	memo  ops.RuleMemo
	// localRules holds the gathers and scatters that index rows by
	// rank-local positions, and their rules (localRule); localBuf is
	// settle's scratch for the outputs whose local dims it decides.
	localRules map[int32]localRule
	localBuf   []int32
}

// Complete completes m's main program in place: every dense-tensor var
// and every op gets a dist, every op an impl, and the report says what
// was inferred, what conflicted and where reshards are needed. On error
// m may be partly completed; the pass runs it on a module it may drop.
func Complete(m *ir.Module, o Options) (*Report, error) {
	if m == nil || m.Main == nil || len(m.Main.Blocks) == 0 {
		return nil, errors.New("complete: no main program")
	}
	if len(m.Meshes) == 0 {
		return nil, errors.New("complete: the module declares no mesh")
	}
	if m.Main.Rank >= 0 {
		return nil, fmt.Errorf("complete: the main program is partitioned (rank %d)", m.Main.Rank)
	}
	reshardDists(m)
	e := &engine{m: m, g: buildGraph(m), reg: o.Registry, opts: o, rep: &Report{}}
	if e.reg == nil {
		e.reg = lower.DefaultRegistry()
	}
	e.rep.e = e
	e.fit = e.reg.Fitter(m)
	e.initState()
	if err := e.meshes(); err != nil {
		return nil, err
	}
	if err := e.checkGiven(); err != nil {
		return nil, err
	}
	if err := e.checkPartialDTypes("as given"); err != nil {
		return nil, err
	}
	e.rules()
	e.g.indexUsers()
	if err := e.fixpoint(); err != nil {
		return nil, fmt.Errorf("complete: %w", err)
	}
	if err := e.settle(); err != nil {
		return nil, err
	}
	if err := e.checkPartialDTypes("as completed"); err != nil {
		return nil, err
	}
	e.startup()
	e.rep.finish()
	return e.rep, nil
}

// startup gives each startup var without a dist its main twin's, as
// the partitioner reads the startup program's dists from main.
func (e *engine) startup() {
	if e.m.Startup == nil {
		return
	}
	g := e.m.Main.Global()
	for _, b := range e.m.Startup.Blocks {
		if b == nil {
			continue
		}
		for _, v := range b.Vars() {
			if v.Dist == nil {
				if t := g.Var(v.Name()); t != nil && t.Dist != nil {
					v.Dist = t.Dist.Clone()
				}
			}
		}
	}
}

// checkGiven refuses the dists a user gave that the engine cannot read
// (verify refuses them too; the Go API may skip it): a mapping of
// another rank than its var's, or naming a mesh dim its mesh lacks.
func (e *engine) checkGiven() error {
	fits := func(m []int, rank int, pm *ir.ProcessMesh) bool {
		if rank >= 0 && len(m) != rank {
			return false
		}
		for _, k := range m {
			if k < -1 || k >= len(pm.Shape) {
				return false
			}
		}
		return true
	}
	for v, x := range e.g.vars {
		if e.g.dense[v] && x.Dist != nil && !fits(x.Dist.DimsMapping, len(x.Type.Shape), e.s.mesh[v]) {
			return fmt.Errorf("complete: var %s: dims_mapping %s does not fit its rank %d and mesh %s", x.Name(), ir.FormatInts(x.Dist.DimsMapping), len(x.Type.Shape), e.s.mesh[v].Name)
		}
	}
	for i := range e.g.ops {
		n := &e.g.ops[i]
		if !n.fixed {
			continue
		}
		for k, v := range n.args {
			if v < 0 {
				continue
			}
			name := e.argName(n, k)
			m, ok := n.op.Dist.OutputMapping(name)
			if k < n.nIn {
				m, ok = n.op.Dist.InputMapping(name)
			}
			if ok && !fits(m, len(e.g.vars[v].Type.Shape), n.mesh) {
				return fmt.Errorf("complete: %s: %s's dims_mapping %s does not fit its rank %d and mesh %s", n.op, name, ir.FormatInts(m), len(e.g.vars[v].Type.Shape), n.mesh.Name)
			}
		}
	}
	return nil
}

// rules finds each op's rule and the fixpoint's ops.
func (e *engine) rules() {
	g := e.g
	e.byID = make(map[int64]int32, len(g.ops))
	for i := range g.ops {
		n := &g.ops[i]
		e.byID[n.op.ID] = int32(i)
		if n.op.Role.IsForward() {
			g.fwd = append(g.fwd, int32(i))
			e.buildRule(n)
		}
	}
}

// buildRule finds op n's rule, once: the fixpoint's ops first, the
// others when they settle by their rule (a grad op that follows its
// forward op needs none).
func (e *engine) buildRule(n *opNode) {
	if n.ruleBuilt || n.fixed {
		return
	}
	n.ruleBuilt = true
	n.rule, n.ruleID, n.ruleErr = e.memo.Rule(n.op, n.argVars, e.g.lookup(n))
}

// forward and backward run op n's rule (through the memo's results).
func (e *engine) forward(n *opNode, ins [][]int) (spmd.Sharding, error) {
	if r := e.localRule(n); r != nil {
		return r.Forward(n.mesh.Shape, ins)
	}
	return e.memo.Run(n.rule, n.ruleID, false, n.mesh.Shape, e.meshIndex(n.mesh), ins)
}

func (e *engine) backward(n *opNode, outs [][]int) (spmd.Sharding, error) {
	if r := e.localRule(n); r != nil {
		return r.Backward(n.mesh.Shape, outs)
	}
	return e.memo.Run(n.rule, n.ruleID, true, n.mesh.Shape, e.meshIndex(n.mesh), outs)
}

func (e *engine) meshIndex(pm *ir.ProcessMesh) int {
	for i, x := range e.m.Meshes {
		if x == pm {
			return i
		}
	}
	return -1
}
