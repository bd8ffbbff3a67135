package ir

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// deepParents returns the text of a program whose block n is nested n
// blocks deep by parent links.
func deepParents(n int) string {
	var sb strings.Builder
	sb.WriteString("program main {\n  block 0 { }\n")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&sb, "  block %d parent %d { }\n", i, i-1)
	}
	sb.WriteString("}\n")
	return sb.String()
}

// deepRefs returns the text of a program of n+1 blocks, all children of
// block 0, where the op of block i refers to block i+1: block n is
// nested n refs deep.
func deepRefs(n int) string {
	var sb strings.Builder
	sb.WriteString("program main {\n  block 0 {\n    var x : f32[1]\n    op 1 while(X: x) -> (Out: x) {sub_block = ^1}\n  }\n")
	for i := 1; i <= n; i++ {
		if i < n {
			fmt.Fprintf(&sb, "  block %d parent 0 {\n    op %d while(X: x) -> (Out: x) {sub_block = ^%d}\n  }\n", i, i+1, i+1)
		} else {
			fmt.Fprintf(&sb, "  block %d parent 0 { }\n", i)
		}
	}
	sb.WriteString("}\n")
	return sb.String()
}

// TestParseNestingLimit: a program nested deeper than MaxBlockDepth, by
// parents or by block refs, is a parse error at the block or op where
// the limit is passed, quickly, also 100k levels deep; at the limit it
// parses and verifies.
func TestParseNestingLimit(t *testing.T) {
	for _, tc := range []struct {
		name, src, want string
	}{
		{"parents", deepParents(MaxBlockDepth + 1),
			"t.dpir:1003:9: block 1001: nested 1001 blocks deep through its parents; the limit is 1000"},
		{"parents-100k", deepParents(100000),
			"t.dpir:1003:9: block 1001: nested 1001 blocks deep through its parents; the limit is 1000"},
		{"refs", deepRefs(MaxBlockDepth + 1),
			"t.dpir:4:5: op 1 while: attr sub_block: sub-blocks nest 1001 deep through block refs; the limit is 1000"},
		{"refs-100k", deepRefs(100000),
			"t.dpir:4:5: op 1 while: attr sub_block: sub-blocks nest 100000 deep through block refs; the limit is 1000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			_, err := Parse("t.dpir", []byte(tc.src))
			if err == nil || err.Error() != tc.want {
				t.Fatalf("got  %v\nwant %s", err, tc.want)
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("took %v", d)
			}
		})
	}
	// Types nest one level (a reader of tensors); deeper nesting is an
	// error at the second level, read without recursion.
	n := 1 << 20
	src := "program main { block 0 { var x : " + strings.Repeat("reader(", n) + "f32[1]" + strings.Repeat(")", n) + " } }"
	want := "t.dpir:1:41: element of reader must be a tensor type"
	if _, err := Parse("t.dpir", []byte(src)); err == nil || err.Error() != want {
		t.Errorf("nested types: got %v, want %s", err, want)
	}
	for _, src := range []string{deepParents(MaxBlockDepth), deepRefs(MaxBlockDepth)} {
		m, err := Parse("t.dpir", []byte(src))
		if err != nil {
			t.Fatalf("at the limit: %v", err)
		}
		if err := Verify(m); err != nil {
			t.Fatalf("at the limit: %v", err)
		}
	}
}

// TestVerifyNestingLimit: Verify reports a module built nested too deep
// (not through the parser) with one violation, quickly, and
// CheckNesting returns the same.
func TestVerifyNestingLimit(t *testing.T) {
	parents := NewModule("deep")
	for i := range 100000 {
		parents.Main.AddBlock(i)
	}
	refs, err := Parse("t.dpir", []byte(deepRefs(MaxBlockDepth)))
	if err != nil {
		t.Fatal(err)
	}
	// One more level, added after parsing.
	last := refs.Main.Blocks[len(refs.Main.Blocks)-1]
	last.Ops = append(last.Ops, &Op{ID: 5000, Type: "while", Attrs: Attrs{A("sub_block", BlockRef(len(refs.Main.Blocks)))},
		Inputs: Slots("X", "x"), Outputs: Slots("Out", "x")})
	refs.Main.AddBlock(0)
	for _, tc := range []struct {
		name string
		m    *Module
		want string
	}{
		{"parents", parents, "main block 1001: nested 1001 blocks deep through its parents; the limit is 1000"},
		{"refs", refs, "main block 0: op 1 while: attr sub_block: sub-blocks nest 1001 deep through block refs; the limit is 1000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			err := Verify(tc.m)
			if err == nil || err.Error() != tc.want {
				t.Fatalf("Verify: got  %v\nwant %s", err, tc.want)
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("took %v", d)
			}
			err = CheckNesting(tc.m.Main)
			var v *Violation
			if !errors.As(err, &v) || err.Error() != tc.want {
				t.Errorf("CheckNesting: got %v (%T), want *Violation %s", err, err, tc.want)
			}
		})
	}
	if err := CheckNesting(verifyBase().Main); err != nil {
		t.Errorf("CheckNesting(verifyBase) = %v", err)
	}
}

func TestRefCycles(t *testing.T) {
	m := verifyBase()
	if cs := m.Main.RefCycles(); cs != nil {
		t.Fatalf("verifyBase has ref cycles: %+v", cs)
	}
	// 1 -> 2 (conditional_block), 2 -> 3, 3 -> 1: one cycle, closed by
	// the op of block 3. A ref to an ancestor is not a cycle here (Verify
	// reports it alone).
	opIn(m.Main, 2, "cast").Attrs.Set("sub_block", BlockRef(3))
	opIn(m.Main, 3, "fill_constant").Attrs.Set("sub_block", BlockRef(1))
	opIn(m.Main, 2, "assign").Attrs.Set("sub_block", BlockRef(1))
	cs := m.Main.RefCycles()
	if len(cs) != 1 {
		t.Fatalf("RefCycles = %+v, want one", cs)
	}
	c := cs[0]
	if c.Block != 3 || c.Op.ID != 22 || c.Attr != "sub_block" {
		t.Errorf("cycle at block %d op %d attr %s, want block 3 op 22 sub_block", c.Block, c.Op.ID, c.Attr)
	}
	if got, want := c.Msg(), "attr sub_block: block refs form a cycle: 1 -> 2 -> 3 -> 1"; got != want {
		t.Errorf("Msg() = %q, want %q", got, want)
	}
	long := RefCycle{Attr: "a", Blocks: []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 1}}
	if got, want := long.Msg(), "attr a: block refs form a cycle: 1 -> 2 -> 3 -> 4 -> … -> 9 -> 10 -> 11 -> 1"; got != want {
		t.Errorf("Msg() = %q, want %q", got, want)
	}
}

func TestIsAncestor(t *testing.T) {
	p := verifyBase().Main // 1 and 3 are children of 0, 2 of 1
	for _, tc := range []struct {
		a, b int
		want bool
	}{
		{0, 2, true}, {1, 2, true}, {0, 1, true}, {2, 1, false}, {3, 2, false}, {2, 2, false}, {0, 0, false}, {9, 2, false},
	} {
		if got := p.IsAncestor(tc.a, tc.b); got != tc.want {
			t.Errorf("IsAncestor(%d, %d) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
	p.Blocks[1].Parent = 2 // a cycle: the walk ends
	if p.IsAncestor(3, 2) {
		t.Error("IsAncestor(3, 2) on a cyclic chain = true")
	}
}
