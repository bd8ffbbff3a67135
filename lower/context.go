package lower

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/ops"
)

// Lowering is what an impl sees while it lowers one op on one rank: the
// op's mesh, impl and groups, the vars of the op's block, and how to emit
// ops and declare vars. What an impl reads of the rank (Rank, Coord) is
// recorded: see Registry.Lower.
type Lowering struct {
	rank      int
	module    *ir.Module // partitioned in place (a clone of the serial module)
	block     *ir.Block
	mesh      *ir.ProcessMesh // the op's; the rank is in it
	op        *ir.Op          // the op being lowered
	implType  string
	implIndex int
	st        *state
	out       []*ir.Op // the block's new op list
	// The op's impl called ShardStart along startAxis of startMesh: a
	// read of the coordinate unless the value went into an embedding.
	readStart bool
	startMesh *ir.ProcessMesh
	startAxis int

	// The vars found for the op being lowered: its impl, the impl's
	// checks and the syncs ask for the same few names again and again,
	// and on a large block each lookup in its table is a cache miss or
	// two. Only vars found are kept, and the memo is dropped at the next
	// op and when the lowering declares a var, which may shadow one.
	memo  [8]foundVar
	nmemo int

	// The origin_op attr value of the ops emitted for originFor: boxed
	// once per lowered op, not once per emitted op.
	originFor *ir.Op
	originOp  ir.Value
}

// state is what the lowering of one rank remembers from op to op.
type state struct {
	synced       map[string]bool // params whose startup broadcast is emitted
	lossGradSeen bool            // data-parallel gradient sync starts there
	lossGrad     string          // the loss-grad op's output (loss@GRAD), once lowered
	lossWhole    bool            // the loss op (forward|loss) writes a loss partial along no mesh dim
	lossAvg      *ir.TensorDist  // the loss's dist when it is partial (an average over the batch's mesh dims)
	gradViews    map[string]bool // ops.ParamGradViews of gradViewsOf, once the sync asks
	gradViewsOf  *ir.Block

	groups  map[groupKey]groupEntry // Group's answers, by mesh and axis
	reads   []RankRead              // what of the rank the impls read
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

	// fits holds the keys (fitKey) of the ops batchByRule accepted.
	fits     map[string]bool
	fitBuf   []byte
	fitNames []string
	// folds remembers what grad ops' rules say of their grads (SyncGrads).
	folds ops.FoldMemo
}

func newState() *state { return &state{synced: map[string]bool{}, groups: map[groupKey]groupEntry{}} }

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
func (st *state) chunk() int { return min(max(st.emitted, 64), 1024) }

type groupKey struct {
	mesh *ir.ProcessMesh
	axis int
}

type groupEntry struct {
	id, size int
	err      error
}

// newLowering returns a lowering of the ops of block b of m's main
// program on rank.
func newLowering(m *ir.Module, rank int, b *ir.Block, st *state) *Lowering {
	// The new op list holds at least the block's ops, kept or replaced,
	// and usually a few more: sized for that, it is seldom regrown.
	return &Lowering{rank: rank, module: m, block: b, st: st, out: make([]*ir.Op, 0, len(b.Ops)+len(b.Ops)/4)}
}

// begin points the lowering at op, whose impl is (implType, implIndex)
// on mesh.
func (c *Lowering) begin(op *ir.Op, mesh *ir.ProcessMesh, implType string, implIndex int) {
	c.op, c.mesh, c.implType, c.implIndex = op, mesh, implType, implIndex
	c.nmemo = 0
}

type foundVar struct {
	name string
	v    *ir.Var
}

// Rank returns the rank being lowered for. Reading it gives the rank a
// rank class of its own (see Registry.Lower).
func (c *Lowering) Rank() int {
	c.st.read(RankRead{Kind: ReadRank})
	return c.rank
}

// Mesh returns the op's mesh.
func (c *Lowering) Mesh() *ir.ProcessMesh { return c.mesh }

// Impl returns the impl type and index the op is lowered with.
func (c *Lowering) Impl() (implType string, index int) { return c.implType, c.implIndex }

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
	op.Role = c.op.Role
	c.out = append(c.out, op)
	return op
}

func (c *Lowering) newOp(typ string, ins, outs []ir.Slot, reason string, attrs []ir.Attr) *ir.Op {
	st := c.st
	st.emitted++
	op := st.ops.one(st.chunk())
	op.ID, op.Type, op.Inputs, op.Outputs = c.module.FreshOpID(), typ, ins, outs
	as := ir.Attrs(st.attrs.take(len(attrs)+2, st.chunk()))
	for _, a := range attrs {
		as.Set(a.Name, a.Value)
	}
	as.Set("origin", ir.String(c.Origin(reason)))
	as.Set("origin_op", c.originOpValue())
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
	*op.Dist = ir.OpDist{Mesh: c.mesh.Name, ImplType: c.implType, ImplIndex: c.implIndex,
		Inputs: ads[:nIn:nIn], Outputs: ads[nIn:]}
	if nIn == 0 {
		op.Dist.Inputs = nil
	}
	if nOut == 0 {
		op.Dist.Outputs = nil
	}
	return op
}

