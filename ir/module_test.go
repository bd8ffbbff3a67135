package ir

import (
	"strconv"
	"strings"
	"testing"
)

// TestBlockVarIndex exercises the block's name index through its growth,
// duplicate detection, renames and removals.
func TestBlockVarIndex(t *testing.T) {
	b := &Block{Parent: -1, Forward: -1}
	const n = 5000
	for i := range n {
		if err := b.AddVar(&Var{name: "v" + strconv.Itoa(i), Type: Tensor(F32)}); err != nil {
			t.Fatal(err)
		}
		if i%997 == 0 {
			if err := b.AddVar(&Var{name: "v0", Type: Tensor(F32)}); err == nil || err.Error() != "block 0: var v0 declared twice" {
				t.Fatalf("duplicate v0 after %d vars: err = %v", i+1, err)
			}
		}
	}
	if b.NumVars() != n {
		t.Fatalf("NumVars = %d, want %d", b.NumVars(), n)
	}
	for i := range n {
		name := "v" + strconv.Itoa(i)
		if v := b.Var(name); v == nil || v.name != name {
			t.Fatalf("Var(%s) = %v", name, v)
		}
	}
	if b.Var("v5000") != nil || b.Var("") != nil {
		t.Fatal("found a var that is not there")
	}
	if err := b.RenameVar("v7", "seven"); err != nil {
		t.Fatal(err)
	}
	if b.Var("v7") != nil || b.Var("seven") == nil {
		t.Fatal("rename not seen by Var")
	}
	if err := b.RenameVar("v8", "seven"); err == nil {
		t.Fatal("rename onto an existing name succeeded")
	}
	if !b.RemoveVar("v9") || b.RemoveVar("v9") || b.Var("v9") != nil || b.Var("v10") == nil {
		t.Fatal("RemoveVar not seen by Var")
	}
	if err := b.AddVar(&Var{name: "v9", Type: Tensor(F32)}); err != nil {
		t.Fatalf("re-adding a removed name: %v", err)
	}
	c := b.Clone()
	if c.Var("v4999") == nil || c.Var("seven") == nil {
		t.Fatal("clone lookups fail")
	}
}

func TestFreshNamesAndIDs(t *testing.T) {
	// The generator starts from the module's contents when first used.
	m := NewModule("m")
	g := m.Main.Global()
	for _, n := range []string{"tmp_0", "tmp_2"} {
		if err := g.AddVar(&Var{name: n, Type: Tensor(F32)}); err != nil {
			t.Fatal(err)
		}
	}
	g.Ops = append(g.Ops, &Op{ID: 1, Type: "a"}, &Op{ID: 41, Type: "b"})
	m.FreshName("warm") // creates the generator before the clone
	c := m.Clone()
	var got []string
	for range 3 {
		got = append(got, m.FreshName("tmp"))
	}
	if want := "tmp_1 tmp_3 tmp_4"; strings.Join(got, " ") != want {
		t.Errorf("FreshName = %s, want %s", strings.Join(got, " "), want)
	}
	if id := m.FreshOpID(); id != 42 {
		t.Errorf("FreshOpID = %d, want 42", id)
	}
	// The clone was taken after the generator existed: it continues the
	// same sequence independently.
	if n := c.FreshName("tmp"); n != "tmp_1" {
		t.Errorf("clone FreshName = %s, want tmp_1", n)
	}
	if id := c.FreshOpID(); id != 42 {
		t.Errorf("clone FreshOpID = %d, want 42", id)
	}
	// A parsed copy gives the same names, having the same contents.
	p, err := Parse("m.dpir", Print(m))
	if err != nil {
		t.Fatal(err)
	}
	if n := p.FreshName("other"); n != "other_0" {
		t.Errorf("parsed FreshName = %s", n)
	}
}

func TestPaddleCodes(t *testing.T) {
	want := map[DType]int64{Boolean: 0, I16: 1, I32: 2, I64: 3, F16: 4, F32: 5, F64: 6, U8: 20, I8: 21, BF16: 22}
	for d := Boolean; d < numDTypes; d++ {
		c, ok := d.PaddleCode()
		if !ok || c != want[d] {
			t.Errorf("%s.PaddleCode() = %d, %v; want %d", d, c, ok, want[d])
		}
		if back, ok := DTypeFromPaddle(c); !ok || back != d {
			t.Errorf("DTypeFromPaddle(%d) = %s, %v; want %s", c, back, ok, d)
		}
	}
	if _, ok := DTypeFromPaddle(7); ok {
		t.Error("code 7 (a LoD tensor type, not a dtype) was accepted")
	}
	if _, ok := DTypeInvalid.PaddleCode(); ok {
		t.Error("the invalid dtype has a code")
	}
}

