package lower

import (
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/ops"
)

// DefaultImpl copies the op: the impl of every op without a special one.
// Forward: the shape attr of fill_constant-like ops follows the output's
// sharding (floor division, as Python's //), and the first forward use of
// a parameter broadcasts it at startup. Backward: parameter grads are
// summed and averaged over the data-parallel group once the loss-grad op
// has been seen (the batch-dim rule).
func DefaultImpl() *Impl {
	return &Impl{
		Name:       "replicate_parallel",
		Doc:        "copy the op; fill_constant shapes follow the output's sharding; startup broadcast of params; data-parallel grad allreduce",
		Compatible: defaultCompatible,
		Forward: func(ctx *Lowering, op *ir.Op) error {
			ctx.Keep(op)
			if ops.Has(op.Type, ops.ShapeOfOut) {
				if err := divideShapeAttr(ctx, op, "Out"); err != nil {
					return err
				}
			}
			if op.Type != "while" && op.Type != "conditional_block" {
				return SyncParams(ctx, op)
			}
			return nil
		},
		Backward: func(ctx *Lowering, op *ir.Op) error {
			ctx.Keep(op)
			return SyncGrads(ctx, op)
		},
	}
}

// floorDiv divides as Python's // does: -1 // 2 is -1, not 0.
func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// divideShapeAttr divides the op's shape attr on the dims where its
// output slot's arg is sharded.
func divideShapeAttr(ctx *Lowering, op *ir.Op, slot string) error {
	shape, ok := ir.AsInts(ops.AttrValue(op, "shape"))
	outs := op.Output(slot)
	if !ok || len(shape) == 0 || len(outs) == 0 {
		return nil
	}
	mapping := ctx.Mapping(outs[0])
	local := slices.Clone(shape)
	for i, axis := range mapping {
		if axis >= 0 && i < len(local) {
			local[i] = floorDiv(local[i], int64(ctx.Mesh().Shape[axis]))
		}
	}
	op.Attrs.Set("shape", ir.Ints(local))
	return nil
}

// SyncParams emits, for each parameter input of a forward op seen for the
// first time, a startup c_broadcast from root 0 over the group of every
// mesh axis of size > 1 that the parameter's mapping does not use, so that
// replicas start equal. Recompute ops do not sync.
func SyncParams(ctx *Lowering, op *ir.Op) error {
	if op.Dist != nil && op.Dist.Recompute {
		return nil
	}
	for name := range op.InputNames {
		if !ctx.IsParam(name) || !ctx.MarkSynced(name) {
			continue
		}
		v := ctx.Var(name)
		var mapping []int
		if v.Dist != nil {
			mapping = v.Dist.DimsMapping
		}
		for axis, size := range ctx.Mesh().Shape {
			if size <= 1 || slices.Contains(mapping, axis) {
				continue
			}
			id, _, err := ctx.Group(axis)
			if err != nil {
				return err
			}
			if sb := ctx.Startup(); sb.Var(name) == nil {
				// A startup program that does not initialise the
				// parameter still needs it declared to broadcast it.
				c := v.Clone()
				c.Attrs = nil
				if err := sb.AddVar(c); err != nil {
					return err
				}
			}
			ctx.EmitStartup("c_broadcast", ctx.Slot("X", name), ctx.Slot("Out", name),
				"init sync: broadcast "+name+" from root 0 over "+ctx.Mesh().DimNames[axis],
				ir.A("ring_id", ir.Int(int64(id))), ir.A("root", ir.Int(0)), ir.A("use_calc_stream", ir.Bool(true)))
		}
	}
	return nil
}

