package sim

import (
	"fmt"

	"github.com/distpass/distpass/ir"
)

// This file holds the MoE all-to-alls, global_scatter and global_gather:
// variable-size exchanges of row blocks between the members of a group,
// driven by two int64 count vectors of n_expert × world entries. Block
// i = j*n_expert + e of a rank's local_count is what the rank exchanges
// with expert e of member j; global_count[j*n_expert + e] is what it
// exchanges with member j for its own expert e.

// moePart is one member's contribution to a global_scatter or gather.
type moePart struct {
	x            *Tensor
	local, count []int64 // local_count, global_count
}

// moeInputs reads and checks the op's X, local_count and global_count
// for a group of world members.
func moeInputs(op *ir.Op, in Args, world int) (moePart, error) {
	var p moePart
	x, err := one(op, in, "X")
	if err != nil {
		return p, err
	}
	if x.Rank() != 2 {
		return p, errf(op, "X has shape %v, want 2-D rows", x.Shape)
	}
	p.x = x
	for i, slot := range []string{"local_count", "global_count"} {
		t, err := one(op, in, slot)
		if err != nil {
			return p, err
		}
		if !t.DType.IsInteger() || t.Rank() != 1 {
			return p, errf(op, "%s is %s%v, want a 1-D int64 vector", slot, t.DType, t.Shape)
		}
		if len(t.Data) == 0 || len(t.Data)%world != 0 {
			return p, errf(op, "%s has %d entries, not n_expert × %d ranks of the group", slot, len(t.Data), world)
		}
		c := make([]int64, len(t.Data))
		for k, v := range t.Data {
			if v < 0 {
				return p, errf(op, "%s[%d] is %v, a negative count", slot, k, v)
			}
			c[k] = int64(v)
		}
		if i == 0 {
			p.local = c
		} else {
			p.count = c
		}
	}
	if len(p.local) != len(p.count) {
		return p, errf(op, "local_count has %d entries, global_count %d", len(p.local), len(p.count))
	}
	rows := sumInts(p.local)
	if op.Type == "global_gather" {
		rows = sumInts(p.count)
	}
	if x.Shape[0] != rows {
		which := "local_count"
		if op.Type == "global_gather" {
			which = "global_count"
		}
		return p, errf(op, "X has %d rows, its %s sums to %d", x.Shape[0], which, rows)
	}
	return p, nil
}

func sumInts(xs []int64) int64 {
	var s int64
	for _, x := range xs {
		s += x
	}
	return s
}

// prefix returns the exclusive prefix sums of xs.
func prefix(xs []int64) []int64 {
	out := make([]int64, len(xs)+1)
	for i, x := range xs {
		out[i+1] = out[i] + x
	}
	return out
}

// moeExchange computes member me's output of a global_scatter (scatter
// true) or global_gather from every member's part, in group order. The
// counts must agree pairwise: what j sends to me is what me expects from
// j. ranks names the members in messages.
func moeExchange(op *ir.Op, scatter bool, me int, parts []moePart, ranks []int) (*Tensor, error) {
	world := len(parts)
	nExpert := len(parts[me].local) / world
	cols := parts[me].x.Shape[1]
	for j, p := range parts {
		if len(p.local) != len(parts[me].local) || p.x.Shape[1] != cols || p.x.DType != parts[me].x.DType {
			return nil, errf(op, "rank %d has X %s%v and %d counts, rank %d has X %s%v and %d counts",
				ranks[me], parts[me].x.DType, parts[me].x.Shape, len(parts[me].local), ranks[j], p.x.DType, p.x.Shape, len(p.local))
		}
	}
	// Row offsets of each member's X blocks: by destination (local_count
	// order) for a scatter's input, expert-major then source for a
	// gather's input.
	blockStart := func(j, dst, e int) int64 {
		p := parts[j]
		if scatter {
			return prefix(p.local)[dst*nExpert+e]
		}
		var off int64
		for ee := range nExpert {
			for src := range world {
				if ee == e && src == dst {
					return off
				}
				off += p.count[src*nExpert+ee]
			}
		}
		return off
	}
	mine := parts[me]
	var rows int64
	if scatter {
		rows = sumInts(mine.count)
	} else {
		rows = sumInts(mine.local)
	}
	out := Zeros(mine.x.DType, rows, cols)
	copyRows := func(dstRow int64, src *Tensor, srcRow, n int64) {
		copy(out.Data[dstRow*cols:(dstRow+n)*cols], src.Data[srcRow*cols:(srcRow+n)*cols])
	}
	if scatter {
		// Expert-major, then by source member.
		var at int64
		for e := range nExpert {
			for j, p := range parts {
				want := mine.count[j*nExpert+e]
				sent := p.local[me*nExpert+e]
				if want != sent {
					return nil, errf(op, "rank %d expects %d rows for its expert %d from rank %d (global_count[%d]), which sends %d (its local_count[%d])",
						ranks[me], want, e, ranks[j], j*nExpert+e, sent, me*nExpert+e)
				}
				copyRows(at, p.x, blockStart(j, me, e), want)
				at += want
			}
		}
		return out, nil
	}
	// Gather: block j*nExpert+e of the output comes back from member j's
	// expert e, where it sits at that member's expert-major offset.
	starts := prefix(mine.local)
	for j, p := range parts {
		for e := range nExpert {
			want := mine.local[j*nExpert+e]
			sent := p.count[me*nExpert+e]
			if want != sent {
				return nil, errf(op, "rank %d expects %d rows back from expert %d of rank %d (local_count[%d]), which returns %d (its global_count[%d])",
					ranks[me], want, e, ranks[j], j*nExpert+e, sent, me*nExpert+e)
			}
			copyRows(starts[j*nExpert+e], p.x, blockStart(j, me, e), want)
		}
	}
	return out, nil
}

// serialCollective runs a collective of a serial program: a world of one
// rank, where reductions, broadcasts, gathers and all-to-alls return
// their input and global_scatter/gather exchange with themselves (the
// identity on rows sorted by expert).
func serialCollective(op *ir.Op, in Args) (Args, error) {
	outSlot := slotOf(op.Outputs, "Out", "out")
	switch op.Type {
	case "global_scatter", "global_gather":
		p, err := moeInputs(op, in, 1)
		if err != nil {
			return nil, err
		}
		t, err := moeExchange(op, op.Type == "global_scatter", 0, []moePart{p}, []int{0})
		if err != nil {
			return nil, err
		}
		return Args{outSlot: {t}}, nil
	case "send_v2", "recv_v2", "barrier":
		return nil, fmt.Errorf("%s: %s needs a peer; a serial program has none", op, op.Type)
	}
	x, err := oneTensor(op, in, slotOf(op.Inputs, "X", "x"))
	if err != nil {
		return nil, err
	}
	return Args{outSlot: {x.Clone()}}, nil
}
