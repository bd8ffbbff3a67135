package complete

import (
	"errors"
	"fmt"
	"slices"

	"github.com/distpass/distpass/analysis/opdef"
	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/registry"
)

// Options tune a completion.
type Options struct {
	// Registry holds the impls completion picks from (nil: the default).
	Registry *registry.Registry
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
	reg  *registry.Registry
	opts Options
	rep  *Report
	// impls lists the candidates of each op type, built on first use.
	impls map[string][]implRef
	byID  map[int64]int32
	fit   *registry.Fitter
	slab  slab
	memo  ruleMemo
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
	e := &engine{m: m, g: buildGraph(m), reg: o.Registry, opts: o, rep: &Report{}}
	if e.reg == nil {
		e.reg = registry.DefaultRegistry()
	}
	e.rep.e = e
	e.fit = e.reg.Fitter(m)
	e.initState()
	if err := e.meshes(); err != nil {
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
	n.ruleID = -1
	keyed := e.memo.key(n)
	if keyed {
		if r, ok := e.memo.rules[string(e.memo.buf)]; ok {
			n.rule, n.ruleID = r.rule, r.id
			return
		}
	}
	n.rule, n.ruleErr = opdef.ShardingRuleOf(n.op, e.g.lookup(n))
	if keyed && n.ruleErr == nil {
		if e.memo.rules == nil {
			e.memo.rules = map[string]memoRule{}
		}
		n.ruleID = int32(len(e.memo.rules))
		e.memo.rules[string(e.memo.buf)] = memoRule{n.rule, n.ruleID}
	}
}

// forward and backward run op n's rule (through the memo's results).
func (e *engine) forward(n *opNode, ins [][]int) (opdef.Sharding, error) {
	return e.memo.run(n, false, e.meshIndex(n.mesh), ins)
}

func (e *engine) backward(n *opNode, outs [][]int) (opdef.Sharding, error) {
	return e.memo.run(n, true, e.meshIndex(n.mesh), outs)
}

func (e *engine) meshIndex(pm *ir.ProcessMesh) int {
	for i, x := range e.m.Meshes {
		if x == pm {
			return i
		}
	}
	return -1
}

// meshes gives every op and var a mesh (see the package doc).
func (e *engine) meshes() error {
	g, s := e.g, &e.s
	for i, v := range g.vars {
		if v.Dist == nil {
			continue
		}
		pm := e.m.Mesh(v.Dist.Mesh)
		if pm == nil {
			return fmt.Errorf("complete: var %s: unknown mesh %s", v.Name(), v.Dist.Mesh)
		}
		s.mesh[i] = pm
	}
	for i := range g.ops {
		n := &g.ops[i]
		if d := n.op.Dist; d != nil {
			if n.mesh = e.m.Mesh(d.Mesh); n.mesh == nil {
				return fmt.Errorf("complete: %s: unknown mesh %s", n.op, d.Mesh)
			}
		}
	}
	if len(e.m.Meshes) == 1 {
		pm := e.m.Meshes[0]
		for i := range g.ops {
			if g.ops[i].mesh == nil {
				g.ops[i].mesh = pm
			}
		}
		for i := range s.mesh {
			if s.mesh[i] == nil {
				s.mesh[i] = pm
			}
		}
		return nil
	}
	// In settling order, an op takes the mesh of its first annotated arg
	// (inputs, then outputs), else of its first arg given one by its
	// producer, else the nearest op's before it, else after it; its args
	// without a mesh take the op's.
	firstRead := make([]int32, len(g.vars)) // the first op reading each var
	for i := range firstRead {
		firstRead[i] = -1
	}
	for j := len(g.ops) - 1; j >= 0; j-- {
		for _, v := range g.ops[j].ins() {
			if v >= 0 {
				firstRead[v] = int32(j)
			}
		}
	}
	for i := range g.ops {
		n := &g.ops[i]
		for pass := 0; pass < 2 && n.mesh == nil; pass++ {
			// An annotated arg's mesh first: the user placed it.
			for _, v := range n.args {
				if v >= 0 && s.mesh[v] != nil && (pass == 1 || s.closed[v]) {
					n.mesh = s.mesh[v]
					break
				}
			}
		}
		if n.mesh == nil && !anyDense(n.ins()) {
			// A source (a fill): where its value is read first.
			n.mesh = e.firstReader(i, firstRead)
		}
		if n.mesh == nil && i > 0 {
			n.mesh = g.ops[i-1].mesh
		}
		if n.mesh != nil {
			for _, v := range n.args {
				if v >= 0 && s.mesh[v] == nil {
					s.mesh[v] = n.mesh
				}
			}
		}
	}
	for i := len(g.ops) - 1; i >= 0; i-- {
		n := &g.ops[i]
		if n.mesh == nil && i+1 < len(g.ops) {
			n.mesh = g.ops[i+1].mesh
		}
		if n.mesh == nil {
			n.mesh = e.m.Meshes[0] // no op has a mesh
		}
		for _, v := range n.args {
			if v >= 0 && s.mesh[v] == nil {
				s.mesh[v] = n.mesh
			}
		}
	}
	for i := range s.mesh {
		if s.mesh[i] == nil {
			s.mesh[i] = e.m.Meshes[0] // used by no op
		}
	}
	return nil
}

func anyDense(args []int32) bool {
	for _, v := range args {
		if v >= 0 {
			return true
		}
	}
	return false
}

// firstReader returns the mesh of the first op to read an output of op
// i (firstRead: per var, its first reader), when that op has a mesh of
// its own (annotated, or from its own annotated args), or nil.
func (e *engine) firstReader(i int, firstRead []int32) *ir.ProcessMesh {
	g := e.g
	j := int32(-1)
	for _, v := range g.ops[i].outs() {
		if v >= 0 && firstRead[v] > int32(i) && (j < 0 || firstRead[v] < j) {
			j = firstRead[v]
		}
	}
	if j < 0 {
		return nil
	}
	r := &g.ops[j]
	if r.mesh != nil {
		return r.mesh
	}
	for _, a := range r.args {
		if a >= 0 && e.s.closed[a] && e.s.mesh[a] != nil {
			return e.s.mesh[a]
		}
	}
	return nil
}

// settle gives every op its dist and every var its own, in settling
// order, then writes them into the module.
func (e *engine) settle() error {
	var errs []error
	for i := range e.g.ops {
		n := &e.g.ops[i]
		var err error
		switch {
		case n.fixed:
			e.settleFixed(n)
		case n.op.Role.IsBackward() && n.op.Fwd != 0:
			err = e.settleGrad(n)
		default:
			err = e.settleRule(n)
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	for v := range e.g.vars {
		e.writeVar(int32(v))
	}
	return nil
}

// settleFixed keeps a user-annotated op's dist; its unproduced args and
// outputs without a dist take its mappings.
func (e *engine) settleFixed(n *opNode) {
	d := n.op.Dist
	for k, v := range n.args {
		if v < 0 || e.s.settled[v] {
			continue
		}
		name := e.argName(n, k)
		m, ok := d.OutputMapping(name)
		if k < n.nIn {
			m, ok = d.InputMapping(name)
		}
		if ok && len(m) == len(e.s.dims[v]) {
			copy(e.s.dims[v], m)
		}
		e.s.settled[v] = true
	}
	e.rep.Ops.Kept++
	for _, v := range n.args {
		if v >= 0 {
			e.writeVar(v) // its reshards are compared with the vars' dists
		}
	}
	e.noteReshards(n)
}

// settledDims returns var v's settled mapping, or for an unsettled var
// (unproduced, or read before its producer in a loop) its fixpoint one,
// settling it.
func (e *engine) settledDims(v int32) []int {
	if !e.s.settled[v] {
		e.s.settled[v] = true
		e.writeVar(v)
	}
	return e.s.dims[v]
}

// setDims settles var v's mapping to m, given by op i: the dims it
// changes come from the op's other args.
func (e *engine) setDims(i, v int32, m []int) {
	cur := e.s.dims[v]
	for d, k := range m {
		if d < len(cur) && cur[d] != k {
			cur[d] = -1
			if k >= 0 {
				e.s.origin[v][d] = e.source(i, v, k)
			} else {
				e.s.origin[v][d] = step{op: -1, from: -1}
			}
			cur[d] = k
		}
	}
}

// settleRule settles a forward, loss-grad or optimizer op by its rule.
func (e *engine) settleRule(n *opNode) error {
	ins := make([][]int, n.nIn)
	var fresh []int // inputs first settled here: they take what the op requires
	for k, v := range n.ins() {
		switch {
		case v < 0:
		case e.s.mesh[v] == n.mesh:
			if !e.s.settled[v] {
				fresh = append(fresh, k)
			}
			ins[k] = e.settledDims(v)
		case alike(e.s.mesh[v], n.mesh):
			ins[k] = e.settledDims(v)
		}
	}
	outs := make([][]int, len(n.args)-n.nIn)
	for k, v := range n.outs() {
		if v >= 0 && e.s.mesh[v] == n.mesh {
			outs[k] = e.s.dims[v]
		}
	}
	var res opdef.Sharding
	e.buildRule(n)
	switch {
	case n.rule == nil:
		res = replicated(ins, outs)
		e.barrier(n)
	default:
		f, ferr := e.forward(n, ins)
		if ferr != nil {
			// The inputs' dists cannot be met together (a dim split along
			// two mesh dims): the earlier inputs keep theirs, as Paddle's
			// merge keeps its first, and the later ones are resharded to
			// what the rule then requires.
			if ins2, f2, ok := e.firstWins(n, ins); ok {
				e.rep.ruleConflict(n, ferr, ins, f2.Inputs)
				ins, f, ferr = ins2, f2, nil
			}
		}
		req := ins
		if ferr == nil {
			req = f.Inputs
			if anySplit(outs) {
				if b, berr := e.backward(n, outs); berr == nil {
					req = e.joinAll(n, f.Inputs, b.Inputs)
				}
			}
		}
		fin, err := f, ferr
		if ferr != nil || !sameMappings(req, ins) {
			// The rule reads its inputs as it requires them.
			fin, err = e.forward(n, req)
		}
		if n.op.Role.IsLoss() && err == nil {
			// The trained loss may be partial only along the mesh dims that
			// split the batch: the data-parallel sync averages the param
			// grads over those alone. Any other is gathered first.
			if drop := e.nonBatchPartials(n, fin); len(drop) > 0 {
				req = withoutMeshDims(fin.Inputs, drop)
				fin, err = e.forward(n, req)
			}
		}
		for range n.mesh.Shape {
			// A mesh dim that would split an output dim it does not divide
			// (a -1 batch met a known one) splits none of the op's args.
			drop := e.unevenOutputs(n, fin)
			if err != nil || len(drop) == 0 {
				break
			}
			req = withoutMeshDims(fin.Inputs, drop)
			fin, err = e.forward(n, req)
		}
		if err != nil {
			// What the inputs are cannot be met together (a Strict rule's
			// mesh dim on two dims): the op reads them replicated.
			e.rep.ruleError(n, err)
			fin = replicated(ins, outs)
		}
		res = fin
	}
	for _, k := range fresh {
		v := n.args[k]
		if k < len(res.Inputs) && res.Inputs[k] != nil && !e.s.closed[v] {
			e.adopt(n, v, res.Inputs[k])
		}
	}
	res = e.passPartial(n, res)
	return e.place(n, res)
}

// passPartial carries a partial X through an op that is linear in it
// (opdef.PassesPartial) when the op reads X as it is: Out is partial
// alike, and X needs no reshard.
func (e *engine) passPartial(n *opNode, res opdef.Sharding) opdef.Sharding {
	n.passes = false
	if n.nIn != 1 || len(n.args) != 2 || n.args[0] < 0 || n.args[1] < 0 {
		return res
	}
	x := n.args[0]
	p := e.s.partial[x]
	if len(p) == 0 || e.g.vars[x].Dist == nil || len(res.Inputs) != 1 || len(res.Outputs) != 1 ||
		!slices.Equal(res.Inputs[0], e.s.dims[x]) || !opdef.PassesPartial(n.op, p) {
		return res
	}
	if o := n.args[1]; e.s.closed[o] && !slices.Equal(e.g.vars[o].Dist.Partial, p) {
		return res // Out is annotated otherwise: X is read whole
	}
	n.passes = true
	res.Partial = [][]ir.Partial{p} // a new slice: res may be the memo's
	return res
}

// firstWins finds the longest run of leading inputs whose dists the
// rule accepts together, the others given as replicated for the rule
// to split as it requires.
func (e *engine) firstWins(n *opNode, ins [][]int) ([][]int, opdef.Sharding, bool) {
	for j := len(ins) - 1; j >= 1; j-- {
		trial := slices.Clone(ins)
		for k := j; k < len(trial); k++ {
			if trial[k] != nil {
				trial[k] = make([]int, len(trial[k]))
				for d := range trial[k] {
					trial[k][d] = -1 // replicated, for the rule to split
				}
			}
		}
		if f, err := e.forward(n, trial); err == nil {
			return trial, f, true
		}
	}
	return nil, opdef.Sharding{}, false
}

// nonBatchPartials returns the mesh dims that res makes loss op n's
// outputs partial along, other than the one splitting dim 0 (the batch)
// of its first dense input.
func (e *engine) nonBatchPartials(n *opNode, res opdef.Sharding) []int {
	batch := -1
	for k := range n.ins() {
		if k < len(res.Inputs) && res.Inputs[k] != nil {
			if len(res.Inputs[k]) > 0 {
				batch = res.Inputs[k][0]
			}
			break
		}
	}
	var drop []int
	for _, ps := range res.Partial {
		for _, p := range ps {
			if p.Dim != batch && !slices.Contains(drop, p.Dim) {
				drop = append(drop, p.Dim)
			}
		}
	}
	return drop
}

// unevenOutputs returns the mesh dims that res would split an output
// dim of op n along without dividing it, listing each in the report.
func (e *engine) unevenOutputs(n *opNode, res opdef.Sharding) []int {
	var drop []int
	for k, v := range n.outs() {
		if v < 0 || k >= len(res.Outputs) {
			continue
		}
		sh := e.g.vars[v].Type.Shape
		for d, x := range res.Outputs[k] {
			if x >= 0 && d < len(sh) && !divides(sh[d], n.mesh.Shape[x]) {
				e.uneven(n.idx, v, d, x)
				if !slices.Contains(drop, x) {
					drop = append(drop, x)
				}
			}
		}
	}
	return drop
}

// withoutMeshDims returns ms with the mesh dims drop replicated.
func withoutMeshDims(ms [][]int, drop []int) [][]int {
	out := make([][]int, len(ms))
	for i, m := range ms {
		if m == nil {
			continue
		}
		out[i] = slices.Clone(m)
		for d, x := range out[i] {
			if slices.Contains(drop, x) {
				out[i][d] = -1
			}
		}
	}
	return out
}

// adopt gives var v, unproduced and read first by op n, what n
// requires of it where its fixpoint mapping leaves a dim replicated (an
// optimizer's state, which the fixpoint does not reach, follows its
// Param so).
func (e *engine) adopt(n *opNode, v int32, req []int) {
	cur := e.s.dims[v]
	if len(req) != len(cur) {
		return
	}
	m := slices.Clone(cur)
	sh := e.g.vars[v].Type.Shape
	for d, k := range req {
		if k >= 0 && m[d] < 0 && !slices.Contains(m, k) && divides(sh[d], n.mesh.Shape[k]) {
			m[d] = k
		}
	}
	if !slices.Equal(m, cur) {
		e.setDims(n.idx, v, m)
		e.writeVar(v)
	}
}

// anySplit reports whether a mapping splits a dim: a rule's backward
// learns nothing from replicated outputs.
func anySplit(ms [][]int) bool {
	for _, m := range ms {
		for _, k := range m {
			if k >= 0 {
				return true
			}
		}
	}
	return false
}

// sameMappings reports whether a and b map alike (nil is not []).
func sameMappings(a, b [][]int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if (a[i] == nil) != (b[i] == nil) || !slices.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}

// joinAll joins each input's forward and backward requirement, keeping
// only mesh dims that divide the dim.
func (e *engine) joinAll(n *opNode, f, b [][]int) [][]int {
	out := make([][]int, len(f))
	for k := range f {
		var bk []int
		if k < len(b) {
			bk = b[k]
		}
		j := joinReq(f[k], bk)
		if v := n.args[k]; v >= 0 && j != nil && !slices.Equal(j, f[k]) {
			sh := e.g.vars[v].Type.Shape
			j = slices.Clone(j)
			for d, x := range j {
				if x >= 0 && (f[k] == nil || f[k][d] != x) && (d >= len(sh) || !divides(sh[d], n.mesh.Shape[x])) {
					j[d] = -1
				}
			}
		}
		out[k] = j
	}
	return out
}

// replicated is the barrier's sharding: every dense arg replicated.
func replicated(ins, outs [][]int) opdef.Sharding {
	rep := func(ms [][]int) [][]int {
		out := make([][]int, len(ms))
		for i, m := range ms {
			if m != nil {
				out[i] = make([]int, len(m))
				for d := range out[i] {
					out[i][d] = -1
				}
			}
		}
		return out
	}
	return opdef.Sharding{Inputs: rep(ins), Outputs: rep(outs), Partial: make([][]ir.Partial, len(outs))}
}
