package ir

import (
	"math"
	"slices"
	"strconv"
	"unsafe"
)

// Parse reads a module in the .dpir text format. name is used in error
// positions ("model.dpir:3:14: expected ..."). Parse stops at the first
// error and returns it as a *ParseError; it never panics. It checks only
// what the grammar and the building of values need (duplicate names in one
// block, block order); the rest is Verify's. Parse copies src once, so the
// caller may reuse it; ParseString avoids that copy.
func Parse(name string, src []byte) (*Module, error) {
	return ParseString(name, string(src))
}

// ParseString is Parse for source already held in a string. Bare names in
// the module are substrings of src, so parsing allocates nothing per name
// and the module keeps src alive.
func ParseString(name string, src string) (*Module, error) {
	p := &parser{
		lexer:  lexer{file: name, src: unsafe.Slice(unsafe.StringData(src), len(src)), line: 1},
		source: src,
	}
	p.segs = startSegments(name, p.lexer.src, src)
	p.next()
	m := p.module()
	if p.err != nil {
		return nil, p.err
	}
	return m, nil
}

type parser struct {
	lexer
	source string // the source as one string: bare names are substrings of it

	// Ops, vars, dists and small lists are carved out of larger arrays,
	// which keeps parsing a large program to few allocations.
	ops      slab[Op]
	vars     slab[Var]
	tdists   slab[TensorDist]
	odists   slab[OpDist]
	strSlab  slab[string]
	intSlab  slab[int]
	i64Slab  slab[int64]
	slotSlab slab[Slot]
	argSlab  slab[ArgDist]
	attrSlab slab[Attr]

	segs  []*segment // pieces parsed ahead, in source order (parse_segments.go)
	ahead bool       // this parser reads a piece ahead, into a scratch block

	// Where the current program's blocks and block-owning ops are, for
	// the nesting check (CheckNesting) at the program's end.
	blockPos []textPos
	refOps   []refOpPos
	sawRef   bool // a block ref was read since the current op began
}

type textPos struct{ line, col int }

type refOpPos struct {
	op  *Op
	pos textPos
}

func (p *parser) fail(format string, args ...any) {
	p.errorAt(p.tok.line, p.tok.col, format, args...)
}

func (p *parser) expected(what string) {
	p.fail("expected %s, found %s", what, p.describe())
}

// is reports whether the current token is the bare name kw.
func (p *parser) is(kw string) bool {
	return p.tok.kind == tName && string(p.text()) == kw
}

func (p *parser) want(k tokKind) bool {
	if p.tok.kind != k {
		p.expected(tokNames[k])
		return false
	}
	p.next()
	return true
}

func (p *parser) keyword(kw string) bool {
	if !p.is(kw) {
		p.expected(strconv.Quote(kw))
		return false
	}
	p.next()
	return true
}

// tokString returns the current token's text as a substring of the source.
func (p *parser) tokString() string { return p.source[p.tok.start:p.tok.end] }

// name reads a bare or quoted name.
func (p *parser) name(what string) string {
	switch p.tok.kind {
	case tName:
		s := p.tokString()
		p.next()
		return s
	case tString:
		s, ok := p.stringLit()
		if !ok {
			return ""
		}
		p.next()
		return s
	}
	p.expected(what)
	return ""
}

// stringLit decodes the current string token.
func (p *parser) stringLit() (string, bool) {
	t := p.tok
	if !t.escaped {
		return p.source[t.start+1 : t.end-1], true
	}
	s, err := strconv.Unquote(string(p.src[t.start:t.end]))
	if err != nil {
		p.fail("invalid string literal %s", p.src[t.start:t.end])
		return "", false
	}
	return s, true
}

// int64Lit reads an integer token: decimal or hex, with an optional "-".
func (p *parser) int64Lit(what string) int64 {
	if p.tok.kind != tInt {
		p.expected(what)
		return 0
	}
	text := p.text()
	var v int64
	var ok bool
	if digits, neg := unsign(text); hasHexPrefix(digits) {
		var u uint64
		u, ok = hexLit(digits)
		if neg {
			ok = ok && u <= 1<<63
			v = -int64(u) // 1<<63 wraps to math.MinInt64, which it is
		} else {
			ok = ok && u <= math.MaxInt64
			v = int64(u)
		}
	} else {
		v, ok = decimal(text)
	}
	if !ok {
		p.fail("integer %s out of range", text)
		return 0
	}
	p.next()
	return v
}

