package models

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/ops"
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

// annotateSeq is the sequence-parallel strategies ("mp,sp",
// "dp,mp,sp"), still hand-written: op by op, forward only. Seeds alone
// do not make them: completed from the data and params, the activations
// between the tensor-parallel regions come out split on the sequence
// everywhere, with 99 reshards to insert, a rule error, and a program
// check refuses (on TinyGPT, hidden 16: l0_q_b diverges). What makes
// Megatron's sequence parallelism is where the sequence is gathered and
// reduce-scattered, the dists of every op at a region's edge, which is
// this switch.
func (a *annotator) annotateSeq() error {
	mp := a.mpAxis
	a.set("causal_mask", []int{-1, -1})
	// The positions are fed split on the sequence too.
	if v := a.g.Var("pos_ids"); v != nil && v.Type.IsTensor() {
		a.set("pos_ids", a.seqMapping(v.Type.Rank()))
	}
	a.forwardOnly = true
	a.dataVars()
	ew := a.elementwiseImpl()
	for _, op := range a.forwardOps() {
		if a.seqOp(op) {
			continue
		}
		switch op.Type {
		case "lookup_table_v2":
			ids, w, out := a.in(op, "Ids"), a.in(op, "W"), a.out(op, "Out")
			im := a.get(op, ids)
			if mp >= 0 && w == gptWordEmbedding {
				a.set(w, []int{mp, -1})
				a.impls[op.ID] = impl{"lookup_table_v2", 0}
			} else {
				a.set(w, []int{-1, -1})
				a.impls[op.ID] = impl{"default", 0}
			}
			a.set(out, append(slices.Clone(im), -1))
		case "elementwise_add", "elementwise_mul":
			x, y, out := a.in(op, "X"), a.in(op, "Y"), a.out(op, "Out")
			xm := a.get(op, x)
			if _, ok := a.dists[y]; !ok {
				yv := a.g.Var(y)
				if yv == nil || yv.Type.Rank() > len(xm) {
					a.fail("%s: Y %s must not have more dims than X", op, y)
					continue
				}
				a.set(y, slices.Clone(xm[len(xm)-yv.Type.Rank():]))
			}
			a.set(out, slices.Clone(xm))
			a.impls[op.ID] = ew
		case "scale", "gelu":
			a.set(a.out(op, "Out"), slices.Clone(a.get(op, a.in(op, "X"))))
			a.impls[op.ID] = ew
		case "softmax":
			a.set(a.out(op, "Out"), slices.Clone(a.get(op, a.in(op, "X"))))
			a.impls[op.ID] = impl{"softmax", 0}
		case "matmul_v2":
			a.gptMatmul(op)
		case "reshape2":
			x, out := a.in(op, "X"), a.out(op, "Out")
			xm := a.get(op, x)
			xv, ov := a.g.Var(x), a.g.Var(out)
			if xv == nil || ov == nil || len(xm) == 0 {
				a.fail("%s: X or Out undeclared", op)
				continue
			}
			switch ov.Type.Rank() - xv.Type.Rank() {
			case 1:
				a.set(out, append(slices.Clone(xm), -1))
				a.impls[op.ID] = impl{"reshape2", 0}
			case -1:
				if xm[len(xm)-1] != -1 {
					a.fail("%s: X %s's last dim (removed) must be replicated", op, x)
				}
				a.set(out, slices.Clone(xm[:len(xm)-1]))
				a.impls[op.ID] = impl{"reshape2", 1}
			case 0:
				a.set(out, slices.Clone(xm))
				a.impls[op.ID] = impl{"reshape2", 2}
			default:
				a.fail("%s: X and Out ranks differ by more than one", op)
				continue
			}
			a.xshape(op, xm)
		case "transpose2":
			x, out := a.in(op, "X"), a.out(op, "Out")
			xm := a.get(op, x)
			perm, _ := ir.AsInts(ops.AttrValue(op, "axis"))
			if len(perm) != len(xm) {
				a.fail("%s: attr axis %v does not fit X %s", op, perm, x)
				continue
			}
			om := make([]int, len(perm))
			for i, p := range perm {
				om[i] = xm[p]
			}
			a.set(out, om)
			a.xshape(op, xm)
			a.impls[op.ID] = impl{"transpose2", 0}
		case "layer_norm":
			x := a.in(op, "X")
			xm := a.get(op, x)
			if len(xm) == 0 || slices.ContainsFunc(xm[1:], func(d int) bool { return d >= 0 }) {
				a.fail("%s: X %s must be split on its batch dim only", op, x)
				continue
			}
			a.set(a.out(op, "Y"), slices.Clone(xm))
			a.set(a.in(op, "Scale"), []int{-1})
			a.set(a.in(op, "Bias"), []int{-1})
			a.set(a.out(op, "Mean"), []int{xm[0]})
			a.set(a.out(op, "Variance"), []int{xm[0]})
			a.impls[op.ID] = impl{"default", 0}
		case "softmax_with_cross_entropy":
			xm := a.get(op, a.in(op, "Logits"))
			a.get(op, a.in(op, "Label"))
			a.set(a.out(op, "Softmax"), slices.Clone(xm))
			a.set(a.out(op, "Loss"), slices.Clone(xm))
			a.impls[op.ID] = impl{"default", 0}
		case "mean":
			a.meanLoss(op, a.out(op, "Out"), a.get(op, a.in(op, "X")))
		default:
			a.fail("%s: the sequence-parallel strategies do not know this op type", op)
		}
	}
	return a.finish()
}

