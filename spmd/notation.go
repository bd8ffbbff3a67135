package spmd

import (
	"fmt"
	"strings"

	"github.com/distpass/distpass/ir"
)

// Notation is a rule spelled per slot, the one notation of rules: what
// a custom op's definition file states (package custom parses it) and
// what the built-in rules print (ShardingRule.Notation):
//
//	(X: ...mk, Y: ...kn) -> (Out: ...mn) sum strict-backward
//
// Each slot's dims take one character each: a lowercase letter a dim
// that may be split (pass-through when an output has it, reduced when
// only inputs do: the outputs are then partial along its mesh dim, by
// the reduction word, sum when omitted); an uppercase letter a dim kept
// whole (need-replication); 1 a dim of size 1. A leading "..." stands
// for any number of leading dims, lowercase and shared: right-aligned
// across the slots that have one, an output's the longest input's
// (matmul's batch dims). "*" is a slot the rule leaves free (it takes
// no part and gets no mapping). A slot the rule does not spell is kept
// whole and is never partial. Words after the sides: the reduction,
// strict (a mesh dim on two dims is an error, where the merge otherwise
// keeps the first), strict-backward (so in Backward only), no-partial
// (the op reduces its own partials), select:LETTERS (the letters pick a
// slice rather than being summed: an output without one is not partial
// along its mesh dim). Note, after "; ", says what a rule that is not
// einsum-shaped does besides; Form replaces the sides of a rule that has
// none (reshape's).
type Notation struct {
	In, Out        []SlotDims
	Reduce         ir.Reduce
	Strict         bool
	StrictBackward bool
	NoPartial      bool
	Selects        string
	Note           string
	Form           string
}

// SlotDims is one slot's dims in a notation: a character a dim, "..."
// first for the leading dims, or "*" for a free slot.
type SlotDims struct {
	Slot, Dims string
}

// Ellipsis is the leading dims of a rank-polymorphic rule.
const Ellipsis = "..."

// String spells the notation: "(X: nchw) -> (Out: nc11) avg". The
// reduction is written when some letter is reduced.
func (n *Notation) String() string {
	if n.Form != "" {
		return n.Form
	}
	var sb strings.Builder
	side := func(ss []SlotDims) {
		sb.WriteByte('(')
		for i, s := range ss {
			if i > 0 {
				sb.WriteString(", ")
			}
			sb.WriteString(s.Slot + ": " + s.Dims)
		}
		sb.WriteByte(')')
	}
	side(n.In)
	sb.WriteString(" -> ")
	side(n.Out)
	if n.Reduces() && (!n.NoPartial || n.Reduce != ir.ReduceSum) {
		sb.WriteString(" " + n.Reduce.String())
	}
	for _, w := range []struct {
		on   bool
		word string
	}{{n.Strict, "strict"}, {n.StrictBackward, "strict-backward"}, {n.NoPartial, "no-partial"}, {n.Selects != "", "select:" + n.Selects}} {
		if w.on {
			sb.WriteString(" " + w.word)
		}
	}
	if n.Note != "" {
		sb.WriteString("; " + n.Note)
	}
	return sb.String()
}

// Reduces reports whether some lowercase letter of the inputs, or their
// leading dims, is in no output.
func (n *Notation) Reduces() bool {
	for _, in := range n.In {
		dims, ell := cutEllipsis(in.Dims)
		if ell && !n.outputsHave(Ellipsis) {
			return true
		}
		for i := range len(dims) {
			if IsSplittable(dims[i]) && !n.outputsHave(dims[i:i+1]) {
				return true
			}
		}
	}
	return false
}

func (n *Notation) outputsHave(s string) bool {
	for _, o := range n.Out {
		if strings.Contains(o.Dims, s) {
			return true
		}
	}
	return false
}

// Einsum reports whether the notation is an einsum's: no form, no note,
// no free slot.
func (n *Notation) Einsum() bool {
	if n.Form != "" || n.Note != "" {
		return false
	}
	for _, s := range append(n.In[:len(n.In):len(n.In)], n.Out...) {
		if s.Dims == "*" {
			return false
		}
	}
	return true
}

// IsSplittable reports whether l spells a dim that may be split.
func IsSplittable(l byte) bool { return l >= 'a' && l <= 'z' }

// IsWhole reports whether l spells a dim kept whole.
func IsWhole(l byte) bool { return l >= 'A' && l <= 'Z' }

func cutEllipsis(dims string) (string, bool) { return strings.CutPrefix(dims, Ellipsis) }