// SyncGrads is the data-parallel gradient sync of a grad op (Paddle's
// batch-dim rule), once the loss-grad op has been seen: along the axis
// of ops.BatchAxis, each grad output is synced as ops.SyncOf says,
// from what the op computed (its rule's partials, ops.GradFolds), never
// from the var's name: a fold over the batch (a param's grad, or a
// gathered copy's whose reshard slices it after) is summed and
// averaged, a parameter split along the axis only averaged. check-annotations refuses the modules where this would
// average over a mesh dim the loss does not average, or leave a grad
// alone where the loss does.
func SyncGrads(ctx *Lowering, op *ir.Op) error {
	if op.Role.IsLossGrad() {
		ctx.SeeLossGrad()
	}
	if !ctx.LossGradSeen() || op.Role.IsOptimize() {
		return nil
	}
	axis := ops.BatchAxis(op, ctx.Mesh().Shape, ctx.IsParam, func(s string) []int {
		if m := ctx.Mapping(s); m != nil {
			return m
		}
		if v := ctx.Var(s); v != nil && v.Dist != nil {
			return v.Dist.DimsMapping
		}
		return nil
	})
	if axis < 0 {
		return nil
	}
	folds := ctx.st.folds.GradFolds(op, ctx.Var, ctx.serialVar, ctx.Mapping, ctx.Mesh().Shape, axis)
	for _, s := range op.Outputs {
		for i, g := range s.Args {
			gv := ctx.Var(g)
			if gv == nil || gv.Type.Kind != ir.DenseTensor || !gv.Type.DType.IsFloat() {
				continue
			}
			sync := ops.SyncOf(op, s, i, ctx.Mapping(g), axis, ops.FoldAt(folds, op, s, i), ctx.IsParam, ctx.paramGradView)
			if sync == ops.GradKept {
				continue
			}
			if gv.Dist.IsPartial() {
				// The sync makes the grad whole: a dist that says it is still
				// partial would have its parts reduced again.
				return fmt.Errorf("%s: the data-parallel sync averages %s over %s into a whole value, but its dist says %s",
					op, g, ctx.Mesh().DimNames[axis], gv.Dist.String())
			}
			id, size, err := ctx.Group(axis)
			if err != nil {
				return err
			}
			dim := ctx.Mesh().DimNames[axis]
			if ctx.LossWhole() {
				// Every rank computed the whole loss: a grad folded over
				// the batch shards is their sum, and a split param's grad
				// its own shard's, whole.
				if sync == ops.GradSummed {
					ctx.Emit("c_allreduce_sum", ctx.Slot("X", g), ctx.Slot("Out", g),
						"data-parallel: "+g+" summed over "+dim+" (the loss is whole along "+dim+")",
						ir.A("ring_id", ir.Int(int64(id))), ir.A("use_calc_stream", ir.Bool(true)))
				}
				continue
			}
			scale := ir.A("scale", ir.Float(1/float64(size)))
			if sync == ops.GradScaled {
				// The parameter is split along the axis: each rank holds the
				// only copy of its shard, whose grad is its own loss's
				// (the batch shard it saw); the loss is their average, so the
				// grad is averaged without communication. Summing it over the
				// group would add other shards' grads into this one.
				ctx.Emit("scale", ctx.Slot("X", g), ctx.Slot("Out", g),
					"data-parallel: "+g+" averaged over "+dim+" (its param is split along "+dim+": no allreduce)",
					scale, ir.A("bias", ir.Float(0)), ir.A("bias_after_scale", ir.Bool(true)))
				continue
			}
			ctx.Emit("c_allreduce_sum", ctx.Slot("X", g), ctx.Slot("Out", g),
				"data-parallel: "+g+" summed over "+dim,
				ir.A("ring_id", ir.Int(int64(id))), ir.A("use_calc_stream", ir.Bool(true)))
			ctx.Emit("scale", ctx.Slot("X", g), ctx.Slot("Out", g),
				"data-parallel: "+g+" averaged over "+dim,
				scale, ir.A("bias", ir.Float(0)), ir.A("bias_after_scale", ir.Bool(true)))
		}
	}
	return nil
}