// xshape maps a reshape2/transpose2 XShape output: [-1] followed by X's.
func (a *annotator) xshape(op *ir.Op, xm []int) {
	if xs := op.Output("XShape"); len(xs) == 1 {
		a.set(xs[0], append([]int{-1}, xm...))
	}
}

// gptMatmul maps a GPT matmul_v2: with a 2-D weight Y, replicated
// (default:0), column-parallel (matmul_v2:0) or row-parallel
// (matmul_v2:1) by the weight's name under mp; between two activations
// (the attention), batch dims as X's and matrix dims replicated
// (matmul_v2:2).
func (a *annotator) gptMatmul(op *ir.Op) {
	x, y, out := a.in(op, "X"), a.in(op, "Y"), a.out(op, "Out")
	xm := a.get(op, x)
	if len(xm) < 2 {
		a.fail("%s: X %s must have two dims or more", op, x)
		return
	}
	lead, last := xm[:len(xm)-1], xm[len(xm)-1]
	yv := a.g.Var(y)
	if yv == nil {
		a.fail("%s: Y %s undeclared", op, y)
		return
	}
	mp := a.mpAxis
	if yv.Kind != ir.KindParam {
		ym := a.get(op, y)
		if len(ym) != len(xm) || !slices.Equal(ym[:len(ym)-2], xm[:len(xm)-2]) {
			a.fail("%s: X %s and Y %s must have the same batch dims", op, x, y)
			return
		}
		if slices.ContainsFunc(append(slices.Clone(xm[len(xm)-2:]), ym[len(ym)-2:]...), func(d int) bool { return d >= 0 }) {
			a.fail("%s: the matrix dims of X %s and Y %s must be replicated", op, x, y)
			return
		}
		a.set(out, append(slices.Clone(xm[:len(xm)-2]), -1, -1))
		a.impls[op.ID] = impl{"matmul_v2", 2}
		return
	}
	switch {
	case mp >= 0 && hasSuffix(y, gptColumn):
		if last != -1 {
			a.fail("%s: column-parallel %s needs X %s replicated along its last dim", op, y, x)
		}
		a.set(y, []int{-1, mp})
		a.set(out, append(slices.Clone(lead), mp))
		a.impls[op.ID] = impl{"matmul_v2", 0}
	case mp >= 0 && hasSuffix(y, gptRow):
		if last != mp {
			a.fail("%s: row-parallel %s needs X %s split along mp on its last dim", op, y, x)
		}
		a.set(y, []int{mp, -1})
		a.set(out, append(slices.Clone(lead), -1))
		a.impls[op.ID] = impl{"matmul_v2", 1}
	default:
		if last != -1 {
			a.fail("%s: replicated %s needs X %s replicated along its last dim", op, y, x)
		}
		a.set(y, []int{-1, -1})
		a.set(out, append(slices.Clone(lead), -1))
		a.impls[op.ID] = impl{"default", 0}
	}
}

