package registry

import (
	"strings"
	"testing"

	"github.com/distpass/distpass/ir"
)

// Lowering.Var remembers the current op's lookups, and forgets them when the
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
	ctx := newLowering(m, 0, b, newState())
	a := ctx.Var("a")
	if a == nil || ctx.Var("a") != a || ctx.Var("c") != nil {
		t.Fatalf("lookups of a and c: %v, %v", a, ctx.Var("c"))
	}
	// Declared behind the memo's back, through the block.
	c := declarable(ir.Var{Type: a.Type}, "c")
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
	if got := ctx.Var("a"); got == nil || got.Name() != "a" || ctx.Var("b") != nil {
		t.Errorf("after RenameVar(b, a): Var(a) = %v, Var(b) = %v", got, ctx.Var("b"))
	}
	m.RenameVars(func(s string) string { return s + "_r" })
	if ctx.Var("a") != nil || ctx.Var("a_r") == nil {
		t.Errorf("after RenameVars: Var(a) = %v, Var(a_r) = %v", ctx.Var("a"), ctx.Var("a_r"))
	}
}

// subBlockModule has a var a in block 0 and a var b in block 1, its
// child.
func subBlockModule(t *testing.T) *ir.Module {
	t.Helper()
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
	return m
}

// In a sub-block, the memo also forgets what it found in the parent when
// the parent's var table changes.
func TestCtxVarSeesParentChanges(t *testing.T) {
	m := subBlockModule(t)
	ctx := newLowering(m, 0, m.Main.Block(1), newState())
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

// oneVarCtx returns main's block 0 of a module that declares var a there,
// and a lowering context on it.
func oneVarCtx(t *testing.T) (*ir.Block, *Lowering) {
	t.Helper()
	m, err := ir.ParseString("t.dpir", `program main {
  block 0 {
    var a : f32[2]
  }
}
`)
	if err != nil {
		t.Fatal(err)
	}
	b := m.Main.Global()
	return b, newLowering(m, 0, b, newState())
}

// In a sub-block a var added may shadow one found in the parent: the
// memo forgets everything then.
func TestCtxVarSeesShadowing(t *testing.T) {
	m := subBlockModule(t)
	sub := m.Main.Block(1)
	ctx := newLowering(m, 0, sub, newState())
	if ctx.Var("a") != m.Main.Block(0).Var("a") {
		t.Fatal("a not found in the parent")
	}
	shadow := declarable(ir.Var{Type: sub.Var("b").Type}, "a")
	if err := sub.AddVar(shadow); err != nil {
		t.Fatal(err)
	}
	if ctx.Var("a") != shadow {
		t.Error("Var(a) still answers the parent's a after the sub-block declared its own")
	}
}

// Origin is cut from the state's text slab, and a string handed out
// stays as it was while the slab fills and is replaced.
func TestOriginFromTheSlab(t *testing.T) {
	slab := &Lowering{implType: "matmul_v2", implIndex: 1, st: newState()}
	first := slab.Origin("row-parallel: first")
	for i := range 5000 { // past the first slab
		reason := "reason " + strings.Repeat("x", i%97)
		if got, want := slab.Origin(reason), "matmul_v2:1 "+reason; got != want {
			t.Fatalf("Origin(%q) = %q, want %q", reason, got, want)
		}
	}
	if first != "matmul_v2:1 row-parallel: first" {
		t.Errorf("the first origin became %q", first)
	}
}

// declarable is v named name, for a block to declare.
func declarable(v ir.Var, name string) *ir.Var {
	v = v.Named(name)
	return &v
}