// defaultCompatible is Paddle's default-impl check: parameters fully
// replicated; other args sharded at most on their batch dim (dim 1 for
// an XShape), and all batch dims on the same mesh axis. An op with no
// batch-dim candidate (all scalars) is compatible.
func defaultCompatible(ctx *Lowering, op *ir.Op) error {
	batch := -1
	check := func(slots []ir.Slot) error {
		for _, s := range slots {
			for _, a := range s.Args {
				m := ctx.Mapping(a)
				if ctx.IsParam(a) {
					for _, x := range m {
						if x != -1 {
							return fmt.Errorf("parameter %s has dims_mapping %s: the default impl needs it replicated", a, ir.FormatInts(m))
						}
					}
					continue
				}
				first := 0
				if s.Name == "XShape" {
					first = 1
				}
				for i, x := range m {
					if i != first && x != -1 {
						return fmt.Errorf("%s has dims_mapping %s: the default impl shards only the batch dim %d", a, ir.FormatInts(m), first)
					}
				}
				if first < len(m) && m[first] != -1 {
					if batch != -1 && batch != m[first] {
						return fmt.Errorf("%s has its batch dim on mesh dim %d, another arg on %d", a, m[first], batch)
					}
					batch = m[first]
				}
			}
		}
		return nil
	}
	if err := check(op.Inputs); err != nil {
		return err
	}
	if err := carriesPartials(ctx, op); err != nil {
		return err
	}
	inBatch := batch
	if err := check(op.Outputs); err != nil {
		return err
	}
	// The op computes on each rank's batch shard: an output of the rank
	// of an input (relu's, top_k's: the batch dim is where it was) holds
	// the inputs' shard of its batch dim, or all of it when they do. A
	// partial output (a fold over the batch) and a dim of size 1 or of
	// data-dependent size (MoE rows) have no batch to split; outputs of
	// another rank than the split inputs (a norm's statistics, a
	// reduction's result) are not compared: without the op's rule, their
	// dim 0 need not be the batch.
	if inBatch == -1 && hasTensorInput(ctx, op) && !ops.Has(op.Type, ops.ShapeOfOut) {
		// Nothing of the inputs is split: each rank computes all of every
		// output, which must then be whole on every rank.
		for _, s := range op.Outputs {
			for _, a := range s.Args {
				if m := ctx.Mapping(a); !ctx.IsParam(a) && !allReplicated(m) {
					return fmt.Errorf("output %s has dims_mapping %s: the default impl computes it whole from replicated inputs", a, ir.FormatInts(m))
				}
			}
		}
	}
	var ranks uint64 // bit r: an input of rank r shows where the batch is
	for _, s := range op.Inputs {
		first := 0
		if s.Name == "XShape" {
			first = 1
		}
		for _, a := range s.Args {
			if m := ctx.Mapping(a); !ctx.IsParam(a) && (inBatch < 0 || first < len(m) && m[first] == inBatch) && len(m)-first < 64 {
				ranks |= 1 << (len(m) - first)
			}
		}
	}
	for _, s := range op.Outputs {
		first := 0
		if s.Name == "XShape" {
			first = 1
		}
		for _, a := range s.Args {
			v, m := ctx.Var(a), ctx.Mapping(a)
			if v == nil || ctx.IsParam(a) || first >= len(m) || m[first] == inBatch || v.Dist.IsPartial() || len(m)-first >= 64 || ranks&(1<<(len(m)-first)) == 0 {
				continue
			}
			if sh := v.Type.Shape; first >= len(sh) || sh[first] < 0 || m[first] == -1 && sh[first] == 1 {
				continue // data-dependent rows, or a dim of 1 that holds no batch
			}
			return fmt.Errorf("output %s has dims_mapping %s: the default impl computes each rank's block of the inputs' batch dim (mesh dim %d), so it needs the batch dim %d split so",
				a, ir.FormatInts(m), inBatch, first)
		}
	}
	if inBatch >= 0 {
		return batchByRule(ctx, op)
	}
	return nil
}

