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
		if err := b.AddVar(&Var{Name: fmt.Sprintf("v%d", i), Type: Tensor(F32, 2)}); err != nil {
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
		if v := c.Var(name); v == nil || v == b.Var(name) || v.Name != name {
			t.Fatalf("clone.Var(%s) = %p, source's %p", name, v, b.Var(name))
		}
	}
	if err := c.AddVar(&Var{Name: "only_in_clone", Type: Tensor(F32, 2)}); err != nil {
		t.Fatal(err)
	}
	if err := b.AddVar(&Var{Name: "only_in_source", Type: Tensor(F32, 2)}); err != nil {
		t.Fatal(err)
	}
	if b.Var("only_in_clone") != nil || c.Var("only_in_source") != nil {
		t.Error("a var added to one block is found in the other")
	}
	if b.Var("only_in_source") == nil || c.Var("only_in_clone") == nil {
		t.Error("a var added after the clone is not found in its own block")
	}
	// A stale index (vars changed without it) is not copied.
	b.addVarUnchecked(&Var{Name: "stale", Type: Tensor(F32, 2)})
	if d := b.Clone(); d.index.slots != nil || d.Var("stale") == nil {
		t.Errorf("clone of a block with a stale index: slots copied %v, Var(stale) %v", d.index.slots != nil, d.Var("stale"))
	}
}
