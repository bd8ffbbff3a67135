package models

import (
	"fmt"
	"slices"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/passes"
)

// seqMapping is the mapping of an activation [B,S,...] between the
// tensor-parallel regions under sequence parallelism: the batch on dp,
// the sequence on mp, the rest replicated.
func (a *annotator) seqMapping(n int) []int {
	m := a.batchMapping(n)
	if n > 1 {
		m[1] = a.mpAxis
	}
	return m
}

// gathered is m with its sequence dim (dim 1) replicated: what a
// tensor-parallel region reads of a sequence-split activation.
func gathered(m []int) []int {
	g := slices.Clone(m)
	if len(g) > 1 {
		g[1] = -1
	}
	return g
}

// trainForwardAnnotated is train for a strategy that annotates the
// forward ops only: the backward and the optimizer are appended first,
// and left for completion.
func trainForwardAnnotated(m *ir.Module, strategy string, mesh *ir.ProcessMesh, optimizer string) (*ir.Module, error) {
	if optimizer == "" {
		optimizer = "sgd"
	}
	if _, err := passes.AppendBackward(m, "loss"); err != nil {
		return nil, fmt.Errorf("append-backward: %w", err)
	}
	if _, err := passes.AppendOptimizer(m, optimizer, 0.01); err != nil {
		return nil, fmt.Errorf("append-optimizer: %w", err)
	}
	if err := AnnotateGPT(m, strategy, mesh); err != nil {
		return nil, err
	}
	if err := ir.Verify(m); err != nil {
		return nil, err
	}
	return m, nil
}

// annotateSeq is the sequence-parallel strategies ("mp,sp",
// "dp,mp,sp"): the mp seeds, pos_ids fed split on the sequence, and the
// dists of the ops at each tensor-parallel region's edge (seqSeeds),
// completed; only the forward ops and the vars they touch keep their
// dists, for a later complete to derive the backward, whose reshards
// mirror the forward's. Data and param seeds alone do not make it:
// completed from them, the sequence split spreads into every region,
// with 99 reshards to insert, a rule error, and a program check refuses
// (TinyGPT, hidden 16: l0_q_b diverges). The forward reshards
// completion lists must be the edges' own (the all-gathers before the
// column-parallel matmuls and the head, the reduce-scatters after the
// row-parallel ones): any other is refused.
func (a *annotator) annotateSeq() error {
	if v := a.g.Var("causal_mask"); v != nil && v.Type.IsTensor() {
		a.set("causal_mask", replicated(v.Type.Rank()))
	}
	if v := a.g.Var("pos_ids"); v != nil && v.Type.IsTensor() {
		a.set("pos_ids", a.seqMapping(v.Type.Rank()))
	}
	a.dataVars()
	a.moeSeeds()
	a.gptParams()
	a.seedParams()
	a.edges = a.seqSeeds()
	a.forwardOnly = true
	return a.complete()
}

