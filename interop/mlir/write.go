package mlir

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/distpass/distpass/ir"
)

// Write writes the MLIR twin of m's main program to w (see the package
// doc). It streams: memory does not grow with the size of the text. A
// module MLIR cannot spell (an attr with an empty name) is an error
// before anything is written.
func Write(w io.Writer, m *ir.Module) error {
	if m == nil || m.Main == nil || len(m.Main.Blocks) == 0 {
		return errors.New("mlir: the module has no main program")
	}
	wr := &writer{prog: m.Main}
	// A first walk, printing nothing, finds the args of @main: the vars
	// read before any write in scope. The second prints, with the args
	// bound from the start; both walks make the same choices.
	wr.walkAll()
	if wr.err != nil {
		return wr.err
	}
	args := wr.args
	wr.reset()
	wr.out = w
	wr.buf = make([]byte, 0, 2*flushSize)
	wr.emit = true

	wr.str("module ")
	if m.Name != "" {
		wr.byte('@')
		wr.ident(m.Name)
		wr.byte(' ')
	}
	wr.str("{\n  func.func @main(")
	for i, a := range args {
		if i > 0 {
			wr.str(", ")
		}
		name := wr.fresh(a.name)
		wr.bind(a.name, name)
		wr.byte('%')
		wr.str(name)
		wr.str(": ")
		wr.typ(a.typ)
	}
	wr.str(") {\n")
	wr.walk()
	wr.str("    return\n  }\n}\n")
	wr.flush()
	return wr.err
}

// flushSize is how much text the writer gathers before writing it out.
const flushSize = 64 << 10

type arg struct {
	name string
	typ  *ir.Var // nil: undeclared
}

type writer struct {
	prog *ir.Program
	emit bool // print (the second walk) or only find the args (the first)

	out io.Writer
	buf []byte
	err error

	used   map[string]struct{} // SSA names handed out
	next   map[string]int      // the next suffix to try, per base name
	latest map[string]string   // var -> its SSA name in scope
	undo   []binding           // for leaving regions: bindings to restore
	depth  int                 // region nesting; bindings at depth 0 need no undo
	placed []bool              // blocks already printed (or being printed)
	args   []arg               // of @main, found by the first walk
	vars   []*ir.Var           // scratch: the operand vars of the op being printed
}

type binding struct {
	name, prev string
	had        bool
}

func (w *writer) reset() {
	w.used = make(map[string]struct{})
	w.next = make(map[string]int)
	w.latest = make(map[string]string)
	w.undo = w.undo[:0]
	w.depth = 0
	w.placed = make([]bool, len(w.prog.Blocks))
	w.args = nil
}

func (w *writer) walkAll() {
	w.reset()
	w.walk()
}

// walk prints block 0 at the top of @main's body, then every block no op
// referred to.
func (w *writer) walk() {
	w.placed[0] = true
	w.block(0, 4)
	for i, b := range w.prog.Blocks {
		if w.placed[i] {
			continue
		}
		w.placed[i] = true
		if w.emit {
			w.str(`    "dist.block"() (`)
		}
		w.region(i, 4)
		if w.emit {
			w.str(") {index = ")
			w.int(int64(i))
			w.str(" : i64, parent = ")
			w.int(int64(b.Parent))
			w.str(" : i64} : () -> ()")
			w.line()
		}
	}
}

func (w *writer) block(bi, indent int) {
	b := w.prog.Blocks[bi]
	for _, op := range b.Ops {
		w.op(b, op, indent)
	}
}

// region prints block bi as a region: {, its ops one level deeper, and
// the closing } at indent. Bindings made inside are undone after it.
func (w *writer) region(bi, indent int) {
	if w.emit {
		w.str("{\n")
	}
	mark := len(w.undo)
	w.depth++
	w.block(bi, indent+2)
	w.depth--
	for i := len(w.undo) - 1; i >= mark; i-- {
		u := w.undo[i]
		if u.had {
			w.latest[u.name] = u.prev
		} else {
			delete(w.latest, u.name)
		}
	}
	w.undo = w.undo[:mark]
	if w.emit {
		w.indent(indent)
		w.byte('}')
	}
}

