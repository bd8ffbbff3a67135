package analysis

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"strings"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/ops"
)

// Comm and Memory are analyzers like the others (values, cached, keyed by
// name) rather than plain functions: they read only the module, they take
// no parameter (the rank is the one the module was partitioned for, in
// main's Rank), and a caller that asks for both, or asks twice, pays once
// for the name resolution of Index they share.

// Comm reports the communication of a partitioned module: every
// collective of main and startup, and every op that all-reduces inside
// its kernel (sync_batch_norm), with its group, mesh axis, payload and
// cost. See CommReport, and the package doc for the cost formulas.
var Comm = &Analyzer{
	Name: "comm",
	Doc: "Comm lists every collective of a partitioned module's main and startup programs, in program " +
		"order (and the all-reduce inside each sync_batch_norm and its grad), with its group, mesh axis, " +
		"payload and the bytes this rank moves for it, and totals per axis and per collective type.",
	Requires: []*Analyzer{Index},
	Run: func(p *Inputs) (any, error) {
		return buildComm(p.Module, p.Result(Index).(*IndexInfo))
	},
}

// Memory sums the local sizes of a partitioned module's vars. See
// MemoryReport.
var Memory = &Analyzer{
	Name: "memory",
	Doc: "Memory sums the bytes of a partitioned module's parameters, other persistables and " +
		"activations on its rank, from the vars' local shapes, counting apart the vars of unknown size.",
	Requires: []*Analyzer{Index},
	Run: func(p *Inputs) (any, error) {
		return buildMemory(p.Module)
	},
}

// CommOp is one collective op of a partitioned program and what it costs
// this rank.
type CommOp struct {
	Program string // "main" or "startup"
	Block   int
	ID      int64
	Type    string
	// RingID is the op's ring_id attr (a point-to-point op or a
	// sync_batch_norm without one is on ring 0, Paddle's default).
	RingID int64
	// Group lists the ranks the op runs over, ascending: the ring's
	// entry in the module's group table, or this rank and its peer.
	Group []int
	// Axis names the group: the mesh dim whose group for this rank is
	// Group (the op's mesh first, then every mesh in order), "world"
	// when it is every rank of the module and no dim's, else "group N"
	// (N the ring id).
	Axis string
	// Payload is the var the op sends (its X or x input; Out or out for
	// an op without one, such as recv_v2), "" for none (barrier) or for
	// a buffer that is no var of the program (sync_batch_norm's
	// statistics). DType and Shape are the payload's dtype and local
	// shape: zero for none, the buffer's for a sync_batch_norm.
	Payload string
	DType   ir.DType
	Shape   []int64
	// Bytes is what this rank moves for one run of the op, by the
	// package's formulas, rounded to whole bytes (half up). It is 0 and
	// DataDependent is set when the figure depends on the data: the
	// payload has a dim of unknown size (-1), as the row blocks of the
	// MoE exchanges global_scatter and global_gather have.
	Bytes         int64
	DataDependent bool
	// Origin is the op's origin attr: which impl inserted it, and why;
	// "" for an op of the serial program that partitioning kept.
	Origin string
	// Impl is the op dist's impl, "type:index" ("global_scatter:0"), or
	// "" for an op without a dist.
	Impl string
}

// CommTotal sums the ops of one axis or one collective type.
type CommTotal struct {
	Name          string
	Ops           int
	Bytes         int64 // the ops with a figure
	DataDependent int   // ops without one
}

// CommTotals sums the collectives of one program: main's per training
// step, startup's once.
type CommTotals struct {
	Program       string
	Ops           int
	Bytes         int64
	DataDependent int
	ByAxis        []CommTotal // sorted by name
	ByType        []CommTotal // sorted by name
}

// CommReport is the result of Comm.
type CommReport struct {
	Rank int
	// Ops lists the collectives of main, then of startup, each program
	// in program order: block by block, each block's ops in order.
	Ops []CommOp
	// Main and Startup total the ops of each program (SumComm).
	Main, Startup CommTotals
}

// CommError is a collective op the report cannot account for: no ring_id,
// a ring not in the group table or without this rank, no payload var.
type CommError struct {
	Program string
	Block   int
	ID      int64
	Type    string
	Msg     string
}