// seqSeeds seeds, in program order, the forward ops at the edges of the
// tensor-parallel regions and between them, and returns, by op id, the
// args each reads in another mapping than its var's (a reshard each):
//
//   - lookup_table_v2: Out as its Ids, then [-1]; wte vocab-parallel
//     with its own impl (which all-reduces, and refuses a partial Out),
//     wpe by the rule-based spmd:0.
//   - elementwise_add of a row-parallel matmul's partial Out, or of the
//     word embedding's whole one: X reduce-scattered, or sliced, onto
//     the sequence shards; Out split on the sequence.
//   - layer_norm: X, Y and the statistics (declared [B, S]:
//     GPTConfig.StatDims) split on the sequence.
//   - matmul_v2 of a column-parallel weight: X gathered on the sequence,
//     Out split on its columns; of a row-parallel one: X split on its
//     last dim, Out partial over mp (matmul_v2:1 emits no all-reduce);
//     the head (lm_w, replicated): X gathered, so that every rank of an
//     mp group computes the same logits and lm_w's grad needs no sum.
//
// The ops that compute on sequence-split values use spmd:0, under which
// a layer norm's Scale@GRAD or a bias's grad is partial over the
// sequence shards and a reshard sums it (Paddle's impls would take it
// for whole); so do the column-parallel matmuls, whose X@GRAD then stays
// partial, to be reduce-scattered rather than all-reduced.
func (a *annotator) seqSeeds() map[int64][]string {
	mp := a.mpAxis
	g := a.g
	seq := a.seqMapping(3)
	gat := gathered(seq)
	edges := map[int64][]string{}
	producer := map[string]*ir.Op{}
	one := func(op *ir.Op, slot string, out bool) string {
		args := op.Input(slot)
		if out {
			args = op.Output(slot)
		}
		if len(args) != 1 {
			a.fail("%s: want one %s", op, slot)
			return ""
		}
		return args[0]
	}
	seed := func(op *ir.Op, typ string, index int, ins, outs []ir.ArgDist) {
		for _, o := range outs {
			if d := a.dists[o.Name]; d == nil {
				a.set(o.Name, o.DimsMapping)
			}
		}
		a.ops[op.ID] = &ir.OpDist{Mesh: a.mesh.Name, ImplType: typ, ImplIndex: index, Inputs: ins, Outputs: outs}
	}
	arg := func(name string, m []int) ir.ArgDist { return ir.ArgDist{Name: name, DimsMapping: slices.Clone(m)} }
	mapping := func(op *ir.Op, name string) []int {
		if d := a.dists[name]; d != nil {
			return d.DimsMapping
		}
		a.fail("%s: %s has no seed before it", op, name)
		return nil
	}
	for _, op := range a.forwardOps() {
		for out := range op.OutputNames {
			producer[out] = op
		}
		switch op.Type {
		case "lookup_table_v2":
			ids, w, out := one(op, "Ids", false), one(op, "W", false), one(op, "Out", true)
			if ids == "" || w == "" || out == "" {
				continue
			}
			im := mapping(op, ids)
			om := append(slices.Clone(im), -1)
			typ := "spmd"
			if w == gptWordEmbedding {
				typ = "lookup_table_v2"
			}
			seed(op, typ, 0, []ir.ArgDist{arg(ids, im), arg(w, mapping(op, w))}, []ir.ArgDist{arg(out, om)})
		case "elementwise_add":
			x, y, out := one(op, "X", false), one(op, "Y", false), one(op, "Out", true)
			p := producer[x]
			rowOut := p != nil && p.Type == "matmul_v2" && hasSuffix(p.Input("Y")[0], gptRow)
			embOut := p != nil && p.Type == "lookup_table_v2" && p.Input("W")[0] == gptWordEmbedding
			if !rowOut && !embOut {
				continue // a residual add, a bias add in a region, the attention's
			}
			yv := g.Var(y)
			if yv == nil || yv.Type.Rank() > len(seq) {
				a.fail("%s: Y %s must not have more dims than X", op, y)
				continue
			}
			if a.dists[y] == nil {
				a.set(y, slices.Clone(seq[len(seq)-yv.Type.Rank():]))
			}
			seed(op, "spmd", 0, []ir.ArgDist{arg(x, seq), arg(y, mapping(op, y))}, []ir.ArgDist{arg(out, seq)})
			edges[op.ID] = append(edges[op.ID], x)
		case "layer_norm":
			x, y := one(op, "X", false), one(op, "Y", true)
			ins := []ir.ArgDist{arg(x, seq), arg(one(op, "Scale", false), []int{-1}), arg(one(op, "Bias", false), []int{-1})}
			outs := []ir.ArgDist{arg(y, seq)}
			for _, s := range []string{"Mean", "Variance"} {
				st := one(op, s, true)
				if v := g.Var(st); v == nil || v.Type.Rank() != 2 {
					a.fail("%s: %s %s must be declared [B, S] (GPTConfig.StatDims): a flattened [B*S] cannot be split on the sequence", op, s, st)
					continue
				}
				outs = append(outs, arg(st, seq[:2]))
			}
			seed(op, "spmd", 0, ins, outs)
		case "matmul_v2":
			x, w, out := one(op, "X", false), one(op, "Y", false), one(op, "Out", true)
			if !a.isParam(w) {
				continue // the attention's: tensor-parallel
			}
			switch {
			case hasSuffix(w, gptColumn):
				seed(op, "spmd", 0, []ir.ArgDist{arg(x, gat), arg(w, []int{-1, mp})}, []ir.ArgDist{arg(out, []int{a.dpAxis, -1, mp})})
				edges[op.ID] = append(edges[op.ID], x)
			case hasSuffix(w, gptRow):
				a.set(out, []int{a.dpAxis, -1, -1}, ir.Partial{Dim: mp, Reduce: ir.ReduceSum})
				seed(op, "matmul_v2", 1, []ir.ArgDist{arg(x, []int{a.dpAxis, -1, mp}), arg(w, []int{mp, -1})}, []ir.ArgDist{arg(out, gat)})
			default:
				seed(op, "default", 0, []ir.ArgDist{arg(x, gat), arg(w, []int{-1, -1})}, []ir.ArgDist{arg(out, gat)})
				edges[op.ID] = append(edges[op.ID], x)
			}
		}
	}
	return edges
}
