package lower

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/ops"
	"github.com/distpass/distpass/spmd"
)

// The lowering of reshard ops: a reshard(X) -> (Out) becomes, on each
// rank, the local ops and collectives that turn the rank's part of X
// (X's var dist) into its part of Out (Out's). On one mesh the steps are
// spmd.PlanReshard's; across two meshes of one shape, the rank at each
// coordinate of X's mesh sends to the rank at the same coordinate of
// Out's, having first done the steps that shrink what it sends (slices
// and reduce-scatters toward Out's dist), and the receiver does the rest.

// Reshard is the lowering of reshard ops (impl reshard:0), the same in
// every phase: the registry's driver calls it on the ranks of either
// end's mesh, without a mesh; each step's ops go on X's mesh for what a
// sender does and on Out's for the rest.
func Reshard() *Impl {
	return &Impl{
		Name:     "reshard",
		Doc:      "this rank's part of X made its part of Out: per mesh dim slices, all-gathers, all-reduces, reduce-scatters, all-to-alls and local pads; send_v2/recv_v2 across meshes",
		Forward:  lowerReshard,
		Backward: lowerReshard,
	}
}

// lowerReshard lowers reshard op on ctx's rank.
func lowerReshard(ctx *Lowering, op *ir.Op) error {
	xs, outs := op.Input("X"), op.Output("Out")
	if len(xs) != 1 || len(outs) != 1 {
		return fmt.Errorf("want one X and one Out, have %d and %d", len(xs), len(outs))
	}
	x, out := ctx.Var(xs[0]), ctx.Var(outs[0])
	for i, v := range [2]*ir.Var{x, out} {
		switch {
		case v == nil:
			return fmt.Errorf("var %s is not declared", [2]string{xs[0], outs[0]}[i])
		case !v.Type.IsTensor() || v.Dist == nil:
			return fmt.Errorf("%s has no tensor dist: a reshard converts X's dist into Out's", v.Name())
		}
	}
	xm, om := ctx.module.Mesh(x.Dist.Mesh), ctx.module.Mesh(out.Dist.Mesh)
	if xm == nil || om == nil {
		return fmt.Errorf("%s or %s is on an unknown mesh", x.Name(), out.Name())
	}
	if err := exactPlaces(x, spmd.PlacesOf(x.Dist, xm.Shape), xm); err != nil {
		return err
	}
	if err := exactPlaces(out, spmd.PlacesOf(out.Dist, om.Shape), om); err != nil {
		return err
	}
	if err := gathersScaledGrad(ctx, op, x, out); err != nil {
		return err
	}
	rw := &reshardLowering{ctx: ctx, x: x, out: out}
	inX, inOut := xm.Contains(ctx.rank), om.Contains(ctx.rank)
	if xm == om || slices.Equal(xm.ProcessIDs, om.ProcessIDs) && slices.Equal(xm.Shape, om.Shape) {
		if !inOut {
			return nil // another stage's op
		}
		ctx.mesh = om
		return rw.sameMesh(x, spmd.PlacesOf(x.Dist, om.Shape), spmd.PlacesOf(out.Dist, om.Shape))
	}
	if !slices.Equal(xm.Shape, om.Shape) {
		return fmt.Errorf("%s on mesh %s %s to %s on mesh %s %s: a reshard across meshes needs meshes of one shape",
			x.Name(), xm.Name, ir.FormatInts(xm.Shape), out.Name(), om.Name, ir.FormatInts(om.Shape))
	}
	for i, id := range xm.ProcessIDs {
		if j := slices.Index(om.ProcessIDs, id); j >= 0 && j != i {
			return fmt.Errorf("%s on mesh %s to %s on mesh %s: rank %d is in both meshes at different coordinates, which a point-to-point move cannot serve",
				x.Name(), xm.Name, out.Name(), om.Name, id)
		}
	}
	if !inX && !inOut {
		return nil
	}
	return rw.crossMesh(xm, om, inX, inOut)
}

// reshardLowering is one reshard op's lowering on one rank.
type reshardLowering struct {
	ctx    *Lowering
	x, out *ir.Var
}

