package ir

import (
	"fmt"
	"slices"
	"sync"
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
	// A name declared twice (only a test can) finds the first var, in
	// the clone too.
	b.addVarUnchecked(&Var{name: "v3", Type: Tensor(F32, 7)})
	if d := b.Clone(); d.Var("v3") != d.Vars()[3] {
		t.Errorf("clone of a block with v3 twice: Var(v3) is not the first")
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

// RemoveVar and RenameVar keep the block's table current: after each,
// every var is found at its position, a removed or old name is not, and
// the slots are those of a table built afresh, up to where probe runs
// place names.
func TestNameTableFollowsRemoveAndRename(t *testing.T) {
	b := &Block{Parent: -1, Forward: -1}
	for i := range 3000 {
		if err := b.AddVar(&Var{name: fmt.Sprintf("v%d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	gone := map[string]bool{}
	for k := range 600 {
		name := fmt.Sprintf("v%d", (k*7919)%3000)
		if gone[name] {
			continue
		}
		gone[name] = true
		if k%2 == 0 {
			if !b.RemoveVar(name) {
				t.Fatalf("RemoveVar(%s) = false", name)
			}
		} else if err := b.RenameVar(name, name+"_r"); err != nil {
			t.Fatal(err)
		}
		if k%50 != 0 {
			continue
		}
		if b.index.n != len(b.vars) {
			t.Fatalf("after %d changes: %d names in the table, %d vars", k, b.index.n, len(b.vars))
		}
		for i, v := range b.vars {
			if got := b.VarIndex(v.name); got != i {
				t.Fatalf("after %d changes: VarIndex(%s) = %d, want %d", k, v.name, got, i)
			}
		}
		for n := range gone {
			if b.Var(n) != nil {
				t.Fatalf("after %d changes: %s still found", k, n)
			}
		}
	}
	if b.RemoveVar("nowhere") || b.RenameVar("nowhere", "x") == nil || b.RenameVar(b.vars[0].name, b.vars[1].name) == nil {
		t.Error("RemoveVar or RenameVar of an absent name, or a rename onto a declared one, succeeded")
	}
	if b.AddVar(nil) == nil {
		t.Error("AddVar(nil) succeeded")
	}
}

// A lookup only reads the block: after a removal the table is already
// current, so goroutines may look names up at once (go test -race), and
// Verify, which resolves names through the table, agrees with Var.
func TestLookupsOnlyRead(t *testing.T) {
	b := &Block{Parent: -1, Forward: -1}
	for i := range 100 {
		if err := b.AddVar(&Var{name: fmt.Sprintf("v%d", i), Type: Tensor(F32, 2)}); err != nil {
			t.Fatal(err)
		}
	}
	b.RemoveVar("v10")
	before := slices.Clone(b.index.slots)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 100 {
				if v := b.Var(fmt.Sprintf("v%d", i)); (v == nil) != (i == 10) {
					t.Errorf("goroutine %d: Var(v%d) = %v", g, i, v)
				}
			}
		})
	}
	wg.Wait()
	if !slices.Equal(b.index.slots, before) {
		t.Error("lookups changed the block's table")
	}
}