// ParseNotation reads "(X: nchw, Y: c) -> (Out: nc11) avg". It returns
// the byte offset of a problem in src with its message. A note or a form
// does not parse: they are what a rule says of itself, not a notation a
// file can state.
func ParseNotation(src string) (*Notation, int, error) {
	n := &Notation{}
	p := &ruleParser{src: src}
	var err error
	if n.In, err = p.side(); err != nil {
		return nil, p.pos, err
	}
	p.skip()
	if !strings.HasPrefix(src[p.pos:], "->") {
		return nil, p.pos, fmt.Errorf(`want "->"`)
	}
	p.pos += 2
	if n.Out, err = p.side(); err != nil {
		return nil, p.pos, err
	}
	for p.skip(); p.pos < len(src); p.skip() {
		at := p.pos
		word := p.take(func(c byte) bool { return c != ' ' && c != '\t' })
		red, isReduce := ir.ParseReduce(word)
		switch sel, isSel := strings.CutPrefix(word, "select:"); {
		case isReduce:
			n.Reduce = red
		case word == "strict":
			n.Strict = true
		case word == "strict-backward":
			n.StrictBackward = true
		case word == "no-partial":
			n.NoPartial = true
		case isSel && sel != "" && strings.IndexFunc(sel, func(r rune) bool { return r > 0x7f || !IsSplittable(byte(r)) }) < 0:
			n.Selects = sel
		default:
			return nil, at, fmt.Errorf("want a reduction (sum, avg, max or min), strict, strict-backward, no-partial or select:LETTERS, not %q", word)
		}
	}
	return n, 0, n.check()
}

// ruleParser reads a notation's two sides.
type ruleParser struct {
	src string
	pos int
}

func (p *ruleParser) skip() {
	for p.pos < len(p.src) && (p.src[p.pos] == ' ' || p.src[p.pos] == '\t') {
		p.pos++
	}
}

// take reads the run of bytes ok accepts.
func (p *ruleParser) take(ok func(byte) bool) string {
	start := p.pos
	for p.pos < len(p.src) && ok(p.src[p.pos]) {
		p.pos++
	}
	return p.src[start:p.pos]
}

// side reads "(Slot: dims, ...)".
func (p *ruleParser) side() ([]SlotDims, error) {
	p.skip()
	if p.pos >= len(p.src) || p.src[p.pos] != '(' {
		return nil, fmt.Errorf(`want "("`)
	}
	p.pos++
	var ss []SlotDims
	for {
		p.skip()
		if p.pos < len(p.src) && p.src[p.pos] == ')' && len(ss) == 0 {
			p.pos++
			return ss, nil
		}
		slot := p.take(func(c byte) bool {
			return IsSplittable(c) || IsWhole(c) || c == '_' || c == '@' || c >= '0' && c <= '9'
		})
		if slot == "" {
			return nil, fmt.Errorf("want a slot name")
		}
		p.skip()
		if p.pos >= len(p.src) || p.src[p.pos] != ':' {
			return nil, fmt.Errorf(`want ":" after slot %s`, slot)
		}
		p.pos++
		p.skip()
		var dims string
		switch {
		case strings.HasPrefix(p.src[p.pos:], "*"):
			p.pos++
			dims = "*"
		default:
			if strings.HasPrefix(p.src[p.pos:], Ellipsis) {
				p.pos += len(Ellipsis)
				dims = Ellipsis
			}
			dims += p.take(func(c byte) bool { return IsSplittable(c) || IsWhole(c) || c == '1' })
		}
		ss = append(ss, SlotDims{Slot: slot, Dims: dims})
		p.skip()
		if p.pos < len(p.src) && p.src[p.pos] == ',' {
			p.pos++
			continue
		}
		if p.pos < len(p.src) && p.src[p.pos] == ')' {
			p.pos++
			return ss, nil
		}
		return nil, fmt.Errorf(`want "," or ")" after %s's dims (a letter or 1 a dim)`, slot)
	}
}