// unsign splits a leading "-" off an integer token.
func unsign(b []byte) ([]byte, bool) {
	if len(b) > 0 && b[0] == '-' {
		return b[1:], true
	}
	return b, false
}

// hasHexPrefix reports whether an unsigned integer token is written in hex.
func hasHexPrefix(b []byte) bool { return len(b) > 2 && b[0] == '0' && (b[1] == 'x' || b[1] == 'X') }

// hexLit converts a hex integer token ("0x" and hex digits).
func hexLit(b []byte) (uint64, bool) {
	u, err := strconv.ParseUint(string(b[2:]), 16, 64)
	return u, err == nil
}

// decimal converts an integer token ("-"? digits): strconv.ParseInt's
// generality costs a tenth of parsing time on large programs.
func decimal(b []byte) (int64, bool) {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	if len(b) == 0 || len(b) > 19 {
		return 0, false
	}
	var u uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false // the lexer lets only digits through
		}
		u = u*10 + uint64(c-'0') // 19 digits cannot overflow uint64
	}
	if neg {
		if u > 1<<63 {
			return 0, false
		}
		return -int64(u), true
	}
	if u > 1<<63-1 {
		return 0, false
	}
	return int64(u), true
}

// intLit reads an integer that must fit in 32 bits (indices, mesh dims,
// ranks): larger values are never meaningful and would only overflow later.
func (p *parser) intLit(what string) int {
	line, col := p.tok.line, p.tok.col
	text := p.tokString()
	v := p.int64Lit(what)
	if v < math.MinInt32 || v > math.MaxInt32 {
		p.errorAt(line, col, "integer %s out of range", text)
		return 0
	}
	return int(v)
}

// intList reads [i, j, ...] into the int slab.
func (p *parser) intList(what string) []int { return numList(p, what, p.intLit, &p.intSlab) }

func (p *parser) int64List(what string) []int64 { return numList(p, what, p.int64Lit, &p.i64Slab) }

// numList reads a bracketed list of integers with lit, into a slab.
func numList[T int | int64](p *parser, what string, lit func(string) T, s *slab[T]) []T {
	if !p.want(tLBrack) {
		return nil
	}
	var buf [8]T
	xs := buf[:0]
	for p.tok.kind != tRBrack && p.err == nil {
		if len(xs) > 0 && !p.want(tComma) {
			return nil
		}
		xs = append(xs, lit(what))
	}
	p.next()
	return s.copyOf(xs)
}

func (p *parser) module() *Module {
	m := &Module{}
	if p.is("module") {
		p.next()
		m.Name = p.name("module name")
	}
	for p.err == nil && p.tok.kind != tEOF {
		switch {
		case p.is("attr"):
			p.next()
			line, col := p.tok.line, p.tok.col
			key := p.name("attribute name")
			p.want(tEquals)
			m.Attrs = p.addAttr(m.Attrs, key, line, col)
		case p.is("mesh"):
			p.mesh(m)
		case p.is("group"):
			p.group(m)
		case p.is("program"):
			p.program(m)
		case p.is("grads"):
			p.grads(m)
		default:
			p.expected(`"attr", "mesh", "group", "program" or "grads"`)
		}
	}
	if p.err == nil && m.Main == nil {
		p.fail("no main program")
	}
	return m
}

func (p *parser) mesh(m *Module) {
	line, col := p.tok.line, p.tok.col
	p.next()
	pm := p.meshBody()
	if p.err == nil && m.Mesh(pm.Name) != nil {
		p.errorAt(line, col, "mesh %s declared twice", quoteName(pm.Name))
		return
	}
	m.Meshes = append(m.Meshes, pm)
}

// meshBody reads a mesh declaration after its keyword.
func (p *parser) meshBody() *ProcessMesh {
	pm := &ProcessMesh{Name: p.name("mesh name")}
	p.keyword("shape")
	pm.Shape = p.intList("mesh dim size")
	p.keyword("dims")
	if p.want(tLBrack) {
		pm.DimNames = []string{}
		for p.tok.kind != tRBrack && p.err == nil {
			if len(pm.DimNames) > 0 && !p.want(tComma) {
				return pm
			}
			pm.DimNames = append(pm.DimNames, p.name("dim name"))
		}
		p.next()
	}
	p.keyword("ranks")
	pm.ProcessIDs = p.intList("rank")
	return pm
}

