package passes

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/distpass/distpass/ir"
)

// gradMaker says how to differentiate one forward op type. Most entries
// are pure data: the grad op reads the slots of Reads and writes a
// Slot@GRAD output for each slot of Diff. Emit, when set, builds the grad
// op itself (cast and assign, whose grads are ops of the same type).
//
// The slot conventions are those of the grad kernels of package sim.
type gradMaker struct {
	// Type is the grad op's type; "" means the forward type + "_grad".
	Type string
	// Reads lists the grad op's input slots in order. A plain name is a
	// forward slot (input first, then output) read under the same name and
	// skipped when the forward op has no such slot; "A|B" is the first of
	// A and B the forward op has (read under its own name); "S@GRAD" is
	// the gradient of the forward output slot S.
	Reads []string
	// Diff lists the forward input slots that may receive a gradient, in
	// the order of the grad op's output slots (Slot@GRAD).
	Diff []string
	// Emit, when set, builds the grad op from the forward op, its one
	// differentiable input var x, the gradient of its differentiable output
	// (outGrad) and that of x (inGrad, never empty when Emit is called).
	Emit func(fwd *ir.Op, x *ir.Var, outGrad, inGrad string) *ir.Op
	// Unsupported, when set, returns why this forward op cannot be
	// differentiated ("" when it can).
	Unsupported func(fwd *ir.Op) string

	// outs lists the forward output slots whose gradients the grad op
	// reads (from Reads): the only outputs gradients flow through.
	outs []string
}

// gradMakerTable is the table of grad makers, built once.
var gradMakerTable = sync.OnceValue(gradMakers)

// gradMakers returns the grad maker of every op type append-backward can
// differentiate. It is the one list; nothing registers itself.
func gradMakers() map[string]*gradMaker {
	binary := func() *gradMaker {
		return &gradMaker{Reads: []string{"X", "Y", "Out@GRAD"}, Diff: []string{"X", "Y"}}
	}
	unary := func(src string) *gradMaker {
		return &gradMaker{Reads: []string{src, "Out@GRAD"}, Diff: []string{"X"}}
	}
	t := map[string]*gradMaker{
		"matmul_v2":       binary(),
		"matmul":          binary(),
		"mul":             binary(),
		"elementwise_add": binary(),
		"elementwise_sub": binary(),
		"elementwise_mul": binary(),
		"elementwise_div": binary(),
		"relu":            unary("Out"),
		"tanh":            unary("Out"),
		"sigmoid":         unary("Out"),
		"softmax":         unary("Out"),
		"gelu":            unary("X"),
		"mean":            unary("X"),
		"reduce_mean":     unary("X"),
		"reduce_sum":      unary("X"),
		"scale": {
			Reads: []string{"Out@GRAD"}, Diff: []string{"X"},
			Unsupported: func(fwd *ir.Op) string {
				if len(fwd.Input("ScaleTensor")) > 0 {
					return "a ScaleTensor input is not supported (the grad reads the scale attr)"
				}
				return ""
			},
		},
		"reshape2":        {Reads: []string{"XShape|X", "Out@GRAD"}, Diff: []string{"X"}},
		"transpose2":      {Reads: []string{"XShape", "Out@GRAD"}, Diff: []string{"X"}},
		"dropout":         {Reads: []string{"Mask", "Out@GRAD"}, Diff: []string{"X"}},
		"lookup_table_v2": {Reads: []string{"Ids", "W", "Out@GRAD"}, Diff: []string{"W"}},
		"softmax_with_cross_entropy": {
			Reads: []string{"Label", "Softmax", "Loss@GRAD"}, Diff: []string{"Logits"},
			Unsupported: func(fwd *ir.Op) string {
				if v, _ := fwd.Attrs.Bool("soft_label"); v {
					return "soft_label is not supported"
				}
				return ""
			},
		},
		"layer_norm": {
			Reads: []string{"X", "Scale", "Bias", "Mean", "Variance", "Y@GRAD"},
			Diff:  []string{"X", "Scale", "Bias"},
		},
		"top_k_v2":       {Reads: []string{"X", "Indices", "Out@GRAD"}, Diff: []string{"X"}},
		"gather":         {Reads: []string{"X", "Index", "Out@GRAD"}, Diff: []string{"X"}},
		"scatter":        {Reads: []string{"Ids", "Updates", "Out@GRAD"}, Diff: []string{"X", "Updates"}},
		"grouped_matmul": {Reads: []string{"X", "W", "ExpertCount", "Out@GRAD"}, Diff: []string{"X", "W"}},
		// Each MoE exchange's grad is the other one with the same counts
		// and attrs: the rows go back where they came from.
		"global_scatter": {Reads: []string{"Out@GRAD"}, Diff: []string{"X"}, Emit: exchangeGrad("global_gather")},
		"global_gather":  {Reads: []string{"Out@GRAD"}, Diff: []string{"X"}, Emit: exchangeGrad("global_scatter")},
		// cast's grad casts the gradient back; assign's copies it.
		"cast": {
			Reads: []string{"Out@GRAD"}, Diff: []string{"X"},
			Emit: func(fwd *ir.Op, x *ir.Var, outGrad, inGrad string) *ir.Op {
				op := &ir.Op{Type: "cast", Inputs: ir.Slots("X", outGrad), Outputs: ir.Slots("Out", inGrad)}
				if v, ok := fwd.Attrs.Int("out_dtype"); ok {
					op.Attrs.Set("in_dtype", ir.Int(v))
				}
				if v, ok := fwd.Attrs.Int("in_dtype"); ok {
					op.Attrs.Set("out_dtype", ir.Int(v))
				} else if c, ok := x.Type.DType.PaddleCode(); ok {
					op.Attrs.Set("out_dtype", ir.Int(c))
				}
				return op
			},
		},
		"assign": {
			Reads: []string{"Out@GRAD"}, Diff: []string{"X"},
			Emit: func(_ *ir.Op, _ *ir.Var, outGrad, inGrad string) *ir.Op {
				return &ir.Op{Type: "assign", Inputs: ir.Slots("X", outGrad), Outputs: ir.Slots("Out", inGrad)}
			},
		},
	}
	for _, mk := range t {
		for _, r := range mk.Reads {
			if s, ok := strings.CutSuffix(r, "@GRAD"); ok {
				mk.outs = append(mk.outs, s)
			}
		}
	}
	return t
}

