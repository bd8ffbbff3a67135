package ops_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/distpass/distpass/internal/corpus"
	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/ops"
)

// mutation is one way to break one op.
type mutation struct {
	name string
	// apply breaks op (of module m, which is a clone) and returns the
	// var or attr a violation must name, or "" when op cannot be broken
	// this way (why says why).
	apply func(m *ir.Module, p *ir.Program, b *ir.Block, op *ir.Op) (name, why string)
}

var mutations = []mutation{
	{"output shape", mutateShape},
	{"slot name", mutateSlot},
	{"attr kind", mutateAttr},
}

// TestMutationsCaught breaks every op of the golden inputs and the model
// zoo in three ways, one at a time: an output's declared shape changed in
// one dim that inference determines, a slot renamed, an attr given a value
// of the wrong kind. Verify must catch each, with a violation at the op's
// id that names the var (or the attr).
func TestMutationsCaught(t *testing.T) {
	type tally struct{ tried, caught int }
	counts := map[string]*tally{}
	na := map[string]map[string]bool{} // mutation -> op types it does not apply to
	for _, c := range corpus.All(t) {
		if _, err := ops.Verify(c.Module, ops.Options{}); err != nil {
			continue // an error case's input: broken on purpose
		}
		for pi, p := range c.Module.Programs() {
			for bi, b := range p.Blocks {
				for oi, op := range b.Ops {
					if ops.Lookup(op.Type) == nil {
						continue
					}
					for _, mu := range mutations {
						m := c.Module.Clone()
						mp := m.Programs()[pi]
						mb := mp.Blocks[bi]
						mop := mb.Ops[oi]
						name, why := mu.apply(m, mp, mb, mop)
						if name == "" {
							if na[mu.name] == nil {
								na[mu.name] = map[string]bool{}
							}
							na[mu.name][op.Type+" ("+why+")"] = true
							continue
						}
						tl := counts[mu.name]
						if tl == nil {
							tl = &tally{}
							counts[mu.name] = tl
						}
						tl.tried++
						_, err := ops.Verify(m, ops.Options{})
						if caught(err, mop.ID, name) {
							tl.caught++
						} else {
							t.Errorf("%s: %s of %s (%s): not caught; verify says: %v", c.Name, mu.name, op, name, err)
						}
					}
				}
			}
		}
	}
	for _, mu := range mutations {
		tl := counts[mu.name]
		if tl == nil {
			t.Errorf("%s: nothing tried", mu.name)
			continue
		}
		t.Logf("%s: caught %d / tried %d", mu.name, tl.caught, tl.tried)
		if len(na[mu.name]) > 0 {
			t.Logf("%s: not applicable to %s", mu.name, strings.Join(slices.Sorted(func(yield func(string) bool) {
				for k := range na[mu.name] {
					if !yield(k) {
						return
					}
				}
			}), ", "))
		}
	}
}

// caught reports whether err has a violation at op id that names name,
// as its var or in its message.
func caught(err error, id int64, name string) bool {
	var ve *ir.VerifyError
	if !errors.As(err, &ve) {
		return false
	}
	for _, v := range ve.Violations {
		if v.OpID == id && (v.Var == name || strings.Contains(v.Msg, name)) {
			return true
		}
	}
	return false
}

// mutateShape adds one to a dim of an output that inference determines,
// or, when it determines none (a 0-d output, rows the data decides), a
// dim to the output.
// An output the op also reads (sgd's ParamOut = Param, an update in
// place) is first moved to a fresh var of its type: changing the shared
// var would change the input with it and leave the op consistent.
func mutateShape(_ *ir.Module, p *ir.Program, b *ir.Block, op *ir.Op) (string, string) {
	outs, err := ops.InferOp(op, func(n string) *ir.Var { return p.LookupVar(b, n) })
	if err != nil {
		return "", "inference fails"
	}
	for _, o := range outs {
		args := op.Output(o.Slot)
		if o.Index >= len(args) {
			continue
		}
		v := p.LookupVar(b, args[o.Index])
		if v == nil || !v.Type.IsTensor() {
			continue
		}
		if reads(op, args[o.Index]) {
			old := args[o.Index]
			if v, err = freshVar(b, v); err != nil {
				return "", err.Error()
			}
			args[o.Index] = v.Name()
			if op.Dist != nil {
				for i := range op.Dist.Outputs {
					if op.Dist.Outputs[i].Name == old {
						op.Dist.Outputs[i].Name = v.Name()
					}
				}
			}
		}
		if o.Scalar {
			v.Type.Shape = []int64{2, 3}
			return v.Name(), ""
		}
		for d, n := range o.Type.Shape {
			if n >= 0 && d < len(v.Type.Shape) {
				v.Type.Shape = slices.Clone(v.Type.Shape)
				v.Type.Shape[d] = n + 1
				return v.Name(), ""
			}
		}
		// A 0-d output, or one whose every dim the data decides: one dim
		// more.
		v.Type.Shape = append(slices.Clone(v.Type.Shape), 7)
		return v.Name(), ""
	}
	return "", "no output inferred"
}

// reads reports whether op has arg among its inputs.
func reads(op *ir.Op, arg string) bool {
	for _, s := range op.Inputs {
		if slices.Contains(s.Args, arg) {
			return true
		}
	}
	return false
}

// freshVar declares in b a var of v's kind, type and dist under a name
// of its own, and returns it.
func freshVar(b *ir.Block, v *ir.Var) (*ir.Var, error) {
	bl := ir.NewBuilder(ir.NewModule("fresh")) // only makes the var
	t := ir.Tensor(v.Type.DType, slices.Clone(v.Type.Shape)...)
	name := v.Name() + "@mutated"
	var nv *ir.Var
	switch v.Kind {
	case ir.KindParam:
		nv = bl.Param(name, t)
	case ir.KindPersist:
		nv = bl.Persist(name, t)
	default:
		nv = bl.Var(name, t)
	}
	nv.Dist = v.Dist.Clone()
	return nv, b.AddVar(nv)
}

// mutateSlot renames the op's first slot that has an arg, as a typo would
// (gelu(Input: ...) for gelu(X: ...)).
func mutateSlot(_ *ir.Module, _ *ir.Program, _ *ir.Block, op *ir.Op) (string, string) {
	for _, ss := range [2][]ir.Slot{op.Inputs, op.Outputs} {
		for i := range ss {
			if len(ss[i].Args) > 0 {
				ss[i].Name += "_typo"
				return ss[i].Args[0], ""
			}
		}
	}
	return "", "no slot with an arg"
}

// mutateAttr gives an attr the op's def declares a value of another kind:
// one the op carries, else the def's first.
func mutateAttr(_ *ir.Module, _ *ir.Program, _ *ir.Block, op *ir.Op) (string, string) {
	d := ops.Lookup(op.Type)
	if len(d.Attrs) == 0 {
		return "", "no attrs defined"
	}
	a := d.Attrs[0]
	for _, da := range d.Attrs {
		if op.Attrs.Has(da.Name) {
			a = da
			break
		}
	}
	var wrong ir.Value = ir.String("wrong")
	if a.Type == ir.KindString {
		wrong = ir.Bool(true)
	}
	op.Attrs.Set(a.Name, wrong)
	return a.Name, ""
}