// ParseMesh reads a mesh declaration as the text format writes it,
// without its keyword: "world shape [2, 2] dims [dp, mp] ranks [0, 1, 2,
// 3]". name is used in error positions. Like Parse, it checks the
// grammar only; Verify checks the mesh.
func ParseMesh(name, src string) (*ProcessMesh, error) {
	p := fragmentParser(name, src)
	pm := p.meshBody()
	if err := p.end(); err != nil {
		return nil, err
	}
	return pm, nil
}

// ParseDist reads a tensor's dist as the text format writes it:
// "@world[0, -1]", "@world[-1, 1] partial [0:avg]", "@world[-1] local
// [0]". name is used in
// error positions. Like Parse, it checks the grammar only; Verify checks
// the dist against its var and mesh.
func ParseDist(name, src string) (*TensorDist, error) {
	p := fragmentParser(name, src)
	if p.tok.kind != tAt {
		p.expected(`"@"`)
		return nil, p.err
	}
	d := p.tensorDist()
	if err := p.end(); err != nil {
		return nil, err
	}
	return d, nil
}

// ParseOp reads one op as the text format writes it after its id, with
// no role, fwd or dist: `type(Slot: a, Slot: [b, c]) -> (Out: d) {k = v}`.
// src is line number line of file name (errors are at name:line:col):
// a text that embeds ops in a grammar of its own (an op definition's
// meaning) reads them with it.
func ParseOp(name string, line int, src string) (*Op, error) {
	p := fragmentParser(name, src)
	p.line, p.tok.line = line, line
	op := &Op{}
	p.opBody(op)
	if err := p.end(); err != nil {
		return nil, err
	}
	if p.sawRef {
		return nil, &ParseError{File: name, Line: line, Col: 1, Msg: "an op read alone cannot own a block"}
	}
	return op, nil
}

// ParseValue reads one attribute value as the text format writes it
// ("[1, 2]", "long(3)", "ints[]"), at name:line as ParseOp.
func ParseValue(name string, line int, src string) (Value, error) {
	p := fragmentParser(name, src)
	p.line, p.tok.line = line, line
	v := p.value()
	if err := p.end(); err != nil {
		return nil, err
	}
	if p.sawRef {
		return nil, &ParseError{File: name, Line: line, Col: 1, Msg: "a block ref means nothing outside a program"}
	}
	return v, nil
}

// fragmentParser is a parser over a piece of a module's text.
func fragmentParser(name, src string) *parser {
	p := &parser{
		lexer:  lexer{file: name, src: unsafe.Slice(unsafe.StringData(src), len(src)), line: 1},
		source: src,
	}
	p.next()
	return p
}

// end fails unless the fragment is all read, and returns the error.
func (p *parser) end() error {
	if p.err == nil && p.tok.kind != tEOF {
		p.expected("the end")
	}
	if p.err != nil {
		return p.err
	}
	return nil
}

func (p *parser) group(m *Module) {
	p.next()
	g := Group{ID: p.intLit("group id")}
	p.keyword("ranks")
	g.Ranks = p.intList("rank")
	m.Groups = append(m.Groups, g)
}

func (p *parser) grads(m *Module) {
	p.next()
	pg := ParamGrad{Param: p.name("param name")}
	p.want(tArrow)
	if p.tok.kind == tLBrack {
		p.next()
		p.want(tRBrack)
	} else {
		pg.Grad = p.name(`grad name or "[]"`)
	}
	m.ParamGrads = append(m.ParamGrads, pg)
}

