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

// require records that op reads arg as mapping rather than as its
// var's dist: a reshard converts it there.
func (a *annotator) require(op *ir.Op, arg string, mapping []int) {
	if a.reads[op.ID] == nil {
		a.reads[op.ID] = map[string][]int{}
	}
	a.reads[op.ID][arg] = mapping
}

var spmdImpl = impl{"spmd", 0}

// seqOp annotates, under sequence parallelism, the ops at the edges of
// the tensor-parallel regions and those between them (the embeddings,
// the layer norms, the adds after a row-parallel matmul, the head); it
// reports false for an op the tensor-parallel rules annotate as they are
// (attention and MLP internals, the residual adds of two sequence-split
// values, the loss). Only forward ops get dists: completion derives the
// backward, whose reshards mirror the forward's.
//
// The ops that compute on sequence-split values use the rule-based impl
// spmd:0, under which a layer norm's Scale@GRAD or a bias's grad is
// partial over the sequence shards and a reshard sums it (Paddle's impls
// would take it for whole); so do the column-parallel matmuls, whose
// X@GRAD then stays partial, to be reduce-scattered rather than
// all-reduced.
func (a *annotator) seqOp(op *ir.Op) bool {
	mp := a.mpAxis
	switch op.Type {
	case "lookup_table_v2":
		ids, w, out := a.in(op, "Ids"), a.in(op, "W"), a.out(op, "Out")
		im := a.get(op, ids)
		a.set(out, append(slices.Clone(im), -1))
		if w == gptWordEmbedding {
			// Vocab-parallel, all-reduced by its impl (which refuses a
			// partial Out) and sliced onto the sequence shards by the add.
			a.set(w, []int{mp, -1})
			a.impls[op.ID] = impl{"lookup_table_v2", 0}
		} else {
			a.set(w, []int{-1, -1})
			a.impls[op.ID] = spmdImpl
		}
	case "elementwise_add":
		x, y, out := a.in(op, "X"), a.in(op, "Y"), a.out(op, "Out")
		xd := a.dists[x]
		if xd == nil || len(xd.DimsMapping) != 3 ||
			!xd.IsPartial() && !slices.Equal(xd.DimsMapping, a.batchMapping(3)) {
			return false // a residual add, a bias add or the attention's
		}
		// A partial sum (a row-parallel matmul's Out) or a whole
		// activation (the word embedding) plus a sequence-split value or a
		// bias: X is reduce-scattered, or sliced, onto the sequence shards.
		sm := a.seqMapping(3)
		a.require(op, x, sm)
		if _, ok := a.dists[y]; !ok {
			yv := a.g.Var(y)
			if yv == nil || yv.Type.Rank() > len(sm) {
				a.fail("%s: Y %s must not have more dims than X", op, y)
				return true
			}
			a.set(y, slices.Clone(sm[len(sm)-yv.Type.Rank():]))
		}
		a.set(out, sm)
		a.impls[op.ID] = spmdImpl
	case "layer_norm":
		x := a.in(op, "X")
		xm := a.get(op, x)
		if len(xm) != 3 || !slices.Equal(xm, a.seqMapping(3)) {
			a.fail("%s: X %s must be split on its batch and sequence dims only, %s, not %s", op, x,
				ir.FormatInts(a.seqMapping(3)), ir.FormatInts(xm))
			return true
		}
		a.set(a.out(op, "Y"), slices.Clone(xm))
		a.set(a.in(op, "Scale"), []int{-1})
		a.set(a.in(op, "Bias"), []int{-1})
		for _, s := range []string{"Mean", "Variance"} {
			st := a.out(op, s)
			if v := a.g.Var(st); v == nil || v.Type.Rank() != 2 {
				a.fail("%s: %s %s must be declared [B, S] (GPTConfig.StatDims): a flattened [B*S] cannot be split on the sequence", op, s, st)
				continue
			}
			a.set(st, slices.Clone(xm[:2]))
		}
		a.impls[op.ID] = spmdImpl
	case "matmul_v2":
		x, y, out := a.in(op, "X"), a.in(op, "Y"), a.out(op, "Out")
		yv := a.g.Var(y)
		if yv == nil || yv.Kind != ir.KindParam {
			return false // the attention's: tensor-parallel
		}
		xm := a.get(op, x)
		if len(xm) != 3 {
			a.fail("%s: X %s must be [B, S, H]", op, x)
			return true
		}
		switch {
		case hasSuffix(y, gptColumn):
			// All-gathered on the sequence, then column-parallel.
			a.require(op, x, gathered(xm))
			a.set(y, []int{-1, mp})
			a.set(out, []int{xm[0], -1, mp})
			a.impls[op.ID] = spmdImpl
		case hasSuffix(y, gptRow):
			if xm[2] != mp || xm[1] != -1 {
				a.fail("%s: row-parallel %s needs X %s split along mp on its last dim only", op, y, x)
				return true
			}
			// Its Out stays partial: row_parallel emits no all-reduce.
			a.set(y, []int{mp, -1})
			a.set(out, []int{xm[0], -1, -1}, ir.Partial{Dim: mp, Reduce: ir.ReduceSum})
			a.impls[op.ID] = impl{"matmul_v2", 1}
		default:
			// The head, replicated as under mp: it reads the sequence
			// gathered, and every rank of an mp group computes the same
			// logits and loss, so that lm_w's grad needs no sum over mp.
			if xm[2] != -1 {
				a.fail("%s: replicated %s needs X %s replicated along its last dim", op, y, x)
				return true
			}
			g := gathered(xm)
			a.require(op, x, g)
			a.set(y, []int{-1, -1})
			a.set(out, g)
			a.impls[op.ID] = impl{"default", 0}
		}
	default:
		return false
	}
	return true
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