// Error returns "op N TYPE: msg".
func (e *CommError) Error() string { return fmt.Sprintf("op %d %s: %s", e.ID, e.Type, e.Msg) }

// CommErrors returns the CommErrors err holds, joined or wrapped, in order.
func CommErrors(err error) []*CommError {
	var out []*CommError
	var walk func(error)
	walk = func(err error) {
		switch u := err.(type) {
		case *CommError:
			out = append(out, u)
		case interface{ Unwrap() []error }:
			for _, e := range u.Unwrap() {
				walk(e)
			}
		case interface{ Unwrap() error }:
			walk(u.Unwrap())
		}
	}
	walk(err)
	return out
}

// CollectiveBytes returns the bytes one rank moves for a collective of
// type typ over a group of n ranks whose input and output payloads are
// in and out bytes (on this rank): the package's formulas, rounded half
// up to whole bytes. It reports false for a type it has no formula for.
// A group of one rank moves nothing. partial_send and partial_recv,
// which move one of num slices, take the whole payload here; Comm divides
// by num.
func CollectiveBytes(typ string, n int, in, out int64) (int64, bool) {
	c := costOf(typ)
	if c == nil {
		return 0, false
	}
	size := in
	if c.OfOutput {
		size = out
	}
	switch {
	case c.None || n <= 1:
		return 0, true
	case c.Whole:
		return size, true
	}
	return ringBytes(c.Ring, n, size), true
}

// costOf is the op table's cost of a collective type (ops.Def.Cost), or
// nil.
func costOf(typ string) *ops.Cost {
	if d := ops.Lookup(typ); d != nil {
		return d.Cost
	}
	return nil
}

// ringBytes is k(n-1)/n × size rounded half up, in integers: with
// size = q·n + r it is k(n-1)q + round(k(n-1)r / n), which cannot
// overflow where k·size does not.
func ringBytes(k int64, n int, size int64) int64 {
	nn := int64(n)
	q, r := size/nn, size%nn
	num := k * (nn - 1) * r
	return k*(nn-1)*q + (2*num+nn)/(2*nn)
}

func buildComm(m *ir.Module, x *IndexInfo) (*CommReport, error) {
	rank, err := partitionedRank(m)
	if err != nil {
		return nil, err
	}
	b := commBuilder{m: m, x: x, rank: rank, world: moduleRanks(m), meshes: newMeshes(m)}
	rep := &CommReport{Rank: rank}
	for _, pr := range []struct {
		label string
		p     *ir.Program
	}{{"main", m.Main}, {"startup", m.Startup}} {
		if pr.p == nil {
			continue
		}
		for bi, blk := range pr.p.Blocks {
			if blk == nil {
				continue
			}
			for _, op := range blk.Ops {
				if op == nil || !ops.IsCollective(op.Type) && !AllReducesInside(op.Type) {
					continue
				}
				if c, ok := b.op(pr.label, pr.p, bi, op); ok {
					rep.Ops = append(rep.Ops, c)
				}
			}
		}
	}
	if len(b.errs) > 0 {
		return nil, errors.Join(b.errs...)
	}
	// Every total is at most its program's: if those fit, all do.
	for _, prog := range []string{"main", "startup"} {
		var sum int64
		for i := range rep.Ops {
			c := &rep.Ops[i]
			if c.Program != prog || c.DataDependent {
				continue
			}
			if sum > math.MaxInt64-c.Bytes {
				return nil, fmt.Errorf("%s: the collectives move more than %d bytes, which overflows int64", prog, int64(math.MaxInt64))
			}
			sum += c.Bytes
		}
	}
	rep.Main = SumComm("main", rep.Ops)
	rep.Startup = SumComm("startup", rep.Ops)
	return rep, nil
}

// partitionedRank returns the rank main is partitioned for.
func partitionedRank(m *ir.Module) (int, error) {
	if m == nil || m.Main == nil {
		return 0, errors.New("the module has no main program")
	}
	if m.Main.Rank < 0 {
		return 0, errors.New("the module is not partitioned (main has no rank): partition it for a rank first")
	}
	return m.Main.Rank, nil
}