func (p *parser) program(m *Module) {
	line, col := p.tok.line, p.tok.col
	p.next()
	name := p.name("program name")
	if p.err != nil {
		return
	}
	prog := &Program{Name: name, Rank: -1}
	switch {
	case name == "main" && m.Main == nil:
		m.Main = prog
	case name == "startup" && m.Startup == nil:
		m.Startup = prog
	case name == "main" || name == "startup":
		p.errorAt(line, col, "program %s declared twice", name)
		return
	default:
		p.errorAt(line, col, "unknown program %s (want main or startup)", quoteName(name))
		return
	}
	if p.is("rank") {
		p.next()
		line, col := p.tok.line, p.tok.col
		prog.Rank = p.intLit("rank")
		if p.err == nil && prog.Rank < 0 {
			p.errorAt(line, col, "rank %d is negative", prog.Rank)
		}
	}
	p.want(tLBrace)
	p.blockPos, p.refOps = p.blockPos[:0], p.refOps[:0]
	for p.err == nil && p.tok.kind != tRBrace {
		if !p.is("block") {
			p.expected(`"block" or "}"`)
			return
		}
		p.block(prog)
	}
	p.want(tRBrace)
	if p.err == nil && len(prog.Blocks) == 0 {
		p.errorAt(line, col, "program %s has no blocks", name)
	}
	if p.err == nil {
		p.checkNesting(prog)
	}
}

// checkNesting fails at the block or op where prog nests deeper than
// MaxBlockDepth.
func (p *parser) checkNesting(prog *Program) {
	v := nestingProblem(prog)
	if v == nil {
		return
	}
	if v.OpType == "" && v.OpID == 0 {
		pos := p.blockPos[v.Block]
		p.errorAt(pos.line, pos.col, "block %d: %s", v.Block, v.Msg)
		return
	}
	for _, r := range p.refOps {
		if r.op.ID == v.OpID && r.op.Type == v.OpType {
			p.errorAt(r.pos.line, r.pos.col, "op %d %s: %s", v.OpID, quoteName(v.OpType), v.Msg)
			return
		}
	}
	pos := p.blockPos[v.Block]
	p.errorAt(pos.line, pos.col, "block %d: op %d %s: %s", v.Block, v.OpID, quoteName(v.OpType), v.Msg)
}

func (p *parser) block(prog *Program) {
	p.next()
	line, col := p.tok.line, p.tok.col
	idx := p.intLit("block index")
	if p.err == nil && idx >= 0 && idx < len(prog.Blocks) {
		p.errorAt(line, col, "block %d declared twice", idx)
		return
	}
	if p.err == nil && idx != len(prog.Blocks) {
		p.errorAt(line, col, "block %d out of order: expected block %d", idx, len(prog.Blocks))
		return
	}
	p.blockPos = append(p.blockPos, textPos{line, col})
	b := &Block{Index: idx, Parent: -1, Forward: -1}
	if p.is("parent") {
		p.next()
		b.Parent = p.intLit("parent block index")
	}
	if p.is("forward") {
		p.next()
		b.Forward = p.intLit("forward block index")
	}
	prog.Blocks = append(prog.Blocks, b)
	p.want(tLBrace)
	if p.segs != nil {
		p.reserveSegments(b)
	}
	for p.err == nil && p.tok.kind != tRBrace {
		if p.segs != nil && p.takeSegments(b) {
			continue
		}
		p.blockStatement(b)
	}
	p.want(tRBrace)
}

// blockStatement reads a var declaration or an op into b. It reports
// whether the token was one of them.
func (p *parser) blockStatement(b *Block) bool {
	switch {
	case p.is("var"):
		p.varDecl(b, KindVar)
	case p.is("persist"):
		p.varDecl(b, KindPersist)
	case p.is("param"):
		p.varDecl(b, KindParam)
	case p.is("op"):
		p.op(b)
	default:
		p.expected(`"var", "persist", "param", "op" or "}"`)
		return false
	}
	return true
}

func (p *parser) varDecl(b *Block, kind VarKind) {
	p.next()
	line, col := p.tok.line, p.tok.col
	v := p.vars.one()
	v.Kind = kind
	v.name = p.name("var name")
	if p.err != nil {
		return
	}
	// The block's name index doubles as the duplicate check; a piece read
	// ahead leaves it to the merge into the real block.
	b.vars = append(b.vars, v)
	if !p.ahead && b.index.insert(b.vars, len(b.vars)-1) >= 0 {
		p.errorAt(line, col, "var %s declared twice in block %d", quoteName(v.name), b.Index)
		return
	}
	p.want(tColon)
	v.Type = p.typ()
	if p.tok.kind == tAt {
		v.Dist = p.tensorDist()
	}
	if p.tok.kind == tLBrace {
		p.varAttrs(v)
	}
}

