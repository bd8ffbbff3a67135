package ir

import (
	"bytes"
	"runtime"
	"slices"

	"github.com/distpass/distpass/internal/par"
)

// Large sources are parsed in parallel by speculation. Before the parse,
// the source is cut at line starts that look like block statements ("var",
// "persist", "param", "op"), and every piece between two cuts is parsed
// on the side as a run of block statements. The main parse stays
// sequential and authoritative: when it reaches a cut at a statement of a
// block, it takes that piece's vars and ops instead of reading them, if the
// piece parsed without error and adds no duplicate name to the block;
// otherwise it reads the piece itself. So the result, and every error with
// its position, is exactly that of the sequential parse; a cut in the wrong
// place costs time, never correctness.

// Tuning of the speculation; tests lower them to exercise it on small input.
var (
	segmentMinSource = 1 << 20 // bytes below which the parse stays sequential
	segmentSize      = 1 << 20 // bytes per piece, roughly
	segmentWorkers   = func() int { return runtime.GOMAXPROCS(0) }
)

// segment is one speculatively parsed piece of the source.
type segment struct {
	start, end int // byte offsets: start is the first statement's keyword

	ok        bool // the piece is a run of complete block statements
	vars      []*Var
	ops       []*Op
	lines     int // newlines in [start, end)
	lineStart int // offset after the last newline, when lines > 0
}

// startSegments cuts src and parses the pieces on up to GOMAXPROCS
// cores. It returns nil when src is small or there is one
// core.
func startSegments(file string, src []byte, source string) []*segment {
	workers := segmentWorkers()
	if len(src) < segmentMinSource || workers < 2 {
		return nil
	}
	var cuts []int
	for at := 0; at < len(src); at += segmentSize {
		c := nextStatementLine(src, max(at, 1))
		if c < 0 {
			break
		}
		if len(cuts) == 0 || c > cuts[len(cuts)-1] {
			cuts = append(cuts, c)
		}
	}
	if last := lastStatementLine(src); last > 0 && len(cuts) > 0 && last > cuts[len(cuts)-1] {
		cuts = append(cuts, last)
	}
	if len(cuts) < 2 {
		return nil
	}
	segs := make([]*segment, len(cuts)-1)
	for i := range segs {
		segs[i] = &segment{start: cuts[i], end: cuts[i+1]}
	}
	// The main parse waits for every piece at its first block statement
	// (reserveSegments), so it only gives up the header's few lines by
	// waiting here.
	par.Do(len(segs), workers, func(i int) { segs[i].parse(file, src, source) })
	return segs
}

// nextStatementLine returns the offset of the keyword of the first line at
// or after from (from must be at least 1: a cut needs a newline before it)
// whose first word is a block statement keyword, or -1.
func nextStatementLine(src []byte, from int) int {
	for {
		nl := bytes.IndexByte(src[from-1:], '\n')
		if nl < 0 {
			return -1
		}
		i := from - 1 + nl + 1
		if k := statementAt(src, i); k >= 0 {
			return k
		}
		from = i + 1
		if from > len(src) {
			return -1
		}
	}
}

// lastStatementLine is nextStatementLine searching backwards from the end.
func lastStatementLine(src []byte) int {
	end := len(src)
	for end > 0 {
		nl := bytes.LastIndexByte(src[:end], '\n')
		if nl < 0 {
			return -1
		}
		if k := statementAt(src, nl+1); k >= 0 {
			return k
		}
		end = nl
	}
	return -1
}

// statementAt returns the offset of a block statement keyword at the start
// of the line at i (after spaces), or -1.
func statementAt(src []byte, i int) int {
	for i < len(src) && src[i] == ' ' {
		i++
	}
	for _, kw := range [...]string{"op ", "var ", "param ", "persist "} {
		if bytes.HasPrefix(src[i:], []byte(kw)) {
			return i
		}
	}
	return -1
}

// parse reads the piece as block statements into a scratch block.
func (s *segment) parse(file string, src []byte, source string) {
	p := &parser{
		lexer:  lexer{file: file, src: src[:s.end], pos: s.start, lineStart: s.start},
		source: source,
		ahead:  true,
	}
	p.next()
	b := &Block{Index: -1}
	for p.err == nil && p.tok.kind != tEOF {
		if !p.blockStatement(b) {
			return
		}
	}
	if p.err != nil || len(p.refOps) > 0 {
		// Ops that own blocks are read by the main parse, which needs
		// their true positions for the nesting check.
		return
	}
	s.ok, s.vars, s.ops = true, b.vars, b.Ops
	s.lines = p.line
	if s.lines > 0 {
		s.lineStart = p.lineStart
	}
}

// reserveSegments sizes b's var and op lists and its name index, at the
// block's start, for the pieces ahead that the main parse will take into
// it: the run of clean pieces from the first one ahead (the piece that
// holds the block's end is not clean). Growing them piece by piece copied
// them, and rebuilt the index, a dozen times over. A wrong guess costs
// only the capacity.
func (p *parser) reserveSegments(b *Block) {
	nv, no := 0, 0
	for _, s := range p.segs {
		if s.start < p.tok.start {
			continue
		}
		if !s.ok {
			break
		}
		nv, no = nv+len(s.vars), no+len(s.ops)
	}
	if nv+no == 0 {
		return
	}
	b.vars = slices.Grow(b.vars, nv)
	b.Ops = slices.Grow(b.Ops, no)
	b.index.reserve(b.vars, len(b.vars)+nv)
}

// takeSegments is called by the main parse at a statement of block b. While
// a piece starts at the current token, it waits for it and, if it can be
// used, adds its vars and ops to b and moves the lexer past it. It reports
// whether it took any.
func (p *parser) takeSegments(b *Block) bool {
	took := false
	for p.err == nil && p.takeSegment(b) {
		took = true
	}
	return took
}

func (p *parser) takeSegment(b *Block) bool {
	for len(p.segs) > 0 && p.segs[0].start < p.tok.start {
		p.segs = p.segs[1:] // passed by: a cut that was not a statement of ours
	}
	if len(p.segs) == 0 || p.segs[0].start != p.tok.start {
		return false
	}
	s := p.segs[0]
	p.segs = p.segs[1:]
	if !s.ok {
		return false
	}
	n := len(b.vars)
	b.vars = append(b.vars, s.vars...)
	for i := n; i < len(b.vars); i++ {
		if b.index.insert(b.vars, i) >= 0 {
			// A name declared twice: read the piece again, for the error.
			b.vars = b.vars[:n]
			b.index = nameTable{}
			for j := range b.vars {
				b.index.insert(b.vars, j)
			}
			return false
		}
	}
	b.Ops = append(b.Ops, s.ops...)
	p.line += s.lines
	if s.lines > 0 {
		p.lineStart = s.lineStart
	}
	p.pos = s.end
	p.next()
	return true
}
