package custom

import (
	"fmt"
	"strings"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/ops"
	"github.com/distpass/distpass/spmd"
)

// Rule is an op type's rule in the notation of rules (spmd.Notation),
// the one the built-in rules print: each slot's dims as letters, "..."
// for leading dims, and the words after.
type Rule struct {
	spmd.Notation
}

// String spells the rule as a definition file writes it:
// "(X: nchw) -> (Out: nc11) avg".
func (r *Rule) String() string { return r.Notation.String() }

// parseRule reads "(X: nchw, Y: c) -> (Out: nc11) avg". It returns the
// byte offset of a problem in src with its message.
func parseRule(src string) (*Rule, int, error) {
	n, at, err := spmd.ParseNotation(src)
	if err != nil {
		return nil, at, err
	}
	for _, s := range append(n.In[:len(n.In):len(n.In)], n.Out...) {
		if s.Dims == "*" {
			return nil, 0, fmt.Errorf("slot %s is free (*): a custom op's rule spells every slot's dims, which give the outputs' shapes", s.Slot)
		}
	}
	return &Rule{Notation: *n}, 0, nil
}

// expand spells the rule's leading dims for inputs of the types in
// gives.
func (r *Rule) expand(in func(slot string) (ir.Type, bool)) (*spmd.Notation, error) {
	return r.Notation.Expand(func(slot string) int {
		if t, ok := in(slot); ok {
			return len(t.Shape)
		}
		return -1
	})
}

// shapes returns the outputs' shapes the rule gives for the inputs'
// types, by output slot; an error when an input's rank is not its dims'
// count, or two inputs give one letter two sizes. A dim whose letter
// only outputs have is -1: the meaning gives it.
func (r *Rule) shapes(in func(slot string) (ir.Type, bool)) (map[string][]int64, error) {
	for _, s := range r.In {
		if _, ok := in(s.Slot); !ok {
			return nil, nil // an input that does not resolve: verify says so
		}
	}
	n, err := r.expand(in)
	if err != nil {
		return nil, err
	}
	size := map[byte]int64{}
	from := map[byte]string{}
	for _, s := range n.In {
		t, _ := in(s.Slot)
		if len(t.Shape) != len(s.Dims) {
			return nil, fmt.Errorf("%s has %d dims; the rule spells %d (%s)", s.Slot, len(t.Shape), len(s.Dims), s.Dims)
		}
		for i, d := range t.Shape {
			l := s.Dims[i]
			if l == '1' {
				if d != 1 && d != -1 {
					return nil, fmt.Errorf("%s's dim %d is %d; the rule says 1", s.Slot, i, d)
				}
				continue
			}
			if old, ok := size[l]; ok && old != d && old != -1 && d != -1 {
				return nil, fmt.Errorf("dim %c is %d in %s and %d in %s", l, old, from[l], d, s.Slot)
			}
			if _, ok := size[l]; !ok || size[l] == -1 {
				size[l], from[l] = d, s.Slot
			}
		}
	}
	out := map[string][]int64{}
	for _, o := range n.Out {
		shape := make([]int64, len(o.Dims))
		for i := range len(o.Dims) {
			shape[i] = 1
			if l := o.Dims[i]; l != '1' {
				d, ok := size[l]
				if !ok {
					d = -1
				}
				shape[i] = d
			}
		}
		out[o.Slot] = shape
	}
	return out, nil
}

// sharding builds the rule for an op of the type: the letters by slot,
// whole dims never split, the words on the einsum.
func (r *Rule) sharding(c *ops.Infer) (spmd.ShardingRule, error) {
	n, err := r.expand(c.In)
	if err != nil {
		return nil, err
	}
	letters := func(ss []spmd.SlotDims) map[string]string {
		m := map[string]string{}
		for _, s := range ss {
			m[s.Slot] = strings.Map(func(l rune) rune {
				if spmd.IsWhole(byte(l)) {
					return '1'
				}
				return l
			}, s.Dims)
		}
		return m
	}
	e, err := c.Einsum(letters(n.In), letters(n.Out), n.Reduce)
	if e != nil {
		e.Strict, e.StrictBackward, e.NoPartial, e.Selects = n.Strict, n.StrictBackward, n.NoPartial, n.Selects
	}
	return e, err
}
