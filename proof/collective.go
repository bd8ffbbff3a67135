package proof

import (
	"fmt"
	"slices"
	"strings"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/ops"
)

// The collectives, the reshard helpers between them, and the cross-rank
// facts: a rank proves a collective's output assuming each member of its
// group gives the same value at the member's coordinates (what the
// member's own proof computed); crossRank discharges that assumption by
// comparing what the members recorded.

// call is a collective a rank issued: what it gave, for the cross-rank
// check.
type call struct {
	rank   int
	ring   int64
	typ    string
	origin int64
	id     int64
	src    string
	owed   []ir.Partial
	coef   float64
	// What it gave: a placement (mesh, dims) or a layout (lay); neither
	// when the proof did not follow it.
	mesh  string
	dims  []int
	lay   *layout
	coord []int
	// where names the call for a person: the program and the call's
	// place among the program's calls on its ring ("main collective 2").
	where string
}

func (c call) same(d call) bool {
	return c.typ == d.typ && c.origin == d.origin
}

// sameBlocks reports whether c and d gave the same function of the
// coordinates: one placement, or equal layouts.
func (c call) sameBlocks(d call) bool {
	if c.lay == nil && d.lay == nil {
		return c.mesh == d.mesh && slices.Equal(c.dims, d.dims)
	}
	return c.lay != nil && d.lay != nil && c.lay.merge().equal(d.lay.merge())
}

// laidOut gives c a layout: its placement's blocks.
func (c *call) laidOut(serial *ir.Module) error {
	if c.lay != nil {
		return nil
	}
	sv, pm := serial.Main.Global().Var(c.src), serial.Mesh(c.mesh)
	if sv == nil || pm == nil {
		return fmt.Errorf("gives %s, of no serial var or mesh", c.src)
	}
	l, err := placed(sv.Type.Shape, c.dims, pm.Shape)
	c.lay = l
	return err
}

// coordOn returns this rank's coordinates on mesh name.
func (p *prover) coordOn(name string) ([]int, *ir.ProcessMesh, error) {
	pm := p.part.Mesh(name)
	if pm == nil {
		pm = p.serial.Mesh(name)
	}
	if pm == nil {
		return nil, nil, fmt.Errorf("mesh %q is not declared", name)
	}
	c, err := pm.Coord(p.rank)
	return c, pm, err
}

// layoutOf returns v's blocks as a layout, offsets in its mesh's
// coordinates.
func (p *prover) layoutOf(v *value) (*layout, error) {
	if v.lay != nil {
		return v.lay, nil
	}
	sv := p.serialVar(p.canon(v.src))
	if sv == nil { // a start-up program's var its serial start-up does not declare
		sv = p.serial.Main.Global().Var(p.canon(v.src))
	}
	if sv == nil {
		return nil, fmt.Errorf("%s is no serial var", v.src)
	}
	_, pm, err := p.coordOn(v.mesh)
	if err != nil {
		return nil, err
	}
	return placed(sv.Type.Shape, v.dims, pm.Shape)
}

// settle turns v, a layout, into the placement dims on mesh when it holds
// the same blocks on this rank; it reports whether it did.
func (p *prover) settle(v *value, mesh string, dims []int) bool {
	want, err := p.layoutOf(&value{src: v.src, mesh: mesh, dims: dims})
	if err != nil {
		return false
	}
	wc, _, err := p.coordOn(mesh)
	if err != nil {
		return false
	}
	got := v.lay
	if v.mesh != "" {
		gc, _, err := p.coordOn(v.mesh)
		if err != nil {
			return false
		}
		got = got.at(gc)
	}
	if !got.merge().equal(want.at(wc)) {
		return false
	}
	v.lay, v.mesh, v.dims = nil, mesh, slices.Clone(dims)
	return true
}

