package custom

import (
	"fmt"
	"strings"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/ops"
	"github.com/distpass/distpass/spmd"
)

// Rule is an op type's rule in the printable notation: each slot's dims
// as letters, and the reduction of the letters only inputs have.
type Rule struct {
	In, Out []SlotDims
	Reduce  ir.Reduce
}

// SlotDims is one slot's dims in a rule: a character a dim.
type SlotDims struct {
	Slot, Dims string
}

// String spells the rule as a definition file writes it:
// "(X: nchw) -> (Out: nc11) avg". The reduction is written when some
// letter is reduced.
func (r *Rule) String() string {
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
	side(r.In)
	sb.WriteString(" -> ")
	side(r.Out)
	if r.reduces() {
		sb.WriteString(" " + r.Reduce.String())
	}
	return sb.String()
}

// reduces reports whether some lowercase letter of the inputs is in no
// output.
func (r *Rule) reduces() bool {
	for _, in := range r.In {
		for _, l := range in.Dims {
			if isSplittable(byte(l)) && !r.inOutputs(byte(l)) {
				return true
			}
		}
	}
	return false
}

func (r *Rule) inOutputs(l byte) bool {
	for _, o := range r.Out {
		if strings.IndexByte(o.Dims, l) >= 0 {
			return true
		}
	}
	return false
}

func isSplittable(l byte) bool { return l >= 'a' && l <= 'z' }
func isWhole(l byte) bool      { return l >= 'A' && l <= 'Z' }

// parseRule reads "(X: nchw, Y: c) -> (Out: nc11) avg". It returns the
// byte offset of a problem in src with its message.
func parseRule(src string) (*Rule, int, error) {
	r := &Rule{}
	p := &ruleParser{src: src}
	var err error
	if r.In, err = p.side(); err != nil {
		return nil, p.pos, err
	}
	p.skip()
	if !strings.HasPrefix(src[p.pos:], "->") {
		return nil, p.pos, fmt.Errorf(`want "->"`)
	}
	p.pos += 2
	if r.Out, err = p.side(); err != nil {
		return nil, p.pos, err
	}
	p.skip()
	if p.pos < len(src) {
		word := strings.TrimSpace(src[p.pos:])
		red, ok := ir.ParseReduce(word)
		if !ok {
			return nil, p.pos, fmt.Errorf("want a reduction (sum, avg, max or min), not %q", word)
		}
		r.Reduce = red
	}
	return r, 0, r.check()
}

// ruleParser reads a rule's two sides.
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
		slot := p.take(func(c byte) bool { return isSplittable(c) || isWhole(c) || c == '_' || c >= '0' && c <= '9' })
		if slot == "" {
			return nil, fmt.Errorf("want a slot name")
		}
		p.skip()
		if p.pos >= len(p.src) || p.src[p.pos] != ':' {
			return nil, fmt.Errorf(`want ":" after slot %s`, slot)
		}
		p.pos++
		p.skip()
		ss = append(ss, SlotDims{Slot: slot, Dims: p.take(func(c byte) bool { return isSplittable(c) || isWhole(c) || c == '1' })})
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
// output dim an input's, a reduction named only with a reduced dim.
func (r *Rule) check() error {
	seen := map[string]bool{}
	for _, s := range append(append([]SlotDims(nil), r.In...), r.Out...) {
		if seen[s.Slot] {
			return fmt.Errorf("slot %s is spelled twice", s.Slot)
		}
		seen[s.Slot] = true
	}
	inLetters := map[byte]bool{}
	for _, s := range r.In {
		for i := range len(s.Dims) {
			inLetters[s.Dims[i]] = true
		}
	}
	for _, o := range r.Out {
		for i := range len(o.Dims) {
			if l := o.Dims[i]; l != '1' && !inLetters[l] {
				return fmt.Errorf("output %s's dim %c is no input's: an output's dims come from its inputs", o.Slot, l)
			}
		}
	}
	if r.Reduce != ir.ReduceSum && !r.reduces() {
		return fmt.Errorf("a reduction (%s) but no reduced dim (a lowercase letter of the inputs no output has)", r.Reduce)
	}
	return nil
}

// shapes returns the outputs' shapes the rule gives for the inputs'
// types, by output slot; an error when an input's rank is not its dims'
// count, or two inputs give one letter two sizes.
func (r *Rule) shapes(in func(slot string) (ir.Type, bool)) (map[string][]int64, error) {
	size := map[byte]int64{}
	from := map[byte]string{}
	for _, s := range r.In {
		t, ok := in(s.Slot)
		if !ok {
			return nil, nil // an input that does not resolve: verify says so
		}
		if len(t.Shape) != len(s.Dims) {
			return nil, fmt.Errorf("%s has %d dims; the rule spells %d (%s)", s.Slot, len(t.Shape), len(s.Dims), s.Dims)
		}
		for i, n := range t.Shape {
			l := s.Dims[i]
			if l == '1' {
				if n != 1 && n != -1 {
					return nil, fmt.Errorf("%s's dim %d is %d; the rule says 1", s.Slot, i, n)
				}
				continue
			}
			if old, ok := size[l]; ok && old != n && old != -1 && n != -1 {
				return nil, fmt.Errorf("dim %c is %d in %s and %d in %s", l, old, from[l], n, s.Slot)
			}
			if _, ok := size[l]; !ok || size[l] == -1 {
				size[l], from[l] = n, s.Slot
			}
		}
	}
	out := map[string][]int64{}
	for _, o := range r.Out {
		shape := make([]int64, len(o.Dims))
		for i := range len(o.Dims) {
			shape[i] = 1
			if l := o.Dims[i]; l != '1' {
				shape[i] = size[l]
			}
		}
		out[o.Slot] = shape
	}
	return out, nil
}

// sharding builds the rule for an op of the type: the letters by slot,
// whole dims never split.
func (r *Rule) sharding(c *ops.Infer) (spmd.ShardingRule, error) {
	letters := func(ss []SlotDims) map[string]string {
		m := map[string]string{}
		for _, s := range ss {
			m[s.Slot] = strings.Map(func(l rune) rune {
				if isWhole(byte(l)) {
					return '1'
				}
				return l
			}, s.Dims)
		}
		return m
	}
	return c.Einsum(letters(r.In), letters(r.Out), r.Reduce)
}