// global is the global shape of v, on its mesh pm's dims as its dist
// splits them. A dim of unknown size (-1) stays unknown.
func global(v *ir.Var, pm *ir.ProcessMesh) []int64 {
	g := slices.Clone(v.Type.Shape)
	for d, k := range v.Dist.DimsMapping {
		if k >= 0 && k < len(pm.Shape) {
			g[d] = mulDim(g[d], pm.Shape[k])
		}
	}
	return g
}

// mulDim and divDim scale a dim by n parts: an unknown dim (negative)
// stays -1, never -n or 0.
func mulDim(d int64, n int) int64 {
	if d < 0 {
		return -1
	}
	return d * int64(n)
}

func divDim(d int64, n int) int64 {
	if d < 0 {
		return -1
	}
	return d / int64(n)
}

// localShape is the local shape, on mesh pm, of a tensor of global shape
// g whose mesh dims hold ps.
func localShape(g []int64, ps []spmd.Place, pm *ir.ProcessMesh) []int64 {
	l := slices.Clone(g)
	for k, p := range ps {
		if p.Dim >= 0 && !p.Partial {
			l[p.Dim] = divDim(l[p.Dim], pm.Shape[k])
		}
	}
	return l
}

// sameMesh emits the steps from src to dst on ctx's mesh, from var from
// (which holds src) into the reshard's Out.
func (rw *reshardLowering) sameMesh(from *ir.Var, src, dst []spmd.Place) error {
	steps, err := spmd.PlanReshard(src, dst)
	if err != nil {
		return fmt.Errorf("%s to %s: %v", rw.x.Name(), rw.out.Name(), err)
	}
	if len(steps) == 0 {
		rw.ctx.Emit("assign", rw.ctx.Slot("X", from.Name()), rw.ctx.Slot("Out", rw.out.Name()),
			rw.why("the same parts"))
		return nil
	}
	_, err = rw.run(from, src, steps, rw.out)
	return err
}

// run emits steps from var cur, whose mesh dims hold ps, on ctx's mesh,
// the last into last (nil: a fresh var), and returns the var written.
func (rw *reshardLowering) run(cur *ir.Var, ps []spmd.Place, steps []spmd.Step, last *ir.Var) (*ir.Var, error) {
	pm := rw.ctx.mesh
	g := global(rw.x, rw.ctx.module.Mesh(rw.x.Dist.Mesh))
	ps = slices.Clone(ps)
	for i, s := range steps {
		ps[s.Axis] = s.To
		var to *ir.Var
		if i == len(steps)-1 && last != nil {
			to = last
		} else {
			like := &ir.Var{Type: ir.Tensor(rw.x.Type.DType, localShape(g, ps, pm)...)}
			to = rw.ctx.NewVar(rw.out.Name()+"."+shortStep[s.Kind], like, spmd.DistOf(pm.Name, ps, len(g)))
		}
		if err := rw.emit(s, cur, to); err != nil {
			return nil, err
		}
		cur = to
	}
	return cur, nil
}

var shortStep = [...]string{"slice", "rs", "a2a", "ar", "ag", "pad", "part", "scale"}

// why is the origin reason of the ops emitted for the reshard.
func (rw *reshardLowering) why(what string) string {
	return "reshard " + rw.x.Name() + " " + rw.x.Dist.String() + " to " + rw.out.Name() + " " + rw.out.Dist.String() + ": " + what
}

// temp declares a temp var of the reshard's dtype and of shape: a
// buffer of this rank's (its dist replicated: it is no part of a
// distributed value).
func (rw *reshardLowering) temp(suffix string, shape []int64) *ir.Var {
	like := &ir.Var{Type: ir.Tensor(rw.x.Type.DType, shape...)}
	d := &ir.TensorDist{Mesh: rw.ctx.mesh.Name, DimsMapping: make([]int, len(shape))}
	for i := range d.DimsMapping {
		d.DimsMapping[i] = -1
	}
	return rw.ctx.NewVar(rw.out.Name()+"."+suffix, like, d)
}

// order is, for mesh dim axis, the coordinate of each member of this
// rank's group in group order (ids ascending): the order a collective
// takes its members' blocks in. Whether it is the identity differs from
// group to group on a mesh whose ids do not ascend, so it is a read of
// the rank whatever it is.
func (rw *reshardLowering) order(axis int) ([]int, error) {
	rw.ctx.st.read(RankRead{Kind: ReadOrder, Mesh: rw.ctx.mesh, Axis: axis})
	return memberOrder(rw.ctx.mesh, axis, rw.ctx.rank)
}