// placedAs reports whether v holds, on this rank, the blocks placement
// dims of mesh gives.
func (p *prover) placedAs(v *value, mesh string, dims []int) bool {
	if v.lay == nil && (v.mesh == mesh || v.mesh == "") && slices.Equal(v.dims, dims) {
		return true
	}
	_, ok := p.replaced(v, mesh, dims)
	return ok
}

// replaced returns v as placement dims of mesh, a copy, when it holds
// that placement's blocks on this rank: another placement (a dim split
// over a mesh dim of one rank is whole), another mesh, or a layout.
func (p *prover) replaced(v *value, mesh string, dims []int) (*value, bool) {
	c := *v
	if c.lay == nil {
		l, err := p.layoutOf(v)
		if err != nil {
			return nil, false
		}
		c.lay = l
	}
	return &c, p.settle(&c, mesh, dims)
}

// ring returns the group of op's ring_id and the mesh dim of mesh along
// which it is this rank's group (its ranks in any order), refuting a
// ring that is no such group.
func (p *prover) ring(op *ir.Op, x string, mesh string) (*ir.Group, *ir.ProcessMesh, int, bool) {
	id, _ := ir.AsInt(op.Attrs.Get("ring_id"))
	grp := p.part.Group(int(id))
	if grp == nil {
		p.unproven(op, x, "ring %d is in no group", id)
		return nil, nil, 0, false
	}
	_, pm, err := p.coordOn(mesh)
	if err != nil {
		p.unproven(op, x, "%v", err)
		return nil, nil, 0, false
	}
	members := slices.Sorted(slices.Values(grp.Ranks))
	for d := range pm.Shape {
		if g, err := pm.Group(d, p.rank); err == nil && slices.Equal(slices.Sorted(slices.Values(g)), members) {
			return grp, pm, d, true
		}
	}
	p.refute(op, x, "ring %d is ranks %v, which are not this rank's group along any dim of mesh %s", id, grp.Ranks, pm.Name)
	return nil, nil, 0, false
}

// record notes a collective for the cross-rank check.
func (p *prover) record(op *ir.Op, in *value) {
	id, _ := ir.AsInt(op.Attrs.Get("ring_id"))
	of, _ := originOp(op)
	prog := "main"
	if p.startup {
		prog = "startup"
	}
	if p.onRing == nil {
		p.onRing = map[int64]int{}
	}
	p.onRing[id]++
	// A call outlives the rank's program: it holds none of its strings
	// (which would hold the program), but the serial module's and the
	// op table's.
	c := call{rank: p.rank, ring: id, typ: op.Type, origin: of, id: op.ID, src: p.canon(in.src), owed: slices.Clone(in.owed), coef: in.coef,
		where: fmt.Sprintf("%s collective %d", prog, p.onRing[id])}
	if d := ops.Lookup(op.Type); d != nil {
		c.typ = d.Type
	}
	if sv := p.serial.Main.Global().Var(c.src); sv != nil {
		c.src = sv.Name()
	} else {
		c.src = strings.Clone(c.src)
	}
	if !in.unknown {
		c.mesh, c.dims, c.lay = in.mesh, slices.Clone(in.dims), in.lay
		if pm := p.serial.Mesh(in.mesh); pm != nil {
			c.mesh = pm.Name
		}
		if in.mesh != "" {
			c.coord, _, _ = p.coordOn(in.mesh)
		}
	}
	p.calls = append(p.calls, c)
}