// BindingsVersion moves when a name may stop naming its var (a removal,
// a rename, the module's RenameVars) and stays when a var is added;
// VarsVersion moves on all of them.
func TestBlockBindingsVersion(t *testing.T) {
	m := NewModule("t")
	m.Main = NewProgram("main")
	b := m.Main.Global()
	ty := Type{Kind: DenseTensor, DType: F32, Shape: []int64{2}}
	step := func(what string, change func() error, bindsMove bool) {
		t.Helper()
		g, binds := b.VarsVersion(), b.BindingsVersion()
		if err := change(); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if b.VarsVersion() == g {
			t.Errorf("%s: VarsVersion did not move", what)
		}
		if moved := b.BindingsVersion() != binds; moved != bindsMove {
			t.Errorf("%s: BindingsVersion moved = %v, want %v", what, moved, bindsMove)
		}
	}
	for i := range 10 { // past the size at which the block indexes its names
		name := string(rune('a' + i))
		step("AddVar "+name, func() error { return b.AddVar(&Var{name: name, Type: ty}) }, false)
	}
	step("RemoveVar", func() error {
		if !b.RemoveVar("a") {
			t.Fatal("no a")
		}
		return nil
	}, true)
	step("RenameVar", func() error { return b.RenameVar("b", "a") }, true)
	step("RenameVars", func() error { return m.RenameVars(func(s string) string { return s + "_" }) }, true)
	if err := b.AddVar(&Var{name: "c_", Type: ty}); err == nil {
		t.Fatal("a second c_ was added")
	}
}

// Names handed out are never handed out again, declared or not, even
// across prefixes that look alike: prefix_N splits back at its last
// underscore.
func TestFreshNamesAcrossPrefixes(t *testing.T) {
	m := NewModule("m")
	seen := map[string]bool{}
	for _, prefix := range []string{"a_1", "a", "a", "a_1", "a_", "a", "a__1", "a_", "a_1_0", "a_1"} {
		n := m.FreshName(prefix)
		if seen[n] {
			t.Fatalf("FreshName(%s) = %s, handed out before", prefix, n)
		}
		if !strings.HasPrefix(n, prefix+"_") {
			t.Errorf("FreshName(%s) = %s", prefix, n)
		}
		seen[n] = true
	}
	if got := m.FreshName("a"); got != "a_3" {
		t.Errorf("fourth FreshName(a) = %s, want a_3", got)
	}
}

// A var's name changes only through its block, so the block's index of
// names always answers for the name the var has: Named makes a renamed
// copy and leaves the declared var, and the table, as they were.
func TestVarNameChangesOnlyThroughItsBlock(t *testing.T) {
	b := NewProgram("main").Global()
	var vs []*Var
	for i := range 20 { // past the size at which the block indexes names
		v := Var{Type: Tensor(F32, 2)}.Named("v" + strconv.Itoa(i))
		if err := b.AddVar(&v); err != nil {
			t.Fatal(err)
		}
		vs = append(vs, &v)
	}
	cp := vs[3].Named("w")
	if cp.Name() != "w" || vs[3].Name() != "v3" || b.Var("v3") != vs[3] || b.Var("w") != nil {
		t.Fatalf("Named changed the declared var or its table: copy %s, var %s, Var(v3) %v, Var(w) %v", cp.Name(), vs[3].Name(), b.Var("v3"), b.Var("w"))
	}
	if err := b.RenameVar("v3", "w"); err != nil {
		t.Fatal(err)
	}
	if b.Var("w") != vs[3] || b.Var("v3") != nil || vs[3].Name() != "w" {
		t.Fatalf("after RenameVar: Var(w) %v, Var(v3) %v, name %s", b.Var("w"), b.Var("v3"), vs[3].Name())
	}
	if err := b.RenameVar("v4", "w"); err == nil {
		t.Fatal("RenameVar onto a declared name succeeded")
	}
}
