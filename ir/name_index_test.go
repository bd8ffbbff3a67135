package ir

import (
	"fmt"
	"testing"
)

// A clone takes a copy of its block's name index: lookups in the clone
// find every var, at once, and neither block's later changes reach the
// other's index.
func TestCloneCopiesTheNameIndex(t *testing.T) {
	b := &Block{Parent: -1, Forward: -1}
	for i := range 40 {
		if err := b.AddVar(&Var{name: fmt.Sprintf("v%d", i), Type: Tensor(F32, 2)}); err != nil {
			t.Fatal(err)
		}
	}
	c := b.Clone()
	if c.index.slots == nil || c.index.n != 40 {
		t.Fatalf("clone's index: %d names, slots %v; want the source's 40", c.index.n, c.index.slots != nil)
	}
	if &c.index.slots[0] == &b.index.slots[0] {
		t.Fatal("the clone shares the source's index slots")
	}
	for i := range 40 {
		name := fmt.Sprintf("v%d", i)
		if v := c.Var(name); v == nil || v == b.Var(name) || v.name != name {
			t.Fatalf("clone.Var(%s) = %p, source's %p", name, v, b.Var(name))
		}
	}
	if err := c.AddVar(&Var{name: "only_in_clone", Type: Tensor(F32, 2)}); err != nil {
		t.Fatal(err)
	}
	if err := b.AddVar(&Var{name: "only_in_source", Type: Tensor(F32, 2)}); err != nil {
		t.Fatal(err)
	}
	if b.Var("only_in_clone") != nil || c.Var("only_in_source") != nil {
		t.Error("a var added to one block is found in the other")
	}
	if b.Var("only_in_source") == nil || c.Var("only_in_clone") == nil {
		t.Error("a var added after the clone is not found in its own block")
	}
	// A stale index (vars changed without it) is not copied.
	b.addVarUnchecked(&Var{name: "stale", Type: Tensor(F32, 2)})
	if d := b.Clone(); d.index.slots != nil || d.Var("stale") == nil {
		t.Errorf("clone of a block with a stale index: slots copied %v, Var(stale) %v", d.index.slots != nil, d.Var("stale"))
	}
}

// reserve makes room without losing the names the table holds, and a
// table with room enough is left as it is.
func TestNameTableReserve(t *testing.T) {
	var vars []*Var
	var tab nameTable
	for i := range 20 {
		vars = append(vars, &Var{name: fmt.Sprintf("v%d", i)})
		tab.insert(vars, i)
	}
	tab.reserve(vars, 5000)
	if len(tab.slots) < 2*5000 {
		t.Fatalf("reserve(5000): %d slots", len(tab.slots))
	}
	slots := &tab.slots[0]
	for i := range 5000 {
		if i >= 20 {
			vars = append(vars, &Var{name: fmt.Sprintf("v%d", i)})
			if got := tab.insert(vars, i); got != -1 {
				t.Fatalf("insert v%d = %d, want -1", i, got)
			}
		}
	}
	if &tab.slots[0] != slots {
		t.Error("the table grew after reserve(5000) while 5000 names went in")
	}
	for i := range 5000 {
		if got := tab.find(vars, fmt.Sprintf("v%d", i)); got != int32(i) {
			t.Fatalf("find(v%d) = %d", i, got)
		}
	}
	tab.reserve(vars, 100)
	if &tab.slots[0] != slots {
		t.Error("reserve(100) rebuilt a table with room for 5000")
	}
}
