package registry

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/distpass/distpass/ir"
)

// State is what the lowering of one rank remembers from op to op.
type State struct {
	// Synced lists the parameters whose startup broadcast is emitted.
	Synced map[string]bool
	// LossGradSeen is set once the loss-grad op (backward|loss) has been
	// lowered: data-parallel gradient sync starts there.
	LossGradSeen bool

	groups  map[groupKey]groupEntry // Lowering.Group's answers, by mesh and axis
	emitted int                     // ops emitted so far

	// The slabs the emitted ops, their parts and the declared vars are
	// cut from: they are many and small, and live as long as the program.
	ops      slab[ir.Op]
	slots    slab[ir.Slot]
	args     slab[string]
	opDists  slab[ir.OpDist]
	attrs    slab[ir.Attr]
	argDists slab[ir.ArgDist]
	dims     slab[int]
	vars     slab[ir.Var]
	varDists slab[ir.TensorDist]
	shapes   slab[int64]
	text     strings.Builder // origin attrs are cut from it

	scratch []*ir.Var // newOp's list of the args' vars
}

// slab hands out slices cut from larger allocations.
type slab[T any] []T

// take returns an empty slice of capacity n cut from s, refilled (chunk
// entries, or n) when short. The capacity is exact, so that appending to
// one slice never writes into the next.
func (s *slab[T]) take(n, chunk int) []T {
	if n > len(*s) {
		*s = make([]T, max(chunk, n))
	}
	out := (*s)[:0:n]
	*s = (*s)[n:]
	return out
}

// one returns a zero T from s.
func (s *slab[T]) one(chunk int) *T { return &s.take(1, chunk)[:1][0] }

// copyOf returns a copy of xs cut from s, nil for nil.
func (s *slab[T]) copyOf(xs []T, chunk int) []T {
	if xs == nil {
		return nil
	}
	return append(s.take(len(xs), chunk), xs...)
}

// chunk is the size of the next slab refill: it grows with the ops
// emitted, from 64 to 1024, so that a small module's lowering does not
// pay for a large one's slabs.
func (st *State) chunk() int { return min(max(st.emitted, 64), 1024) }

type groupKey struct {
	mesh *ir.ProcessMesh
	axis int
}

type groupEntry struct {
	id    int
	ranks []int
	err   error
}

// NewState returns the state of a fresh lowering.
func NewState() *State { return &State{Synced: map[string]bool{}, groups: map[groupKey]groupEntry{}} }

// Lowering is what an impl sees while it lowers one op on one rank: where it
// is, the op's mesh and groups, and how to emit ops and vars.
type Lowering struct {
	Rank   int
	Module *ir.Module // partitioned in place (a clone of the serial module)
	Prog   *ir.Program
	Block  *ir.Block
	// Mesh is the op's mesh; the rank is in it.
	Mesh *ir.ProcessMesh
	// Op is the op being lowered, ImplType and ImplIndex its impl.
	Op        *ir.Op
	ImplType  string
	ImplIndex int
	State     *State

	out []*ir.Op // the block's new op list

	// The origin_op attr value of the ops emitted for originFor: boxed
	// once per lowered op, not once per emitted op.
	originFor *ir.Op
	originOp  ir.Value
}

// NewCtx returns a context for lowering ops of block b of the module's
// main program on rank, appending the lowered ops to *out.
func NewCtx(m *ir.Module, rank int, b *ir.Block, st *State) *Lowering {
	// The new op list holds at least the block's ops, kept or replaced,
	// and usually a few more: sized for that, it is seldom regrown.
	var out []*ir.Op
	if b != nil {
		out = make([]*ir.Op, 0, len(b.Ops)+len(b.Ops)/4)
	}
	return &Lowering{Rank: rank, Module: m, Prog: m.Main, Block: b, State: st, out: out}
}

// Begin points the context at op, whose impl is (implType, implIndex) on
// mesh.
func (c *Lowering) Begin(op *ir.Op, mesh *ir.ProcessMesh, implType string, implIndex int) {
	c.Op, c.Mesh, c.ImplType, c.ImplIndex = op, mesh, implType, implIndex
}

// Ops returns the ops emitted so far.
func (c *Lowering) Ops() []*ir.Op { return c.out }

// Keep emits op unchanged: the serial op's copy.
func (c *Lowering) Keep(op *ir.Op) { c.out = append(c.out, op) }

