package ir

import (
	"io"
	"math"
	"strconv"
)

// Print returns the canonical text of m. The output depends only on m's
// structure: Parse(Print(m)) is Equal to m, and printing that gives the
// same bytes.
func Print(m *Module) []byte {
	// One allocation up front, a little larger than the text of typical
	// programs, beats growing it: each growth copies the text so far into
	// fresh memory, the dearest thing a large print touches.
	p := printer{buf: make([]byte, 0, printEstimate(m))}
	p.module(m)
	return p.buf
}

// Fprint writes the canonical text of m to w.
// It streams through a small buffer, so that printing a large module
// costs no memory in proportion to its size.
func Fprint(w io.Writer, m *Module) error {
	p := printer{buf: make([]byte, 0, 2*flushSize), w: w}
	p.module(m)
	p.flush()
	return p.err
}

// flushSize is how much text a streaming printer gathers before writing.
const flushSize = 64 << 10

// PrintOp returns the text of one op, on one line, as it appears in a
// block (without indentation): for messages and dumps.
func PrintOp(op *Op) string {
	var p printer
	p.op(op, -1)
	return string(p.buf)
}

// PrintVar returns the text of one var declaration.
func PrintVar(v *Var) string {
	var p printer
	p.varDecl(v)
	return string(p.buf)
}

// printEstimate is about the size of m's text, a little over for the
// programs distpass meets: a synthetic GPT training step prints 57 bytes
// a var and 265 an op (its line, its dist line, its grads).
func printEstimate(m *Module) int {
	n := 1024
	for _, p := range m.Programs() {
		for _, b := range p.Blocks {
			if b != nil {
				n += 64*b.NumVars() + 272*len(b.Ops)
			}
		}
	}
	return n
}

type printer struct {
	buf []byte
	w   io.Writer // when set, buf is flushed to w after each statement
	err error     // the first write error
	out int       // bytes flushed to w

	pieces [][]byte // the parallel printer's window of buffers
}

// written reports whether anything has been printed.
func (p *printer) written() bool { return p.out+len(p.buf) > 0 }

// flush writes the buffer to w, if any, and empties it.
func (p *printer) flush() {
	if p.w == nil {
		return
	}
	if p.err == nil && len(p.buf) > 0 {
		_, p.err = p.w.Write(p.buf)
		p.out += len(p.buf)
	}
	p.buf = p.buf[:0]
}

// line ends a statement: a streaming printer writes out a full buffer.
func (p *printer) line() {
	p.buf = append(p.buf, '\n')
	if p.w != nil && len(p.buf) >= flushSize {
		p.flush()
	}
}

func (p *printer) str(s string)  { p.buf = append(p.buf, s...) }
func (p *printer) byte(c byte)   { p.buf = append(p.buf, c) }
func (p *printer) int(i int64)   { p.buf = strconv.AppendInt(p.buf, i, 10) }
func (p *printer) name(s string) { p.buf = appendName(p.buf, s) }

func (p *printer) indent(n int) {
	for range n {
		p.buf = append(p.buf, ' ')
	}
}

func (p *printer) module(m *Module) {
	if m.Name != "" {
		p.str("module ")
		p.name(m.Name)
		p.byte('\n')
	}
	for _, a := range m.Attrs {
		p.str("attr ")
		p.attr(a)
		p.byte('\n')
	}
	for _, pm := range m.Meshes {
		p.str("mesh ")
		p.name(pm.Name)
		p.str(" shape ")
		p.ints(pm.Shape)
		p.str(" dims [")
		for i, d := range pm.DimNames {
			if i > 0 {
				p.str(", ")
			}
			p.name(d)
		}
		p.str("] ranks ")
		p.ints(pm.ProcessIDs)
		p.byte('\n')
	}
	for _, g := range m.Groups {
		p.str("group ")
		p.int(int64(g.ID))
		p.str(" ranks ")
		p.ints(g.Ranks)
		p.byte('\n')
	}
	for _, prog := range m.Programs() {
		if p.written() {
			p.byte('\n')
		}
		p.program(prog)
	}
	if len(m.ParamGrads) > 0 && p.written() {
		p.byte('\n')
	}
	for _, pg := range m.ParamGrads {
		p.str("grads ")
		p.name(pg.Param)
		p.str(" -> ")
		if pg.Grad == "" {
			p.str("[]")
		} else {
			p.name(pg.Grad)
		}
		p.byte('\n')
	}
}

func (p *printer) program(prog *Program) {
	p.str("program ")
	p.name(prog.Name)
	if prog.Rank >= 0 {
		p.str(" rank ")
		p.int(int64(prog.Rank))
	}
	p.str(" {\n")
	for _, b := range prog.Blocks {
		p.block(b)
	}
	p.str("}\n")
}

func (p *printer) block(b *Block) {
	p.str("  block ")
	p.int(int64(b.Index))
	if b.Parent != -1 {
		p.str(" parent ")
		p.int(int64(b.Parent))
	}
	if b.Forward != -1 {
		p.str(" forward ")
		p.int(int64(b.Forward))
	}
	p.str(" {\n")
	p.statements(b)
	p.str("  }\n")
}