// emit emits the ops of step s from var from into var to, on ctx's mesh.
func (rw *reshardLowering) emit(s spmd.Step, from, to *ir.Var) error {
	ctx := rw.ctx
	pm := ctx.mesh
	n := pm.Shape[s.Axis]
	dimName := pm.DimNames[s.Axis]
	ring := func() (ir.Attr, error) {
		id, _, err := ctx.Group(s.Axis)
		return ir.A("ring_id", ir.Int(int64(id))), err
	}
	// ringAndOrder is the ring_id attr of the group along the step's
	// mesh dim and its members' coordinates (order).
	ringAndOrder := func() (ir.Attr, []int, error) {
		r, err := ring()
		if err != nil {
			return r, nil, err
		}
		ord, err := rw.order(s.Axis)
		return r, ord, err
	}
	calc := ir.A("use_calc_stream", ir.Bool(true))
	nranks := ir.A("nranks", ir.Int(int64(n)))
	in, out := from.Name(), to.Name()
	what := fmt.Sprintf("%s over %s", s.Kind, dimName)
	switch s.Kind {
	case spmd.StepSlice:
		c, err := ctx.Coord(s.Axis)
		if err != nil {
			return err
		}
		if from.Type.Shape[s.To.Dim] < 0 {
			return fmt.Errorf("%s: slicing dim %d of %s %s, of unknown size, needs its size (a slice's starts and ends are static)",
				what, s.To.Dim, from.Name(), from.Type)
		}
		rows := from.Type.Shape[s.To.Dim] / int64(n)
		ctx.Emit("slice", ctx.Slot("Input", in), ctx.Slot("Out", out), rw.why(what),
			ir.A("axes", ir.Ints{int64(s.To.Dim)}), ir.A("starts", ir.Ints{int64(c) * rows}),
			ir.A("ends", ir.Ints{int64(c+1) * rows}), ir.A("infer_flags", ir.Ints{1}), ir.A("decrease_axis", ir.Ints{}))
	case spmd.StepAllGather:
		r, ord, err := ringAndOrder()
		if err != nil {
			return err
		}
		d := s.From.Dim
		if d == 0 && isIdentity(ord) {
			ctx.Emit("c_allgather", ctx.Slot("X", in), ctx.Slot("Out", out), rw.why(what), r, nranks, calc)
			return nil
		}
		// The gather stacks the members' blocks along dim 0; they go
		// along dim d, in coordinate order.
		gs := slices.Clone(from.Type.Shape)
		gs[0] = mulDim(gs[0], n)
		gathered := rw.temp("ag", gs)
		ctx.Emit("c_allgather", ctx.Slot("X", in), ctx.Slot("Out", gathered.Name()), rw.why(what), r, nranks, calc)
		parts := rw.split(gathered.Name(), from.Type.Shape, 0, n, what)
		byCoord := make([]string, n)
		for j, c := range ord {
			byCoord[c] = parts[j]
		}
		rw.concat(byCoord, d, out, what)
	case spmd.StepReduceScatter:
		r, ord, err := ringAndOrder()
		if err != nil {
			return err
		}
		// Member j keeps block j of dim 0.
		src := rw.lineUp(in, from.Type.Shape, s.To.Dim, ord, "rs", what)
		dst := out
		if s.From.Reduce == ir.ReduceAvg {
			dst = rw.temp("rs", to.Type.Shape).Name()
		}
		ctx.Emit("c_reducescatter", ctx.Slot("X", src), ctx.Slot("Out", dst), rw.why(what), r, nranks, calc)
		if s.From.Reduce == ir.ReduceAvg {
			rw.scale(dst, out, 1/float64(n), what+": the mean of the parts")
		}
	case spmd.StepAllToAll:
		r, ord, err := ringAndOrder()
		if err != nil {
			return err
		}
		d, e := s.From.Dim, s.To.Dim
		// Block j of dim 0 goes to member j.
		src := rw.lineUp(in, from.Type.Shape, e, ord, "a2a", what)
		bs := slices.Clone(from.Type.Shape)
		bs[e] = divDim(bs[e], n)
		// Block i of what comes back is member i's block along d.
		if d == 0 && isIdentity(ord) {
			ctx.Emit("alltoall", ctx.Slot("X", src), ctx.Slot("Out", out), rw.why(what), r, calc)
			return nil
		}
		zs := slices.Clone(bs)
		zs[0] = mulDim(zs[0], n)
		z := rw.temp("a2a", zs)
		ctx.Emit("alltoall", ctx.Slot("X", src), ctx.Slot("Out", z.Name()), rw.why(what), r, calc)
		parts := rw.split(z.Name(), bs, 0, n, what)
		byCoord := make([]string, n)
		for j, c := range ord {
			byCoord[c] = parts[j]
		}
		rw.concat(byCoord, d, out, what)
	case spmd.StepAllReduce:
		r, err := ring()
		if err != nil {
			return err
		}
		ctx.Emit("c_allreduce_"+s.From.Reduce.String(), ctx.Slot("X", in), ctx.Slot("Out", out), rw.why(what), r, calc)
	case spmd.StepPad:
		// This rank's block in its place along the dim, and elsewhere the
		// value that leaves the reduction unchanged.
		c, err := ctx.Coord(s.Axis)
		if err != nil {
			return err
		}
		block := in
		if s.To.Reduce == ir.ReduceAvg {
			// The parts' mean is the value: their sum is n times it.
			block = rw.temp("pad", from.Type.Shape).Name()
			rw.scale(in, block, float64(n), what+": n times the block, as the parts' mean is the value")
		}
		zero, err := rw.identity(in, from.Type.Shape, s.To.Reduce, what)
		if err != nil {
			return err
		}
		parts := make([]string, n)
		for j := range parts {
			parts[j] = zero.Name()
		}
		parts[c] = block
		rw.concat(parts, s.From.Dim, out, what)
	case spmd.StepPartial:
		keep := true
		if s.To.Reduce == ir.ReduceSum {
			c, err := ctx.Coord(s.Axis)
			if err != nil {
				return err
			}
			keep = c == 0
		}
		if keep {
			ctx.Emit("assign", ctx.Slot("X", in), ctx.Slot("Out", out), rw.why(what+": the value"))
		} else {
			ctx.Emit("fill_any_like", ctx.Slot("X", in), ctx.Slot("Out", out), rw.why(what+": zero off coordinate 0"),
				ir.A("value", ir.Float(0)), ir.A("dtype", ir.Int(-1)))
		}
	case spmd.StepRescale:
		if err := spmd.ExactPartial(from.Type.DType, ir.ReduceAvg); err != nil {
			return fmt.Errorf("%s of %s: %v", what, from.Name(), err)
		}
		f := float64(n) // sum parts to avg parts
		if s.From.Reduce == ir.ReduceAvg {
			f = 1 / float64(n)
		}
		rw.scale(in, out, f, what)
	default:
		return fmt.Errorf("unknown reshard step %v", s.Kind)
	}
	return nil
}

