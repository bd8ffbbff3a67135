package passes

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/ops"
)

// gradMaker is an op type's gradient, as the op table defines it, with
// what autodiff derives from it.
type gradMaker struct {
	*ops.Grad
	// Type is the grad op's type.
	Type string
	// outs lists the forward output slots whose gradients the grad op
	// reads (from Reads): the only outputs gradients flow through.
	outs []string
}

// gradMakers returns the grad maker of every op type the op table gives
// a gradient, as the table stands (ops.Add may have grown it).
func gradMakers() map[string]*gradMaker {
	t := map[string]*gradMaker{}
	for _, d := range ops.All() {
		if d.Grad == nil {
			continue
		}
		mk := &gradMaker{Grad: d.Grad, Type: d.GradType()}
		for _, r := range mk.Reads {
			if s, ok := strings.CutSuffix(r, "@GRAD"); ok {
				mk.outs = append(mk.outs, s)
			}
		}
		t[d.Type] = mk
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
// a var of the block by name. outGrad returns the gradient of a forward
// output arg (calling it may emit the sum of its parts first, or zeros
// for an arg the loss does not depend on); inGrad the gradient var a forward input arg
// gets at this op, or "" when it needs none; unused a var to take the
// grad of an arg that needs none in a slot whose other args need theirs
// (a grad slot holds one arg for each of the forward slot's: concat of a
// constant and an activation).
func (mk *gradMaker) make(fwd *ir.Op, lookup func(string) *ir.Var, outGrad func(arg string) (string, error), inGrad func(slot string, i int, arg string) string, unused func(arg string) (string, error)) (*ir.Op, error) {
	if mk.Unsupported != nil {
		if why := mk.Unsupported(fwd); why != "" {
			return nil, fmt.Errorf("%s: %s", fwd, why)
		}
	}
	if mk.Emit != nil {
		outs := fwd.Output(mk.outs[0])
		ins := fwd.Input(mk.Diff[0])
		if len(outs) == 0 || len(ins) != 1 {
			return nil, fmt.Errorf("%s: want one %s and at least one %s", fwd, mk.Diff[0], mk.outs[0])
		}
		gs := make([]string, len(outs))
		for i, a := range outs {
			g, err := outGrad(a)
			if err != nil {
				return nil, err
			}
			gs[i] = g
		}
		op := mk.Emit(fwd, lookup(ins[0]), gs, inGrad(mk.Diff[0], 0, ins[0]))
		op.Fwd = fwd.ID
		return op, nil
	}
	op := &ir.Op{Type: mk.Type, Attrs: fwd.Attrs.Clone(), Fwd: fwd.ID}
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
		gs := make([]string, len(args))
		needed := 0
		for i, a := range args {
			if gs[i] = inGrad(d, i, a); gs[i] != "" {
				needed++
			}
		}
		switch {
		case needed == 0:
			gs = nil
		case needed < len(args):
			for i, a := range args {
				if gs[i] != "" {
					continue
				}
				g, err := unused(a)
				if err != nil {
					return nil, err
				}
				gs[i] = g
			}
		}
		op.Outputs = append(op.Outputs, ir.S(d+"@GRAD", gs...))
	}
	return op, nil
}

// GradOpTypes returns, sorted, the forward op types append-backward can
// differentiate.
func GradOpTypes() []string {
	return slices.Sorted(maps.Keys(gradMakers()))
}
