package complete

import (
	"fmt"
	"slices"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/lower"
	"github.com/distpass/distpass/spmd"
)

// step is where a var's dim got its mesh dim: through op (an index into
// graph.ops) from dim dim of var from; op -1 is the var's own
// annotation, from -1 the op's own annotation (a user-annotated op).
type step struct {
	op   int32
	from int32
	dim  int16
}

// state is the lattice: per var, per dim, -1 (replicated, open) or the
// mesh dim it is split along; a closed var (annotated) never changes,
// but for the partial state of a derived grad (gradPartialOpen).
type state struct {
	dims   [][]int
	closed []bool
	// partialOpen marks the closed vars whose partial state their writer
	// gives: see gradPartialOpen.
	partialOpen []bool
	mesh        []*ir.ProcessMesh
	origin      [][]step
	partial     [][]ir.Partial
	// local holds, per var, the mesh dims its values are rank-local
	// along (ir.TensorDist.Local): an annotated var's as given, others'
	// as their writer makes them (local.go). Never written in place.
	local   [][]int
	settled []bool
}

func (e *engine) initState() {
	g := e.g
	n := len(g.vars)
	s := &e.s
	s.dims = make([][]int, n)
	s.closed = make([]bool, n)
	s.partialOpen = make([]bool, n)
	s.mesh = make([]*ir.ProcessMesh, n)
	s.origin = make([][]step, n)
	s.partial = make([][]ir.Partial, n)
	s.local = make([][]int, n)
	s.settled = make([]bool, n)
	flat := 0
	for _, v := range g.vars {
		flat += len(v.Type.Shape)
	}
	dims := make([]int, flat)
	origins := make([]step, flat)
	for i, v := range g.vars {
		r := len(v.Type.Shape)
		s.dims[i], dims = dims[:r:r], dims[r:]
		s.origin[i], origins = origins[:r:r], origins[r:]
		for d := range s.dims[i] {
			s.dims[i][d] = -1
			s.origin[i][d] = step{op: -1, from: -1}
		}
		if v.Dist != nil {
			s.closed[i] = true
			s.settled[i] = true
			copy(s.dims[i], v.Dist.DimsMapping)
			s.partial[i] = v.Dist.Partial
			s.local[i] = v.Dist.Local
			s.partialOpen[i] = gradPartialOpen(g.p, v)
		}
	}
}

// gradPartialOpen reports whether v is a grad (X@GRAD, or a part of
// it) whose dist is its forward var's mesh and mapping, not partial: what
// append-backward copies onto a grad, not a choice of partial state.
// Whether a grad is partial is the lowering's business (a rule-based
// grad op leaves a param grad partial along the batch's mesh dims, where
// the data-parallel sync sums it): such a var keeps its mapping but takes
// the partial state its writer gives, and its readers that need it whole
// get a reshard, as for any partial var.
func gradPartialOpen(p *ir.Program, v *ir.Var) bool {
	fv := lower.ForwardVar(v.Name())
	if fv == "" || v.Dist.IsPartial() {
		return false
	}
	x := p.Global().Var(fv)
	return x != nil && x.Dist != nil && x.Dist.Mesh == v.Dist.Mesh && slices.Equal(x.Dist.DimsMapping, v.Dist.DimsMapping)
}

// partialFixed reports whether var v's partial state is annotated as
// other than p: an op writing it p must have it resharded.
func (e *engine) partialFixed(v int32, p []ir.Partial) bool {
	return e.s.closed[v] && !e.s.partialOpen[v] && !slices.Equal(e.g.vars[v].Dist.Partial, p)
}

// fixpoint runs the forward ops' rules until no var changes.
func (e *engine) fixpoint() error {
	g := e.g
	nf := len(g.fwd)
	dirty := make([]bool, nf)
	for i := range dirty {
		dirty[i] = true
	}
	pending := nf
	limit := e.opts.MaxVisits
	if limit <= 0 {
		// Each var dim changes at most once, and each change dirties the
		// ops that touch the var: this bounds the visits of a fixpoint.
		limit = 4*(nf+len(g.users)) + 1024
	}
	mark := func(v int32) {
		for _, k := range g.usersOf(v) {
			if !dirty[k] {
				dirty[k] = true
				pending++
			}
		}
	}
	visits := 0
	for sweep := 0; pending > 0; sweep++ {
		for j := 0; j < nf; j++ {
			k := j
			if sweep%2 == 1 {
				k = nf - 1 - j
			}
			if !dirty[k] {
				continue
			}
			dirty[k] = false
			pending--
			if visits++; visits > limit {
				n := &g.ops[g.fwd[k]]
				return fmt.Errorf("no fixpoint after %d op visits (the cap); still changing at %s", limit, n.op)
			}
			e.visit(g.fwd[k], mark)
			if n := &g.ops[g.fwd[k]]; makesLocal(n.op.Type) {
				// The op's outputs take the local dims it makes them;
				// a change concerns their readers, not the op itself.
				e.flowLocal(n, func(v int32) {
					for _, j := range g.usersOf(v) {
						if j != int32(k) && !dirty[j] {
							dirty[j] = true
							pending++
						}
					}
				})
			}
		}
		e.rep.Sweeps = sweep + 1
	}
	e.rep.Visits = visits
	return nil
}

