package ops

import (
	"strings"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/spmd"
)

// The MoE ops' rules. The counts after the first (number_count's, which
// are partial sums of a split batch's counts) hold each rank's own
// entries, exchanged or cut per rank: no mapping of one global tensor
// states them, so the rules leave them free, for the expert_parallel
// impls to check. The rows an exchange moves have a data-dependent
// number: a mapping on them says along which mesh dims (other than the
// expert axis, which the impls refuse) the rows are each rank's own, as
// a batch split is.

const (
	exchangeCountsDoc = "constrains no arg: the counts it exchanges are each rank's own, which no mapping of one tensor states (the expert_parallel impl checks them)"
	countDoc          = "the expert counts of numbers: numbers' split dims make Out partial (sum), Out's experts replicated"
	assignDoc         = "X's dims pass through, never partial; cum_count and Out (each rank's own slots) unconstrained"
	limitDoc          = "capacity replicated; expert_count and Out (each rank's own counts) unconstrained"
	pruneDoc          = "NewGateIdx is GateIdx dim for dim (each rank prunes its own tokens); ExpertCount unconstrained"
	exchangeDoc       = "Out's rows split as X's (along mesh dims other than the expert axis), the features replicated; the counts unconstrained"
	groupedDoc        = "X [rows, k], W [experts, k, p] and Out [rows, p]: a split k makes Out partial (sum), split experts do not (they select); ExpertCount unconstrained"
)

// countRule: number_count's Out counts, for each expert, the numbers
// equal to it: every dim of numbers is summed over (Out partial along
// their mesh dims), Out's experts are not split (a shard would count
// the wrong ids).
func countRule(c *Infer) (spmd.ShardingRule, error) {
	n := c.rank("numbers")
	if n < 0 {
		return nil, nil
	}
	// The einsum's reduction, sum, is the counts'. Out is spelled (not
	// left out): an unspelled output is never partial.
	return c.einsum(map[string]string{"numbers": alphabet[:n]}, map[string]string{"Out": ones(c.outs, 0)})
}

// assignPosRule: assign_pos reads X's choices in order, each rank its
// own: X passes through and makes nothing partial; the prefix counts and
// the slots are each rank's own.
func assignPosRule(c *Infer) (spmd.ShardingRule, error) {
	n := c.rank("X")
	if n < 0 {
		return nil, nil
	}
	e, err := c.einsum(map[string]string{"X": alphabet[:n]}, nil)
	if e != nil {
		e.NoPartial = true
	}
	return c.freeing(e, err, "cum_count", "eff_num_len", "Out")
}

// limitRule: limit_by_capacity cuts each rank's counts to the capacity,
// the same on every rank.
func limitRule(c *Infer) (spmd.ShardingRule, error) {
	e, err := c.einsum(nil, nil)
	return c.freeing(e, err, "expert_count", "Out")
}

// pruneRule: prune_gate_by_capacity prunes each token's choice by the
// counts of its rank: GateIdx and NewGateIdx share their dims.
func pruneRule(c *Infer) (spmd.ShardingRule, error) {
	n := c.rank("GateIdx")
	if n < 0 {
		return nil, nil
	}
	e, err := c.einsum(map[string]string{"GateIdx": alphabet[:n]}, map[string]string{"NewGateIdx": alphabet[:n]})
	return c.freeing(e, err, "ExpertCount")
}

// exchangeRule: global_scatter and global_gather move whole rows within
// the expert axis' groups: rows split along another mesh dim stay split
// along it; the features are replicated (the impl moves whole rows).
func exchangeRule(c *Infer) (spmd.ShardingRule, error) {
	n := c.rank("X")
	if n < 1 {
		return nil, nil
	}
	rows := "r" + strings.Repeat("1", n-1)
	e, err := c.einsum(map[string]string{"X": rows}, map[string]string{"Out": rows})
	return c.freeing(e, err, "local_count", "global_count")
}

// groupedRule: grouped_matmul multiplies each row of X by its expert's
// weight W[e]: k is contracted, the experts select (a split of them
// gives each rank the rows of its experts, which the exchange sends it,
// not a partial sum).
func groupedRule(c *Infer) (spmd.ShardingRule, error) {
	if c.rank("X") != 2 || c.rank("W") != 3 {
		return nil, nil
	}
	e, err := c.einsum(map[string]string{"X": "mk", "W": "ekp"}, map[string]string{"Out": "mp"})
	if e != nil {
		e.Selects = "e"
	}
	return c.freeing(e, err, "ExpertCount")
}

