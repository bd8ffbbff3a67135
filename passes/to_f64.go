package passes

import (
	"errors"
	"fmt"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/ops"
)

// ToF64Pass converts every floating-point tensor of a module to f64, so
// that a deep net's serial and SPMD runs can be compared to f64's
// tolerance.
func ToF64Pass() *Pass {
	return &Pass{
		Name: "to-f64",
		Doc: `convert every floating-point tensor to f64
In every program (main and startup) and block, each var of dtype f16,
bf16 or f32 becomes f64, the element types of tensor arrays, readers and
tuples too, and each op attr that the op table marks as naming a dtype
and that names one of those (a Paddle VarType code 4, 5 or 22, or a PIR
name such as "float32") names f64 instead, in the kind it was written in;
an absent such attr whose default names one is set, as uniform_random
without a dtype draws f32. Integer and bool vars and attrs, names, ids,
dists and every other attr stay as they are, so a cast between two float
dtypes becomes an f64 to f64 copy and a half-precision program loses its
rounding and overflow (update_loss_scaling sees f64 values). A module
already in f64 is left as it is. Refused, each named with its var: an
op whose type the op table does not define that reads or writes a var
the pass would convert (whether its attrs name a dtype is not known).
On error the module is unchanged. Counts vars and attrs.`,
		Run: func(ctx *Context, m *ir.Module) error {
			st, err := ToF64(m)
			if err != nil {
				return err
			}
			ctx.Count("vars", st.Vars)
			ctx.Count("attrs", st.Attrs)
			return nil
		},
	}
}

// F64Stats counts what ToF64 converted.
type F64Stats struct {
	Vars  int // vars whose type changed
	Attrs int // dtype attrs set to f64
}

// ToF64 is to-f64's work (see its Doc). It checks the whole module
// before it changes anything, so that on error m is as it was.
func ToF64(m *ir.Module) (F64Stats, error) {
	var errs []error
	for _, p := range m.Programs() {
		for _, b := range p.Blocks {
			if b == nil {
				continue
			}
			for _, op := range b.Ops {
				if ops.Lookup(op.Type) != nil {
					continue
				}
				if v := convertedArg(p, b, op); v != nil {
					errs = append(errs, fmt.Errorf("%s block %d: op %d %s (var %s): the op table does not define %s, so to-f64 cannot tell whether its attrs name a dtype",
						p.Name, b.Index, op.ID, op.Type, v.Name(), op.Type))
				}
			}
		}
	}
	if len(errs) > 0 {
		return F64Stats{}, errors.Join(errs...)
	}
	var st F64Stats
	for _, p := range m.Programs() {
		for _, b := range p.Blocks {
			if b == nil {
				continue
			}
			for _, v := range b.Vars() {
				if t, ok := typeToF64(v.Type); ok {
					v.Type = t
					st.Vars++
				}
			}
			for _, op := range b.Ops {
				st.Attrs += attrsToF64(op)
			}
		}
	}
	return st, nil
}

// convertedArg returns the first var op reads or writes that to-f64
// would convert, or nil.
func convertedArg(p *ir.Program, b *ir.Block, op *ir.Op) *ir.Var {
	for _, ss := range [2][]ir.Slot{op.Inputs, op.Outputs} {
		for _, s := range ss {
			for _, a := range s.Args {
				if v := p.LookupVar(b, a); v != nil && needsF64(v.Type) {
					return v
				}
			}
		}
	}
	return nil
}

// narrowFloat reports whether d is a float dtype other than f64.
func narrowFloat(d ir.DType) bool { return d.IsFloat() && d != ir.F64 }

func needsF64(t ir.Type) bool {
	if narrowFloat(t.DType) {
		return true
	}
	for _, e := range t.Elems {
		if needsF64(e) {
			return true
		}
	}
	return false
}

// typeToF64 returns t with every narrow float dtype, its elements' too,
// made f64, and whether anything changed. The result shares no Elems
// with t.
func typeToF64(t ir.Type) (ir.Type, bool) {
	if !needsF64(t) {
		return t, false
	}
	if narrowFloat(t.DType) {
		t.DType = ir.F64
	}
	if t.Elems != nil {
		elems := make([]ir.Type, len(t.Elems))
		for i, e := range t.Elems {
			elems[i], _ = typeToF64(e)
		}
		t.Elems = elems
	}
	return t, true
}

// attrsToF64 sets each dtype attr of op that names a narrow float dtype,
// given or by default, to f64, and returns how many it set.
func attrsToF64(op *ir.Op) int {
	def := ops.Lookup(op.Type)
	if def == nil {
		return 0
	}
	n := 0
	for _, a := range def.Attrs {
		if !a.DType {
			continue
		}
		v := op.Attrs.Get(a.Name)
		if v == nil {
			v = a.Default
		}
		if d, ok := ops.AttrDType(v); !ok || !narrowFloat(d) {
			continue
		}
		if nv, ok := ops.DTypeValue(ir.F64, v); ok {
			op.Attrs.Set(a.Name, nv)
			n++
		}
	}
	return n
}
