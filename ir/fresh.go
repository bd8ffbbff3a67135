package ir

import (
	"maps"
	"strconv"
)

// generator hands out op ids and var names that are fresh in the module.
// It is built lazily from the module's contents the first time it is
// needed, so a parsed module and the module it was printed from continue
// with the same ids and names.
type generator struct {
	nextID   int64
	counters map[string]int
	names    map[string]struct{} // every var name in the module, plus those handed out
}

func (m *Module) generator() *generator {
	if m.gen != nil {
		return m.gen
	}
	g := &generator{nextID: 1, counters: map[string]int{}, names: map[string]struct{}{}}
	for _, p := range m.Programs() {
		for _, b := range p.Blocks {
			for _, op := range b.Ops {
				if op.ID >= g.nextID {
					g.nextID = op.ID + 1
				}
			}
			for _, v := range b.vars {
				g.names[v.Name] = struct{}{}
			}
		}
	}
	m.gen = g
	return g
}

// FreshOpID returns an op id not used by any op of the module, larger than
// every id it has handed out before.
func (m *Module) FreshOpID() int64 {
	g := m.generator()
	id := g.nextID
	g.nextID++
	return id
}

// FreshName returns prefix_N for the smallest N, counting per prefix, such
// that the name is not a var of the module and was not handed out before:
// FreshName("c_identity.tmp") gives c_identity.tmp_0, then _1, ... The
// sequence depends only on the module's contents and earlier calls, so
// every rank partitioned from the same module gets the same names.
//
// Vars added after the first call without a name from FreshName are not
// seen; names of the prefix_N form should come from here.
func (m *Module) FreshName(prefix string) string {
	g := m.generator()
	n := g.counters[prefix]
	for {
		name := prefix + "_" + strconv.Itoa(n)
		n++
		if _, taken := g.names[name]; !taken {
			g.counters[prefix] = n
			g.names[name] = struct{}{}
			return name
		}
	}
}

func (g *generator) clone() *generator {
	if g == nil {
		return nil
	}
	return &generator{nextID: g.nextID, counters: maps.Clone(g.counters), names: maps.Clone(g.names)}
}