// isDiffInput reports whether forward input slot s may receive a gradient.
func (mk *gradMaker) isDiffInput(s string) bool {
	for _, d := range mk.Diff {
		if d == s {
			return true
		}
	}
	return false
}

// hasSlot reports whether the op has an input or output slot named s.
func hasSlot(op *ir.Op, s string) ([]string, bool) {
	for _, ss := range [2][]ir.Slot{op.Inputs, op.Outputs} {
		for _, sl := range ss {
			if sl.Name == s {
				return sl.Args, true
			}
		}
	}
	return nil, false
}

// make builds the grad op of fwd, without id, role or dist. lookup finds
// a var of the block by name. outGrad
// returns the gradient of a forward output arg (calling it may emit the
// sum of its parts first); inGrad the gradient var a forward input arg
// gets at this op, or "" when it needs none.
func (mk *gradMaker) make(fwd *ir.Op, lookup func(string) *ir.Var, outGrad func(arg string) (string, error), inGrad func(slot string, i int, arg string) string) (*ir.Op, error) {
	if mk.Unsupported != nil {
		if why := mk.Unsupported(fwd); why != "" {
			return nil, fmt.Errorf("%s: %s", fwd, why)
		}
	}
	if mk.Emit != nil {
		outs := fwd.Output(mk.outs[0])
		ins := fwd.Input(mk.Diff[0])
		if len(outs) != 1 || len(ins) != 1 {
			return nil, fmt.Errorf("%s: want one %s and one %s", fwd, mk.outs[0], mk.Diff[0])
		}
		g, err := outGrad(outs[0])
		if err != nil {
			return nil, err
		}
		op := mk.Emit(fwd, lookup(ins[0]), g, inGrad(mk.Diff[0], 0, ins[0]))
		op.Fwd = fwd.ID
		return op, nil
	}
	typ := mk.Type
	if typ == "" {
		typ = fwd.Type + "_grad"
	}
	op := &ir.Op{Type: typ, Attrs: fwd.Attrs.Clone(), Fwd: fwd.ID}
	for _, r := range mk.Reads {
		if s, ok := strings.CutSuffix(r, "@GRAD"); ok {
			args := fwd.Output(s)
			gs := make([]string, len(args))
			for i, a := range args {
				g, err := outGrad(a)
				if err != nil {
					return nil, err
				}
				gs[i] = g
			}
			op.Inputs = append(op.Inputs, ir.S(r, gs...))
			continue
		}
		for _, alt := range strings.Split(r, "|") {
			if args, ok := hasSlot(fwd, alt); ok {
				op.Inputs = append(op.Inputs, ir.S(alt, args...))
				break
			}
		}
	}
	for _, d := range mk.Diff {
		args, ok := hasSlot(fwd, d)
		if !ok {
			continue // an optional input the forward op omits (layer_norm's Scale)
		}
		var gs []string
		for i, a := range args {
			if g := inGrad(d, i, a); g != "" {
				gs = append(gs, g)
			}
		}
		if len(gs) != 0 && len(gs) != len(args) {
			return nil, fmt.Errorf("%s: slot %s has args with and without gradients", fwd, d)
		}
		op.Outputs = append(op.Outputs, ir.S(d+"@GRAD", gs...))
	}
	return op, nil
}

// GradOpTypes returns, sorted, the forward op types append-backward can
// differentiate.
func GradOpTypes() []string {
	return slices.Sorted(maps.Keys(gradMakerTable()))
}

// exchangeGrad returns the Emit of global_scatter's or global_gather's
// grad: the inverse exchange, typ, over the forward op's counts.
func exchangeGrad(typ string) func(fwd *ir.Op, _ *ir.Var, outGrad, inGrad string) *ir.Op {
	return func(fwd *ir.Op, _ *ir.Var, outGrad, inGrad string) *ir.Op {
		return &ir.Op{Type: typ,
			Inputs: []ir.Slot{ir.S("X", outGrad), ir.S("local_count", fwd.Input("local_count")...),
				ir.S("global_count", fwd.Input("global_count")...)},
			Outputs: ir.Slots("Out", inGrad), Attrs: fwd.Attrs.Clone()}
	}
}
