package lower

import (
	"strings"
	"testing"

	"github.com/distpass/distpass/ir"
)

// Lowering.Var remembers the vars it found for the current op. Within an
// op the block's vars change only through the lowering (NewVar,
// Declare), which drops the memo: a var declared, even one that shadows
// a parent's, is seen at the next lookup, and a name not found is looked
// up again.
func TestLoweringVarSeesWhatItDeclares(t *testing.T) {
	m := subBlockModule(t)
	sub := m.Main.Block(1)
	ctx := newLowering(m, 0, sub, newState())
	ctx.begin(nil, nil, "default", 0)
	parentA := m.Main.Block(0).Var("a")
	if ctx.Var("a") != parentA || ctx.Var("a") != parentA || ctx.Var("c") != nil {
		t.Fatalf("lookups of a and c: %v, %v", ctx.Var("a"), ctx.Var("c"))
	}
	shadow := declarable(ir.Var{Type: parentA.Type}, "a")
	if err := ctx.Declare(shadow); err != nil {
		t.Fatal(err)
	}
	if ctx.Var("a") != shadow {
		t.Error("Var(a) still answers the parent's a after the sub-block declared its own")
	}
	c := declarable(ir.Var{Type: parentA.Type}, "c")
	if err := ctx.Declare(c); err != nil {
		t.Fatal(err)
	}
	if ctx.Var("c") != c {
		t.Error("Var(c) does not find the var declared after a lookup of c found none")
	}
}

// The memo ends with the op: what changed in the block between two ops
// (another pass, or the lowering of an earlier op) is seen by the next.
func TestLoweringVarMemoEndsWithTheOp(t *testing.T) {
	m := subBlockModule(t)
	ctx := newLowering(m, 0, m.Main.Block(1), newState())
	ctx.begin(nil, nil, "default", 0)
	if ctx.Var("a") == nil || ctx.Var("b") == nil {
		t.Fatal("a (from the parent) or b not found")
	}
	if !m.Main.Block(0).RemoveVar("a") {
		t.Fatal("RemoveVar(a) = false")
	}
	ctx.begin(nil, nil, "default", 0)
	if v := ctx.Var("a"); v != nil {
		t.Errorf("at the next op, after the parent's RemoveVar(a): Var(a) = %v, want nil", v)
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