func (p *parser) typ() Type {
	if p.tok.kind != tName {
		p.expected("type")
		return Type{}
	}
	word := p.text()
	if d, ok := ParseDType(string(word)); ok {
		p.next()
		t := Type{Kind: DenseTensor, DType: d, Shape: p.int64List("dim")}
		if p.is("lod") {
			p.next()
			line, col := p.tok.line, p.tok.col
			t.LoD, t.HasLoD = p.intLit("lod level"), true
			if p.err == nil && t.LoD < 0 {
				p.errorAt(line, col, "lod level %d is negative", t.LoD)
			}
		}
		return t
	}
	if k, ok := parseNoShapeKind(string(word)); ok {
		p.next()
		t := Type{Kind: k}
		if p.tok.kind == tLParen {
			p.next()
			t.Elems = []Type{}
			for p.err == nil && p.tok.kind != tRParen {
				if len(t.Elems) > 0 && !p.want(tComma) {
					return t
				}
				var e Type
				if k == Tuple {
					e = p.typeCode()
				} else {
					// A kind here is an error before it is read, so that
					// reader(reader(reader(…))) does not recurse.
					if _, isKind := parseNoShapeKind(string(p.text())); p.tok.kind == tName && isKind {
						p.fail("element of %s must be a tensor type", k)
						return t
					}
					e = p.typ()
				}
				t.Elems = append(t.Elems, e)
			}
			p.next()
		}
		return t
	}
	p.fail("unknown type %q", word)
	return Type{}
}

// typeCode reads a tuple element: a dtype, or a kind ("tensor" too).
func (p *parser) typeCode() Type {
	if p.tok.kind != tName {
		p.expected("dtype or type kind")
		return Type{}
	}
	word := string(p.text())
	if d, ok := ParseDType(word); ok {
		p.next()
		return Type{Kind: DenseTensor, DType: d}
	}
	if word == "tensor" {
		p.next()
		return Type{Kind: DenseTensor}
	}
	if k, ok := parseNoShapeKind(word); ok {
		p.next()
		return Type{Kind: k}
	}
	p.fail("unknown dtype or type kind %q", word)
	return Type{}
}

func (p *parser) tensorDist() *TensorDist {
	p.next()
	d := p.tdists.one()
	d.Mesh = p.name("mesh name")
	d.DimsMapping = p.intList("mesh dim")
	if p.is("partial") {
		p.next()
		if !p.want(tLBrack) {
			return d
		}
		d.Partial = []Partial{}
		for p.tok.kind != tRBrack && p.err == nil {
			if len(d.Partial) > 0 && !p.want(tComma) {
				return d
			}
			line, col := p.tok.line, p.tok.col
			pd := Partial{Dim: p.intLit("mesh dim")}
			if p.tok.kind == tColon {
				p.next()
				if p.tok.kind != tName {
					p.expected("reduction")
					return d
				}
				r, ok := parseReduce(string(p.text()))
				if !ok {
					p.fail("unknown reduction %q (want sum, avg, max or min)", p.text())
					return d
				}
				pd.Reduce = r
				p.next()
			}
			if n := len(d.Partial); n > 0 && d.Partial[n-1].Dim >= pd.Dim && p.err == nil {
				p.errorAt(line, col, "partial dims must be ascending and unique")
				return d
			}
			d.Partial = append(d.Partial, pd)
		}
		p.next()
	}
	if p.is("local") && p.err == nil {
		p.next()
		if !p.want(tLBrack) {
			return d
		}
		d.Local = []int{}
		for p.tok.kind != tRBrack && p.err == nil {
			if len(d.Local) > 0 && !p.want(tComma) {
				return d
			}
			line, col := p.tok.line, p.tok.col
			k := p.intLit("mesh dim")
			if n := len(d.Local); n > 0 && d.Local[n-1] >= k && p.err == nil {
				p.errorAt(line, col, "local dims must be ascending and unique")
				return d
			}
			d.Local = append(d.Local, k)
		}
		p.next()
	}
	return d
}