// visit runs op i's rule both ways on the current mappings and proposes
// the results to its args.
func (e *engine) visit(i int32, mark func(int32)) {
	n := &e.g.ops[i]
	if n.fixed {
		d := n.op.Dist
		for k, v := range n.args {
			name := e.argName(n, k)
			var m []int
			var ok bool
			if k < n.nIn {
				m, ok = d.InputMapping(name)
			} else {
				m, ok = d.OutputMapping(name)
			}
			if ok {
				e.propose(i, v, m, mark)
			}
		}
		return
	}
	if n.rule == nil || n.mesh == nil {
		return
	}
	ins, outs := e.mappings(n)
	f, ferr := e.forward(n, ins)
	if ferr != nil {
		// The inputs' dists cannot be met together: the first keep
		// theirs, and the later ones are proposed what the rule then
		// requires (their losers listed as conflicts), as settling does.
		if _, f2, ok := e.firstWins(n, ins); ok {
			f, ferr = f2, nil
		}
	}
	var b spmd.Sharding
	var berr error
	if anySplit(outs) {
		b, berr = e.backward(n, outs)
	}
	if ferr == nil {
		for k, v := range n.outs() {
			if k < len(f.Outputs) {
				e.propose(i, v, f.Outputs[k], mark)
			}
		}
	}
	// What the forward rule requires of an input first, then what the
	// backward does: a mesh dim of the second that the first put
	// elsewhere loses, listed.
	for k, v := range n.ins() {
		if ferr == nil && k < len(f.Inputs) {
			e.propose(i, v, f.Inputs[k], mark)
		}
		if berr == nil && k < len(b.Inputs) {
			e.propose(i, v, b.Inputs[k], mark)
		}
	}
}

// joinReq is what a forward and a backward requirement ask together:
// the first's mesh dims, and the second's on its dims the first leaves
// replicated with mesh dims the first does not use.
func joinReq(f, b []int) []int {
	if f == nil {
		return b
	}
	if b == nil || len(b) != len(f) {
		return f
	}
	out := slices.Clone(f)
	for d, k := range b {
		if k >= 0 && out[d] < 0 && !slices.Contains(out, k) {
			out[d] = k
		}
	}
	return out
}

// mappings returns op n's args' current mappings, nil for an arg that is
// not a dense tensor or is on a mesh of another shape. An input on
// another mesh of the same shape (the previous pipeline stage's) is
// read with its placement: the mesh change is a transfer between
// matching coordinates, and the placement flows on. Nothing flows back
// to another mesh (propose refuses it).
func (e *engine) mappings(n *opNode) (ins, outs [][]int) {
	all := make([][]int, len(n.args))
	for k, v := range n.args {
		if v >= 0 && (e.s.mesh[v] == n.mesh || k < n.nIn && alike(e.s.mesh[v], n.mesh)) {
			all[k] = e.s.dims[v]
		}
	}
	return all[:n.nIn], all[n.nIn:]
}

// alike reports whether two meshes have one shape.
func alike(a, b *ir.ProcessMesh) bool { return a != nil && b != nil && slices.Equal(a.Shape, b.Shape) }

// propose offers mapping m to var v through op i: each of v's open dims
// that m splits takes m's mesh dim, unless v uses that mesh dim already,
// it does not divide the dim, or the dim is split otherwise (a conflict:
// the first mesh dim stays).
func (e *engine) propose(i, v int32, m []int, mark func(int32)) {
	if v < 0 || m == nil || e.s.closed[v] || e.s.mesh[v] != e.g.ops[i].mesh {
		return
	}
	cur := e.s.dims[v]
	if len(m) != len(cur) {
		return
	}
	changed := false
	for d, k := range m {
		if k < 0 || cur[d] == k {
			continue
		}
		switch {
		case cur[d] >= 0:
			e.conflict(i, v, d, cur[d], k)
		case slices.Contains(cur, k):
			e.conflict(i, v, d, -1, k)
		case !divides(e.g.vars[v].Type.Shape[d], e.s.mesh[v].Shape[k]):
			e.uneven(i, v, d, k)
		default:
			cur[d] = k
			e.s.origin[v][d] = e.source(i, v, k)
			changed = true
		}
	}
	if changed {
		mark(v)
	}
}

// divides reports whether a dim of size n splits evenly n ways; a dim of
// unknown size (-1, an inference program's batch) is taken to.
func divides(n int64, ways int) bool { return n < 0 || ways > 0 && n%int64(ways) == 0 }

// source finds where mesh dim k, proposed to v by op i, comes from: the
// first other arg of the op split along k (or the op's own annotation).
func (e *engine) source(i, v int32, k int) step {
	n := &e.g.ops[i]
	if n.fixed {
		return step{op: i, from: -1}
	}
	for _, a := range n.args {
		if a < 0 || a == v || e.s.mesh[a] != n.mesh {
			continue
		}
		if d := slices.Index(e.s.dims[a], k); d >= 0 {
			return step{op: i, from: a, dim: int16(d)}
		}
	}
	return step{op: i, from: -1}
}

// argName returns the name of op n's k-th arg.
func (e *engine) argName(n *opNode, k int) string {
	slots := n.op.Inputs
	if k >= n.nIn {
		slots, k = n.op.Outputs, k-n.nIn
	}
	for _, s := range slots {
		if k < len(s.Args) {
			return s.Args[k]
		}
		k -= len(s.Args)
	}
	return ""
}
