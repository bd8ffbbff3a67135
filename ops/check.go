package ops

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/distpass/distpass/ir"
)

// Options configures Verify.
type Options struct {
	// Strict rejects an op whose type has no definition; otherwise such
	// an op is accepted (custom ops exist: Paddle's gap) and counted.
	Strict bool
}

// Stats says what Verify checked.
type Stats struct {
	// Ops is the number of ops verified, Defined how many of them had a
	// definition.
	Ops, Defined int
	// Undefined counts the ops of each type without a definition, sorted
	// by type.
	Undefined []TypeCount
}

// TypeCount is a number of ops of one type.
type TypeCount struct {
	Type  string
	Count int
}

// Verify checks m against ir.Verify's structural rules and every op
// against its type's definition: its slots (no unknown slot, required
// ones present, one arg unless variadic), its attrs' kinds and allowed
// values (an int attr's within int32's range, a dtype attr's naming a
// dtype), and its outputs' declared dtypes and shapes against inference
// from its inputs. A per-rank program (after partition) is checked the
// same way: its vars have local shapes, and so do the attrs its impls
// rewrote; and, when the module has a group table, each op that talks
// to other ranks names a group of it that holds the program's rank,
// with peers, roots, nranks and all-to-all rows that fit that group
// (rankcheck.go). The error is an *ir.VerifyError.
func Verify(m *ir.Module, opts Options) (Stats, error) {
	var mu sync.Mutex
	var cks []*checker
	groups := newRankGroups(m)
	err := ir.VerifyWith(m, ir.VerifyOptions{NewOpCheck: func() ir.OpCheck {
		ck := &checker{opts: opts, groups: groups}
		mu.Lock()
		cks = append(cks, ck)
		mu.Unlock()
		return ck.check
	}})
	return stats(cks), err
}

// checker is the state of one goroutine's op checks: the counts and the
// reused inference context.
type checker struct {
	opts      Options
	groups    rankGroups // the group table of a module with a per-rank program, or nil
	ops, defd int
	undefined map[string]int
	last      *Def // the def of the previous op, which is often the next op's
	inf       Infer
	vals      []ir.Value // the op's attr values, by the def's attrs
}

// stats sums the checkers' counts.
func stats(cks []*checker) Stats {
	var s Stats
	undef := map[string]int{}
	for _, ck := range cks {
		s.Ops += ck.ops
		s.Defined += ck.defd
		for t, n := range ck.undefined {
			undef[t] += n
		}
	}
	for t, n := range undef {
		s.Undefined = append(s.Undefined, TypeCount{t, n})
	}
	slices.SortFunc(s.Undefined, func(a, b TypeCount) int { return strings.Compare(a.Type, b.Type) })
	return s
}

func (ck *checker) check(p *ir.Program, op *ir.Op, ins, outs []*ir.Var, report func(string, string)) {
	ck.ops++
	d := ck.last
	if d == nil || d.Type != op.Type {
		d = Lookup(op.Type)
		if d == nil {
			if ck.undefined == nil {
				ck.undefined = map[string]int{}
			}
			ck.undefined[op.Type]++
			if ck.opts.Strict {
				report("", "op type "+strconv.Quote(op.Type)+" has no definition (strict)")
			}
			if ck.groups != nil && p.Rank >= 0 {
				ck.groups.checkRank(p.Rank, op, nil, ins, report)
			}
			return
		}
		ck.last = d
	}
	ck.defd++
	ok := checkSlots(d, op, report)
	ck.vals = checkAttrs(d, op, ck.vals[:0], report)
	if ck.groups != nil && p.Rank >= 0 {
		ck.groups.checkRank(p.Rank, op, d, ins, report)
	}
	if !ok || d.Infer == nil && d.Check == nil {
		return
	}
	for _, v := range ins {
		if v == nil {
			return // reported by ir.Verify; nothing to infer from
		}
	}
	c := &ck.inf
	*c = Infer{def: d, op: op, ins: ins, outs: outs, vals: ck.vals, res: c.res[:0], buf: c.buf[:0]}
	if d.Check != nil {
		d.Check(c, report)
	}
	if d.Infer == nil {
		return
	}
	if err := d.Infer(c); err != nil {
		report("", "inconsistent inputs: "+err.Error())
		return
	}
	for i := range c.res {
		r := &c.res[i]
		v := argAt(op.Outputs, outs, r.slot, r.i)
		if v == nil || !v.Type.IsTensor() {
			continue
		}
		if msg := mismatch(r, v.Type); msg != "" {
			report(v.Name(), "output "+r.slot+" "+v.Name()+": "+msg+" from "+inputTypes(op, ins))
		}
	}
}