// varAttrs reads {flag, name = value, ...}.
func (p *parser) varAttrs(v *Var) {
	p.next()
	first := true
	for p.err == nil && p.tok.kind != tRBrace {
		if !first && !p.want(tComma) {
			return
		}
		first = false
		line, col := p.tok.line, p.tok.col
		key := p.name("flag or attribute")
		if p.err != nil {
			return
		}
		if p.tok.kind == tEquals {
			if _, isFlag := flagByName(key); isFlag {
				p.errorAt(line, col, "%s is a flag: write it bare, without a value", key)
				return
			}
			p.next()
			v.Attrs = p.addAttr(v.Attrs, key, line, col)
			continue
		}
		f, ok := flagByName(key)
		if !ok {
			p.errorAt(line, col, "unknown var flag %s", quoteName(key))
			return
		}
		if v.Flags&f != 0 {
			p.errorAt(line, col, "flag %s given twice", key)
			return
		}
		v.Flags |= f
	}
	p.next()
}

// addAttr returns as with key = the value that follows. Attributes are
// usually written sorted, and appending keeps that O(1).
func (p *parser) addAttr(as Attrs, key string, line, col int) Attrs {
	val := p.value()
	if p.err != nil {
		return as
	}
	i, found := as.find(key)
	if found {
		p.errorAt(line, col, "attribute %s given twice", quoteName(key))
		return as
	}
	if i == len(as) {
		return append(as, Attr{Name: key, Value: val})
	}
	return slices.Insert(as, i, Attr{Name: key, Value: val})
}

func (p *parser) op(b *Block) {
	line, col := p.tok.line, p.tok.col
	p.next()
	p.sawRef = false
	op := p.ops.one()
	op.ID = p.int64Lit("op id")
	p.opBody(op)
	if p.sawRef {
		p.refOps = append(p.refOps, refOpPos{op, textPos{line, col}})
	}
	if p.is("role") {
		p.next()
		op.Role = p.role()
	}
	if p.is("fwd") {
		p.next()
		op.Fwd = p.int64Lit("forward op id")
	}
	if p.is("dist") {
		p.next()
		op.Dist = p.opDist()
	}
	b.Ops = append(b.Ops, op)
}

// opBody reads an op's type, slots and attrs: "type(...) -> (...) {...}".
func (p *parser) opBody(op *Op) {
	op.Type = p.name("op type")
	op.Inputs = p.slots()
	p.want(tArrow)
	op.Outputs = p.slots()
	if p.tok.kind == tLBrace {
		p.next()
		var buf [8]Attr
		as := Attrs(buf[:0])
		for p.err == nil && p.tok.kind != tRBrace {
			if len(as) > 0 && !p.want(tComma) {
				return
			}
			line, col := p.tok.line, p.tok.col
			key := p.name("attribute name")
			p.want(tEquals)
			as = p.addAttr(as, key, line, col)
		}
		p.next()
		if len(as) > 0 {
			op.Attrs = p.attrSlab.copyOf(as)
		}
	}
}

func (p *parser) slots() []Slot {
	if !p.want(tLParen) {
		return nil
	}
	var buf [4]Slot
	ss := buf[:0]
	var args [8]string
	for p.err == nil && p.tok.kind != tRParen {
		if len(ss) > 0 && !p.want(tComma) {
			return nil
		}
		s := Slot{Name: p.name("slot name")}
		p.want(tColon)
		if p.tok.kind == tLBrack {
			p.next()
			as := args[:0]
			for p.err == nil && p.tok.kind != tRBrack {
				if len(as) > 0 && !p.want(tComma) {
					return nil
				}
				as = append(as, p.name("var name"))
			}
			p.next()
			s.Args = p.strSlab.copyOf(as)
		} else {
			args[0] = p.name(`var name or "["`)
			s.Args = p.strSlab.copyOf(args[:1])
		}
		ss = append(ss, s)
	}
	p.next()
	if len(ss) == 0 {
		return nil
	}
	return p.slotSlab.copyOf(ss)
}

func (p *parser) role() Role {
	var r Role
	for {
		if p.tok.kind == tInt && hasHexPrefix(p.text()) {
			// Bits with no name, as Role.String writes them.
			v, ok := hexLit(p.text())
			if !ok || v > math.MaxUint32 {
				p.fail("role bits %s out of range", p.text())
				return r
			}
			r |= Role(v)
			p.next()
			if p.tok.kind != tPipe {
				return r
			}
			p.next()
			continue
		}
		if p.tok.kind != tName {
			p.expected("role")
			return r
		}
		bit, ok := roleBit(string(p.text()))
		if !ok {
			p.fail("unknown role %q", p.text())
			return r
		}
		r |= bit
		p.next()
		if p.tok.kind != tPipe {
			return r
		}
		p.next()
	}
}

