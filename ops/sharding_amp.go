package ops

import (
	"fmt"
	"slices"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/spmd"
)

const ampDoc = "each Out is its X dim for dim; the scale, the steps and the flag replicated; check_finite_and_unscale's FoundInfinite is partial (max) along the mesh dims any X is split on"

// ampRule is the rule of the loss-scaling ops (check_finite_and_unscale,
// update_loss_scaling): each X[i] and Out[i] share their dims (an
// elementwise scale or zeroing, per tensor: the Xs have shapes of their
// own, which one einsum slot cannot spell); the one-element args are
// replicated. The flag check_finite_and_unscale writes is whether any
// element of any X is not finite: each rank sees its shards', so it is
// partial (max) along their mesh dims.
type ampRule struct {
	x, out []int // the args of X and Out, pair by pair
	ins    []int // each input's rank, -1 for one that is no dense tensor
	outs   []int // each output's rank
	flag   int   // the output FoundInfinite, or -1
}

func ampRuleOf(c *Infer) (spmd.ShardingRule, error) {
	r := &ampRule{flag: -1}
	k := 0
	for _, s := range c.op.Inputs {
		for range s.Args {
			if s.Name == "X" {
				r.x = append(r.x, k)
			}
			k++
		}
	}
	r.ins = inputRanks(c)
	k = 0
	for _, s := range c.op.Outputs {
		for range s.Args {
			switch s.Name {
			case "Out":
				r.out = append(r.out, k)
			case "FoundInfinite":
				r.flag = k
			}
			rank := -1
			if k < len(c.outs) && c.outs[k] != nil && c.outs[k].Type.IsTensor() {
				rank = len(c.outs[k].Type.Shape)
			}
			r.outs = append(r.outs, rank)
			k++
		}
	}
	if len(r.x) != len(r.out) {
		return nil, fmt.Errorf("%d X for %d Out", len(r.x), len(r.out))
	}
	for i := range r.x {
		if r.ins[r.x[i]] != r.outs[r.out[i]] {
			return nil, fmt.Errorf("X %d has %d dims, Out %d has %d", i, r.ins[r.x[i]], i, r.outs[r.out[i]])
		}
	}
	return r, nil
}

func (r *ampRule) String() string { return "each X to its Out" }

func (r *ampRule) Forward(mesh []int, in [][]int) (spmd.Sharding, error) {
	if len(in) != len(r.ins) {
		return spmd.Sharding{}, fmt.Errorf("rule %s: %d input mappings for %d inputs", r, len(in), len(r.ins))
	}
	s := r.replicated(in, nil)
	var split []int // the mesh dims the Xs are split on
	for i, xi := range r.x {
		m := in[xi]
		if m == nil {
			continue
		}
		if err := checkMapping(m, r.ins[xi], mesh); err != nil {
			return spmd.Sharding{}, fmt.Errorf("rule %s: X %d: %v", r, i, err)
		}
		s.Inputs[xi], s.Outputs[r.out[i]] = slices.Clone(m), slices.Clone(m)
		for _, d := range m {
			if d >= 0 && !slices.Contains(split, d) {
				split = append(split, d)
			}
		}
	}
	if r.flag >= 0 {
		slices.Sort(split)
		for _, d := range split {
			s.Partial[r.flag] = append(s.Partial[r.flag], ir.Partial{Dim: d, Reduce: ir.ReduceMax})
		}
	}
	return s, nil
}

func (r *ampRule) Backward(mesh []int, out [][]int) (spmd.Sharding, error) {
	if len(out) != len(r.outs) {
		return spmd.Sharding{}, fmt.Errorf("rule %s: %d output mappings for %d outputs", r, len(out), len(r.outs))
	}
	s := r.replicated(nil, out)
	for i, oi := range r.out {
		m := out[oi]
		if m == nil {
			continue
		}
		if err := checkMapping(m, r.outs[oi], mesh); err != nil {
			return spmd.Sharding{}, fmt.Errorf("rule %s: Out %d: %v", r, i, err)
		}
		s.Inputs[r.x[i]], s.Outputs[oi] = slices.Clone(m), slices.Clone(m)
	}
	return s, nil
}

// replicated gives every dense arg all -1 (nil for an arg given nil).
func (r *ampRule) replicated(in, out [][]int) spmd.Sharding {
	s := spmd.Sharding{Inputs: make([][]int, len(r.ins)), Outputs: make([][]int, len(r.outs)), Partial: make([][]ir.Partial, len(r.outs))}
	for i, n := range r.ins {
		if n >= 0 && (in == nil || in[i] != nil) {
			s.Inputs[i] = replicatedLike(make([]int, n))
		}
	}
	for j, n := range r.outs {
		if n >= 0 && (out == nil || out[j] != nil) {
			s.Outputs[j] = replicatedLike(make([]int, n))
		}
	}
	return s
}

// checkMapping checks m against a tensor of n dims on mesh: its length,
// and each mesh dim one of mesh's, used once.
func checkMapping(m []int, n int, mesh []int) error {
	if len(m) != n {
		return fmt.Errorf("mapping %s of %d dims for a %d-dim tensor", ir.FormatInts(m), len(m), n)
	}
	for i, d := range m {
		if d < -1 || d >= len(mesh) {
			return fmt.Errorf("mapping %s uses mesh dim %d of a %d-dim mesh", ir.FormatInts(m), d, len(mesh))
		}
		if d >= 0 && slices.Index(m, d) != i {
			return fmt.Errorf("mapping %s uses mesh dim %d twice", ir.FormatInts(m), d)
		}
	}
	return nil
}