// get returns the mapping of op's input name, set by an earlier op.
func (a *annotator) get(op *ir.Op, name string) []int {
	d, ok := a.dists[name]
	if !ok {
		a.fail("%s: input %s has no dist yet", op, name)
		return nil
	}
	return d.DimsMapping
}

// in and out return the one arg of an input or output slot ("" and an
// error when there is not exactly one).
func (a *annotator) in(op *ir.Op, slot string) string {
	if s := op.Input(slot); len(s) == 1 {
		return s[0]
	}
	a.fail("%s: want one %s input", op, slot)
	return ""
}

func (a *annotator) out(op *ir.Op, slot string) string {
	if s := op.Output(slot); len(s) == 1 {
		return s[0]
	}
	a.fail("%s: want one %s output", op, slot)
	return ""
}

// elementwiseImpl is the impl of elementwise ops: default:0 without mp,
// elementwise:0 with it.
func (a *annotator) elementwiseImpl() impl {
	if a.mpAxis >= 0 {
		return impl{"elementwise", 0}
	}
	return impl{"default", 0}
}

// meanLoss maps the scalar loss out of a mean over X mapped xm: partial
// [dp:avg] when the batch is split; the op uses default:0.
func (a *annotator) meanLoss(op *ir.Op, out string, xm []int) {
	var partial []ir.Partial
	if len(xm) > 0 && xm[0] >= 0 {
		partial = []ir.Partial{{Dim: xm[0], Reduce: ir.ReduceAvg}}
	}
	a.set(out, []int{}, partial...)
	a.impls[op.ID] = impl{"default", 0}
}