// moduleRanks returns every rank of the module's meshes, ascending.
func moduleRanks(m *ir.Module) []int {
	var rs []int
	for _, pm := range m.Meshes {
		if pm != nil {
			rs = append(rs, pm.ProcessIDs...)
		}
	}
	slices.Sort(rs)
	return slices.Compact(rs)
}

type commBuilder struct {
	m      *ir.Module
	x      *IndexInfo
	rank   int
	world  []int
	meshes meshes
	errs   []error
}

func (b *commBuilder) fail(prog string, bi int, op *ir.Op, format string, args ...any) {
	b.errs = append(b.errs, &CommError{Program: prog, Block: bi, ID: op.ID, Type: op.Type, Msg: fmt.Sprintf(format, args...)})
}

func (b *commBuilder) op(prog string, p *ir.Program, bi int, op *ir.Op) (CommOp, bool) {
	c := CommOp{Program: prog, Block: bi, ID: op.ID, Type: op.Type, RingID: -1}
	c.Origin, _ = op.Attrs.String("origin")
	if op.Dist != nil && op.Dist.ImplType != "" {
		c.Impl = op.Dist.ImplType + ":" + strconv.Itoa(op.Dist.ImplIndex)
	}
	if rule, ok := allReducesInside[op.Type]; ok {
		return b.inside(prog, p, bi, op, c, rule)
	}
	cst := costOf(op.Type)
	if cst == nil {
		b.fail(prog, bi, op, "no cost formula for collective type %s", op.Type)
		return c, false
	}

	// The group: the peer pair of a point-to-point op (peer is the other
	// rank's index in the ring's group, as in Paddle), else the ring.
	if peer, ok := ir.AsInt(ops.AttrValue(op, "peer")); ok && cst.Whole {
		id, _ := ir.AsInt(ops.AttrValue(op, "ring_id"))
		c.RingID = id
		g := b.m.Group(int(id))
		if g == nil || peer < 0 || int(peer) >= len(g.Ranks) {
			b.fail(prog, bi, op, "peer %d is no index of ring %d's group", peer, id)
			return c, false
		}
		c.Group = []int{b.rank, g.Ranks[peer]}
		slices.Sort(c.Group)
	} else {
		// Given, at either width: a per-rank program's collective names
		// its ring (verify holds it to that), the default ring 0 is none.
		id, ok := ir.AsInt(op.Attrs.Get("ring_id"))
		if !ok {
			b.fail(prog, bi, op, "no ring_id attr")
			return c, false
		}
		c.RingID = id
		if c.Group, ok = b.ring(prog, bi, op, id); !ok {
			return c, false
		}
	}
	c.Axis = b.axis(op, c.Group, c.RingID)

	// The payload, and the sizes of input and output.
	in, inOK, err := b.payload(p, bi, op, false)
	if err != nil {
		b.fail(prog, bi, op, "%v", err)
		return c, false
	}
	out, outOK, err := b.payload(p, bi, op, true)
	if err != nil {
		b.fail(prog, bi, op, "%v", err)
		return c, false
	}
	shown := in
	if in.v == nil {
		shown = out
	}
	if shown.v != nil {
		c.Payload, c.DType, c.Shape = shown.name, shown.v.Type.DType, shown.v.Type.Shape
	} else if !cst.None {
		b.fail(prog, bi, op, "no payload: neither an X nor an Out arg names a declared dense tensor")
		return c, false
	}

	n := len(c.Group)
	switch {
	case cst.None || n <= 1:
		return c, true
	case cst.OfOutput && !outOK, !cst.OfOutput && !inOK:
		c.DataDependent = true
		return c, true
	}
	pv := in
	if cst.OfOutput {
		pv = out
	}
	if pv.bytes > maxPayload {
		b.fail(prog, bi, op, "payload %s of %d bytes: the bytes it moves overflow int64", quoteName(pv.name), pv.bytes)
		return c, false
	}
	c.Bytes, _ = CollectiveBytes(op.Type, n, in.bytes, out.bytes)
	if cst.Sliced {
		if num, ok := ir.AsInt(ops.AttrValue(op, "num")); ok && num > 1 {
			c.Bytes = (c.Bytes + num/2) / num
		}
	}
	return c, true
}

