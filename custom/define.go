package custom

import (
	"fmt"
	"slices"
	"sync"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/ops"
	"github.com/distpass/distpass/passes"
	"github.com/distpass/distpass/sim"
)

// Define adds each op type to the op table (ops.Add) with the grad op
// type its differentiable inputs give it, and their kernels to the
// simulator (sim.Register), for the life of the process. A meaning may
// use the op types of the table and those defined before it in ts. On an
// error (a type already defined, a meaning of an unknown type) none of
// ts is added.
func Define(ts ...*OpType) error {
	known := map[string]bool{}
	var defs []*ops.Def
	for _, t := range ts {
		for _, op := range t.Meaning {
			if ops.Lookup(op.Type) == nil && !known[op.Type] {
				return fmt.Errorf("%s: optype %s: meaning: the op table does not define %s", t.pos, t.Name, op.Type)
			}
		}
		known[t.Name] = true
		defs = append(defs, t.def())
	}
	if err := ops.Add(defs...); err != nil {
		return err
	}
	for i, t := range ts {
		if err := sim.Register(t.Name, t.kernel); err != nil {
			return err
		}
		if defs[i].Grad != nil {
			if err := sim.Register(defs[i].GradType(), t.gradKernel); err != nil {
				return err
			}
		}
	}
	return nil
}

// def is t's record in the op table.
func (t *OpType) def() *ops.Def {
	d := &ops.Def{
		Type:        t.Name,
		Doc:         t.Doc,
		Attrs:       slices.Clone(t.Attrs),
		Shape:       "the rule's: " + t.Rule.String(),
		Infer:       t.infer,
		Sharding:    t.Rule.sharding,
		ShardingDoc: t.Rule.String(),
	}
	if d.Doc == "" {
		d.Doc = "a custom op type (" + t.pos + ")"
	}
	g := &ops.Grad{}
	for _, in := range t.Inputs {
		d.Inputs = append(d.Inputs, ops.Slot{Name: in.Name, NoGrad: in.NoGrad})
		g.Reads = append(g.Reads, in.Name)
		if !in.NoGrad {
			g.Diff = append(g.Diff, in.Name)
		}
	}
	for _, o := range t.Outputs {
		d.Outputs = append(d.Outputs, ops.Slot{Name: o})
		g.Reads = append(g.Reads, o+"@GRAD")
	}
	if len(g.Diff) > 0 {
		d.Grad = g
	}
	return d
}

// infer sets the outputs' types: shapes by the rule, dtypes by the
// meaning, whose shapes must be the rule's.
func (t *OpType) infer(c *ops.Infer) error {
	shapes, err := t.Rule.shapes(c.In)
	if err != nil || shapes == nil {
		return err
	}
	types := map[string]ir.Type{}
	for _, in := range t.Inputs {
		types[in.Name], _ = c.In(in.Name)
	}
	inst, err := t.instance(types, false)
	if err != nil {
		return err
	}
	for _, o := range t.Outputs {
		mt := inst.out[o]
		if !ops.Compatible(mt.Shape, shapes[o]) {
			return fmt.Errorf("the meaning of %s (%s) gives %s %s, its rule %s", t.Name, t.pos, o, mt, ir.Tensor(mt.DType, shapes[o]...))
		}
		c.Set(o, mt.DType, shapes[o])
	}
	return nil
}

// An instance is an op type's meaning as a module, for given input types.
type instance struct {
	m       *ir.Module
	out     map[string]ir.Type // the outputs' types, by slot
	kernels sim.Kernels        // the simulator's, when it was built
	loss    string             // grad instances: the var differentiated
}

var instances sync.Map // instanceKey → *instance or error

type instanceKey struct {
	t     *OpType
	types string
	grad  bool
}

// instance returns t's meaning as a module for the input types, built
// once: its inputs are vars named as the input slots, its outputs as the
// output slots. A grad instance adds, for each float output Out, an
// input Out@DY (the gradient it is given) and the loss sum(Out * Out@DY),
// and the backward of that loss: the gradient of input X is X@GRAD.
func (t *OpType) instance(types map[string]ir.Type, grad bool) (*instance, error) {
	var key []byte
	for _, in := range t.Inputs {
		key = ir.AppendTypeKey(key, types[in.Name])
		key = append(key, ';')
	}
	k := instanceKey{t, string(key), grad}
	if v, ok := instances.Load(k); ok {
		if err, ok := v.(error); ok {
			return nil, err
		}
		return v.(*instance), nil
	}
	inst, err := t.build(types, grad)
	if err != nil {
		instances.Store(k, err)
		return nil, err
	}
	v, _ := instances.LoadOrStore(k, inst)
	return v.(*instance), nil
}