// finish gives grad ops their forward op's impl and other unannotated ops
// default:0, grad vars (v@GRAD and its parts v@GRAD@RENAME@k) v's mapping
// without partial, checks even splits and startup vars, and applies the
// dists when nothing failed (the module is unchanged otherwise).
func (a *annotator) finish() error {
	g, dists, impls := a.g, a.dists, a.impls
	byName := map[string]*ir.ProcessMesh{}
	for _, pm := range append(slices.Clone(a.m.Meshes), a.meshes...) {
		byName[pm.Name] = pm
	}
	for _, op := range g.Ops {
		if _, ok := impls[op.ID]; ok || a.forwardOnly && !isForward(op) {
			continue
		}
		if op.Fwd != 0 {
			im, ok := impls[op.Fwd]
			if !ok {
				a.fail("%s: its forward op %d has no impl", op, op.Fwd)
			}
			impls[op.ID] = im
			continue
		}
		impls[op.ID] = impl{"default", 0}
	}
	fwdArgs := map[string]bool{}
	if a.forwardOnly {
		for _, op := range a.forwardOps() {
			for name := range op.InputNames {
				fwdArgs[name] = true
			}
			for name := range op.OutputNames {
				fwdArgs[name] = true
			}
		}
	}
	for _, v := range g.Vars() {
		if _, ok := dists[v.Name()]; ok || !v.Type.IsTensor() || a.forwardOnly && !fwdArgs[v.Name()] {
			continue
		}
		if i := strings.Index(v.Name(), "@GRAD"); i > 0 {
			if d, ok := dists[v.Name()[:i]]; ok {
				a.setOn(byName[d.Mesh], v.Name(), slices.Clone(d.DimsMapping))
				continue
			}
		}
		a.fail("var %s: strategy %s does not know how to distribute it", v.Name(), a.strategy)
	}
	// Even splits.
	for _, v := range g.Vars() {
		d, ok := dists[v.Name()]
		if !ok {
			continue
		}
		pm := byName[d.Mesh]
		for i, ax := range d.DimsMapping {
			if ax >= 0 && i < v.Type.Rank() && v.Type.Shape[i] >= 0 && v.Type.Shape[i]%int64(pm.Shape[ax]) != 0 {
				a.fail("var %s: dim %d of size %d does not split evenly over mesh dim %s of size %d",
					v.Name(), i, v.Type.Shape[i], pm.DimNames[ax], pm.Shape[ax])
			}
		}
	}
	// Op meshes: set, or the forward op's, or the first output's (the
	// loss grad, grad sums, optimizer ops), or the tokens'. An arg of
	// another mesh must be replicated: nothing reshards between meshes.
	meshOf := func(op *ir.Op) string {
		if pm, ok := a.opMesh[op.ID]; ok {
			return pm
		}
		if op.Fwd != 0 {
			if pm, ok := a.opMesh[op.Fwd]; ok {
				return pm
			}
		}
		for _, slots := range [2][]ir.Slot{op.Outputs, op.Inputs} {
			for _, s := range slots {
				for _, arg := range s.Args {
					if d := dists[arg]; d != nil {
						return d.Mesh
					}
				}
			}
		}
		return a.mesh.Name
	}
	for _, op := range g.Ops {
		a.opMesh[op.ID] = meshOf(op)
	}
	for _, op := range g.Ops {
		pm := a.opMesh[op.ID]
		for _, slots := range [2][]ir.Slot{op.Inputs, op.Outputs} {
			for _, s := range slots {
				for _, arg := range s.Args {
					if d := dists[arg]; d != nil && d.Mesh != pm && slices.ContainsFunc(d.DimsMapping, func(x int) bool { return x >= 0 }) {
						a.fail("%s on mesh %s: %s lives on mesh %s with dims_mapping %v; only replicated args cross meshes",
							op, pm, arg, d.Mesh, d.DimsMapping)
					}
				}
			}
		}
	}
	m := a.m
	if m.Startup != nil {
		for _, b := range m.Startup.Blocks {
			for _, v := range b.Vars() {
				if _, ok := dists[v.Name()]; !ok && v.Type.IsTensor() && !(a.forwardOnly && g.Var(v.Name()) != nil) {
					a.fail("startup var %s: main's block 0 has no var of that name", v.Name())
				}
			}
		}
	}
	if err := errors.Join(a.errs...); err != nil {
		return fmt.Errorf("annotate %s: %w", a.strategy, err)
	}

	// Apply.
	m.Meshes = append(m.Meshes, a.meshes...)
	for _, v := range g.Vars() {
		if d, ok := dists[v.Name()]; ok {
			v.Dist = d.Clone()
		}
	}
	if m.Startup != nil {
		for _, b := range m.Startup.Blocks {
			for _, v := range b.Vars() {
				if d, ok := dists[v.Name()]; ok {
					v.Dist = &ir.TensorDist{Mesh: d.Mesh, DimsMapping: slices.Clone(d.DimsMapping)}
				}
			}
		}
	}
	for _, op := range g.Ops {
		im, ok := impls[op.ID]
		if !ok {
			continue // forwardOnly: completion's
		}
		reads := a.reads[op.ID]
		op.Dist = &ir.OpDist{
			Mesh: a.opMesh[op.ID], ImplType: im.typ, ImplIndex: im.index,
			Inputs: argDists(op.Inputs, dists, reads), Outputs: argDists(op.Outputs, dists, nil),
		}
	}
	return nil
}

// argDists lists the mappings of the args of slots: reads' where it
// has one, else the var's dist's.
func argDists(slots []ir.Slot, dists map[string]*ir.TensorDist, reads map[string][]int) []ir.ArgDist {
	var out []ir.ArgDist
	for _, s := range slots {
		for _, a := range s.Args {
			if m, ok := reads[a]; ok {
				out = append(out, ir.ArgDist{Name: a, DimsMapping: slices.Clone(m)})
			} else if d := dists[a]; d != nil {
				out = append(out, ir.ArgDist{Name: a, DimsMapping: slices.Clone(d.DimsMapping)})
			}
		}
	}
	return out
}