// batchByRule holds an op that the default impl runs on batch shards to
// its sharding rule, where the op table gives one: the rule must read
// every input as split as it is (softmax over axis 0 reads the batch
// whole) and give no output partial (a sum over the batch is one). The
// batch-dim convention alone cannot see an attr that moves the op's work
// across the batch. A training batch_norm is the exception by design:
// its statistics are each rank's shard's (local batch norm, Paddle's
// default), which check compares with the serial program per shard.
// So is an op that reads indices (an integer tensor): they may index the
// rank's own rows, as the MoE dispatch's gather and scatter do, which no
// rule can see; and an input the rule leaves free (a fetch's).
func batchByRule(ctx *Lowering, op *ir.Op) error {
	if op.Type == "batch_norm" {
		return nil
	}
	for name := range op.InputNames {
		if v := ctx.Var(name); v != nil && v.Type.Kind == ir.DenseTensor && v.Type.DType.IsInteger() {
			return nil
		}
	}
	// Ops alike (a model's layers) get one verdict: what it depends on is
	// spelled whole in the key, and only acceptances are kept (a
	// refusal names the op's vars).
	st := ctx.st
	keyed := fitKey(ctx, op)
	if keyed && st.fits[string(st.fitBuf)] {
		return nil
	}
	accept := func() error {
		if keyed {
			if st.fits == nil {
				st.fits = map[string]bool{}
			}
			st.fits[string(st.fitBuf)] = true
		}
		return nil
	}
	rule, err := ops.ShardingRuleOf(op, ctx.serialVar)
	if err != nil || rule == nil {
		return accept() // no rule: the batch-dim convention stands alone
	}
	ins, names := argMappings(ctx, op.Inputs)
	outs, outNames := argMappings(ctx, op.Outputs)
	// Spelled on refusal only: an accepted op pays no string.
	rs := func() string {
		if str, ok := rule.(fmt.Stringer); ok {
			return "its rule " + str.String()
		}
		return op.Type + "'s rule"
	}
	sh, err := rule.Forward(ctx.Mesh().Shape, ins)
	if err != nil {
		return fmt.Errorf("the default impl computes %s on batch shards, and %s refuses the mappings: %v", op.Type, rs(), err)
	}
	for i, m := range ins {
		if m == nil || ctx.IsParam(names[i]) || i >= len(sh.Inputs) || sh.Inputs[i] == nil {
			continue
		}
		if want := sh.Inputs[i]; !slices.Equal(want, m) {
			return fmt.Errorf("%s reads %s as %s, not as its dims_mapping %s: the op does not compute on batch shards alone", rs(), names[i], ir.FormatInts(want), ir.FormatInts(m))
		}
	}
	for j := range outs {
		if j >= len(sh.Partial) || len(sh.Partial[j]) == 0 {
			continue
		}
		// A fold over the batch is right only into a var declared
		// partial so (the loss: partial avg over the batch's mesh dim).
		var have []ir.Partial
		if v := ctx.Var(outNames[j]); v != nil && v.Dist != nil {
			have = v.Dist.Partial
		}
		for _, p := range sh.Partial[j] {
			if !slices.Contains(have, p) {
				return fmt.Errorf("%s gives %s %s: the op folds the batch, and its dist says %s", rs(), outNames[j], fmtPartial(outs[j], sh.Partial[j]), fmtPartial(outs[j], have))
			}
		}
	}
	return accept()
}

// argMappings returns the mappings the op being lowered expects of the
// args of slots, in slot order (nil for an arg that is not a dense
// tensor, [] for one without a mapping), and the args' names.
func argMappings(ctx *Lowering, slots []ir.Slot) (ms [][]int, names []string) {
	for _, s := range slots {
		for _, a := range s.Args {
			var m []int
			if v := ctx.Var(a); v != nil && v.Type.Kind == ir.DenseTensor {
				if m = ctx.Mapping(a); m == nil {
					m = []int{}
				}
			}
			ms, names = append(ms, m), append(names, a)
		}
	}
	return ms, names
}