// lineUp returns the var whose block j along dim 0 is block ord[j]
// along dim d of var in (of local shape shape): what a collective that
// gives (or sends) member j block j of dim 0 needs to give member j the
// block of its coordinate. It is in itself when that is so already.
func (rw *reshardLowering) lineUp(in string, shape []int64, d int, ord []int, suffix, what string) string {
	if d == 0 && isIdentity(ord) {
		return in
	}
	n := len(ord)
	bs := slices.Clone(shape)
	bs[d] = divDim(bs[d], n)
	parts := rw.split(in, bs, d, n, what)
	byMember := make([]string, n)
	for j, c := range ord {
		byMember[j] = parts[c]
	}
	ys := slices.Clone(bs)
	ys[0] = mulDim(ys[0], n)
	y := rw.temp(suffix, ys)
	rw.concat(byMember, 0, y.Name(), what)
	return y.Name()
}

func isIdentity(ord []int) bool {
	for j, c := range ord {
		if c != j {
			return false
		}
	}
	return true
}

// split emits split(X: in) along axis into n fresh vars of shape part
// and returns their names.
func (rw *reshardLowering) split(in string, part []int64, axis, n int, what string) []string {
	names := make([]string, n)
	for j := range names {
		names[j] = rw.temp("part", part).Name()
	}
	rw.ctx.Emit("split", rw.ctx.Slot("X", in), []ir.Slot{{Name: "Out", Args: names}}, rw.why(what),
		ir.A("axis", ir.Int(int64(axis))), ir.A("num", ir.Int(int64(n))), ir.A("sections", ir.Ints{}))
	return names
}

