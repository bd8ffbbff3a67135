package lower

import (
	"fmt"
	"slices"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/ops"
)

// This file holds the small helpers the built-in impls share: reading an
// op's args and their expected dims_mappings without panicking, spelling
// mappings in messages, and renaming an arg of the op being lowered.

// slotArg returns the single arg of an input (or output) slot, or an
// error naming the op and the slot when it is missing or empty.
func slotArg(op *ir.Op, slot string, input bool) (string, error) {
	args, kind := op.Output(slot), "output"
	if input {
		args, kind = op.Input(slot), "input"
	}
	if len(args) == 0 {
		return "", fmt.Errorf("%s has no %s %s", op, kind, slot)
	}
	return args[0], nil
}

// expectedMapping returns the dims_mapping the op's dist expects for arg
// name of slot, checked against the op's mesh: every entry -1 or a mesh
// axis, each axis used once.
func expectedMapping(ctx *Lowering, op *ir.Op, slot, name string) ([]int, error) {
	if op.Dist == nil {
		return nil, fmt.Errorf("%s has no dist", op)
	}
	m, ok := op.Dist.InputMapping(name)
	if !ok {
		m, ok = op.Dist.OutputMapping(name)
	}
	if !ok {
		return nil, fmt.Errorf("%s: %s %s has no dims_mapping in the op's dist", op, slot, name)
	}
	if err := checkMapping(ctx, m); err != nil {
		return nil, fmt.Errorf("%s: %s %s: %v", op, slot, name, err)
	}
	return m, nil
}

// checkMapping reports an entry that is not -1 or an axis of the mesh,
// or an axis used twice.
func checkMapping(ctx *Lowering, m []int) error {
	ndim := 0
	if ctx.Mesh() != nil {
		ndim = len(ctx.Mesh().Shape)
	}
	for i, a := range m {
		if a < -1 || a >= ndim {
			return fmt.Errorf("dims_mapping %s: entry %d is %d, out of range for a mesh of %d dims", ir.FormatInts(m), i, a, ndim)
		}
		// Mappings have a few entries: a scan, where a set cost a map
		// for every arg of every op lowered.
		if a >= 0 && slices.Contains(m[:i], a) {
			return fmt.Errorf("dims_mapping %s uses mesh dim %d twice", ir.FormatInts(m), a)
		}
	}
	return nil
}

// argMapping is slotArg then expectedMapping.
func argMapping(ctx *Lowering, op *ir.Op, slot string, input bool) (string, []int, error) {
	name, err := slotArg(op, slot, input)
	if err != nil {
		return "", nil, err
	}
	m, err := expectedMapping(ctx, op, slot, name)
	if err != nil {
		return "", nil, err
	}
	return name, m, nil
}

// allReplicated reports whether every entry of m is -1.
func allReplicated(m []int) bool {
	for _, x := range m {
		if x != -1 {
			return false
		}
	}
	return true
}

// sharded reports whether some entry of m is a mesh axis.
func sharded(m []int) bool { return !allReplicated(m) }

// at returns m[i], counting a negative i from the end, and whether it
// exists.
func at(m []int, i int) (int, bool) {
	if i < 0 {
		i += len(m)
	}
	if i < 0 || i >= len(m) {
		return 0, false
	}
	return m[i], true
}

// middle returns m[1:len(m)-1], empty when m has fewer than 3 entries.
func middle(m []int) []int {
	if len(m) < 3 {
		return nil
	}
	return m[1 : len(m)-1]
}