// check checks what the grammar does not: each slot spelled once, every
// splittable dim of an output an input's, leading dims in an output only
// when an input has them, a reduction named only with a reduced dim.
// An uppercase letter only outputs have is a whole dim the rule does not
// size (a convolution's spatial dims).
func (n *Notation) check() error {
	seen := map[string]bool{}
	inLetters := map[byte]bool{}
	ellipsis := false
	for _, s := range append(n.In[:len(n.In):len(n.In)], n.Out...) {
		if seen[s.Slot] {
			return fmt.Errorf("slot %s is spelled twice", s.Slot)
		}
		seen[s.Slot] = true
	}
	for _, s := range n.In {
		dims, ell := cutEllipsis(s.Dims)
		ellipsis = ellipsis || ell
		for i := range len(dims) {
			inLetters[dims[i]] = true
		}
	}
	for _, o := range n.Out {
		dims, ell := cutEllipsis(o.Dims)
		if ell && !ellipsis {
			return fmt.Errorf("output %s has leading dims (...) and no input has", o.Slot)
		}
		for i := range len(dims) {
			if l := dims[i]; IsSplittable(l) && !inLetters[l] {
				return fmt.Errorf("output %s's dim %c is no input's: an output's dims come from its inputs", o.Slot, l)
			}
		}
	}
	if n.Reduce != ir.ReduceSum && !n.Reduces() {
		return fmt.Errorf("a reduction (%s) but no reduced dim (a lowercase letter of the inputs no output has)", n.Reduce)
	}
	return nil
}

// Expand spells the leading dims of n for an op whose input slot s has
// rank(s) dims (-1: none): each input's "..." becomes its own count of
// fresh lowercase letters, right-aligned and shared across the inputs,
// each output's the longest input's. A notation without "..." comes back
// as it is.
func (n *Notation) Expand(rank func(slot string) int) (*Notation, error) {
	lead := 0
	counts := map[string]int{}
	for _, s := range n.In {
		dims, ell := cutEllipsis(s.Dims)
		if !ell {
			continue
		}
		r := rank(s.Slot)
		if r < len(dims) {
			return nil, fmt.Errorf("%s has %d dims; the rule spells at least %d (%s)", s.Slot, r, len(dims), s.Dims)
		}
		counts[s.Slot] = r - len(dims)
		lead = max(lead, r-len(dims))
	}
	if len(counts) == 0 {
		return n, nil
	}
	used := map[rune]bool{}
	for _, s := range append(n.In[:len(n.In):len(n.In)], n.Out...) {
		for _, l := range s.Dims {
			used[l] = true
		}
	}
	var fresh []byte
	for l := byte('a'); l <= 'z' && len(fresh) < lead; l++ {
		if !used[rune(l)] {
			fresh = append(fresh, l)
		}
	}
	if len(fresh) < lead {
		return nil, fmt.Errorf("%d leading dims: more than the letters the rule leaves", lead)
	}
	x := *n
	spell := func(ss []SlotDims, count func(slot string) int) []SlotDims {
		res := make([]SlotDims, len(ss))
		for i, s := range ss {
			res[i] = s
			if dims, ell := cutEllipsis(s.Dims); ell {
				res[i].Dims = string(fresh[lead-count(s.Slot):]) + dims
			}
		}
		return res
	}
	x.In = spell(n.In, func(s string) int { return counts[s] })
	x.Out = spell(n.Out, func(string) int { return lead })
	return &x, nil
}

// Arg is one arg of an op as Notation sees it: its slot, and its shape
// (nil for an arg that is no dense tensor).
type Arg struct {
	Slot  string
	Shape []int64
}

// Notation spells e for an op whose input and output args are in and
// out: each slot by its first arg's letters; a '1' of a dim whose size
// is not 1 is a whole dim, an uppercase letter shared by the whole dims
// of one size (the same dim, in an op whose dims differ in size); the
// outputs e does not spell (Whole) left out.
func (e *Einsum) Notation(in, out []Arg) Notation {
	n := Notation{Reduce: e.Reduce, Strict: e.Strict, StrictBackward: e.StrictBackward && !e.Strict, NoPartial: e.NoPartial, Selects: e.Selects}
	whole := map[int64]byte{}
	next := byte('A')
	spell := func(letters string, shape []int64) string {
		b := []byte(letters)
		for i, l := range b {
			if l != '1' || len(shape) != len(b) || shape[i] == 1 {
				continue
			}
			w, ok := whole[shape[i]]
			if !ok || shape[i] < 0 {
				w, next = next, next+1
				whole[shape[i]] = w
			}
			b[i] = w
		}
		return string(b)
	}
	side := func(axes []string, args []Arg, skip func(i int) bool) []SlotDims {
		var ss []SlotDims
		for i, a := range axes {
			if i >= len(args) || skip(i) || i > 0 && args[i-1].Slot == args[i].Slot {
				continue
			}
			if args[i].Shape == nil && a == "" {
				continue // no dense tensor
			}
			ss = append(ss, SlotDims{Slot: args[i].Slot, Dims: spell(a, args[i].Shape)})
		}
		return ss
	}
	n.In = side(e.In, in, func(int) bool { return false })
	n.Out = side(e.Out, out, func(j int) bool { return j < len(e.Whole) && e.Whole[j] })
	return n
}