// concat emits concat(X: ins) along axis into out.
func (rw *reshardLowering) concat(ins []string, axis int, out, what string) {
	rw.ctx.Emit("concat", []ir.Slot{{Name: "X", Args: ins}}, rw.ctx.Slot("Out", out), rw.why(what),
		ir.A("axis", ir.Int(int64(axis))))
}

func (rw *reshardLowering) scale(in, out string, f float64, what string) {
	rw.ctx.Emit("scale", rw.ctx.Slot("X", in), rw.ctx.Slot("Out", out), rw.why(what),
		ir.A("scale", ir.Float(f)), ir.A("bias", ir.Float(0)), ir.A("bias_after_scale", ir.Bool(true)))
}

// crossMesh lowers a reshard between two meshes of one shape: the sender
// (X's mesh) does the steps that shrink its part toward Out's dist, sends
// the result to the rank at its coordinate on Out's mesh, and the
// receiver does the remaining steps there. A rank at the same
// coordinate of both keeps what it would send.
func (rw *reshardLowering) crossMesh(xm, om *ir.ProcessMesh, inX, inOut bool) error {
	ctx := rw.ctx
	src, dst := spmd.PlacesOf(rw.x.Dist, xm.Shape), spmd.PlacesOf(rw.out.Dist, om.Shape)
	sent, err := shrinkToward(src, dst)
	if err != nil {
		return fmt.Errorf("%s to %s: %v", rw.x.Name(), rw.out.Name(), err)
	}
	shape := localShape(global(rw.x, xm), sent, xm)
	what := fmt.Sprintf("send from mesh %s to mesh %s", xm.Name, om.Name)
	if inX {
		ctx.mesh = xm
		steps, err := spmd.PlanReshard(src, sent)
		if err != nil {
			return fmt.Errorf("%s to %s: %v", rw.x.Name(), rw.out.Name(), err)
		}
		cur, err := rw.run(rw.x, src, steps, nil)
		if err != nil {
			return err
		}
		peer, err := rw.peerOf(xm, om)
		if err != nil {
			return err
		}
		if peer == ctx.rank {
			ctx.mesh = om
			return rw.receive(sent, dst, shape, func(to *ir.Var) {
				ctx.Emit("assign", ctx.Slot("X", cur.Name()), ctx.Slot("Out", to.Name()),
					rw.why(what+": this rank is at the same coordinate of both"))
			})
		}
		ring, idx, err := rw.pair(ctx.rank, peer)
		if err != nil {
			return err
		}
		ctx.Emit("send_v2", ctx.Slot("X", cur.Name()), nil, rw.why(what+": to rank "+strconv.Itoa(peer)),
			ir.A("ring_id", ir.Int(int64(ring))), ir.A("peer", ir.Int(int64(idx))), ir.A("use_calc_stream", ir.Bool(true)))
	}
	if !inOut {
		return nil
	}
	ctx.mesh = om
	peer, err := rw.peerOf(om, xm)
	if err != nil {
		return err
	}
	ring, idx, err := rw.pair(ctx.rank, peer)
	if err != nil {
		return err
	}
	code, ok := rw.x.Type.DType.PaddleCode()
	if !ok {
		return fmt.Errorf("%s: dtype %s has no Paddle code for recv_v2", rw.x.Name(), rw.x.Type.DType)
	}
	return rw.receive(sent, dst, shape, func(to *ir.Var) {
		ctx.Emit("recv_v2", nil, ctx.Slot("Out", to.Name()), rw.why(what+": from rank "+strconv.Itoa(peer)),
			ir.A("ring_id", ir.Int(int64(ring))), ir.A("peer", ir.Int(int64(idx))), ir.A("use_calc_stream", ir.Bool(true)),
			ir.A("dtype", ir.Int(code)), ir.A("out_shape", ir.Ints(slices.Clone(shape))))
	})
}

