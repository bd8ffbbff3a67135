package registry

import (
	"testing"

	"github.com/distpass/distpass/ir"
)

// Ctx.Var remembers the current op's lookups, and forgets them when the
// block's var table changes: a var declared, removed or renamed is seen
// at the next lookup.
func TestCtxVarSeesVarTableChanges(t *testing.T) {
	m, err := ir.ParseString("t.dpir", `program main {
  block 0 {
    var a : f32[2]
    var b : f32[2]
  }
}
`)
	if err != nil {
		t.Fatal(err)
	}
	b := m.Main.Global()
	ctx := NewCtx(m, 0, b, NewState())
	a := ctx.Var("a")
	if a == nil || ctx.Var("a") != a || ctx.Var("c") != nil {
		t.Fatalf("lookups of a and c: %v, %v", a, ctx.Var("c"))
	}
	// Declared behind the memo's back, through the block.
	c := &ir.Var{Name: "c", Type: a.Type}
	if err := b.AddVar(c); err != nil {
		t.Fatal(err)
	}
	if got := ctx.Var("c"); got != c {
		t.Errorf("after AddVar: Var(c) = %v, want the new var", got)
	}
	if !b.RemoveVar("a") {
		t.Fatal("RemoveVar(a) = false")
	}
	if got := ctx.Var("a"); got != nil {
		t.Errorf("after RemoveVar: Var(a) = %v, want nil", got)
	}
	if err := b.RenameVar("b", "a"); err != nil {
		t.Fatal(err)
	}
	if got := ctx.Var("a"); got == nil || got.Name != "a" || ctx.Var("b") != nil {
		t.Errorf("after RenameVar(b, a): Var(a) = %v, Var(b) = %v", got, ctx.Var("b"))
	}
	m.RenameVars(func(s string) string { return s + "_r" })
	if ctx.Var("a") != nil || ctx.Var("a_r") == nil {
		t.Errorf("after RenameVars: Var(a) = %v, Var(a_r) = %v", ctx.Var("a"), ctx.Var("a_r"))
	}
}

// In a sub-block, the memo also forgets what it found in the parent when
// the parent's var table changes.
func TestCtxVarSeesParentChanges(t *testing.T) {
	m, err := ir.ParseString("t.dpir", `program main {
  block 0 {
    var a : f32[2]
  }
  block 1 parent 0 {
    var b : f32[2]
  }
}
`)
	if err != nil {
		t.Fatal(err)
	}
	ctx := NewCtx(m, 0, m.Main.Block(1), NewState())
	if ctx.Var("a") == nil || ctx.Var("b") == nil {
		t.Fatal("a (from the parent) or b not found")
	}
	if !m.Main.Block(0).RemoveVar("a") {
		t.Fatal("RemoveVar(a) = false")
	}
	if v := ctx.Var("a"); v != nil {
		t.Errorf("after the parent's RemoveVar(a): Var(a) = %v, want nil", v)
	}
}
