package complete

import (
	"github.com/distpass/distpass/ops"
	"github.com/distpass/distpass/spmd"
)

// Rank-local positions. assign_pos numbers the slots of each rank's own
// rows of its X (split along a mesh dim) from that rank's own counts, and
// integer arithmetic on such positions (the op table's KeepsIndex trait)
// keeps them so: their values are rank-local along that mesh dim, which
// a var's dist states (ir.TensorDist.Local). The lattice holds it per var
// (state.local): an annotated var's as given, any other's from its
// writer, set in the fixpoint as mappings grow and again when the writer
// settles; writeVar writes it into the var's dist. A gather or scatter
// reads its index var's to choose its rule.

// localRule is the rule of a gather or scatter whose index holds
// positions into each rank's own rows split along mesh dim d.
type localRule struct {
	d    int
	rule spmd.ShardingRule
}

// indexSlot returns the input slot of forward op type t that holds the
// row positions (its record's Indexing), or "": completion chooses the
// rule of the forward ops; their grads follow them.
func indexSlot(t string) string {
	if d := ops.Lookup(t); d != nil && d.Indexing != nil && d.Forward() == nil {
		return d.Indexing.Index
	}
	return ""
}

// localRule returns op n's rule when n is a gather or a scatter whose
// index var is rank-local along one mesh dim of n's mesh
// (ops.LocalIndexRule), or nil. Mappings only grow and a var's local
// dims are set once, so a gather once local stays so, along the same
// mesh dim.
func (e *engine) localRule(n *opNode) spmd.ShardingRule {
	slot := indexSlot(n.op.Type)
	if slot == "" {
		return nil
	}
	// Local dims are a mesh's: an index on another mesh says nothing of
	// the rows of n's, and one local along two mesh dims indexes rows no
	// mapping splits so (check-annotations refuses it).
	ix := e.inputVar(n, slot)
	if ix < 0 || e.s.mesh[ix] != n.mesh || len(e.s.local[ix]) != 1 {
		return nil
	}
	d := e.s.local[ix][0]
	if c, ok := e.localRules[n.idx]; ok && c.d == d {
		return c.rule
	}
	r, err := ops.LocalIndexRule(n.op, e.g.lookup(n), d)
	if err != nil || r == nil {
		return nil
	}
	if e.localRules == nil {
		e.localRules = map[int32]localRule{}
	}
	e.localRules[n.idx] = localRule{d, r}
	return r
}

// inputVar returns the var of op n's one arg in input slot slot, or -1.
func (e *engine) inputVar(n *opNode, slot string) int32 {
	args := n.op.Input(slot)
	if len(args) != 1 {
		return -1
	}
	for k, v := range n.ins() {
		if v >= 0 && e.argName(n, k) == args[0] {
			return v
		}
	}
	return -1
}

// makesLocal reports whether ops of type t may write rank-local values:
// assign_pos, and the ops that keep indices.
func makesLocal(t string) bool { return ops.Has(t, ops.NumbersRows|ops.KeepsIndex) }

// localOf returns the mesh dims op n makes its outputs rank-local along:
// for assign_pos the one its X's rows are split along, xm being X's
// mapping as n reads it on its mesh (nil: not on it); for an op that
// keeps indices its first rank-local input's on its mesh; else nil.
func (e *engine) localOf(n *opNode, xm []int) []int {
	if ops.Has(n.op.Type, ops.NumbersRows) {
		if len(xm) > 0 && xm[0] >= 0 {
			return []int{xm[0]}
		}
		return nil
	}
	if !ops.Has(n.op.Type, ops.KeepsIndex) {
		return nil
	}
	for _, in := range n.ins() {
		if in >= 0 && e.s.mesh[in] == n.mesh && len(e.s.local[in]) > 0 {
			return e.s.local[in]
		}
	}
	return nil
}

// flowLocal gives the outputs of op n, visited by the fixpoint, the
// local dims it makes them, where they have none yet (once set, they
// stay: X's rows only get split), and marks those that change.
func (e *engine) flowLocal(n *opNode, mark func(int32)) {
	var xm []int
	if ops.Has(n.op.Type, ops.NumbersRows) {
		if x := e.inputVar(n, "X"); x >= 0 && e.s.mesh[x] == n.mesh {
			xm = e.s.dims[x]
		}
	}
	l := e.localOf(n, xm)
	if l == nil {
		return
	}
	for _, v := range n.outs() {
		if v >= 0 && !e.s.closed[v] && e.holdsLocal(n, v) && e.s.local[v] == nil {
			e.s.local[v] = l
			mark(v)
		}
	}
}

// holdsLocal reports whether output v of op n can hold the positions n
// makes: an integer tensor (a cast to floats is no index) on n's mesh.
func (e *engine) holdsLocal(n *opNode, v int32) bool {
	return e.s.mesh[v] == n.mesh && e.g.vars[v].Type.DType.IsInteger()
}

// localOuts appends to buf the outputs op n is about to settle whose
// local dims settling decides: every output it settles when it may make
// them local, else those the fixpoint made local (another writer's).
func (e *engine) localOuts(buf []int32, n *opNode) []int32 {
	carries := makesLocal(n.op.Type)
	for _, v := range n.outs() {
		if v >= 0 && !e.s.settled[v] && !e.s.closed[v] && (carries || e.s.local[v] != nil) {
			buf = append(buf, v)
		}
	}
	return buf
}

// settleLocal sets the local dims of vs, the outputs op n settled, from
// n as it settled: assign_pos's X as its dist reads it.
func (e *engine) settleLocal(n *opNode, vs []int32) {
	var xm []int
	if ops.Has(n.op.Type, ops.NumbersRows) && n.mesh != nil && n.op.Dist != nil && n.op.Dist.Mesh == n.mesh.Name {
		if xs := n.op.Input("X"); len(xs) == 1 {
			xm, _ = n.op.Dist.InputMapping(xs[0])
		}
	}
	l := e.localOf(n, xm)
	for _, v := range vs {
		e.s.local[v] = nil
		if e.holdsLocal(n, v) {
			e.s.local[v] = l
		}
		e.writeVar(v)
	}
}