// ring returns the ranks of ring id, ascending, and false (having
// failed op) when the group table has no such ring or it lacks this rank.
func (b *commBuilder) ring(prog string, bi int, op *ir.Op, id int64) ([]int, bool) {
	g := b.m.Group(int(id))
	if g == nil {
		b.fail(prog, bi, op, "ring_id %d is not in the module's group table", id)
		return nil, false
	}
	if !slices.Contains(g.Ranks, b.rank) {
		b.fail(prog, bi, op, "rank %d is not in group %d %s", b.rank, id, fmtInts(g.Ranks))
		return nil, false
	}
	return slices.Sorted(slices.Values(g.Ranks)), true
}

// allReducesInside maps the op types that all-reduce a buffer over their
// ring_id's group inside their own kernel to the rule that gives the
// buffer. They compute, so they are no collectives (ops.IsCollective,
// which the simulator and the passes read as "only communicates"); Comm
// lists them as all-reduces of that buffer, costed as c_allreduce_sum.
var allReducesInside = map[string]bufferRule{
	"sync_batch_norm": syncBNBuffer, "sync_batch_norm_grad": syncBNBuffer,
}

// AllReducesInside reports whether ops of type typ, no collectives
// (ops.IsCollective), all-reduce a buffer inside their kernel, which Comm
// lists: sync_batch_norm and sync_batch_norm_grad.
func AllReducesInside(typ string) bool {
	_, ok := allReducesInside[typ]
	return ok
}

// buffer is what an op of allReducesInside all-reduces: bytes is its
// size, known false when a dim is of unknown size (-1); idle is set when
// the op all-reduces nothing as its attrs stand.
type buffer struct {
	dtype ir.DType
	shape []int64
	bytes int64
	known bool
	idle  bool
}

type bufferRule func(b *commBuilder, p *ir.Program, bi int, op *ir.Op) (buffer, error)

// inside reports an op of allReducesInside as an all-reduce over the
// group of its ring_id (0 when it has none: Paddle's default
// communicator, as the simulator takes it) of the buffer rule gives. The
// buffer is no var of the program, so Payload stays "".
func (b *commBuilder) inside(prog string, p *ir.Program, bi int, op *ir.Op, c CommOp, rule bufferRule) (CommOp, bool) {
	id, _ := ir.AsInt(ops.AttrValue(op, "ring_id"))
	group, ok := b.ring(prog, bi, op, id)
	if !ok {
		return c, false
	}
	c.RingID, c.Group = id, group
	c.Axis = b.axis(op, group, id)
	buf, err := rule(b, p, bi, op)
	if err != nil {
		b.fail(prog, bi, op, "%v", err)
		return c, false
	}
	c.DType, c.Shape = buf.dtype, buf.shape
	switch {
	case buf.idle || len(group) <= 1:
		return c, true
	case !buf.known:
		c.DataDependent = true
		return c, true
	}
	c.Bytes = ringBytes(2, len(group), buf.bytes)
	return c, true
}

// syncBNBuffer is the one buffer a sync_batch_norm or its grad
// all-reduces, as Paddle's CUDA kernel: 2C+1 elements (C = the length of
// Scale) holding the per-channel sums of x and x² (forward) or of dy and
// dy·x̂ (backward), then the element count, in the parameter dtype: f64
// for an f64 X, else f32 (f16 and bf16 keep f32 statistics). An op that
// normalises by the running statistics (is_test without
// trainable_statistics, or use_global_stats, which the kernel refuses)
// all-reduces nothing, as the simulator's kernel.
func syncBNBuffer(b *commBuilder, p *ir.Program, bi int, op *ir.Op) (buffer, error) {
	x, err := b.argVar(p, bi, op, "X")
	if err != nil {
		return buffer{}, err
	}
	scale, err := b.argVar(p, bi, op, "Scale")
	if err != nil {
		return buffer{}, err
	}
	buf := buffer{dtype: ir.F32}
	if x.Type.DType == ir.F64 {
		buf.dtype = ir.F64
	}
	buf.idle = ops.AttrOn(op, "use_global_stats") || ops.AttrOn(op, "is_test") && !ops.AttrOn(op, "trainable_statistics")
	t := scale.Type
	t.DType = buf.dtype
	cb, ok, err := tensorBytes(t)
	if err != nil {
		return buffer{}, fmt.Errorf("input Scale %s: %v", quoteName(scale.Name()), err)
	}
	if !ok {
		buf.shape = []int64{-1}
		return buf, nil
	}
	size := int64(buf.dtype.Size())
	if cb > (maxPayload-size)/2 {
		return buffer{}, fmt.Errorf("input Scale %s of %d channels: the bytes the op moves overflow int64", quoteName(scale.Name()), cb/size)
	}
	buf.shape, buf.bytes, buf.known = []int64{2*(cb/size) + 1}, 2*cb+size, true
	return buf, nil
}

