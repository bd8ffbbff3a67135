package ops

import (
	"slices"
	"strconv"

	"github.com/distpass/distpass/ir"
)

// The rules of a per-rank program: a program with a rank (Program.Rank
// ≥ 0) in a module with a process-group table, as partition writes them.
// Such a program runs as it is on one rank, so every op that talks to
// other ranks must name a group of the table this rank belongs to, and
// what it says about that group (a peer, a root, a count of ranks, rows
// to exchange) must hold on it. A serial program's collectives (rank -1,
// or no table) are a world of one and are not held to these rules.

// rankGroups is the group table of the module being verified, by id
// (the first group of an id: ir.Verify reports a second).
type rankGroups map[int][]int

// newRankGroups returns m's group table by id, or nil when m has none
// or no program of m has a rank: there is then no per-rank program.
func newRankGroups(m *ir.Module) rankGroups {
	if m == nil || len(m.Groups) == 0 {
		return nil
	}
	ranked := false
	for _, p := range m.Programs() {
		ranked = ranked || p.Rank >= 0
	}
	if !ranked {
		return nil
	}
	gs := make(rankGroups, len(m.Groups))
	for _, g := range m.Groups {
		if _, ok := gs[g.ID]; !ok {
			gs[g.ID] = g.Ranks
		}
	}
	return gs
}

// ringRequired reports whether an op of type t must name its group in
// a per-rank program: the collectives (IsCollective, the project's
// one list of them) and sync_batch_norm and its grad, whose kernels
// all-reduce over ring_id (Paddle's op, without the attr, would use the
// world's communicator instead, silently).
func ringRequired(t string) bool {
	return IsCollective(t) || t == "sync_batch_norm" || t == "sync_batch_norm_grad"
}

// p2pTypes are the collectives whose peer attr is the other rank's index
// in the group of ring_id.
var p2pTypes = []string{"p_recv", "p_send", "partial_recv", "partial_send", "recv_v2", "send_v2"}

// rootAttr returns the attr that names the root of a rooted collective
// of type t (an index into the group), or "".
func rootAttr(t string) string {
	switch t {
	case "c_broadcast", "broadcast", "c_scatter":
		return "root"
	case "c_reduce_sum", "c_reduce_max", "c_reduce_min", "c_reduce_prod", "c_reduce_avg":
		return "root_id"
	}
	return ""
}

// intValue returns an Int or Long value as an int64.
func intValue(v ir.Value) (int64, bool) {
	switch x := v.(type) {
	case ir.Int:
		return int64(x), true
	case ir.Long:
		return int64(x), true
	}
	return 0, false
}