// Emit appends a new op with a fresh id, the role of the op being lowered,
// an origin attr: "<impl type>:<index> <reason>", and an origin_op attr:
// the id of the op being lowered, which every rank's lowering gives the
// ops it emits for it (the SPMD runner matches collectives by it). Its
// dist names the op's mesh, with each arg's mapping taken from the var's
// dist.
func (c *Lowering) Emit(typ string, ins, outs []ir.Slot, reason string, attrs ...ir.Attr) *ir.Op {
	op := c.newOp(typ, ins, outs, reason, attrs)
	op.Role = c.Op.Role
	c.out = append(c.out, op)
	return op
}

func (c *Lowering) newOp(typ string, ins, outs []ir.Slot, reason string, attrs []ir.Attr) *ir.Op {
	st := c.State
	if st == nil {
		st = NewState()
	}
	st.emitted++
	op := st.ops.one(st.chunk())
	op.ID, op.Type, op.Inputs, op.Outputs = c.Module.FreshOpID(), typ, ins, outs
	as := ir.Attrs(st.attrs.take(len(attrs)+2, st.chunk()))
	for _, a := range attrs {
		as.Set(a.Name, a.Value)
	}
	as.Set("origin", ir.String(c.Origin(reason)))
	if c.Op != nil {
		as.Set("origin_op", c.originOpValue())
	}
	op.Attrs = as
	// One allocation for the arg dists of both sides, one for their
	// mappings; each arg's var is looked up once.
	vars := st.scratch[:0]
	nIn, nDims := 0, 0
	for i, ss := range [2][]ir.Slot{ins, outs} {
		for _, s := range ss {
			for _, a := range s.Args {
				v := c.Var(a)
				vars = append(vars, v)
				if i == 0 {
					nIn++
				}
				if v != nil && v.Dist != nil {
					nDims += len(v.Dist.DimsMapping)
				}
			}
		}
	}
	st.scratch = vars
	nOut := len(vars) - nIn
	ads := st.argDists.take(len(vars), st.chunk())
	dims := st.dims.take(nDims, st.chunk())
	k := 0
	for _, ss := range [2][]ir.Slot{ins, outs} {
		for _, s := range ss {
			for _, a := range s.Args {
				m := []int{}
				if v := vars[k]; v != nil && v.Dist != nil {
					start := len(dims)
					dims = append(dims, v.Dist.DimsMapping...)
					m = dims[start:len(dims):len(dims)]
				}
				k++
				ads = append(ads, ir.ArgDist{Name: a, DimsMapping: m})
			}
		}
	}
	clear(vars) // the scratch list holds no var past this call
	op.Dist = st.opDists.one(st.chunk())
	*op.Dist = ir.OpDist{Mesh: c.Mesh.Name, ImplType: c.ImplType, ImplIndex: c.ImplIndex,
		Inputs: ads[:nIn:nIn], Outputs: ads[nIn:]}
	if nIn == 0 {
		op.Dist.Inputs = nil
	}
	if nOut == 0 {
		op.Dist.Outputs = nil
	}
	return op
}

// originOpValue returns the origin_op value of the ops emitted for c.Op.
func (c *Lowering) originOpValue() ir.Value {
	if c.originFor != c.Op {
		c.originFor, c.originOp = c.Op, ir.Int(c.Op.ID)
	}
	return c.originOp
}

// SetOrigin gives op, a kept op the lowering changed, the origin attrs of
// an emitted one: origin (why, from reason) and origin_op (c.Op's id).
func (c *Lowering) SetOrigin(op *ir.Op, reason string) {
	op.Attrs.Set("origin", ir.String(c.Origin(reason)))
	if c.Op != nil {
		op.Attrs.Set("origin_op", c.originOpValue())
	}
}

// Slot returns the slot list name: [arg] of an emitted op, carved from
// the lowering's slabs: collectives and scales, emitted by the thousand,
// each take two.
func (c *Lowering) Slot(name, arg string) []ir.Slot {
	st := c.State
	if st == nil {
		return ir.Slots(name, arg)
	}
	return append(st.slots.take(1, st.chunk()), ir.Slot{Name: name, Args: append(st.args.take(1, st.chunk()), arg)})
}

// Origin spells why an op was inserted: "matmul_v2:0 column-parallel: …".
// With a State it is cut from the state's text slab: every emitted op has
// one, and a string each was a fifth of a lowering's allocations. The
// slab is only appended to, so the bytes under a string handed out never
// change; a full slab is left to the strings that hold it.
func (c *Lowering) Origin(reason string) string {
	idx := strconv.Itoa(c.ImplIndex) // small ints: no allocation
	st := c.State
	if st == nil {
		return c.ImplType + ":" + idx + " " + reason
	}
	n := len(c.ImplType) + len(idx) + len(reason) + 2
	if st.text.Cap()-st.text.Len() < n {
		size := max(64*st.chunk(), n) // some 64 bytes an origin
		st.text = strings.Builder{}
		st.text.Grow(size)
	}
	start := st.text.Len()
	st.text.WriteString(c.ImplType)
	st.text.WriteByte(':')
	st.text.WriteString(idx)
	st.text.WriteByte(' ')
	st.text.WriteString(reason)
	return st.text.String()[start:]
}