// argVar returns the dense tensor var of op's one-arg input slot.
func (b *commBuilder) argVar(p *ir.Program, bi int, op *ir.Op, slot string) (*ir.Var, error) {
	args := op.Input(slot)
	if len(args) != 1 {
		return nil, fmt.Errorf("input %s has %d args, want 1", slot, len(args))
	}
	id, ok := b.x.Lookup(p, bi, args[0])
	var v *ir.Var
	if ok {
		v = b.x.Var(id)
	}
	if v == nil {
		return nil, fmt.Errorf("input %s names undeclared var %s", slot, quoteName(args[0]))
	}
	if !v.Type.IsTensor() {
		return nil, fmt.Errorf("input %s %s is a %s, not a dense tensor", slot, quoteName(v.Name()), v.Type.Kind)
	}
	return v, nil
}

type payloadVar struct {
	name  string
	v     *ir.Var
	bytes int64
}

// payload finds the op's input (X, x) or output (Out, out) var and its
// size in bytes; ok is false when the size is unknown (a dim of -1) or
// there is no such arg.
func (b *commBuilder) payload(p *ir.Program, bi int, op *ir.Op, output bool) (payloadVar, bool, error) {
	slots, names, side := op.Inputs, []string{"X", "x"}, "input"
	if output {
		slots, names, side = op.Outputs, []string{"Out", "out"}, "output"
	}
	var pv payloadVar
	for _, n := range names {
		for _, s := range slots {
			if s.Name != n || len(s.Args) == 0 {
				continue
			}
			if len(s.Args) > 1 {
				return pv, false, fmt.Errorf("%s %s has %d args, want 1", side, n, len(s.Args))
			}
			id, ok := b.x.Lookup(p, bi, s.Args[0])
			var v *ir.Var
			if ok {
				v = b.x.Var(id)
			}
			if v == nil {
				return pv, false, fmt.Errorf("%s %s names undeclared var %s", side, n, quoteName(s.Args[0]))
			}
			if !v.Type.IsTensor() {
				return pv, false, fmt.Errorf("%s %s %s is a %s, not a dense tensor", side, n, quoteName(v.Name()), v.Type.Kind)
			}
			pv = payloadVar{name: v.Name(), v: v}
			size, ok, err := tensorBytes(v.Type)
			if err != nil {
				return pv, false, fmt.Errorf("%s %s %s: %v", side, n, quoteName(v.Name()), err)
			}
			pv.bytes = size
			return pv, ok, nil
		}
	}
	return pv, false, nil
}

// tensorBytes returns numel × dtype size, and false when a dim is
// unknown (-1); an error when the element count or the bytes overflow
// int64, which a verified module's shapes do not, but bytes may.
func tensorBytes(t ir.Type) (int64, bool, error) {
	n := uint64(1)
	unknown := false
	for _, d := range t.Shape {
		if d < 0 {
			unknown = true
			continue
		}
		hi, lo := bits.Mul64(n, uint64(d))
		if hi != 0 || lo > math.MaxInt64 {
			return 0, false, fmt.Errorf("shape %s: element count overflows int64", fmtInts(t.Shape))
		}
		n = lo
	}
	if unknown {
		return 0, false, nil
	}
	hi, lo := bits.Mul64(n, uint64(t.DType.Size()))
	if hi != 0 || lo > math.MaxInt64 {
		return 0, false, fmt.Errorf("%s: %d elements of %d bytes overflow int64", t, n, t.DType.Size())
	}
	return int64(lo), true, nil
}