// originOpValue returns the origin_op value of the ops emitted for c.op.
func (c *Lowering) originOpValue() ir.Value {
	if c.originFor != c.op {
		c.originFor, c.originOp = c.op, ir.Int(c.op.ID)
	}
	return c.originOp
}

// SetOrigin gives op, a kept op the lowering changed, the origin attrs of
// an emitted one: origin (why, from reason) and origin_op (the id of the
// op being lowered).
func (c *Lowering) SetOrigin(op *ir.Op, reason string) {
	op.Attrs.Set("origin", ir.String(c.Origin(reason)))
	op.Attrs.Set("origin_op", c.originOpValue())
}

// Slot returns the slot list name: [arg] of an emitted op, carved from
// the lowering's slabs: collectives and scales, emitted by the thousand,
// each take two.
func (c *Lowering) Slot(name, arg string) []ir.Slot {
	st := c.st
	return append(st.slots.take(1, st.chunk()), ir.Slot{Name: name, Args: append(st.args.take(1, st.chunk()), arg)})
}

// Origin spells why an op was inserted: "matmul_v2:0 column-parallel: …".
// It is cut from a text slab: every emitted op has one, and a string each
// was a fifth of a lowering's allocations. The slab is only appended to,
// so the bytes under a string handed out never change; a full slab is
// left to the strings that hold it.
func (c *Lowering) Origin(reason string) string {
	idx := strconv.Itoa(c.implIndex) // small ints: no allocation
	st := c.st
	n := len(c.implType) + len(idx) + len(reason) + 2
	if st.text.Cap()-st.text.Len() < n {
		size := max(64*st.chunk(), n) // some 64 bytes an origin
		st.text = strings.Builder{}
		st.text.Grow(size)
	}
	start := st.text.Len()
	st.text.WriteString(c.implType)
	st.text.WriteByte(':')
	st.text.WriteString(idx)
	st.text.WriteByte(' ')
	st.text.WriteString(reason)
	return st.text.String()[start:]
}

// Var returns the var name as the op's block sees it, or nil.
func (c *Lowering) Var(name string) *ir.Var {
	for _, f := range c.memo[:c.nmemo] {
		if f.name == name {
			return f.v
		}
	}
	v := c.module.Main.LookupVar(c.block, name)
	if v != nil && c.nmemo < len(c.memo) {
		c.memo[c.nmemo] = foundVar{name, v}
		c.nmemo++
	}
	return v
}

// IsParam reports whether name is a parameter.
func (c *Lowering) IsParam(name string) bool {
	v := c.Var(name)
	return v != nil && v.Kind == ir.KindParam
}

// paramGradView reports whether var name reaches a param's grad through
// reshards alone (ops.ParamGradViews), found in the block's ops not
// lowered yet: a grad's reshards come after the op that writes it.
func (c *Lowering) paramGradView(name string) bool {
	if c.st.gradViewsOf != c.block {
		c.st.gradViewsOf = c.block
		grads := make([]string, 0, len(c.module.ParamGrads))
		for _, pg := range c.module.ParamGrads {
			grads = append(grads, pg.Grad)
		}
		c.st.gradViews = ops.ParamGradViews(c.block.Ops, grads)
	}
	return c.st.gradViews[name]
}

// NewVar declares a temp var in the op's block, named prefix_N with a
// name fresh in the module (so every rank picks the same), typed like like
// (its local shape) and distributed as dist.
func (c *Lowering) NewVar(prefix string, like *ir.Var, dist *ir.TensorDist) *ir.Var {
	st := c.st
	v := st.vars.one(st.chunk())
	*v = ir.Var{Type: like.Type, Flags: like.Flags & ir.FlagStopGradient}.Named(c.module.FreshName(prefix))
	// The var, its shape and its dist come from the state's slabs: a
	// large module's lowering declares tens of thousands.
	v.Type.Shape = st.shapes.copyOf(like.Type.Shape, st.chunk())
	if dist != nil {
		v.Dist = st.varDists.one(st.chunk())
		*v.Dist = ir.TensorDist{Mesh: dist.Mesh, DimsMapping: st.dims.copyOf(dist.DimsMapping, st.chunk()), Partial: slices.Clone(dist.Partial), Local: slices.Clone(dist.Local)}
	}
	if err := c.block.AddVar(v); err != nil {
		panic(err) // FreshName never repeats a name of the module
	}
	c.nmemo = 0
	return v
}

// Declare declares v, named by the impl, in the op's block: an error when
// the block already has a var of its name.
func (c *Lowering) Declare(v *ir.Var) error {
	c.nmemo = 0
	return c.block.AddVar(v)
}