// collective applies op, a collective over a ring, to out (X's value in).
func (p *prover) collective(op *ir.Op, x string, in, out *value) bool {
	if op.Type == "c_identity" {
		return true // the identity, whose grad is a sum over the ring
	}
	p.record(op, in)
	if in.mesh == "" {
		// Blocks received from another mesh, constants: what a member
		// gives is not this rank's at its coordinate.
		p.unproven(op, x, "%s over blocks received from another mesh", op.Type)
		return false
	}
	if d := p.rankVar(x); d != nil && d.Dist != nil && d.Dist.Mesh != in.mesh {
		// Blocks of another mesh (a rank at the same coordinate of two):
		// the collective runs on X's declared one.
		c, ok := p.replaced(in, d.Dist.Mesh, d.Dist.DimsMapping)
		if !ok {
			p.unproven(op, x, "%s over blocks of mesh %s, on mesh %s", op.Type, in.mesh, d.Dist.Mesh)
			return false
		}
		in = c
		*out = value{src: c.src, mesh: c.mesh, dims: c.dims, owed: slices.Clone(c.owed), coef: c.coef}
	}
	grp, pm, d, ok := p.ring(op, x, in.mesh)
	if !ok {
		return false
	}
	dn := pm.DimNames[d]
	owes := slices.IndexFunc(in.owed, func(q ir.Partial) bool { return q.Dim == d })
	lay, err := p.layoutOf(in)
	if err != nil {
		p.unproven(op, x, "%v", err)
		return false
	}
	varies := lay.dependsOn(d)
	if n, ok := ir.AsInt(op.Attrs.Get("nranks")); ok && int(n) != len(grp.Ranks) {
		p.refute(op, x, "nranks %d, and ring %d has %d ranks", n, op.Attrs.Get("ring_id"), len(grp.Ranks))
		return false
	}
	pos := slices.Index(grp.Ranks, p.rank)
	// member j's value is this rank's at its coordinate along d.
	member := func(j int) (*layout, error) {
		c, err := pm.Coord(grp.Ranks[j])
		if err != nil {
			return nil, err
		}
		return lay.subst(d, c[d]), nil
	}
	switch op.Type {
	case "c_allreduce_sum", "c_allreduce_avg", "c_allreduce_max", "c_allreduce_min":
		if varies {
			p.refute(op, x, "%s is split along mesh dim %d (%s): %s over it mixes different blocks", x, d, dn, op.Type)
			return false
		}
		return p.reduce(op, x, out, pm, d)
	case "c_broadcast":
		if owes >= 0 {
			p.refute(op, x, "%s owes %s over mesh dim %d (%s): a broadcast gives every member one part, not the value", x, reduceName(in.owed[owes].Reduce), d, dn)
			return false
		}
		root, _ := ir.AsInt(op.Attrs.Get("root"))
		if int(root) >= len(grp.Ranks) || root < 0 {
			p.refute(op, x, "root %d is not a position of ring %v", root, grp.Ranks)
			return false
		}
		if varies {
			l, err := member(int(root))
			if err != nil {
				p.unproven(op, x, "%v", err)
				return false
			}
			out.lay, out.dims = l, nil
		}
		return true
	case "c_allgather", "alltoall":
		if owes >= 0 {
			p.refute(op, x, "%s owes %s over mesh dim %d (%s): gathering the parts is not gathering the value", x, reduceName(in.owed[owes].Reduce), d, dn)
			return false
		}
		n := int64(len(grp.Ranks))
		pieces := make([]*layout, len(grp.Ranks))
		for j := range grp.Ranks {
			l, err := member(j)
			if err == nil && op.Type == "alltoall" {
				// member j sends this rank its pos-th block of dim 0.
				rows := l.shape()[0]
				if rows < 0 || rows%n != 0 {
					err = fmt.Errorf("dim 0 of %d rows does not split over %d ranks", rows, n)
				} else {
					l, err = l.take(0, int64(pos)*rows/n, int64(pos+1)*rows/n)
				}
			}
			if err != nil {
				p.unproven(op, x, "%v", err)
				return false
			}
			pieces[j] = l
		}
		l, err := concatLayouts(pieces, 0)
		if err != nil {
			p.unproven(op, x, "%v", err)
			return false
		}
		out.lay, out.dims = l.merge(), nil
		return true
	case "c_reducescatter":
		if varies {
			p.refute(op, x, "%s is split along mesh dim %d (%s): %s over it mixes different blocks", x, d, dn, op.Type)
			return false
		}
		if !p.reduce(op, x, out, pm, d) {
			return false
		}
		rows, n := lay.shape()[0], int64(len(grp.Ranks))
		if rows < 0 || rows%n != 0 {
			p.unproven(op, x, "dim 0 of %d rows does not split over %d ranks", rows, n)
			return false
		}
		l, err := lay.take(0, int64(pos)*rows/n, int64(pos+1)*rows/n)
		if err != nil {
			p.unproven(op, x, "%v", err)
			return false
		}
		out.lay, out.dims = l.merge(), nil
		return true
	}
	p.unproven(op, x, "%s: a collective the proof does not follow", op.Type)
	return false
}