// LocalIndexDoc is what LocalIndexRule does, for the rules' docs.
const LocalIndexDoc = "with its Index (Ids) positions into each rank's own rows split along mesh dim d (from assign_pos): " +
	"gather reads X's axis split along d as it is and gives Out's rows each rank's own (-1); scatter reads X and writes Out " +
	"with dim 0 split along d, Updates' rows each rank's own; the other dims shared; nothing partial"

// LocalIndexRule returns the rule of op, a gather or a scatter, whose
// index input holds positions into each rank's own rows, those rows
// split along mesh dim d: the rows it indexes must be split along d as
// they are (read whole, the rank's positions would pick other rows), and
// the rows it gathers are the rank's own, with no global order to split.
// It is nil for another op, or one its plain rule has none for.
func LocalIndexRule(op *ir.Op, lookup func(name string) *ir.Var, d int) (spmd.ShardingRule, error) {
	def := Lookup(op.Type)
	if def == nil || d < 0 || op.Type != "gather" && op.Type != "scatter" {
		return nil, nil
	}
	c := newInfer(def, op, lookup)
	if c == nil {
		return nil, nil
	}
	r := &localIndexRule{d: d}
	var e *spmd.Einsum
	var err error
	switch op.Type {
	case "gather":
		n, ni := c.rank("X"), c.rank("Index")
		if n < 1 || ni != 1 || len(op.Input("Axis")) > 0 || len(op.Input("X")) != 1 || len(op.Input("Index")) != 1 {
			return nil, nil
		}
		a, aerr := c.axisOf("axis", n)
		if aerr != nil {
			return nil, aerr
		}
		x := alphabet[:n]
		out := []byte(x)
		out[a] = '1'
		e, err = c.einsum(map[string]string{"X": x}, map[string]string{"Out": string(out)})
		r.ins = map[int]int{0: a}
	case "scatter":
		n := c.rank("X")
		if n < 1 || c.rank("Updates") != n || len(op.Input("X")) != 1 || len(op.Input("Ids")) != 1 {
			return nil, nil
		}
		x := alphabet[:n]
		e, err = c.einsum(map[string]string{"X": x, "Updates": "1" + x[1:]}, map[string]string{"Out": x})
		r.ins, r.outs = map[int]int{0: 0}, map[int]int{0: 0}
	}
	if e == nil || err != nil {
		return nil, err
	}
	e.NoPartial = true
	free := "Index"
	if op.Type == "scatter" {
		free = "Ids"
	}
	r.ShardingRule, err = c.freeing(e, nil, free)
	return r, err
}

// localIndexRule is an einsum with the indexed dims of some args (ins,
// outs: arg index -> dim) held to mesh dim d, both ways; no other dim
// of any arg is split along d.
type localIndexRule struct {
	spmd.ShardingRule
	d         int
	ins, outs map[int]int
}

func (r *localIndexRule) hold(s spmd.Sharding) spmd.Sharding {
	for _, ms := range [2][][]int{s.Inputs, s.Outputs} {
		for _, m := range ms {
			for j := range m {
				if m[j] == r.d {
					m[j] = -1
				}
			}
		}
	}
	for _, side := range []struct {
		ms   [][]int
		dims map[int]int
	}{{s.Inputs, r.ins}, {s.Outputs, r.outs}} {
		for k, dim := range side.dims {
			// An arg the caller did not give stays unconstrained.
			if k < len(side.ms) && dim < len(side.ms[k]) {
				side.ms[k][dim] = r.d
			}
		}
	}
	return s
}

func (r *localIndexRule) Forward(mesh []int, in [][]int) (spmd.Sharding, error) {
	s, err := r.ShardingRule.Forward(mesh, in)
	if err != nil {
		return s, err
	}
	return r.hold(s), nil
}

func (r *localIndexRule) Backward(mesh []int, out [][]int) (spmd.Sharding, error) {
	s, err := r.ShardingRule.Backward(mesh, out)
	if err != nil {
		return s, err
	}
	return r.hold(s), nil
}