func (w *writer) op(b *ir.Block, op *ir.Op, indent int) {
	// Operands are the values in scope before the op; regions see them
	// too; the results are bound after the regions, which cannot use them.
	var operands []string
	vars := w.vars[:0] // regions use w.vars after; it is put back below
	w.vars = nil
	for a := range op.InputNames {
		operands = append(operands, w.read(b, a))
		if w.emit {
			vars = append(vars, w.prog.LookupVar(b, a))
		}
	}
	var results []string
	for a := range op.OutputNames {
		results = append(results, w.fresh(a))
	}
	if !w.emit && w.err == nil {
		for _, a := range op.Attrs {
			if a.Name == "" {
				w.err = fmt.Errorf("mlir: %s: an attr with an empty name has no MLIR spelling", op)
			}
		}
	}
	var regions []int
	for r := range op.SubBlocks {
		if r > 0 && r < len(w.placed) && !w.placed[r] {
			w.placed[r] = true
			regions = append(regions, r)
		}
	}
	if w.emit {
		w.indent(indent)
		for i, r := range results {
			if i > 0 {
				w.str(", ")
			}
			w.byte('%')
			w.str(r)
		}
		if len(results) > 0 {
			w.str(" = ")
		}
		w.byte('"')
		w.str("dist.")
		w.escaped(op.Type)
		w.str(`"(`)
		for i, o := range operands {
			if i > 0 {
				w.str(", ")
			}
			w.byte('%')
			w.str(o)
		}
		w.byte(')')
	}
	if len(regions) > 0 {
		if w.emit {
			w.str(" (")
		}
		for i, r := range regions {
			if w.emit && i > 0 {
				w.str(", ")
			}
			w.region(r, indent)
		}
		if w.emit {
			w.byte(')')
		}
	}
	if w.emit {
		if len(op.Attrs) > 0 {
			w.str(" {")
			for i, a := range op.Attrs {
				if i > 0 {
					w.str(", ")
				}
				w.ident(a.Name)
				w.str(" = ")
				w.value(a.Value)
			}
			w.byte('}')
		}
		w.str(" : (")
		for i, v := range vars {
			if i > 0 {
				w.str(", ")
			}
			w.typ(v)
		}
		w.str(") -> ")
		if len(results) != 1 {
			w.byte('(')
		}
		i := 0
		for a := range op.OutputNames {
			if i > 0 {
				w.str(", ")
			}
			i++
			w.typ(w.prog.LookupVar(b, a))
		}
		if len(results) != 1 {
			w.byte(')')
		}
		w.line()
	}
	w.vars = vars[:0]
	i := 0
	for a := range op.OutputNames {
		w.bind(a, results[i])
		i++
	}
}

// read returns the SSA name of var a's latest write in scope, making it
// an arg of @main if there is none.
func (w *writer) read(b *ir.Block, a string) string {
	if s, ok := w.latest[a]; ok {
		return s
	}
	// Only the first walk gets here: the second binds every arg first.
	w.args = append(w.args, arg{name: a, typ: w.prog.LookupVar(b, a)})
	s := w.fresh(a)
	w.latest[a] = s // at the top: never undone
	return s
}

// bind makes s the latest value of var a, until the region it is in ends.
func (w *writer) bind(a, s string) {
	if w.depth > 0 {
		prev, had := w.latest[a]
		w.undo = append(w.undo, binding{a, prev, had})
	}
	w.latest[a] = s
}