// reduce applies a reduction over mesh dim d to out: it clears what out
// owes along d with the same reduction (a sum of what owes an average is
// n times the value).
func (p *prover) reduce(op *ir.Op, x string, out *value, pm *ir.ProcessMesh, d int) bool {
	red, ok := map[string]ir.Reduce{"c_allreduce_sum": ir.ReduceSum, "c_allreduce_avg": ir.ReduceAvg,
		"c_allreduce_max": ir.ReduceMax, "c_allreduce_min": ir.ReduceMin, "c_reducescatter": ir.ReduceSum}[op.Type]
	if !ok {
		p.unproven(op, x, "%s: a reduction the proof does not follow", op.Type)
		return false
	}
	n := float64(pm.Shape[d])
	i := slices.IndexFunc(out.owed, func(q ir.Partial) bool { return q.Dim == d })
	switch {
	case i >= 0 && out.owed[i].Reduce == red:
	case i >= 0 && out.owed[i].Reduce == ir.ReduceAvg && red == ir.ReduceSum:
		out.coef *= n
	case i >= 0 && out.owed[i].Reduce == ir.ReduceSum && red == ir.ReduceAvg:
		out.coef /= n
	case i >= 0:
		p.refute(op, x, "%s owes %s over mesh dim %d (%s), which %s does not make", x, reduceName(out.owed[i].Reduce), d, pm.DimNames[d], op.Type)
		return false
	case red == ir.ReduceSum || red == ir.ReduceAvg:
		p.refute(op, x, "%s owes nothing over mesh dim %d (%s): %s of its equal copies is %s", x, d, pm.DimNames[d], reduceName(red),
			map[ir.Reduce]string{ir.ReduceSum: "n times it", ir.ReduceAvg: "itself, a collective for nothing"}[red])
		return false
	default:
		return true // the max of equal copies
	}
	out.owed = slices.Delete(slices.Clone(out.owed), i, i+1)
	return true
}

// crossRank discharges the collectives' assumptions: the members of a
// ring issue its collectives in one order, each one giving the same
// serial var's blocks, owing the same, by the same function of the
// coordinates (so that what a rank took a member to give is what the
// member gave).
func crossRank(serial *ir.Module, groups []ir.Group, provers []*prover) []Finding {
	seq := map[int64]map[int][]call{}
	var rings []int64
	proved := map[int]bool{}
	for _, p := range provers {
		proved[p.rank] = true
		for _, c := range p.calls {
			if seq[c.ring] == nil {
				seq[c.ring] = map[int][]call{}
				rings = append(rings, c.ring)
			}
			seq[c.ring][c.rank] = append(seq[c.ring][c.rank], c)
		}
	}
	var out []Finding
	for _, ring := range rings {
		k := slices.IndexFunc(groups, func(g ir.Group) bool { return int64(g.ID) == ring })
		if k < 0 {
			continue
		}
		grp := &groups[k]
		first := -1
		for _, r := range grp.Ranks {
			if !proved[r] {
				out = append(out, Finding{Rank: r, Unproven: true, Msg: fmt.Sprintf("a member of ring %d with no program to prove", ring)})
				continue
			}
			if first < 0 {
				first = r
				continue
			}
			if f, bad := differ(ring, first, seq[ring][first], r, seq[ring][r]); bad {
				out = append(out, f)
			}
		}
		// Each member took the others to give its own function of the
		// coordinates: where the functions differ, compare the blocks.
		for k := 0; ; k++ {
			var at []call
			more := false
			for _, r := range grp.Ranks {
				if c := seq[ring][r]; proved[r] && k < len(c) {
					more = true
					if c[k].lay != nil || c[k].mesh != "" {
						at = append(at, c[k])
					}
				}
			}
			if !more {
				break
			}
			if len(at) == 0 || !slices.ContainsFunc(at, func(c call) bool { return !c.sameBlocks(at[0]) }) {
				continue
			}
			if f, bad := blocksDiffer(serial, ring, at); bad {
				out = append(out, f)
				break
			}
		}
	}
	return out
}