// checkRank checks op, of a program of rank rank, against the group
// table: see the rules above. d is op's def, nil when it has none; ins
// are the vars of its inputs in slot order.
func (gs rankGroups) checkRank(rank int, op *ir.Op, d *Def, ins []*ir.Var, report func(string, string)) {
	required := ringRequired(op.Type)
	v := op.Attrs.Get("ring_id")
	if v == nil {
		switch {
		case IsCollective(op.Type):
			report("", "attr ring_id missing: in a per-rank program (rank "+strconv.Itoa(rank)+
				") every collective names the group it runs over, an id of the group table")
		case required:
			report("", "attr ring_id missing: in a per-rank program (rank "+strconv.Itoa(rank)+
				") "+op.Type+" names the group it all-reduces its statistics over, an id of the group table")
		}
		return
	}
	if !required && (d == nil || !declares(d, "ring_id")) {
		// Another op's ring_id (a fused kernel's, where -1 means no
		// communication) is not the table's to judge.
		return
	}
	id, ok := intValue(v)
	if !ok {
		return // its kind is checkAttrs' to report
	}
	g, ok := gs[int(id)]
	if !ok || id != int64(int(id)) {
		report("", "attr ring_id = "+strconv.FormatInt(id, 10)+" names no group of the group table"+gs.idsNote())
		return
	}
	me := slices.Index(g, rank)
	if me < 0 {
		report("", "attr ring_id = "+strconv.FormatInt(id, 10)+" names group "+ringString(id, g)+
			", which rank "+strconv.Itoa(rank)+" (this program's) is not in")
		return
	}
	if !IsCollective(op.Type) {
		return
	}
	n := int64(len(g))
	inRing := func(attr string, def int64) (int64, bool) {
		x := def
		if v := op.Attrs.Get(attr); v != nil {
			if x, ok = intValue(v); !ok {
				return 0, false
			}
		}
		if x < 0 || x >= n {
			report("", "attr "+attr+" = "+strconv.FormatInt(x, 10)+" is outside group "+ringString(id, g)+
				": it is an index into the group, 0 to "+strconv.FormatInt(n-1, 10))
			return 0, false
		}
		return x, true
	}
	if slices.Contains(p2pTypes, op.Type) {
		if peer, ok := inRing("peer", 0); ok && g[peer] == rank {
			report("", "attr peer = "+strconv.FormatInt(peer, 10)+" is rank "+strconv.Itoa(rank)+
				" itself (index "+strconv.FormatInt(peer, 10)+" of group "+ringString(id, g)+"): a transfer needs another rank")
		}
	}
	if a := rootAttr(op.Type); a != "" {
		inRing(a, 0)
	}
	if v := op.Attrs.Get("nranks"); v != nil {
		if k, ok := intValue(v); ok && k != n {
			report("", "attr nranks = "+strconv.FormatInt(k, 10)+", but group "+ringString(id, g)+
				" has "+strconv.FormatInt(n, 10)+" ranks")
		}
	}
	switch op.Type {
	case "alltoall", "c_alltoall", "all_to_all":
		// Each rank sends part j of X's dim 0 to member j: the parts are
		// X's rows divided by the group's size.
		slot := "X"
		if op.Type == "all_to_all" {
			slot = "x"
		}
		x := argAt(op.Inputs, ins, slot, 0)
		if x == nil || !x.Type.IsTensor() {
			return
		}
		switch s := x.Type.Shape; {
		case len(s) == 0:
			report(x.Name(), "input "+slot+" "+x.Name()+" is 0-D: an all-to-all sends dim-0 parts to the "+
				strconv.FormatInt(n, 10)+" ranks of group "+ringString(id, g))
		case s[0] >= 0 && s[0]%n != 0:
			report(x.Name(), "input "+slot+" "+x.Name()+" "+x.Type.String()+": dim 0 ("+strconv.FormatInt(s[0], 10)+
				" rows) does not divide over the "+strconv.FormatInt(n, 10)+" ranks of group "+ringString(id, g))
		}
	case "global_scatter", "global_gather":
		// The counts are n_expert per member of the group.
		for _, slot := range []string{"local_count", "global_count"} {
			c := argAt(op.Inputs, ins, slot, 0)
			if c == nil || !c.Type.IsTensor() || len(c.Type.Shape) != 1 || c.Type.Shape[0] < 0 {
				continue
			}
			if k := c.Type.Shape[0]; k == 0 || k%n != 0 {
				report(c.Name(), "input "+slot+" "+c.Name()+" "+c.Type.String()+": "+strconv.FormatInt(k, 10)+
					" counts are not n_expert for each of the "+strconv.FormatInt(n, 10)+" ranks of group "+ringString(id, g))
			}
		}
	}
}

// declares reports whether d lists attr name.
func declares(d *Def, name string) bool {
	return slices.ContainsFunc(d.Attrs, func(a Attr) bool { return a.Name == name })
}

// ringString spells group id with its ranks, for a message: "3 [0, 1]";
// a long group is cut short.
func ringString(id int64, ranks []int) string {
	const most = 8
	b := strconv.AppendInt(nil, id, 10)
	b = append(b, " ["...)
	for i, r := range ranks {
		if i == most {
			b = append(b, ", ... ("...)
			b = strconv.AppendInt(b, int64(len(ranks)), 10)
			b = append(b, " ranks)"...)
			break
		}
		if i > 0 {
			b = append(b, ", "...)
		}
		b = strconv.AppendInt(b, int64(r), 10)
	}
	return string(append(b, ']'))
}

// idsNote says which ids the table has, for a ring_id it lacks: " (ids
// 0 to 4)" when they run in order, " (its only group is 0)", else " (5
// groups)".
func (gs rankGroups) idsNote() string {
	n := len(gs)
	if _, ok := gs[0]; ok && n == 1 {
		return " (its only group is 0)"
	}
	for i := range n {
		if _, ok := gs[i]; !ok {
			return " (" + strconv.Itoa(n) + " groups)"
		}
	}
	return " (ids 0 to " + strconv.Itoa(n-1) + ")"
}