// Mapping returns the dims_mapping the op being lowered expects for its
// input or output arg name, or nil.
func (c *Lowering) Mapping(name string) []int {
	if d := c.op.Dist; d != nil {
		if m, ok := d.InputMapping(name); ok {
			return m
		}
		if m, ok := d.OutputMapping(name); ok {
			return m
		}
	}
	return nil
}

// Group returns the ring id and the size of this rank's process group
// along axis of the op's mesh. The group table was built from the meshes
// before lowering, so every rank finds the same id for the same ranks.
// Reading the id is not reading the rank: the rank classes give every
// rank its own ring ids, so an impl should only pass it to collectives.
func (c *Lowering) Group(axis int) (id, size int, err error) {
	k := groupKey{c.mesh, axis}
	e, ok := c.st.groups[k]
	if !ok {
		e = c.group(axis)
		c.st.groups[k] = e
	}
	return e.id, e.size, e.err
}

func (c *Lowering) group(axis int) groupEntry {
	ranks, err := c.mesh.Group(axis, c.rank)
	if err != nil {
		return groupEntry{err: err}
	}
	for _, g := range c.module.Groups {
		if slices.Equal(g.Ranks, ranks) {
			return groupEntry{id: g.ID, size: len(ranks)}
		}
	}
	return groupEntry{err: fmt.Errorf("no process group %v in the group table", ranks)}
}

// InWorld returns why this rank is not in the world group (id 0 of the
// group table, the group of a collective over every rank), or nil. The
// rank classes never mix ranks inside and outside it, so asking is not
// reading the rank.
func (c *Lowering) InWorld() error {
	world := c.module.Group(0)
	if world == nil {
		return fmt.Errorf("no world group (id 0) in the group table")
	}
	if !slices.Contains(world.Ranks, c.rank) {
		return fmt.Errorf("rank %d is not in the world group %v", c.rank, world.Ranks)
	}
	return nil
}

// Coord returns this rank's coordinate along axis of the op's mesh.
// Reading it puts the ranks of other coordinates in other rank classes.
func (c *Lowering) Coord(axis int) (int, error) {
	c.st.read(RankRead{Kind: ReadCoord, Mesh: c.mesh, Axis: axis})
	return c.coord(axis)
}

// ShardStart returns where this rank's shard of a dim split along mesh
// axis begins: its coordinate on axis times rows, the shard's size. Its
// one use is the start_index attr of a c_embedding or c_embedding_grad
// op, which rank classes recompute for each rank, so reading it is not a
// rank read; an op whose lowering reads it and emits no such op counts as
// one, as if it had called Coord.
func (c *Lowering) ShardStart(axis int, rows int64) (int64, error) {
	c.readStart, c.startMesh, c.startAxis = true, c.mesh, axis
	coord, err := c.coord(axis)
	return int64(coord) * rows, err
}

func (c *Lowering) coord(axis int) (int, error) {
	coord, err := c.mesh.Coord(c.rank)
	if err != nil {
		return 0, err
	}
	if axis < 0 || axis >= len(coord) {
		return 0, fmt.Errorf("mesh axis %d is out of range for mesh %s", axis, c.mesh)
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
	if c.module.Startup == nil {
		c.module.Startup = ir.NewProgram("startup")
		c.module.Startup.Rank = c.rank
	}
	return c.module.Startup.Global()
}

// EmitStartup appends an op to the startup program, with role forward.
func (c *Lowering) EmitStartup(typ string, ins, outs []ir.Slot, reason string, attrs ...ir.Attr) *ir.Op {
	b := c.Startup()
	op := c.newOp(typ, ins, outs, reason, attrs)
	b.Ops = append(b.Ops, op)
	return op
}

// MarkSynced records that param's startup broadcast is emitted, and
// reports whether it was not before: the first forward use of a
// parameter syncs it (SyncParams).
func (c *Lowering) MarkSynced(param string) bool {
	if c.st.synced[param] {
		return false
	}
	c.st.synced[param] = true
	return true
}

// LossGradSeen reports whether SeeLossGrad has been called on this rank's
// lowering: data-parallel gradient sync starts at the loss-grad op.
func (c *Lowering) LossGradSeen() bool { return c.st.lossGradSeen }

// SeeLossGrad records that the loss-grad op (backward|loss) is lowered.
func (c *Lowering) SeeLossGrad() { c.st.lossGradSeen = true }

// LossWhole reports whether the loss is whole: not partial along any
// mesh dim, every rank computed all of it. The data-parallel sync then
// sums the grads folded over the batch shards, without averaging; a loss
// that is the mean of the ranks' (partial avg along the batch axis) has
// them averaged. A program without a loss op (forward|loss) is taken to
// average.
func (c *Lowering) LossWhole() bool { return c.st.lossWhole }
