package lower

import (
	"fmt"
	"strings"

	"github.com/distpass/distpass/ir"
)

// EmbeddingVocabParallel is impl 0 "row_parallel" of lookup_table_v2 and
// lookup_table: the table W is split on its vocabulary rows over a mesh
// axis. Forward looks ids up in the local shard with c_embedding (rows of
// other shards give zeros) and sums over the axis; backward is
// c_embedding_grad on the local shard, then the data-parallel sync.
func EmbeddingVocabParallel() *Impl {
	return &Impl{
		Name:       "row_parallel",
		Doc:        "vocab-parallel: c_embedding of the local rows, then c_allreduce_sum",
		Compatible: embeddingCompatible,
		Reduces:    true,
		Forward:    embeddingForward,
		Backward:   embeddingBackward,
	}
}

// embeddingCompatible holds the op to its sharding rule (ruleFit: Ids'
// first dim and the vocabulary on different mesh dims, Out's rows split
// as Ids', Out partial along the vocabulary's mesh dim or, the impl's
// sum making it so, whole) and to the impl's own constraint
// (embeddingVocabFits).
func embeddingCompatible(ctx *Lowering, op *ir.Op) error {
	if err := embeddingVocabFits(ctx, op); err != nil {
		return err
	}
	return ruleFit(ctx, op, ruleOpts{impl: "row_parallel", reduces: true, carries: true, spell: true})
}

// embeddingVocabFits: the vocabulary (W's dim 0) split along a mesh dim,
// W's embedding dim and Ids' dims after the first replicated (Paddle's
// DistributedEmbeddingImpl), Out whole (c_embedding's sum always runs),
// and no lookup_table whose Ids end in a dim of 1 (c_embedding keeps it).
func embeddingVocabFits(ctx *Lowering, op *ir.Op) error {
	ids, im, err := argMapping(ctx, op, "Ids", true)
	if err != nil {
		return err
	}
	w, wm, err := argMapping(ctx, op, "W", true)
	if err != nil {
		return err
	}
	out, om, err := argMapping(ctx, op, "Out", false)
	if err != nil {
		return err
	}
	fail := func(need, slot, name string, m []int) error {
		return fmt.Errorf("%s: row_parallel needs %s; %s %s has dims_mapping %s", op, need, slot, name, ir.FormatInts(m))
	}
	w2, ok := at(wm, -2)
	if !ok {
		return fail("a W of rank 2 or more", "W", w, wm)
	}
	if w2 == -1 {
		return fail("W's vocabulary dim (second to last) sharded", "W", w, wm)
	}
	if w1, _ := at(wm, -1); w1 != -1 {
		return fail("W's last dim replicated", "W", w, wm)
	}
	if len(im) > 1 && !allReplicated(im[1:]) {
		return fail("Ids' dims after the first replicated", "Ids", ids, im)
	}
	// lookup_table's Ids end in a dim of 1 that Out's embedding dim takes
	// the place of; c_embedding keeps every dim of Ids (Out = Ids + [D]),
	// so such an op would need a reshape this impl does not emit.
	if strings.HasPrefix(op.Type, "lookup_table") && !strings.HasPrefix(op.Type, "lookup_table_v2") && len(om) == len(im) {
		return fmt.Errorf("%s: row_parallel does not lower lookup_table whose Ids %s end in a dim of 1 (Out %s has Ids' rank): c_embedding would give Out an extra dim; use lookup_table_v2",
			op, ids, out)
	}
	if v := ctx.Var(out); v != nil && v.Dist.IsPartial() {
		return fmt.Errorf("%s: row_parallel sums Out %s over the vocabulary's mesh dim into a whole value; its dist says %s", op, out, v.Dist.String())
	}
	return nil
}

