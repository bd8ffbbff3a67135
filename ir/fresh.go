package ir

import (
	"maps"
	"strconv"
)

// generator hands out op ids and var names that are fresh in the module.
// It is built lazily the first time it is needed (the next id from the
// module's ops), so a parsed module and the module it was printed from
// continue with the same ids and names.
type generator struct {
	nextID   int64
	counters map[string]int // per prefix, past the last N handed out
}

func (m *Module) generator() *generator {
	if m.gen != nil {
		return m.gen
	}
	g := &generator{nextID: 1, counters: map[string]int{}}
	for _, p := range m.Programs() {
		for _, b := range p.Blocks {
			for _, op := range b.Ops {
				if op.ID >= g.nextID {
					g.nextID = op.ID + 1
				}
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

// FreshName returns prefix_N for the smallest N past those it handed out
// for prefix before such that no block of the module declares a var of
// that name: FreshName("c_identity.tmp") gives
// c_identity.tmp_0, then _1, ... The sequence depends only on the
// module's contents and earlier calls, so every rank partitioned from the
// same module gets the same names.
//
// The blocks are asked at each call, through their name indexes, rather
// than a set of every name kept beside them: such a set cost as much
// memory as the indexes, a copy in every clone, and missed the vars added
// after it was made.
//
// Nor is a set of the names handed out needed: prefix_N splits back into
// prefix and N at its last underscore (N is digits), so two prefixes
// never make the same name, and each prefix's counter only grows.
func (m *Module) FreshName(prefix string) string {
	g := m.generator()
	n := g.counters[prefix]
	for {
		name := prefix + "_" + strconv.Itoa(n)
		n++
		if !m.declares(name) {
			g.counters[prefix] = n
			return name
		}
	}
}

// declares reports whether a block of the module declares a var name.
func (m *Module) declares(name string) bool {
	for _, p := range m.Programs() {
		for _, b := range p.Blocks {
			if b != nil && b.Var(name) != nil {
				return true
			}
		}
	}
	return false
}

func (g *generator) clone() *generator {
	if g == nil {
		return nil
	}
	return &generator{nextID: g.nextID, counters: maps.Clone(g.counters)}
}
