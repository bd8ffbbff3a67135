package ops

import (
	"strings"

	"github.com/distpass/distpass/spmd"
)

// The Notation of the rules that are einsums with more to them: the
// einsum's, with what they do besides in its Note (they do not parse:
// a definition file cannot state them).

func (r *alignRule) Notation(in, out []spmd.Arg) spmd.Notation {
	n := r.Einsum.Notation(in, out)
	n.Note = "the inputs aligned by cost where they disagree (AlignDimsSharding)"
	return n
}

func (r *splitRule) Notation(in, out []spmd.Arg) spmd.Notation {
	n := r.Einsum.Notation(in, out)
	n.Note = "Backward merges the outputs with the split axis a dim like the others, then replicates it"
	return n
}

func (r *likeOutput) Notation(in, out []spmd.Arg) spmd.Notation {
	n := r.Einsum.Notation(in, out)
	if r.in < len(in) {
		n.Note = in[r.in].Slot + " takes no part in Forward's merge and is wanted as " + firstSlot(out) + " is"
	}
	return n
}

func (r *localIndexRule) Notation(in, out []spmd.Arg) spmd.Notation {
	n := r.ShardingRule.Notation(in, out)
	if n.Note != "" {
		n.Note += "; "
	}
	n.Note += "the indexed rows held to the positions' mesh dim, nothing else split along it"
	return n
}

// Notation spells the free args "*" among the einsum's slots, in slot
// order; a rule of only free args is "free".
func (r *freeArgs) Notation(in, out []spmd.Arg) spmd.Notation {
	n := r.Einsum.Notation(in, out)
	allFree := true
	side := func(ss []spmd.SlotDims, args []spmd.Arg, free []bool) []spmd.SlotDims {
		var res []spmd.SlotDims
		for k, a := range args {
			if k > 0 && args[k-1].Slot == a.Slot {
				continue
			}
			if k < len(free) && free[k] {
				res = append(res, spmd.SlotDims{Slot: a.Slot, Dims: "*"})
				continue
			}
			allFree = false
			for _, s := range ss {
				if s.Slot == a.Slot {
					res = append(res, s)
				}
			}
		}
		return res
	}
	n.In, n.Out = side(n.In, in, r.in), side(n.Out, out, r.out)
	if allFree {
		return spmd.Notation{Form: "free"}
	}
	return n
}

// Notation of a reshape names what it regroups: its letters depend on
// both shapes and the mesh, which no einsum spells.
func (r *view) Notation(in, out []spmd.Arg) spmd.Notation {
	from, to := "X", "Out"
	if r.x < len(in) {
		from = in[r.x].Slot
	}
	if r.out0 < len(out) {
		to = out[r.out0].Slot
	}
	f := "reshape " + from + " -> " + to + ": a split dim stays split where it leads its group and its mesh dim divides it"
	if len(r.xshape) > 0 || len(r.xshapeIn) > 0 {
		f += "; XShape [-1] + " + from + "'s"
	}
	return spmd.Notation{Form: f}
}

func (r *ampRule) Notation(in, out []spmd.Arg) spmd.Notation {
	f := "each X to its Out dim for dim; the one-element args whole"
	if r.flag >= 0 {
		f += "; " + out[r.flag].Slot + " partial (max) along the mesh dims any X is split on"
	}
	return spmd.Notation{Form: f}
}

func firstSlot(args []spmd.Arg) string {
	if len(args) == 0 {
		return "the first output"
	}
	return strings.TrimSpace(args[0].Slot)
}