// Var returns the var name as this block sees it, or nil.
func (c *Lowering) Var(name string) *ir.Var { return c.Prog.LookupVar(c.Block, name) }

// IsParam reports whether name is a parameter.
func (c *Lowering) IsParam(name string) bool {
	v := c.Var(name)
	return v != nil && v.Kind == ir.KindParam
}

// NewVar declares a temp var in the block, named prefix_N with a name
// fresh in the module (so every rank picks the same), typed like like
// (its local shape) and distributed as dist.
func (c *Lowering) NewVar(prefix string, like *ir.Var, dist *ir.TensorDist) *ir.Var {
	st := c.State
	if st == nil {
		st = NewState()
	}
	v := st.vars.one(st.chunk())
	*v = ir.Var{Type: like.Type, Flags: like.Flags & ir.FlagStopGradient}.Named(c.Module.FreshName(prefix))
	// The var, its shape and its dist come from the state's slabs: a
	// large module's lowering declares tens of thousands.
	v.Type.Shape = st.shapes.copyOf(like.Type.Shape, st.chunk())
	if dist != nil {
		v.Dist = st.varDists.one(st.chunk())
		*v.Dist = ir.TensorDist{Mesh: dist.Mesh, DimsMapping: st.dims.copyOf(dist.DimsMapping, st.chunk()), Partial: slices.Clone(dist.Partial)}
	}
	if err := c.Block.AddVar(v); err != nil {
		panic(err) // FreshName never repeats a name of the module
	}
	return v
}

// Mapping returns the dims_mapping the op being lowered expects for its
// input or output arg name, or nil.
func (c *Lowering) Mapping(name string) []int {
	if d := c.Op.Dist; d != nil {
		if m, ok := d.InputMapping(name); ok {
			return m
		}
		if m, ok := d.OutputMapping(name); ok {
			return m
		}
	}
	return nil
}

// Group returns the id and ranks of the process group along mesh axis of
// this rank. The group table was built from the meshes before lowering,
// so every rank finds the same id for the same ranks.
func (c *Lowering) Group(axis int) (int, []int, error) {
	var k groupKey
	if c.State != nil {
		k = groupKey{c.Mesh, axis}
		if e, ok := c.State.groups[k]; ok {
			return e.id, e.ranks, e.err
		}
	}
	e := c.group(axis)
	if c.State != nil {
		c.State.groups[k] = e
	}
	return e.id, e.ranks, e.err
}

func (c *Lowering) group(axis int) groupEntry {
	ranks, err := c.Mesh.Group(axis, c.Rank)
	if err != nil {
		return groupEntry{err: err}
	}
	for _, g := range c.Module.Groups {
		if slices.Equal(g.Ranks, ranks) {
			return groupEntry{id: g.ID, ranks: ranks}
		}
	}
	return groupEntry{err: fmt.Errorf("no process group %v in the group table", ranks)}
}

// Coord returns this rank's coordinate along mesh axis.
func (c *Lowering) Coord(axis int) (int, error) {
	coord, err := c.Mesh.Coord(c.Rank)
	if err != nil {
		return 0, err
	}
	return coord[axis], nil
}

// ForwardVar returns the var a grad var is the gradient of: x for x@GRAD
// and x@GRAD@RENAME@k, or "" for a name of another form.
func ForwardVar(grad string) string {
	i := strings.Index(grad, "@GRAD")
	if i <= 0 {
		return ""
	}
	return grad[:i]
}

// Startup returns block 0 of the startup program, creating the program
// when the module has none: parameter broadcasts go there.
func (c *Lowering) Startup() *ir.Block {
	if c.Module.Startup == nil {
		c.Module.Startup = ir.NewProgram("startup")
		c.Module.Startup.Rank = c.Rank
	}
	return c.Module.Startup.Global()
}

// EmitStartup appends an op to the startup program, with role forward.
func (c *Lowering) EmitStartup(typ string, ins, outs []ir.Slot, reason string, attrs ...ir.Attr) *ir.Op {
	b := c.Startup()
	op := c.newOp(typ, ins, outs, reason, attrs)
	b.Ops = append(b.Ops, op)
	return op
}