// inputTypes spells op's inputs with their types, for a message: "X
// f32[4, 8], Y f32[8, 16]"; "no inputs" when it has none.
func inputTypes(op *ir.Op, ins []*ir.Var) string {
	const most = 4
	var parts []string
	k := 0
	for _, s := range op.Inputs {
		for range s.Args {
			if len(parts) == most {
				return strings.Join(parts, ", ") + ", ..."
			}
			if k < len(ins) && ins[k] != nil {
				parts = append(parts, s.Name+" "+ins[k].Type.String())
			}
			k++
		}
	}
	if len(parts) == 0 {
		return "its attrs"
	}
	return strings.Join(parts, ", ")
}

// mismatch says how declared t differs from inferred r, or "".
func mismatch(r *result, t ir.Type) string {
	if r.dtype != ir.DTypeInvalid && t.DType != r.dtype {
		return "declared " + t.String() + ", inferred dtype " + r.dtype.String()
	}
	if r.scalar {
		if len(t.Shape) == 0 || len(t.Shape) == 1 && (t.Shape[0] == 1 || t.Shape[0] == -1) {
			return ""
		}
		return "declared " + t.String() + ", inferred a scalar ([] or [1])"
	}
	if !Compatible(t.Shape, r.shape) {
		return "declared " + t.String() + ", inferred " + ir.FormatShape(r.shape)
	}
	return ""
}

// Compatible reports whether shapes a and b can be one shape: the same
// rank, and equal dims where both are known (-1 is unknown).
func Compatible(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] && a[i] >= 0 && b[i] >= 0 {
			return false
		}
	}
	return true
}

// checkSlots checks op's slots against d's and reports whether they are
// as d says (inference needs them to be).
func checkSlots(d *Def, op *ir.Op, report func(string, string)) bool {
	ok := side(d, d.Inputs, op.Inputs, "input", report)
	return side(d, d.Outputs, op.Outputs, "output", report) && ok
}

func side(d *Def, want []Slot, have []ir.Slot, what string, report func(string, string)) bool {
	if inOrder(want, have) {
		return true
	}
	ok := true
	unknown := -1 // the first slot d does not have: a misspelling, most likely
	for i := range have {
		s := &have[i]
		k := slotIndex(want, s.Name)
		if k < 0 {
			if unknown < 0 {
				unknown = i
			}
			ok = false
			continue
		}
		if len(s.Args) > 1 && !want[k].Variadic {
			report(s.Args[1], fmt.Sprintf("%s slot %s has %d args (%s); it takes one", what, s.Name, len(s.Args), strings.Join(s.Args, ", ")))
			ok = false
		}
	}
	var missing []string
	for _, w := range want {
		if w.Optional {
			continue
		}
		name := w.Name
		if w.Numbered {
			name += "0"
		}
		if k := haveIndex(have, name); k < 0 || len(have[k].Args) == 0 {
			missing = append(missing, name)
		}
	}
	// One violation per side: an unknown slot and the required slot it
	// was meant to be are one mistake.
	switch {
	case unknown >= 0:
		s := &have[unknown]
		name, msg := "", what+" slot "+s.Name
		if len(s.Args) > 0 {
			name = s.Args[0]
			msg += " (" + strings.Join(s.Args, ", ") + ")"
		}
		msg += " is not a slot of " + d.Type + " (" + slotNames(want) + ")"
		if len(missing) > 0 {
			msg += "; missing " + strings.Join(missing, ", ")
		}
		report(name, msg)
	case len(missing) > 0:
		report("", what+" slot "+strings.Join(missing, ", ")+" required, not given")
		ok = false
	}
	return ok
}

// inOrder reports, in one walk, the common case of slots that are all
// right: have's slots are want's in want's order, none unknown, every
// required one present with args, none but a variadic one with more
// than one arg. When it says no, side looks closer.
func inOrder(want []Slot, have []ir.Slot) bool {
	k := 0
	for i := range have {
		s := &have[i]
		for k < len(want) && want[k].Name != s.Name {
			if !want[k].Optional || want[k].Numbered {
				return false
			}
			k++
		}
		if k == len(want) || len(s.Args) > 1 && !want[k].Variadic || len(s.Args) == 0 && !want[k].Optional {
			return false
		}
		k++
	}
	for ; k < len(want); k++ {
		if !want[k].Optional {
			return false
		}
	}
	return true
}

func slotIndex(ss []Slot, name string) int {
	for i := range ss {
		if ss[i].Name == name || ss[i].Numbered && numbered(name, ss[i].Name) {
			return i
		}
	}
	return -1
}