// blocksDiffer compares, for each pair of members, the blocks one gave
// with those the other took it to give.
func blocksDiffer(serial *ir.Module, ring int64, at []call) (Finding, bool) {
	for i := range at {
		if err := at[i].laidOut(serial); err != nil {
			return Finding{Rank: at[i].rank, OpID: at[i].id, OpType: at[i].typ, Var: at[i].src, Unproven: true, Msg: err.Error()}, true
		}
	}
	for _, a := range at {
		for _, b := range at {
			if b.coord == nil || a.rank == b.rank {
				continue
			}
			if got, took := b.lay.at(b.coord), a.lay.at(b.coord); !got.equal(took) {
				return Finding{Rank: b.rank, OpID: b.id, OpType: b.typ, Var: b.src,
					Msg: fmt.Sprintf("gives ring %d the blocks %s of %s, and rank %d takes it to give %s", ring, got, b.src, a.rank, took)}, true
			}
		}
	}
	return Finding{}, false
}

// differ compares two members' sequences of collectives on a ring.
func differ(ring int64, first int, a []call, r int, b []call) (Finding, bool) {
	for k := 0; k < max(len(a), len(b)); k++ {
		var msg string
		where := "a collective"
		if k < len(b) {
			where = b[k].where
		} else if k < len(a) {
			where = a[k].where
		}
		switch {
		case k >= len(a) || k >= len(b) || !a[k].same(b[k]):
			msg = fmt.Sprintf("%s on ring %d is not rank %d's: the group's members must issue its collectives in one order", where, ring, first)
		case a[k].src != b[k].src:
			msg = fmt.Sprintf("%s on ring %d gives %s, and rank %d's gives %s", where, ring, b[k].src, first, a[k].src)
		case !slices.Equal(a[k].owed, b[k].owed) || a[k].coef != b[k].coef:
			msg = fmt.Sprintf("%s on ring %d gives %s owing %s times %g, and rank %d's owing %s times %g", where, ring, b[k].src,
				fmtOwed(b[k].owed), b[k].coef, first, fmtOwed(a[k].owed), a[k].coef)
		default:
			continue
		}
		f := Finding{Rank: r, Msg: msg}
		if k < len(b) {
			f.OpID, f.OpType = b[k].id, b[k].typ
		}
		return f, true
	}
	return Finding{}, false
}

// mailbox is the queue of sends from one rank to another on a ring.
type mailbox struct {
	from, to int
	ring     int64
}

// postOffice holds the values sent and not yet received.
type postOffice struct {
	box  map[mailbox][]*value
	sent map[mailbox][]*ir.Op
}

// peer returns the rank at position peer of op's two-rank ring.
func (p *prover) peer(op *ir.Op) (mailbox, int, bool) {
	id, _ := ir.AsInt(op.Attrs.Get("ring_id"))
	at, _ := ir.AsInt(op.Attrs.Get("peer"))
	grp := p.part.Group(int(id))
	if grp == nil || at < 0 || int(at) >= len(grp.Ranks) || !slices.Contains(grp.Ranks, p.rank) {
		p.refute(op, "", "peer %d of ring %d is no rank of a group this rank is in", at, id)
		return mailbox{}, 0, false
	}
	q := grp.Ranks[at]
	if q == p.rank {
		p.refute(op, "", "peer %d of ring %d is this rank", at, id)
		return mailbox{}, 0, false
	}
	return mailbox{ring: id}, q, true
}