func (p *parser) opDist() *OpDist {
	if !p.want(tAt) {
		return nil
	}
	d := p.odists.one()
	d.Mesh = p.name("mesh name")
	if p.is("impl") {
		p.next()
		d.ImplType = p.name("impl type")
		p.want(tColon)
		d.ImplIndex = p.intLit("impl index")
	}
	if p.is("recompute") {
		p.next()
		d.Recompute = true
	}
	if !p.want(tLBrack) {
		return d
	}
	d.Inputs = p.argDists(tArrow)
	p.want(tArrow)
	d.Outputs = p.argDists(tRBrack)
	p.want(tRBrack)
	return d
}

func (p *parser) argDists(end tokKind) []ArgDist {
	var buf [8]ArgDist
	as := buf[:0]
	for p.err == nil && p.tok.kind != end {
		if len(as) > 0 {
			if p.tok.kind != tComma {
				p.expected(`"," or ` + tokNames[end])
				return nil
			}
			p.next()
		}
		a := ArgDist{Name: p.name("var name")}
		p.want(tColon)
		a.DimsMapping = p.intList("mesh dim")
		as = append(as, a)
	}
	if len(as) == 0 {
		return nil
	}
	return p.argSlab.copyOf(as)
}

// value reads an attribute value.
func (p *parser) value() Value {
	switch p.tok.kind {
	case tInt:
		v := p.int64Lit("integer")
		return Int(v)
	case tFloat:
		f, ok := p.floatLit()
		if ok {
			p.next()
		}
		return Float(f)
	case tString:
		s, ok := p.stringLit()
		if ok {
			p.next()
		}
		return String(s)
	case tCaret:
		p.next()
		p.sawRef = true
		return BlockRef(p.intLit("block index"))
	case tLBrack:
		return p.list()
	case tName:
		switch string(p.text()) {
		case "true":
			p.next()
			return Bool(true)
		case "false":
			p.next()
			return Bool(false)
		case "nan", "inf":
			f, _ := p.floatLit()
			p.next()
			return Float(f)
		case "ints", "floats", "bools", "strings", "blocks":
			return p.typedEmpty()
		case "long", "float64", "var", "scalar":
			return p.typedValue()
		case "longs", "float64s", "vars", "scalars":
			return p.typedList()
		}
	}
	p.expected("attribute value")
	return nil
}

func (p *parser) floatLit() (float64, bool) {
	text := p.tokString()
	switch text {
	case "nan":
		return math.NaN(), true
	case "inf":
		return math.Inf(1), true
	case "-inf":
		return math.Inf(-1), true
	}
	f, err := strconv.ParseFloat(text, 64)
	if err != nil {
		p.fail("float %s out of range", text)
		return 0, false
	}
	return f, true
}

// typedValue reads long(5), float64(0.5), var(x) or scalar(...).
func (p *parser) typedValue() Value {
	word := string(p.text())
	p.next()
	if !p.want(tLParen) {
		return nil
	}
	var v Value
	switch word {
	case "long":
		v = Long(p.int64Lit("integer"))
	case "float64":
		v = Float64(p.number())
	case "var":
		v = VarRef(p.name("var name"))
	default:
		v = p.scalar()
	}
	if !p.want(tRParen) {
		return nil
	}
	return v
}

// number reads a float or an integer as a float64.
func (p *parser) number() float64 {
	switch {
	case p.tok.kind == tInt:
		line, col := p.tok.line, p.tok.col
		text := string(p.text())
		v := p.int64Lit("number")
		if f := float64(v); int64(f) != v || f == 1<<63 {
			p.errorAt(line, col, "integer %s is not exact as a float; write a float", text)
		}
		return float64(v)
	case p.tok.kind == tFloat, p.is("nan"), p.is("inf"):
		f, ok := p.floatLit()
		if ok {
			p.next()
		}
		return f
	}
	p.expected("number")
	return 0
}