// receive emits, on Out's mesh, the arrival of the sent part (by arrive,
// into the var it is given) and the steps from sent to dst.
func (rw *reshardLowering) receive(sent, dst []spmd.Place, shape []int64, arrive func(to *ir.Var)) error {
	steps, err := spmd.PlanReshard(sent, dst)
	if err != nil {
		return fmt.Errorf("%s to %s: %v", rw.x.Name(), rw.out.Name(), err)
	}
	if len(steps) == 0 {
		arrive(rw.out)
		return nil
	}
	recvd := rw.ctx.NewVar(rw.out.Name()+".recv", &ir.Var{Type: ir.Tensor(rw.x.Type.DType, shape...)},
		spmd.DistOf(rw.ctx.mesh.Name, sent, len(shape)))
	arrive(recvd)
	_, err = rw.run(recvd, sent, steps, rw.out)
	return err
}

// shrinkToward returns the places a cross-mesh reshard sends: src with
// every slice and reduce-scatter toward dst done, the steps that shrink
// what goes over the wire.
func shrinkToward(src, dst []spmd.Place) ([]spmd.Place, error) {
	if err := spmd.MixedPartials(src); err != nil {
		return nil, err
	}
	cur := slices.Clone(src)
	for changed := true; changed; {
		changed = false
		for k, want := range dst {
			if want.Dim < 0 || cur[k] == want || (cur[k] != spmd.Replicated && !cur[k].Linear()) {
				continue
			}
			if !slices.ContainsFunc(cur, func(p spmd.Place) bool { return !p.Partial && p.Dim == want.Dim }) {
				cur[k] = want
				changed = true
			}
		}
	}
	return cur, nil
}

// peerOf returns the rank of mesh to at the coordinate this rank has on
// mesh from.
func (rw *reshardLowering) peerOf(from, to *ir.ProcessMesh) (int, error) {
	i := slices.Index(from.ProcessIDs, rw.ctx.rank)
	if i < 0 || i >= len(to.ProcessIDs) {
		return 0, fmt.Errorf("rank %d is not in mesh %s", rw.ctx.rank, from.Name)
	}
	rw.ctx.st.read(RankRead{Kind: ReadRank})
	return to.ProcessIDs[i], nil
}

// pair returns the ring id of the group of ranks a and b and b's index
// in it (send_v2's and recv_v2's peer).
func (rw *reshardLowering) pair(a, b int) (ring, idx int, err error) {
	ranks := []int{min(a, b), max(a, b)}
	for _, g := range rw.ctx.module.Groups {
		if slices.Equal(g.Ranks, ranks) {
			return g.ID, slices.Index(ranks, b), nil
		}
	}
	return 0, 0, fmt.Errorf("no process group %v in the group table for the point-to-point move", ranks)
}

// gathersScaledGrad refuses a backward reshard that gathers a gradient
// along a mesh dim the loss is averaged over (ops.ScaledGather) into
// what reaches a param's grad whole (ops.GatherFeedsParamGrad): n times
// the gradient would reach it, and no sync would take it back. A param's
// grad on its way to the param (the sync scales its parts,
// TestSlicedParamGradsAreScaled), and a gather split again along the dim
// before any param's grad (the n stays with the parts), pass.
func gathersScaledGrad(ctx *Lowering, op *ir.Op, x, out *ir.Var) error {
	loss := ctx.st.lossAvg
	if !op.Role.IsBackward() || loss == nil {
		return nil
	}
	mesh := ctx.module.Mesh(loss.Mesh)
	if mesh == nil {
		return nil
	}
	d, ok := ops.ScaledGather(x.Dist, out.Dist, loss, mesh.Shape)
	if !ok || ctx.paramGradView(x.Name()) {
		return nil
	}
	at := slices.Index(ctx.block.Ops, op)
	if at < 0 || !ops.GatherFeedsParamGrad(ctx.block.Ops, at, out.Name(), paramGrads(ctx.module), func(o string) bool {
		v := ctx.Var(o)
		return v != nil && v.Dist != nil && slices.Contains(v.Dist.DimsMapping, d)
	}) {
		return nil
	}
	return fmt.Errorf("%s gathers %s along mesh dim %d, over which the loss is averaged: a rank's part is its shard's gradient, n times its part of the whole loss's, and gathered it would give n times the gradient to what reads it whole (no grad sync takes that back); refused",
		op, x.Name(), d)
}

// paramGrads is the set of m's param grads.
func paramGrads(m *ir.Module) map[string]bool {
	grads := make(map[string]bool, len(m.ParamGrads))
	for _, pg := range m.ParamGrads {
		grads[pg.Grad] = true
	}
	return grads
}