// send posts X's blocks, evaluated at this rank's coordinates, to the
// peer.
func (p *prover) send(op *ir.Op) {
	x := firstArg(op.Input("X"))
	in := p.read(x)
	box, q, ok := p.peer(op)
	if !ok {
		return
	}
	box.from, box.to = p.rank, q
	v := &value{src: in.src, owed: in.owed, coef: in.coef, unknown: in.unknown}
	if !in.unknown {
		l, err := p.layoutOf(in)
		if err == nil && in.mesh != "" {
			var c []int
			if c, _, err = p.coordOn(in.mesh); err == nil {
				l = l.at(c)
				v.from = sentFrom{mesh: in.mesh, coord: c}
			}
		}
		if err != nil {
			p.unproven(op, x, "%v", err)
			v.unknown = true
		}
		v.lay = l
		if len(in.owed) > 0 && v.from.mesh == "" {
			p.unproven(op, x, "sends %s, which owes %s, from no mesh", x, fmtOwed(in.owed))
			v.unknown = true
		}
	}
	if p.post.sent == nil {
		p.post.sent = map[mailbox][]*ir.Op{}
	}
	p.post.box[box] = append(p.post.box[box], v)
	p.post.sent[box] = append(p.post.sent[box], op)
}

// receive takes the first value the peer sent this rank on the ring; it
// reports false when there is none yet (but force: then none comes, and
// the value is unknown).
func (p *prover) receive(op *ir.Op, force bool) bool {
	out := firstArg(op.Output("Out"))
	box, q, ok := p.peer(op)
	if !ok {
		p.write(out, &value{unknown: true})
		return true
	}
	box.from, box.to = q, p.rank
	queue := p.post.box[box]
	if len(queue) == 0 {
		if !force {
			return false
		}
		p.refute(op, out, "waits for a send from rank %d on ring %d that never comes", q, box.ring)
		p.write(out, &value{unknown: true})
		return true
	}
	v := queue[0]
	p.post.box[box] = queue[1:]
	p.post.sent[box] = p.post.sent[box][1:]
	got := &value{src: v.src, lay: v.lay, owed: v.owed, coef: v.coef, unknown: v.unknown}
	if !got.unknown && len(got.owed) > 0 {
		// A part: the receiver must stand where its sender stood along
		// each dim the part is owed over (a mesh of the same shape), so
		// that the group's receivers hold its senders' parts one to one.
		d := p.rankVar(out)
		same := d != nil && d.Dist != nil && sameShape(p.serial, v.from.mesh, d.Dist.Mesh)
		if same {
			c, _, err := p.coordOn(d.Dist.Mesh)
			same = err == nil && !slices.ContainsFunc(got.owed, func(q ir.Partial) bool { return c[q.Dim] != v.from.coord[q.Dim] })
		}
		if !same {
			p.unproven(op, out, "receives a part owed over %s from rank %d, which stands elsewhere", fmtOwed(got.owed), q)
			got.unknown = true
		}
	}
	if !got.unknown {
		if shape, ok := ir.AsInts(ops.AttrValue(op, "out_shape")); ok && !slices.Equal(shape, got.lay.shape()) {
			p.refute(op, out, "out_shape %v, and rank %d sends %v", shape, q, got.lay.shape())
		}
	}
	p.write(out, got)
	return true
}

// unreceived refutes the sends no rank received.
func (po *postOffice) unreceived() []Finding {
	var out []Finding
	for box, ops := range po.sent {
		for _, op := range ops {
			out = append(out, Finding{Rank: box.from, OpID: op.ID, OpType: op.Type,
				Msg: fmt.Sprintf("sends to rank %d on ring %d, which never receives it", box.to, box.ring)})
		}
	}
	slices.SortFunc(out, func(a, b Finding) int {
		if a.Rank != b.Rank {
			return a.Rank - b.Rank
		}
		return int(a.OpID - b.OpID)
	})
	return out
}
