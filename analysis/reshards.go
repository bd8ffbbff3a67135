package analysis

import (
	"fmt"
	"maps"
	"slices"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/ops"
)

// ReshardCost is what one reshard op of a serial module became on each
// rank: the ops its lowering emitted and the bytes they move.
type ReshardCost struct {
	Block int
	Op    int64
	// X and Out are the reshard's vars, From and To their dists.
	X, Out   string
	From, To *ir.TensorDist
	// Origin is the reshard's origin attr: which op needed what.
	Origin string
	// Ranks lists, rank by rank, what the reshard became there; a rank
	// in neither mesh is left out.
	Ranks []ReshardRank
}

// ReshardRank is a reshard's lowering on one rank.
type ReshardRank struct {
	Rank int
	// Ops are the types of the ops emitted, in program order:
	// collectives and the local ops (slices, splits, concats) around them.
	Ops []string
	// Bytes is what the rank moves for one run, by Comm's formulas.
	Bytes int64
}

// Bytes sums what every rank moves for one run of the reshard.
func (c ReshardCost) Bytes() int64 {
	var n int64
	for _, r := range c.Ranks {
		n += r.Bytes
	}
	return n
}

// ReshardCosts finds each reshard op of serial's main program in the
// per-rank programs parts (parts[i] is rank ranks[i]'s, partitioned from
// serial): the ops whose origin_op attr is the reshard's id, and what
// their collectives move (Comm). The reshards come in block order, each
// block's in program order.
func ReshardCosts(serial *ir.Module, ranks []int, parts []*ir.Module) ([]ReshardCost, error) {
	if len(ranks) != len(parts) {
		return nil, fmt.Errorf("%d ranks for %d programs", len(ranks), len(parts))
	}
	var out []ReshardCost
	at := map[int64]int{}
	for _, b := range serial.Main.Blocks {
		for _, op := range b.Ops {
			if op.Type != ops.ReshardType {
				continue
			}
			c := ReshardCost{Block: b.Index, Op: op.ID}
			c.Origin, _ = op.Attrs.String("origin")
			if xs, os := op.Input("X"), op.Output("Out"); len(xs) == 1 && len(os) == 1 {
				c.X, c.Out = xs[0], os[0]
				if v := serial.Main.LookupVar(b, c.X); v != nil {
					c.From = v.Dist
				}
				if v := serial.Main.LookupVar(b, c.Out); v != nil {
					c.To = v.Dist
				}
			}
			at[op.ID] = len(out)
			out = append(out, c)
		}
	}
	if len(out) == 0 {
		return nil, nil
	}
	for i, pm := range parts {
		comm, err := Get[*CommReport](NewCache(pm), Comm)
		if err != nil {
			return nil, fmt.Errorf("rank %d: %w", ranks[i], err)
		}
		bytes := map[int64]int64{}
		for _, op := range comm.Ops {
			if op.Program == "main" {
				bytes[op.ID] = op.Bytes
			}
		}
		lowered := map[int]*ReshardRank{}
		for _, b := range pm.Main.Blocks {
			for _, op := range b.Ops {
				id, ok := op.Attrs.Int("origin_op")
				if !ok {
					continue
				}
				k, ok := at[id]
				if !ok {
					continue
				}
				r := lowered[k]
				if r == nil {
					r = &ReshardRank{Rank: ranks[i]}
					lowered[k] = r
				}
				r.Ops = append(r.Ops, op.Type)
				r.Bytes += bytes[op.ID]
			}
		}
		for _, k := range slices.Sorted(maps.Keys(lowered)) {
			out[k].Ranks = append(out[k].Ranks, *lowered[k])
		}
	}
	return out, nil
}