func (p *printer) varDecl(v *Var) {
	p.str(v.Kind.String())
	p.byte(' ')
	p.name(v.name)
	p.str(" : ")
	p.typ(v.Type)
	if v.Dist != nil {
		p.byte(' ')
		p.tensorDist(v.Dist)
	}
	if v.Flags != 0 || len(v.Attrs) > 0 {
		p.str(" {")
		first := true
		for i, n := range flagNames {
			if v.Flags&(1<<i) != 0 {
				if !first {
					p.str(", ")
				}
				first = false
				p.str(n)
			}
		}
		if unknown := v.Flags &^ (1<<numFlags - 1); unknown != 0 {
			// Not expressible in text; print something the parser rejects.
			if !first {
				p.str(", ")
			}
			first = false
			p.str("?flags=")
			p.int(int64(unknown))
		}
		for _, a := range v.Attrs {
			if !first {
				p.str(", ")
			}
			first = false
			p.attr(a)
		}
		p.byte('}')
	}
}

func (p *printer) typ(t Type) {
	if t.Kind != DenseTensor {
		p.str(t.Kind.String())
		if t.Elems == nil {
			return
		}
		p.byte('(')
		for i, e := range t.Elems {
			if i > 0 {
				p.str(", ")
			}
			if t.Kind == Tuple {
				p.typeCode(e)
			} else {
				p.typ(e)
			}
		}
		p.byte(')')
		return
	}
	p.str(t.DType.String())
	p.ints64(t.Shape)
	if t.HasLoD || t.LoD != 0 {
		p.str(" lod ")
		p.int(int64(t.LoD))
	}
}

// typeCode prints a tuple element: a dtype, or a kind ("tensor" for a
// dense tensor of no dtype).
func (p *printer) typeCode(t Type) {
	if t.Kind == DenseTensor && t.DType != DTypeInvalid {
		p.str(t.DType.String())
		return
	}
	p.str(t.Kind.String())
}

func (p *printer) tensorDist(d *TensorDist) {
	p.byte('@')
	p.name(d.Mesh)
	p.ints(d.DimsMapping)
	if len(d.Partial) > 0 {
		p.str(" partial ")
		p.partial(d.Partial)
	}
	if len(d.Local) > 0 {
		p.str(" local ")
		p.ints(d.Local)
	}
}

func (p *printer) partial(ps []Partial) {
	p.byte('[')
	for i, pd := range ps {
		if i > 0 {
			p.str(", ")
		}
		p.int(int64(pd.Dim))
		if pd.Reduce != ReduceSum {
			p.byte(':')
			p.str(pd.Reduce.String())
		}
	}
	p.byte(']')
}

// op prints one op. cont is the indentation of the dist continuation line;
// a negative cont keeps everything on one line.
func (p *printer) op(op *Op, cont int) {
	p.str("op ")
	p.int(op.ID)
	p.byte(' ')
	p.name(op.Type)
	p.slots(op.Inputs)
	p.str(" -> ")
	p.slots(op.Outputs)
	if len(op.Attrs) > 0 {
		p.str(" {")
		for i, a := range op.Attrs {
			if i > 0 {
				p.str(", ")
			}
			p.attr(a)
		}
		p.byte('}')
	}
	p.str(" role ")
	p.buf = op.Role.appendText(p.buf)
	if op.Fwd != 0 {
		p.str(" fwd ")
		p.int(op.Fwd)
	}
	if d := op.Dist; d != nil {
		if cont < 0 {
			p.byte(' ')
		} else {
			p.byte('\n')
			p.indent(cont + 5)
		}
		p.str("dist @")
		p.name(d.Mesh)
		if d.ImplType != "" || d.ImplIndex != 0 {
			p.str(" impl ")
			p.name(d.ImplType)
			p.byte(':')
			p.int(int64(d.ImplIndex))
		}
		if d.Recompute {
			p.str(" recompute")
		}
		p.str(" [")
		p.argDists(d.Inputs)
		if len(d.Inputs) > 0 {
			p.byte(' ')
		}
		p.str("->")
		if len(d.Outputs) > 0 {
			p.byte(' ')
		}
		p.argDists(d.Outputs)
		p.byte(']')
	}
}

func (p *printer) argDists(as []ArgDist) {
	for i, a := range as {
		if i > 0 {
			p.str(", ")
		}
		p.name(a.Name)
		p.str(": ")
		p.ints(a.DimsMapping)
	}
}

func (p *printer) slots(ss []Slot) {
	p.byte('(')
	for i, s := range ss {
		if i > 0 {
			p.str(", ")
		}
		p.name(s.Name)
		p.str(": ")
		if len(s.Args) == 1 {
			p.name(s.Args[0])
			continue
		}
		p.byte('[')
		for j, a := range s.Args {
			if j > 0 {
				p.str(", ")
			}
			p.name(a)
		}
		p.byte(']')
	}
	p.byte(')')
}

func (p *printer) attr(a Attr) {
	p.name(a.Name)
	p.str(" = ")
	p.value(a.Value)
}