// numbered reports whether name is prefix followed by a number: in0, in12.
func numbered(name, prefix string) bool {
	n, ok := strings.CutPrefix(name, prefix)
	if !ok || n == "" || n[0] == '0' && len(n) > 1 {
		return false
	}
	for _, c := range n {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func haveIndex(ss []ir.Slot, name string) int {
	for i := range ss {
		if ss[i].Name == name {
			return i
		}
	}
	return -1
}

func slotNames(ss []Slot) string {
	if len(ss) == 0 {
		return "it has none"
	}
	var sb strings.Builder
	sb.WriteString("slots: ")
	for i, s := range ss {
		if i > 0 {
			sb.WriteString(", ")
		}
		sb.WriteString(s.Name)
		if s.Numbered {
			sb.WriteString("0, " + s.Name + "1, ...")
		}
	}
	return sb.String()
}

// checkAttrs checks the kinds and values of the attrs op has of d's, and
// appends to vals, for each of d's attrs, the op's value or the default.
// Both lists are sorted by name (d's by the table, op's by ir.Verify's
// rule), so one merge walk finds them; an op whose attrs are out of
// order already breaks ir.Verify's rules.
func checkAttrs(d *Def, op *ir.Op, vals []ir.Value, report func(string, string)) []ir.Value {
	as := op.Attrs
	j := 0
	for i := range d.Attrs {
		a := &d.Attrs[i]
		for j < len(as) && as[j].Name < a.Name {
			j++
		}
		if j == len(as) || as[j].Name != a.Name {
			vals = append(vals, a.Default)
			continue
		}
		v := as[j].Value
		vals = append(vals, v)
		if v == nil {
			continue
		}
		if !kindAccepts(a.Type, v.Kind()) {
			if report != nil {
				report("", "attr "+a.Name+" is "+v.Kind().String()+", want "+a.Type.String())
			}
			continue
		}
		if a.Allowed != nil && !allowed(a.Allowed, v) && report != nil {
			report("", "attr "+a.Name+" = "+valueString(v)+" is not one of "+valuesString(a.Allowed))
		}
		if report != nil && (a.Type == ir.KindInt || a.Type == ir.KindInts) {
			checkInt32(a.Name, v, report)
		}
		if report != nil && a.DType && a.Allowed == nil {
			if code, ok := intValue(v); ok && code != -1 {
				if _, ok := AttrDType(v); !ok {
					report("", "attr "+a.Name+" = "+strconv.FormatInt(code, 10)+" names no dtype distpass knows (Paddle's VarType codes: "+dtypeCodes()+")")
				}
			}
		}
	}
	return vals
}

// checkInt32 reports a value of an attr the table declares int or ints,
// Paddle's int and std::vector<int>, that does not fit 32 bits: Paddle
// keeps such an attr in an int32, whatever kind the program wrote the
// value as (a long), so a value outside int32's range is not the
// program's value on any runtime. The table declares the attrs Paddle
// keeps in 64 bits long or longs (longAttr, longsAttr).
func checkInt32(name string, v ir.Value, report func(string, string)) {
	bad := func(x int64, where string) {
		what := "it a 32-bit int"
		if where != "" {
			what = name + " a list of 32-bit ints"
		}
		report("", "attr "+name+where+" = "+strconv.FormatInt(x, 10)+
			" is out of range: Paddle declares "+what+" (-2147483648 to 2147483647)")
	}
	switch x := v.(type) {
	case ir.Int:
		if int64(x) != int64(int32(x)) {
			bad(int64(x), "")
		}
	case ir.Long:
		if int64(x) != int64(int32(x)) {
			bad(int64(x), "")
		}
	case ir.Ints:
		for i, e := range x {
			if e != int64(int32(e)) {
				bad(e, "["+strconv.Itoa(i)+"]")
				return
			}
		}
	case ir.Longs:
		for i, e := range x {
			if e != int64(int32(e)) {
				bad(e, "["+strconv.Itoa(i)+"]")
				return
			}
		}
	}
}

// kindAccepts reports whether an attr declared of kind want may hold a
// value of kind have.
func kindAccepts(want, have ir.AttrKind) bool {
	if want == have {
		return true
	}
	// Paddle's attr loader reads a bool from an int (is_test = 1 in
	// older programs).
	if want == ir.KindBool {
		return have == ir.KindInt || have == ir.KindLong
	}
	return narrow(want) == narrow(have)
}

// narrow returns the 32-bit kind of a 64-bit one (int of long, floats of
// float64s), and any other kind itself.
func narrow(k ir.AttrKind) ir.AttrKind {
	switch k {
	case ir.KindLong:
		return ir.KindInt
	case ir.KindFloat64:
		return ir.KindFloat
	case ir.KindLongs:
		return ir.KindInts
	case ir.KindFloat64s:
		return ir.KindFloats
	}
	return k
}

func allowed(vs []ir.Value, v ir.Value) bool {
	for _, w := range vs {
		if scalarEqual(w, v) {
			return true
		}
	}
	return false
}

func scalarEqual(a, b ir.Value) bool {
	switch x := a.(type) {
	case ir.String:
		y, ok := b.(ir.String)
		return ok && x == y
	case ir.Int:
		switch y := b.(type) {
		case ir.Int:
			return x == y
		case ir.Long:
			return int64(x) == int64(y)
		}
	case ir.Bool:
		y, ok := b.(ir.Bool)
		return ok && x == y
	}
	return false
}

func valueString(v ir.Value) string {
	switch x := v.(type) {
	case ir.String:
		return strconv.Quote(string(x))
	case ir.Int:
		return strconv.FormatInt(int64(x), 10)
	case ir.Long:
		return strconv.FormatInt(int64(x), 10)
	case ir.Bool:
		return strconv.FormatBool(bool(x))
	}
	return v.Kind().String()
}

func valuesString(vs []ir.Value) string {
	s := make([]string, len(vs))
	for i, v := range vs {
		s[i] = valueString(v)
	}
	return "[" + strings.Join(s, ", ") + "]"
}

// Output is one output type that inference gave.
type Output struct {
	Slot  string
	Index int // the arg's position in the slot
	// Type is a dense tensor type; DType is ir.DTypeInvalid when
	// inference leaves it open, a dim -1 when it leaves that dim open.
	Type ir.Type
	// Scalar marks a 0-d value, which programs declare as [] or [1]
	// (Type's shape is then []).
	Scalar bool
}

// newInfer is the inference context of op, with def d and the vars
// lookup finds; nil when an input does not resolve.
func newInfer(d *Def, op *ir.Op, lookup func(name string) *ir.Var) *Infer {
	var ins, outs []*ir.Var
	for _, s := range op.Inputs {
		for _, a := range s.Args {
			v := lookup(a)
			if v == nil {
				return nil
			}
			ins = append(ins, v)
		}
	}
	for _, s := range op.Outputs {
		for _, a := range s.Args {
			outs = append(outs, lookup(a))
		}
	}
	return &Infer{def: d, op: op, ins: ins, outs: outs, vals: checkAttrs(d, op, nil, nil)}
}

// InferOp returns the output types op's definition infers from its
// inputs, whose vars lookup finds by name, in the order the definition
// sets them; nil when op's type has no definition or no inference, or an
// input does not resolve. Outputs inference leaves open are not listed.
func InferOp(op *ir.Op, lookup func(name string) *ir.Var) ([]Output, error) {
	d := Lookup(op.Type)
	if d == nil || d.Infer == nil {
		return nil, nil
	}
	c := newInfer(d, op, lookup)
	if c == nil {
		return nil, nil
	}
	if err := d.Infer(c); err != nil {
		return nil, fmt.Errorf("%s: inconsistent inputs: %w", op, err)
	}
	res := make([]Output, len(c.res))
	for i, r := range c.res {
		res[i] = Output{Slot: r.slot, Index: r.i, Type: ir.Tensor(r.dtype, slices.Clone(r.shape)...), Scalar: r.scalar}
	}
	return res, nil
}

// dtypeCodes lists the Paddle VarType codes of the dtypes distpass
// knows, for a message: "bool 0, i16 1, ...".
var dtypeCodes = sync.OnceValue(func() string {
	var parts []string
	for code := range int64(64) {
		if d, ok := ir.DTypeFromPaddle(code); ok {
			parts = append(parts, d.String()+" "+strconv.FormatInt(code, 10))
		}
	}
	return strings.Join(parts, ", ")
})

// checkDTypes returns a Check that holds the int dtype attrs names to
// name a dtype: -1, which other ops read as "the input's", included, as
// for cast, whose out_dtype says what it converts to.
func checkDTypes(names ...string) func(c *Infer, report func(string, string)) {
	return func(c *Infer, report func(string, string)) {
		for _, name := range names {
			v := c.attr(name)
			if code, ok := intValue(v); ok {
				if _, ok := AttrDType(v); !ok && code == -1 {
					report("", "attr "+name+" = -1 names no dtype, and "+c.op.Type+" needs one (Paddle's VarType codes: "+dtypeCodes()+")")
				}
			}
		}
	}
}