// maxPayload is the largest payload whose traffic, at most twice the
// payload (an all-reduce's 2(n-1)/n), fits int64.
const maxPayload = math.MaxInt64 / 2

// axis names the group: the first mesh dim (the op's mesh first, then
// every mesh in declaration order) whose group for this rank is group;
// "world" when group is every rank of the module; "group N" otherwise.
func (b *commBuilder) axis(op *ir.Op, group []int, ring int64) string {
	var order []*ir.ProcessMesh
	if op.Dist != nil {
		if pm := b.meshes.get(op.Dist.Mesh); pm != nil {
			order = append(order, pm)
		}
	}
	order = append(order, b.m.Meshes...)
	for _, pm := range order {
		if pm == nil || !pm.Contains(b.rank) {
			continue
		}
		for d := range pm.Shape {
			g, err := pm.Group(d, b.rank)
			if err == nil && slices.Equal(g, group) && d < len(pm.DimNames) {
				return pm.DimNames[d]
			}
		}
	}
	if slices.Equal(group, b.world) {
		return "world"
	}
	if ring < 0 {
		return "p2p"
	}
	return fmt.Sprintf("group %d", ring)
}

// SumComm totals the ops of program ("main" or "startup") among ops: a
// data-dependent op counts in Ops and DataDependent, not in Bytes. Totals
// are sums of the ops' rounded figures, so they add up to the column.
func SumComm(program string, ops []CommOp) CommTotals {
	t := CommTotals{Program: program}
	byAxis, byType := map[string]*CommTotal{}, map[string]*CommTotal{}
	add := func(m map[string]*CommTotal, name string, c *CommOp) {
		s := m[name]
		if s == nil {
			s = &CommTotal{Name: name}
			m[name] = s
		}
		s.Ops++
		if c.DataDependent {
			s.DataDependent++
		} else {
			s.Bytes += c.Bytes
		}
	}
	for i := range ops {
		c := &ops[i]
		if c.Program != program {
			continue
		}
		t.Ops++
		if c.DataDependent {
			t.DataDependent++
		} else {
			t.Bytes += c.Bytes
		}
		add(byAxis, c.Axis, c)
		add(byType, c.Type, c)
	}
	sorted := func(m map[string]*CommTotal) []CommTotal {
		out := make([]CommTotal, 0, len(m))
		for _, s := range m {
			out = append(out, *s)
		}
		slices.SortFunc(out, func(a, b CommTotal) int { return strings.Compare(a.Name, b.Name) })
		return out
	}
	t.ByAxis, t.ByType = sorted(byAxis), sorted(byType)
	return t
}

// Axis returns the total of the axis named name, and false when no op
// runs along it.
func (t CommTotals) Axis(name string) (CommTotal, bool) { return findTotal(t.ByAxis, name) }

// OfType returns the total of the collective type typ.
func (t CommTotals) OfType(typ string) (CommTotal, bool) { return findTotal(t.ByType, typ) }

func findTotal(ts []CommTotal, name string) (CommTotal, bool) {
	for _, t := range ts {
		if t.Name == name {
			return t, true
		}
	}
	return CommTotal{}, false
}

// MemoryClass sums one class of vars.
type MemoryClass struct {
	Vars  int   // vars counted
	Bytes int64 // their local bytes
	// Unknown counts the vars left out: a dim of unknown size (-1).
	Unknown int
}