func (p *printer) value(v Value) {
	switch v := v.(type) {
	case Bool:
		p.buf = strconv.AppendBool(p.buf, bool(v))
	case Int:
		p.int(int64(v))
	case Float:
		p.buf = appendFloat(p.buf, float64(v))
	case String:
		p.buf = strconv.AppendQuote(p.buf, string(v))
	case BlockRef:
		p.byte('^')
		p.int(int64(v))
	case Bools:
		printList(p, v, "bools[]", func(x bool) { p.buf = strconv.AppendBool(p.buf, x) })
	case Ints:
		p.ints64(v)
	case Floats:
		printList(p, v, "floats[]", func(x float64) { p.buf = appendFloat(p.buf, x) })
	case Strings:
		printList(p, v, "strings[]", func(x string) { p.buf = strconv.AppendQuote(p.buf, x) })
	case BlockRefs:
		printList(p, v, "blocks[]", func(x int) {
			p.byte('^')
			p.int(int64(x))
		})
	case Long:
		p.str("long(")
		p.int(int64(v))
		p.byte(')')
	case Longs:
		p.str("longs")
		p.ints64(v)
	case Float64:
		p.str("float64(")
		p.buf = appendFloat(p.buf, float64(v))
		p.byte(')')
	case Float64s:
		p.str("float64s[")
		for i, x := range v {
			if i > 0 {
				p.str(", ")
			}
			p.buf = appendFloat(p.buf, x)
		}
		p.byte(']')
	case VarRef:
		p.str("var(")
		p.name(string(v))
		p.byte(')')
	case VarRefs:
		p.str("vars[")
		for i, x := range v {
			if i > 0 {
				p.str(", ")
			}
			p.name(x)
		}
		p.byte(']')
	case Scalar:
		p.str("scalar(")
		p.scalar(v)
		p.byte(')')
	case Scalars:
		p.str("scalars[")
		for i, x := range v {
			if i > 0 {
				p.str(", ")
			}
			p.scalar(x)
		}
		p.byte(']')
	default:
		// A nil Value: not expressible; print something the parser rejects.
		p.str("?nil")
	}
}

// scalar prints the value of a scalar: true, 3, 0.5 or complex(1.0, 2.0).
// A scalar of an unknown kind, or with a field set that its kind does not
// use, is not expressible; it prints as something the parser rejects.
func (p *printer) scalar(s Scalar) {
	if !s.Valid() {
		p.str("?scalar")
		return
	}
	switch s.Type {
	case ScalarBool:
		p.buf = strconv.AppendBool(p.buf, s.B)
	case ScalarLong:
		p.int(s.I)
	case ScalarFloat64:
		p.buf = appendFloat(p.buf, s.R)
	case ScalarComplex:
		p.str("complex(")
		p.buf = appendFloat(p.buf, s.R)
		p.str(", ")
		p.buf = appendFloat(p.buf, s.Im)
		p.byte(')')
	}
}

func (p *printer) ints(xs []int) {
	p.byte('[')
	for i, x := range xs {
		if i > 0 {
			p.str(", ")
		}
		p.int(int64(x))
	}
	p.byte(']')
}

func (p *printer) ints64(xs []int64) {
	p.byte('[')
	for i, x := range xs {
		if i > 0 {
			p.str(", ")
		}
		p.int(x)
	}
	p.byte(']')
}

// appendFloat writes f so that it re-parses to the same float64 and can
// never be mistaken for an integer: 1 prints as 1.0.
func appendFloat(buf []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(buf, "nan"...)
	case math.IsInf(f, 1):
		return append(buf, "inf"...)
	case math.IsInf(f, -1):
		return append(buf, "-inf"...)
	}
	// Fixed notation in the range people write by hand, exponents outside
	// it; both the shortest digits that re-parse to f.
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-4 || abs >= 1e21) {
		format = 'e'
	}
	start := len(buf)
	buf = strconv.AppendFloat(buf, f, format, -1, 64)
	for _, c := range buf[start:] {
		if c == '.' || c == 'e' {
			return buf
		}
	}
	return append(buf, ".0"...)
}

// isBareName reports whether s can be written without quotes.
func isBareName(s string) bool {
	if s == "" || !isNameStart(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !isNameChar(s[i]) {
			return false
		}
	}
	return true
}

func isNameStart(c byte) bool {
	return c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

func isNameChar(c byte) bool {
	return isNameStart(c) || '0' <= c && c <= '9' || c == '.' || c == '@'
}

func appendName(buf []byte, s string) []byte {
	if isBareName(s) {
		return append(buf, s...)
	}
	return strconv.AppendQuote(buf, s)
}

// quoteName returns name as the text format writes it, for messages.
func quoteName(s string) string { return string(appendName(nil, s)) }

// printList prints [a, b, c], or empty, the typed spelling of an empty list:
// an empty list has no element to tell its kind.
func printList[T any](p *printer, xs []T, empty string, elem func(T)) {
	if len(xs) == 0 {
		p.str(empty)
		return
	}
	p.byte('[')
	for i, x := range xs {
		if i > 0 {
			p.str(", ")
		}
		elem(x)
	}
	p.byte(']')
}