func (t *OpType) build(types map[string]ir.Type, grad bool) (*instance, error) {
	m := ir.NewModule(t.Name)
	bl := ir.NewBuilder(m)
	b := bl.Block()
	for _, in := range t.Inputs {
		bl.Var(in.Name, types[in.Name])
	}
	add := func(op *ir.Op) error {
		outs, err := ops.InferOp(op, b.Var)
		if err != nil {
			return fmt.Errorf("the meaning of %s (%s): %v", t.Name, t.pos, err)
		}
		for _, s := range op.Outputs {
			for i, a := range s.Args {
				j := slices.IndexFunc(outs, func(o ops.Output) bool { return o.Slot == s.Name && o.Index == i })
				if j < 0 || outs[j].Type.DType == ir.DTypeInvalid {
					return fmt.Errorf("the meaning of %s (%s): %s leaves %s's type open", t.Name, t.pos, op.Type, a)
				}
				bl.Var(a, outs[j].Type)
			}
		}
		op.ID = m.FreshOpID()
		b.Ops = append(b.Ops, op)
		return nil
	}
	for _, op := range t.Meaning {
		if err := add(op.Clone()); err != nil {
			return nil, err
		}
	}
	inst := &instance{m: m, out: map[string]ir.Type{}}
	for _, o := range t.Outputs {
		inst.out[o] = b.Var(o).Type
	}
	if grad {
		var parts []string
		for _, o := range t.Outputs {
			ot := inst.out[o]
			if !ot.DType.IsFloat() {
				continue
			}
			dy := bl.Var(o+"@DY", ot)
			dy.Flags |= ir.FlagStopGradient
			steps := []*ir.Op{
				{Type: "elementwise_mul", Inputs: ir.Slots("X", o, "Y", o+"@DY"), Outputs: ir.Slots("Out", o+"@DY@PROD")},
				{Type: "reduce_sum", Inputs: ir.Slots("X", o+"@DY@PROD"), Outputs: ir.Slots("Out", o+"@DY@SUM"),
					Attrs: ir.Attrs{{Name: "reduce_all", Value: ir.Bool(true)}}},
			}
			for _, op := range steps {
				if err := add(op); err != nil {
					return nil, err
				}
			}
			parts = append(parts, o+"@DY@SUM")
		}
		if len(parts) == 0 {
			return nil, fmt.Errorf("%s (%s) has no float output to differentiate", t.Name, t.pos)
		}
		inst.loss = parts[0]
		if len(parts) > 1 {
			inst.loss = "loss@DY"
			if err := add(&ir.Op{Type: "sum", Inputs: []ir.Slot{ir.S("X", parts...)}, Outputs: ir.Slots("Out", inst.loss)}); err != nil {
				return nil, err
			}
		}
		if _, err := passes.AppendBackward(m, inst.loss); err != nil {
			return nil, fmt.Errorf("the meaning of %s (%s): %v", t.Name, t.pos, err)
		}
	}
	if err := bl.Err(); err != nil {
		return nil, fmt.Errorf("the meaning of %s (%s): %v", t.Name, t.pos, err)
	}
	if _, err := ops.Verify(m, ops.Options{Strict: true}); err != nil {
		return nil, fmt.Errorf("the meaning of %s (%s): %v", t.Name, t.pos, err)
	}
	inst.kernels = sim.DefaultKernels()
	return inst, nil
}

// run runs an instance on the tensors of scope.
func (inst *instance) run(scope sim.Scope) (sim.Scope, error) {
	return sim.Run(inst.m, scope, inst.kernels)
}

// kernel computes an op of type t by running its meaning.
func (t *OpType) kernel(op *ir.Op, in sim.Args) (sim.Args, error) {
	scope, types, err := t.inputs(op, in)
	if err != nil {
		return nil, err
	}
	inst, err := t.instance(types, false)
	if err != nil {
		return nil, err
	}
	res, err := inst.run(scope)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", op, err)
	}
	out := sim.Args{}
	for _, o := range t.Outputs {
		out[o] = []*sim.Tensor{res[o]}
	}
	return out, nil
}

// gradKernel computes an op of t's grad type: the backward of t's
// meaning, given the outputs' gradients.
func (t *OpType) gradKernel(op *ir.Op, in sim.Args) (sim.Args, error) {
	scope, types, err := t.inputs(op, in)
	if err != nil {
		return nil, err
	}
	inst, err := t.instance(types, true)
	if err != nil {
		return nil, err
	}
	for _, o := range t.Outputs {
		if !inst.out[o].DType.IsFloat() {
			continue
		}
		ts := in[o+"@GRAD"]
		if len(ts) != 1 || ts[0] == nil {
			return nil, fmt.Errorf("%s: input %s@GRAD: want one tensor, have %d", op, o, len(ts))
		}
		scope[o+"@DY"] = ts[0]
	}
	res, err := inst.run(scope)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", op, err)
	}
	out := sim.Args{}
	for _, x := range t.Inputs {
		if x.NoGrad || len(op.Output(x.Name+"@GRAD")) == 0 {
			continue
		}
		g := res[passes.GradName(x.Name)]
		if g == nil { // no gradient reaches x through the meaning
			xt := scope[x.Name]
			g = sim.Zeros(xt.DType, xt.Shape...)
		}
		out[x.Name+"@GRAD"] = []*sim.Tensor{g}
	}
	return out, nil
}

// inputs returns the input tensors of an op of type t as a scope, and
// their types.
func (t *OpType) inputs(op *ir.Op, in sim.Args) (sim.Scope, map[string]ir.Type, error) {
	scope := sim.Scope{}
	types := map[string]ir.Type{}
	for _, x := range t.Inputs {
		ts := in[x.Name]
		if len(ts) != 1 || ts[0] == nil {
			return nil, nil, fmt.Errorf("%s: input %s: want one tensor, have %d", op, x.Name, len(ts))
		}
		scope[x.Name] = ts[0]
		types[x.Name] = ir.Tensor(ts[0].DType, ts[0].Shape...)
	}
	return scope, types, nil
}