// fresh returns an SSA name for a new value of var a: a itself made a
// valid MLIR name, or that with the first free suffix _1, _2, ….
func (w *writer) fresh(a string) string {
	base := ssaBase(a)
	if _, taken := w.used[base]; !taken {
		w.used[base] = struct{}{}
		return base
	}
	for n := w.next[base] + 1; ; n++ {
		s := base + "_" + strconv.Itoa(n)
		if _, taken := w.used[s]; !taken {
			w.used[s] = struct{}{}
			w.next[base] = n
			return s
		}
	}
}

// ssaBase makes a var name a valid MLIR value name: letters, digits and
// $._- only (others become _), not starting with a digit unless all
// digits, which could clash with MLIR's own numbering, so a v goes in front.
func ssaBase(a string) string {
	ok := a != "" && !isDigit(a[0])
	for i := 0; ok && i < len(a); i++ {
		ok = isSSAChar(a[i])
	}
	if ok {
		return a
	}
	bs := make([]byte, 0, len(a)+1)
	if a == "" || isDigit(a[0]) {
		bs = append(bs, 'v')
	}
	for i := 0; i < len(a); i++ {
		c := a[i]
		if !isSSAChar(c) {
			c = '_'
		}
		bs = append(bs, c)
	}
	return string(bs)
}

func isDigit(c byte) bool  { return '0' <= c && c <= '9' }
func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
func isSSAChar(c byte) bool {
	return isLetter(c) || isDigit(c) || c == '$' || c == '.' || c == '_' || c == '-'
}

// ident writes a name as an MLIR bare identifier ([A-Za-z_][A-Za-z0-9_$.]*)
// or, if it is not one, as a string literal.
func (w *writer) ident(s string) {
	ok := s != "" && (isLetter(s[0]) || s[0] == '_')
	for i := 1; ok && i < len(s); i++ {
		c := s[i]
		ok = isLetter(c) || isDigit(c) || c == '_' || c == '$' || c == '.'
	}
	if ok {
		w.str(s)
		return
	}
	w.quoted(s)
}

func (w *writer) quoted(s string) {
	w.byte('"')
	w.escaped(s)
	w.byte('"')
}

// escaped writes s with MLIR's string escapes.
func (w *writer) escaped(s string) {
	const hex = "0123456789ABCDEF"
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			w.buf = append(w.buf, '\\', c)
		case c < 0x20 || c >= 0x7f:
			w.buf = append(w.buf, '\\', hex[c>>4], hex[c&15])
		default:
			w.buf = append(w.buf, c)
		}
	}
}

func (w *writer) value(v ir.Value) {
	switch v := v.(type) {
	case ir.Bool:
		w.buf = strconv.AppendBool(w.buf, bool(v))
	case ir.Int:
		w.i64(int64(v))
	case ir.Float:
		w.f64(float64(v))
	case ir.String:
		w.quoted(string(v))
	case ir.BlockRef:
		w.i64(int64(v))
	case ir.Bools:
		list(w, v, func(x bool) { w.buf = strconv.AppendBool(w.buf, x) })
	case ir.Ints:
		list(w, v, w.i64)
	case ir.Floats:
		list(w, v, w.f64)
	case ir.Strings:
		list(w, v, w.quoted)
	case ir.BlockRefs:
		list(w, v, func(x int) { w.i64(int64(x)) })
	case ir.Long:
		w.i64(int64(v))
	case ir.Longs:
		list(w, v, w.i64)
	case ir.Float64:
		w.f64(float64(v))
	case ir.Float64s:
		list(w, v, w.f64)
	case ir.VarRef:
		w.varRef(string(v))
	case ir.VarRefs:
		list(w, v, w.varRef)
	case ir.Scalar:
		w.scalar(v)
	case ir.Scalars:
		list(w, v, w.scalar)
	default:
		w.str("unit") // a nil value; the verifier rejects it
	}
}

func list[T any](w *writer, xs []T, elem func(T)) {
	w.byte('[')
	for i, x := range xs {
		if i > 0 {
			w.str(", ")
		}
		elem(x)
	}
	w.byte(']')
}

