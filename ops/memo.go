package ops

import (
	"encoding/binary"
	"slices"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/spmd"
)

// RuleMemo shares one sharding rule among the ops that would build equal
// ones, and one answer among equal calls of a rule: a rule depends on
// nothing but the op's type, its attrs, its slots and the types of its
// args (and which args name one var), which the key spells whole. A model
// repeats its layers, so most ops find theirs. The zero value is ready;
// a memo is not safe for concurrent use.
type RuleMemo struct {
	buf   []byte
	rules map[string]memoRule
	// results holds the rules' answers by rule, direction, mesh and
	// mappings. The answers are read, never written.
	results map[string]memoResult
	rbuf    []byte
}

type memoRule struct {
	rule spmd.ShardingRule
	id   int32
}

type memoResult struct {
	s   spmd.Sharding
	err error
}

// Rule returns op's rule (ShardingRuleOf, args looked up by lookup) and
// its id in the memo, -1 when it is not shared (an attr of a kind the key
// does not spell, or an error). argVars are the vars op's args name, in
// slot order, inputs then outputs (nil for a name no block declares).
func (m *RuleMemo) Rule(op *ir.Op, argVars []*ir.Var, lookup func(string) *ir.Var) (spmd.ShardingRule, int32, error) {
	keyed := m.key(op, argVars)
	if keyed {
		if r, ok := m.rules[string(m.buf)]; ok {
			return r.rule, r.id, nil
		}
	}
	rule, err := ShardingRuleOf(op, lookup)
	if !keyed || err != nil {
		return rule, -1, err
	}
	if m.rules == nil {
		m.rules = map[string]memoRule{}
	}
	id := int32(len(m.rules))
	m.rules[string(m.buf)] = memoRule{rule, id}
	return rule, id, nil
}

// Len is how many rules the memo holds.
func (m *RuleMemo) Len() int { return len(m.rules) }

// Run answers rule's Forward (backward false) or Backward on ms, for a
// mesh of shape meshShape that mesh names among the caller's meshes: from
// the results when rule id answered the same before, else by running it.
func (m *RuleMemo) Run(rule spmd.ShardingRule, id int32, backward bool, meshShape []int, mesh int, ms [][]int) (spmd.Sharding, error) {
	call := func() (spmd.Sharding, error) {
		if backward {
			return rule.Backward(meshShape, ms)
		}
		return rule.Forward(meshShape, ms)
	}
	if id < 0 {
		return call()
	}
	b := binary.AppendUvarint(m.rbuf[:0], uint64(id))
	b = binary.AppendUvarint(b, uint64(mesh))
	if backward {
		b = append(b, 1)
	} else {
		b = append(b, 0)
	}
	for _, x := range ms {
		if x == nil {
			b = append(b, 0xff)
			continue
		}
		b = binary.AppendUvarint(b, uint64(len(x)))
		for _, k := range x {
			b = binary.AppendUvarint(b, uint64(k+1))
		}
	}
	m.rbuf = b
	if r, ok := m.results[string(b)]; ok {
		return r.s, r.err
	}
	s, err := call()
	if m.results == nil {
		m.results = map[string]memoResult{}
	}
	// A copy: a rule may answer with the slices it was given, which are
	// the caller's and change.
	s = cloneSharding(s)
	m.results[string(b)] = memoResult{s, err}
	return s, err
}

func cloneSharding(s spmd.Sharding) spmd.Sharding {
	c := func(ms [][]int) [][]int {
		if ms == nil {
			return nil
		}
		out := make([][]int, len(ms))
		for i, m := range ms {
			out[i] = slices.Clone(m)
		}
		return out
	}
	p := make([][]ir.Partial, len(s.Partial))
	for i, x := range s.Partial {
		p[i] = slices.Clone(x)
	}
	if s.Partial == nil {
		p = nil
	}
	return spmd.Sharding{Inputs: c(s.Inputs), Outputs: c(s.Outputs), Partial: p}
}

// key spells op's key into m.buf; false when an attr is of a kind the
// key does not spell (the op builds its own rule).
func (m *RuleMemo) key(op *ir.Op, argVars []*ir.Var) bool {
	b, ok := ir.AppendOpKey(m.buf[:0], op)
	if !ok {
		return false
	}
	k := 0
	for side, slots := range [2][]ir.Slot{op.Inputs, op.Outputs} {
		b = append(b, byte(side))
		for _, s := range slots {
			b = append(b, s.Name...)
			b = append(b, 0)
			b = binary.AppendUvarint(b, uint64(len(s.Args)))
			for range s.Args {
				var v *ir.Var
				if k < len(argVars) {
					v = argVars[k]
				}
				k++
				if v == nil {
					b = append(b, 0xff)
					continue
				}
				b = ir.AppendTypeKey(b, v.Type)
				// Which earlier arg of the op names the same var.
				same := uint64(0)
				for j := range k - 1 {
					if argVars[j] == v {
						same = uint64(j + 1)
						break
					}
				}
				b = binary.AppendUvarint(b, same)
			}
		}
	}
	m.buf = b
	return true
}
