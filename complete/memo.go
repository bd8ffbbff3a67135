package complete

import (
	"encoding/binary"
	"slices"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/spmd"
)

// ruleMemo shares one rule among the ops that would build equal ones: a
// rule depends on nothing but the op's type, its attrs, its slots and
// the types of its args (and which args name one var), which the key
// spells whole. A model repeats its layers, so most ops find theirs.
type ruleMemo struct {
	buf   []byte
	rules map[string]memoRule
	// results holds the rules' answers by rule, direction, mesh and
	// mappings: shared rules see the same mappings layer after layer.
	// The answers are read, never written.
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

// run answers rule id's Forward (backward false) or Backward on ms,
// from the results or by running it.
func (m *ruleMemo) run(n *opNode, backward bool, mesh int, ms [][]int) (spmd.Sharding, error) {
	call := func() (spmd.Sharding, error) {
		if backward {
			return n.rule.Backward(n.mesh.Shape, ms)
		}
		return n.rule.Forward(n.mesh.Shape, ms)
	}
	if n.ruleID < 0 {
		return call()
	}
	b := binary.AppendUvarint(m.rbuf[:0], uint64(n.ruleID))
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
	// the lattice's and change.
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

// key spells op n's key into m.buf; false when an attr is of a kind the
// key does not spell (the op builds its own rule).
func (m *ruleMemo) key(n *opNode) bool {
	b, ok := ir.AppendOpKey(m.buf[:0], n.op)
	if !ok {
		return false
	}
	k := 0
	for side, slots := range [2][]ir.Slot{n.op.Inputs, n.op.Outputs} {
		b = append(b, byte(side))
		for _, s := range slots {
			b = append(b, s.Name...)
			b = append(b, 0)
			b = binary.AppendUvarint(b, uint64(len(s.Args)))
			for range s.Args {
				v := n.argVars[k]
				k++
				if v == nil {
					b = append(b, 0xff)
					continue
				}
				b = ir.AppendTypeKey(b, v.Type)
				// Which earlier arg of the op names the same var.
				same := uint64(0)
				for j := range k - 1 {
					if n.argVars[j] == v {
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