// renameArg replaces old by new in the op's input (or output) slot and
// in the op's dist, so that the kept op reads or writes new instead. The
// slot list, the arg list and the arg dists it changes are copied first
// (from the lowering's slabs): a module built in memory may share them
// between ops (a grad op reading its forward op's arg list), and the
// rename is this op's alone.
func renameArg(ctx *Lowering, op *ir.Op, slot string, input bool, old, new string) {
	st := ctx.st
	slots := &op.Outputs
	if input {
		slots = &op.Inputs
	}
	copied := false
	for i := range *slots {
		s := (*slots)[i]
		if s.Name != slot || !slices.Contains(s.Args, old) {
			continue
		}
		if !copied {
			*slots, copied = st.slots.copyOf(*slots, st.chunk()), true
		}
		args := st.args.copyOf(s.Args, st.chunk())
		for j, a := range args {
			if a == old {
				args[j] = new
			}
		}
		(*slots)[i].Args = args
	}
	if op.Dist == nil {
		return
	}
	ads := &op.Dist.Outputs
	if input {
		ads = &op.Dist.Inputs
	}
	copied = false
	for i := range *ads {
		if (*ads)[i].Name != old {
			continue
		}
		if !copied {
			*ads, copied = st.argDists.copyOf(*ads, st.chunk()), true
		}
		(*ads)[i].Name = new
	}
}

// tempDist is the dist of a temp var holding what the op expects for arg
// name: the op's mesh and its expected mapping (the var's own mapping
// when the op's dist does not list name).
func tempDist(ctx *Lowering, name string) *ir.TensorDist {
	m := ctx.Mapping(name)
	if m == nil {
		if v := ctx.Var(name); v != nil && v.Dist != nil {
			m = v.Dist.DimsMapping
		}
	}
	if m == nil {
		m = []int{}
	}
	return &ir.TensorDist{Mesh: ctx.Mesh().Name, DimsMapping: m} // NewVar copies it
}

// lookupVar returns the var name, or an error naming the op and its slot.
func lookupVar(ctx *Lowering, op *ir.Op, slot, name string) (*ir.Var, error) {
	v := ctx.Var(name)
	if v == nil {
		return nil, fmt.Errorf("%s: %s %s is not declared", op, slot, name)
	}
	return v, nil
}

// group returns the ring id of this rank's group along mesh axis, with
// errors that name the op.
func group(ctx *Lowering, op *ir.Op, axis int) (id, size int, err error) {
	if ctx.Mesh() == nil {
		return 0, 0, fmt.Errorf("%s: no mesh", op)
	}
	if axis < 0 || axis >= len(ctx.Mesh().Shape) {
		return 0, 0, fmt.Errorf("%s: mesh axis %d is out of range for mesh %s", op, axis, ctx.Mesh())
	}
	id, size, err = ctx.Group(axis)
	if err != nil {
		return 0, 0, fmt.Errorf("%s: group along %s: %v", op, ctx.Mesh().DimNames[axis], err)
	}
	return id, size, nil
}

// collectiveAttrs are the attrs of a collective over ring id: ring_id,
// use_calc_stream, and use_model_parallel for tensor-parallel ones.
func collectiveAttrs(id int, modelParallel bool) []ir.Attr {
	as := []ir.Attr{ir.A("ring_id", ir.Int(int64(id))), ir.A("use_calc_stream", ir.Bool(true))}
	if modelParallel {
		as = append(as, ir.A("use_model_parallel", ir.Bool(true)))
	}
	return as
}

// boolAttr reads a boolean attr that may be absent (false); an attr of
// another kind is an error naming the op.
func boolAttr(op *ir.Op, name string) (bool, error) {
	b, err := ops.AttrBool(op, name)
	if err != nil {
		return false, fmt.Errorf("%s: %v", op, err)
	}
	return b, nil
}

// notPartial reports an arg whose var is partial: impl's kernels compute
// on whole values, and nothing reduces the parts first.
func notPartial(ctx *Lowering, op *ir.Op, impl, name string) error {
	if v := ctx.Var(name); v != nil && v.Dist.IsPartial() {
		return fmt.Errorf("%s: %s needs %s whole; it is %s: the pending reduction would have to be done first",
			op, impl, name, v.Dist.String())
	}
	return nil
}