// vocabShard returns the mesh axis W's rows are split on and the first
// vocabulary row of this rank's shard: its coordinate on the axis times
// the local rows of W.
func vocabShard(ctx *Lowering, op *ir.Op) (axis int, start int64, err error) {
	w, wm, err := argMapping(ctx, op, "W", true)
	if err != nil {
		return 0, 0, err
	}
	if len(wm) == 0 || wm[0] < 0 {
		return 0, 0, fmt.Errorf("%s: row_parallel needs W's rows sharded; W %s has dims_mapping %s", op, w, ir.FormatInts(wm))
	}
	wv, err := lookupVar(ctx, op, "W", w)
	if err != nil {
		return 0, 0, err
	}
	if len(wv.Type.Shape) == 0 || wv.Type.Shape[0] < 0 {
		return 0, 0, fmt.Errorf("%s: W %s has type %s: row_parallel needs its local rows", op, w, wv.Type)
	}
	start, err = ctx.ShardStart(wm[0], wv.Type.Shape[0])
	if err != nil {
		return 0, 0, fmt.Errorf("%s: %v", op, err)
	}
	return wm[0], start, nil
}

// embeddingForward: c_embedding(Ids, W) -> tmp {start_index}, then
// c_allreduce_sum(tmp) -> Out over the vocabulary axis.
func embeddingForward(ctx *Lowering, op *ir.Op) error {
	axis, start, err := vocabShard(ctx, op)
	if err != nil {
		return err
	}
	id, _, err := group(ctx, op, axis)
	if err != nil {
		return err
	}
	ids, _ := slotArg(op, "Ids", true)
	w, _ := slotArg(op, "W", true)
	out, _ := slotArg(op, "Out", false)
	ov, err := lookupVar(ctx, op, "Out", out)
	if err != nil {
		return err
	}
	wv, _ := lookupVar(ctx, op, "W", w)
	tmp := ctx.NewVar("c_embedding.tmp", ov, tempDist(ctx, out))
	tmp.Type.DType = wv.Type.DType
	dim := ctx.Mesh().DimNames[axis]
	// The serial op becomes the c_embedding, keeping its id: the grad op
	// finds its impl through it.
	renameArg(ctx, op, "Out", false, out, tmp.Name())
	op.Type = "c_embedding"
	op.Inputs = ir.Slots("Ids", ids, "W", w)
	op.Attrs = nil
	op.Attrs.Set("start_index", ir.Int(start))
	ctx.SetOrigin(op, fmt.Sprintf("vocab-parallel: look up this rank's rows of %s (from row start_index)", w))
	ctx.Keep(op)
	ctx.Emit("c_allreduce_sum", ctx.Slot("X", tmp.Name()), ctx.Slot("Out", out),
		fmt.Sprintf("vocab-parallel: partial lookups summed over %s", dim),
		collectiveAttrs(id, true)...)
	return SyncParams(ctx, op)
}

// embeddingBackward turns the serial grad op into c_embedding_grad(Ids,
// W, Out@GRAD) -> W@GRAD {start_index}, keeping its id, then syncs W@GRAD
// over the data-parallel axis.
func embeddingBackward(ctx *Lowering, op *ir.Op) error {
	_, start, err := vocabShard(ctx, op)
	if err != nil {
		return err
	}
	var ins []ir.Slot
	for _, slot := range []string{"Ids", "W", "Out@GRAD"} {
		a, err := slotArg(op, slot, true)
		if err != nil {
			return err
		}
		ins = append(ins, ir.Slots(slot, a)...)
	}
	wg, err := slotArg(op, "W@GRAD", false)
	if err != nil {
		return err
	}
	serial := op.Type
	op.Type = "c_embedding_grad"
	op.Inputs = ins
	op.Outputs = ir.Slots("W@GRAD", wg)
	op.Attrs = nil
	op.Attrs.Set("start_index", ir.Int(start))
	ctx.SetOrigin(op, fmt.Sprintf("vocab-parallel: %s on this rank's rows (from row start_index)", serial))
	ctx.Keep(op)
	return SyncGrads(ctx, op)
}