// carriesPartials refuses an op that reads a partial input unless the
// op of the parts is the parts of the op, into outputs partial alike
// (ops.CarriedPartial): each rank computes the op on what it holds.
func carriesPartials(ctx *Lowering, op *ir.Op) error {
	if ops.Has(op.Type, ops.OwnPart) {
		return nil
	}
	partial := false
	for a := range op.InputNames {
		if v := ctx.Var(a); v != nil && v.Dist.IsPartial() {
			partial = true
			break
		}
	}
	if !partial {
		return nil // the common case, without a slice
	}
	var in, out [][]ir.Partial
	var inNames, outNames []string
	for side, slots := range [2][]ir.Slot{op.Inputs, op.Outputs} {
		for _, s := range slots {
			for _, a := range s.Args {
				v := ctx.Var(a)
				if v == nil || v.Type.Kind != ir.DenseTensor {
					continue
				}
				var p []ir.Partial
				if v.Dist != nil {
					p = v.Dist.Partial
				}
				if side == 0 {
					in, inNames = append(in, p), append(inNames, a)
				} else {
					out, outNames = append(out, p), append(outNames, a)
				}
			}
		}
	}
	carried, err := ops.CarriedPartial(op, in, func(k int) string { return inNames[k] })
	if err != nil || len(carried) == 0 {
		return err
	}
	return ops.CarriedPartialOut(op, carried, out, func(k int) string { return outNames[k] })
}

// fitKey spells into ctx.st.fitBuf what batchByRule's verdict on op
// depends on: the mesh, whether the program is partitioned (the rule
// reads serial shapes), the op's type, attrs and slots, and each arg's
// var (kind, dtype, shape, dist), its mapping in the op, whether it is a
// parameter and which earlier arg names the same var. False when an
// attr is of a kind the key does not spell.
func fitKey(ctx *Lowering, op *ir.Op) bool {
	b, ok := ir.AppendOpKey(ctx.st.fitBuf[:0], op)
	if !ok {
		return false
	}
	if p := ctx.module.Main; p != nil && p.Rank >= 0 {
		b = append(b, 1)
	} else {
		b = append(b, 0)
	}
	b = ir.AppendIntsKey(b, ctx.Mesh().Shape)
	names := ctx.st.fitNames[:0]
	for side, slots := range [2][]ir.Slot{op.Inputs, op.Outputs} {
		b = append(b, byte(side))
		for _, s := range slots {
			b = append(b, s.Name...)
			b = append(b, 0)
			b = binary.AppendUvarint(b, uint64(len(s.Args)))
			for _, a := range s.Args {
				b = binary.AppendUvarint(b, uint64(slices.Index(names, a)+1))
				names = append(names, a)
				v := ctx.Var(a)
				if v == nil {
					b = append(b, 0xff)
					continue
				}
				b = ir.AppendTypeKey(b, v.Type)
				if v.Dist != nil {
					b = append(b, 1)
					b = append(b, v.Dist.Mesh...)
					b = append(b, 0)
					b = ir.AppendIntsKey(b, v.Dist.DimsMapping)
					b = binary.AppendUvarint(b, uint64(len(v.Dist.Partial)))
					for _, p := range v.Dist.Partial {
						b = binary.AppendUvarint(b, uint64(p.Dim))
						b = append(b, byte(p.Reduce))
					}
					b = binary.AppendUvarint(b, uint64(len(v.Dist.Local)))
					for _, k := range v.Dist.Local {
						b = binary.AppendUvarint(b, uint64(k))
					}
				} else {
					b = append(b, 0)
				}
				b = ir.AppendIntsKey(b, ctx.Mapping(a))
				if v.Kind == ir.KindParam {
					b = append(b, 1)
				} else {
					b = append(b, 0)
				}
			}
		}
	}
	ctx.st.fitBuf, ctx.st.fitNames = b, names
	return true
}

// hasTensorInput reports whether op reads a dense tensor that is not a
// parameter (a feed reads a feed list; a fill reads nothing).
func hasTensorInput(ctx *Lowering, op *ir.Op) bool {
	for _, s := range op.Inputs {
		for _, a := range s.Args {
			if v := ctx.Var(a); v != nil && v.Type.Kind == ir.DenseTensor && v.Kind != ir.KindParam {
				return true
			}
		}
	}
	return false
}