// varRef writes a var named in an attr, which MLIR cannot point at as a
// value: the opaque attribute #dist.var<"name">.
func (w *writer) varRef(name string) {
	w.str("#dist.var<")
	w.quoted(name)
	w.byte('>')
}

// scalar writes a Paddle scalar as the attr of its kind: a bool, an i64,
// an f64, or a complex number #complex.number<:f64 re, im>.
func (w *writer) scalar(x ir.Scalar) {
	switch x.Type {
	case ir.ScalarBool:
		w.buf = strconv.AppendBool(w.buf, x.B)
	case ir.ScalarLong:
		w.i64(x.I)
	case ir.ScalarFloat64:
		w.f64(x.R)
	case ir.ScalarComplex:
		w.str("#complex.number<:f64 ")
		w.float(x.R)
		w.str(", ")
		w.float(x.Im)
		w.byte('>')
	default:
		w.str("unit") // an unknown kind; the verifier rejects it
	}
}

func (w *writer) i64(x int64) {
	w.int(x)
	w.str(" : i64")
}

// f64 writes a float attr, `F : f64`.
func (w *writer) f64(x float64) {
	w.float(x)
	w.str(" : f64")
}

// float writes the shortest decimal that reads back as x, with a "." as
// MLIR's float literals need; NaN and infinities as their bits in hex.
func (w *writer) float(x float64) {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		w.str("0x")
		s := strconv.FormatUint(math.Float64bits(x), 16)
		for _, c := range []byte(s) {
			if 'a' <= c && c <= 'f' {
				c -= 'a' - 'A'
			}
			w.byte(c)
		}
		return
	}
	start := len(w.buf)
	w.buf = strconv.AppendFloat(w.buf, x, 'g', -1, 64)
	mant := len(w.buf)
	for i := start; i < len(w.buf); i++ {
		if w.buf[i] == 'e' {
			mant = i
			break
		}
	}
	dot := false
	for _, c := range w.buf[start:mant] {
		dot = dot || c == '.'
	}
	if !dot {
		exp := string(w.buf[mant:])
		w.buf = append(w.buf[:mant], ".0"...)
		w.buf = append(w.buf, exp...)
	}
}

// typ writes the type of v (nil: an undeclared var, none).
func (w *writer) typ(v *ir.Var) {
	if v == nil {
		w.str("none")
		return
	}
	t := v.Type
	if t.Kind != ir.DenseTensor {
		w.str("!dist.")
		w.str(t.Kind.String())
		return
	}
	w.str("tensor<")
	for _, d := range t.Shape {
		if d < 0 {
			w.byte('?')
		} else {
			w.int(d)
		}
		w.byte('x')
	}
	w.str(elemType(t.DType))
	w.byte('>')
}

func elemType(d ir.DType) string {
	switch d {
	case ir.Boolean:
		return "i1"
	case ir.U8:
		return "ui8"
	case ir.I8, ir.I16, ir.I32, ir.I64, ir.F16, ir.BF16, ir.F32, ir.F64:
		return d.String()
	}
	return "!dist.invalid" // the verifier rejects it
}

func (w *writer) str(s string) { w.buf = append(w.buf, s...) }
func (w *writer) byte(c byte)  { w.buf = append(w.buf, c) }
func (w *writer) int(i int64)  { w.buf = strconv.AppendInt(w.buf, i, 10) }

func (w *writer) indent(n int) {
	for range n {
		w.buf = append(w.buf, ' ')
	}
}

// line ends a line and writes out a full buffer.
func (w *writer) line() {
	w.buf = append(w.buf, '\n')
	if len(w.buf) >= flushSize {
		w.flush()
	}
}

func (w *writer) flush() {
	if w.err == nil && len(w.buf) > 0 {
		_, w.err = w.out.Write(w.buf)
	}
	w.buf = w.buf[:0]
}