// MemoryReport is the result of Memory: the local bytes of the dense
// tensors declared in main (every block) on the rank main is partitioned
// for. After partitioning a var's declared shape is its local shape.
// Startup declares the same persistables as main, so it is not counted
// again. Activations are every non-persistable dense var, grads and
// temporaries included, all at once: an upper bound of what is live, not
// a peak. Memory fails, naming the var, when a var's bytes or a sum of
// them would overflow int64.
type MemoryReport struct {
	Rank         int
	Params       MemoryClass // kind param
	Persistables MemoryClass // kind persist
	Activations  MemoryClass // kind var
	// PeakActivations is the most bytes of activations live at once as
	// main's global block runs, and PeakOp the id of the op where they
	// are (0 for a block without ops): an activation of the block is
	// live from its first op (the block's start for one read before any
	// op writes it) to its last, and a sub-block's activations while the
	// op that runs it does. Temporaries that live for one op count at
	// that op only, which the all-at-once sum above does not say.
	PeakActivations int64
	PeakOp          int64
}

// Total returns the bytes of the three classes.
func (r *MemoryReport) Total() int64 {
	return r.Params.Bytes + r.Persistables.Bytes + r.Activations.Bytes
}

func buildMemory(m *ir.Module) (*MemoryReport, error) {
	rank, err := partitionedRank(m)
	if err != nil {
		return nil, err
	}
	rep := &MemoryReport{Rank: rank}
	for _, blk := range m.Main.Blocks {
		if blk == nil {
			continue
		}
		for _, v := range blk.Vars() {
			if v == nil || !v.Type.IsTensor() {
				continue
			}
			c := &rep.Activations
			switch v.Kind {
			case ir.KindParam:
				c = &rep.Params
			case ir.KindPersist:
				c = &rep.Persistables
			}
			size, ok, err := tensorBytes(v.Type)
			if err != nil {
				return nil, ir.Violation{Program: "main", Block: blk.Index, Var: v.Name(), Msg: err.Error()}
			}
			if !ok {
				c.Unknown++
				continue
			}
			if c.Bytes > math.MaxInt64-size || rep.Total() > math.MaxInt64-size {
				return nil, ir.Violation{Program: "main", Block: blk.Index, Var: v.Name(),
					Msg: fmt.Sprintf("the local bytes of main's vars overflow int64 with this %s of %d bytes", v.Type, size)}
			}
			c.Vars++
			c.Bytes += size
		}
	}
	rep.PeakActivations, rep.PeakOp = peakActivations(m.Main)
	return rep, nil
}

// peakActivations returns the most bytes of activations live at once in
// p's global block, and the op where they are (see MemoryReport).
func peakActivations(p *ir.Program) (int64, int64) {
	if len(p.Blocks) == 0 || p.Blocks[0] == nil || len(p.Blocks[0].Ops) == 0 {
		return 0, 0
	}
	g := p.Global()
	n := len(g.Ops)
	first, last := map[string]int{}, map[string]int{}
	see := func(name string, i int, write bool) {
		if _, ok := first[name]; !ok {
			first[name] = i
			if !write {
				first[name] = 0 // fed, or from an earlier step
			}
		}
		last[name] = i
	}
	// delta[i] changes the live bytes at op i; a sub-block's own
	// activations are live while its op runs.
	delta := make([]int64, n+1)
	for i, op := range g.Ops {
		if op == nil {
			continue
		}
		for name := range op.InputNames {
			see(name, i, false)
		}
		for name := range op.OutputNames {
			see(name, i, true)
		}
		for bi := range op.SubBlocks {
			if sb := p.Block(bi); sb != nil {
				for _, v := range sb.Vars() {
					if b, ok := activationBytes(v); ok {
						delta[i] += b
						delta[i+1] -= b
					}
				}
			}
		}
	}
	for name, f := range first {
		if b, ok := activationBytes(g.Var(name)); ok {
			delta[f] += b
			delta[last[name]+1] -= b
		}
	}
	var live, peak int64
	at := 0
	for i := range n {
		live += delta[i]
		if live > peak {
			peak, at = live, i
		}
	}
	if g.Ops[at] == nil {
		return peak, 0
	}
	return peak, g.Ops[at].ID
}

// activationBytes is the local bytes of v when it is an activation (a
// non-persistable dense var) of known size.
func activationBytes(v *ir.Var) (int64, bool) {
	if v == nil || !v.Type.IsTensor() || v.Kind != ir.KindVar {
		return 0, false
	}
	b, ok, err := tensorBytes(v.Type)
	return b, ok && err == nil
}