// scalar reads the value of a scalar: true, false, an integer, a float or
// complex(re, im).
func (p *parser) scalar() Scalar {
	switch {
	case p.tok.kind == tInt:
		return LongScalar(p.int64Lit("integer"))
	case p.tok.kind == tFloat, p.is("nan"), p.is("inf"):
		return Float64Scalar(p.number())
	case p.is("true"):
		p.next()
		return BoolScalar(true)
	case p.is("false"):
		p.next()
		return BoolScalar(false)
	case p.is("complex"):
		p.next()
		p.want(tLParen)
		re := p.number()
		p.want(tComma)
		im := p.number()
		p.want(tRParen)
		return ComplexScalar(re, im)
	}
	p.expected("scalar (true, false, a number or complex(re, im))")
	return Scalar{}
}

// typedList reads longs[...], float64s[...], vars[...] or scalars[...].
func (p *parser) typedList() Value {
	word := string(p.text())
	p.next()
	if !p.want(tLBrack) {
		return nil
	}
	var (
		longs   Longs
		floats  Float64s
		vars    VarRefs
		scalars Scalars
	)
	n := 0
	for p.err == nil && p.tok.kind != tRBrack {
		if n > 0 && !p.want(tComma) {
			return nil
		}
		n++
		switch word {
		case "longs":
			longs = append(longs, p.int64Lit("integer"))
		case "float64s":
			floats = append(floats, p.number())
		case "vars":
			vars = append(vars, p.name("var name"))
		default:
			scalars = append(scalars, p.scalar())
		}
	}
	p.next()
	if p.err != nil {
		return nil
	}
	switch word {
	case "longs":
		return longs
	case "float64s":
		return floats
	case "vars":
		return vars
	}
	return scalars
}

func (p *parser) typedEmpty() Value {
	word := string(p.text())
	p.next()
	if !p.want(tLBrack) || !p.want(tRBrack) {
		return nil
	}
	switch word {
	case "ints":
		return Ints{}
	case "floats":
		return Floats{}
	case "bools":
		return Bools{}
	case "strings":
		return Strings{}
	}
	return BlockRefs{}
}

// list reads a homogeneous list; its first element decides the kind, and
// [] is an empty Ints.
func (p *parser) list() Value {
	p.next()
	if p.tok.kind == tRBrack {
		p.next()
		return Ints{}
	}
	// Elements gather in a typed buffer of the first element's kind and
	// are boxed once, as the list, at the end.
	var (
		first  Value
		ints   [16]int64
		is     = ints[:0]
		floats []float64
		bools  []bool
		strs   []string
		blocks []int
	)
	for p.err == nil && p.tok.kind != tRBrack {
		line, col := p.tok.line, p.tok.col
		if first != nil && !p.want(tComma) {
			return nil
		}
		if first != nil {
			line, col = p.tok.line, p.tok.col
		}
		if p.tok.kind == tLBrack {
			p.fail("lists of lists are not attribute values")
			return nil
		}
		v := p.value()
		if p.err != nil {
			return nil
		}
		if first == nil {
			first = v
		}
		ok := true
		switch first.(type) {
		case Int:
			var x Int
			x, ok = v.(Int)
			is = append(is, int64(x))
		case Float:
			var x Float
			x, ok = v.(Float)
			floats = append(floats, float64(x))
		case Bool:
			var x Bool
			x, ok = v.(Bool)
			bools = append(bools, bool(x))
		case String:
			var x String
			x, ok = v.(String)
			strs = append(strs, string(x))
		case BlockRef:
			var x BlockRef
			x, ok = v.(BlockRef)
			blocks = append(blocks, int(x))
		default:
			p.errorAt(line, col, "unexpected list element")
			return nil
		}
		if !ok {
			p.errorAt(line, col, "list element of kind %s in a list of %s", v.Kind(), listKind(first))
			return nil
		}
	}
	p.next()
	switch first.(type) {
	case Int:
		return Ints(p.i64Slab.copyOf(is))
	case Float:
		return Floats(floats)
	case Bool:
		return Bools(bools)
	case String:
		return Strings(p.strSlab.copyOf(strs))
	}
	return BlockRefs(blocks)
}

// listKind is the kind of a list whose first element is first.
func listKind(first Value) AttrKind {
	switch first.(type) {
	case Int:
		return Ints(nil).Kind()
	case Float:
		return Floats(nil).Kind()
	case Bool:
		return Bools(nil).Kind()
	case String:
		return Strings(nil).Kind()
	}
	return BlockRefs(nil).Kind()
}
