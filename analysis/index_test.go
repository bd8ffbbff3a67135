package analysis_test

import (
	"testing"

	"github.com/distpass/distpass/analysis"
	"github.com/distpass/distpass/ir"
)

func TestIndex(t *testing.T) {
	m := example(t, "while_loop.dpir")
	x := get[*analysis.IndexInfo](t, analysis.NewCache(m), analysis.Index)
	p := m.Main
	for _, tc := range []struct {
		block int
		name  string
		want  string // varID, or "-" for none
	}{
		{0, "x", "b0:x"},
		{1, "x", "b0:x"}, // through the parent chain
		{1, "x_next", "b1:x_next"},
		{0, "x_next", "-"}, // block 1's var is not visible from block 0
		{2, "x", "-"},      // no block 2
		{-1, "x", "-"},
	} {
		id, ok := x.Lookup(p, tc.block, tc.name)
		if got := varID(id); got != tc.want || ok != (tc.want != "-") {
			t.Errorf("Lookup(%d, %s) = %s, %v; want %s", tc.block, tc.name, got, ok, tc.want)
		}
		if ok && x.Var(id) != p.LookupVar(p.Block(tc.block), tc.name) {
			t.Errorf("Var(%s) is not the var LookupVar finds", varID(id))
		}
	}
	if v := x.Var(analysis.VarID{Prog: p, Block: 1, Name: "x"}); v != nil {
		t.Errorf("Var(b1:x) = %v; block 1 does not declare x", v)
	}
	if n := x.NumVars(p); n != 6 {
		t.Errorf("NumVars = %d, want 6", n)
	}
	for id, want := range map[int64]ref{1: {0, 0}, 4: {0, 3}, 5: {1, 0}, 8: {1, 3}} {
		if r, ok := x.Op(p, id); !ok || r != want {
			t.Errorf("Op(%d) = %v, %v; want %v", id, r, ok, want)
		}
	}
	if r, ok := x.Op(p, 9); ok {
		t.Errorf("Op(9) = %v", r)
	}
	op := p.Blocks[1].Ops[2]
	if prog, r, ok := x.Locate(op); !ok || prog != p || r != (ref{1, 2}) {
		t.Errorf("Locate(%v) = %v, %v, %v", op, prog, r, ok)
	}
	if _, _, ok := x.Locate(&ir.Op{ID: 7, Type: "increment"}); ok {
		t.Error("Locate found an op that is not in the module")
	}
	other := ir.NewProgram("main")
	if _, ok := x.Lookup(other, 0, "x"); ok {
		t.Error("Lookup in a program of another module")
	}
}

// Op ids far apart move the id table to a map; ids repeated keep their
// first op.
func TestIndexOpIDs(t *testing.T) {
	m := parse(t, `
program main {
  block 0 {
    var a : f32[1]
    op 3 relu(X: a) -> (Out: a)
    op 1099511627776 relu(X: a) -> (Out: a)
    op 3 relu(X: a) -> (Out: a)
    op 2 relu(X: a) -> (Out: a)
  }
}
program startup {
  block 0 {
    var a : f32[1]
    op 1030 fill_constant() -> (Out: a)
    op 5000 fill_constant() -> (Out: a)
    op 4 fill_constant() -> (Out: a)
  }
}`)
	x := get[*analysis.IndexInfo](t, analysis.NewCache(m), analysis.Index)
	for _, tc := range []struct {
		p    *ir.Program
		id   int64
		want ref
		ok   bool
	}{
		{m.Main, 3, ref{0, 0}, true},
		{m.Main, 1 << 40, ref{0, 1}, true},
		{m.Main, 2, ref{0, 3}, true},
		{m.Main, 4, ref{}, false},
		{m.Startup, 1030, ref{0, 0}, true}, // grows the dense table
		{m.Startup, 5000, ref{0, 1}, true}, // moves it to a map
		{m.Startup, 4, ref{0, 2}, true},
		{m.Startup, 3, ref{}, false},
	} {
		if r, ok := x.Op(tc.p, tc.id); r != tc.want || ok != tc.ok {
			t.Errorf("%s Op(%d) = %v, %v; want %v, %v", tc.p.Name, tc.id, r, ok, tc.want, tc.ok)
		}
	}
	// The second op 3 is not found by its id, so Locate does not find it.
	if _, _, ok := x.Locate(m.Main.Global().Ops[2]); ok {
		t.Error("Locate found the op with a repeated id")
	}
}

// AppendArgVars gives each op's args as resolved, inputs then outputs,
// the same vars LookupVar finds (through the parent chain in a sub-block),
// and refuses positions the index has no op at.
func TestIndexAppendArgVars(t *testing.T) {
	m := example(t, "while_loop.dpir")
	x := get[*analysis.IndexInfo](t, analysis.NewCache(m), analysis.Index)
	p := m.Main
	for bi, b := range p.Blocks {
		for pos, op := range b.Ops {
			got, ok := x.AppendArgVars([]*ir.Var{nil}, p, bi, pos)
			if !ok {
				t.Fatalf("block %d op %d: not indexed", bi, pos)
			}
			var want []*ir.Var
			for _, ss := range [2][]ir.Slot{op.Inputs, op.Outputs} {
				for _, s := range ss {
					for _, a := range s.Args {
						want = append(want, p.LookupVar(b, a))
					}
				}
			}
			if got[0] != nil || len(got) != 1+len(want) {
				t.Fatalf("block %d op %d: %d vars after dst's one, want %d", bi, pos, len(got)-1, len(want))
			}
			for i, v := range want {
				if v == nil || got[1+i] != v {
					t.Errorf("block %d op %d arg %d: %v, want %v", bi, pos, i, got[1+i], v)
				}
			}
		}
	}
	for _, c := range []struct{ block, pos int }{{0, 4}, {0, -1}, {1, 4}, {2, 0}, {-1, 0}} {
		if got, ok := x.AppendArgVars(nil, p, c.block, c.pos); ok || got != nil {
			t.Errorf("AppendArgVars(block %d, op %d) = %v, %v; want nothing", c.block, c.pos, got, ok)
		}
	}
	if _, ok := x.AppendArgVars(nil, ir.NewProgram("other"), 0, 0); ok {
		t.Error("AppendArgVars answered for a program of another module")
	}
	// A var removed since: not answered from past the list's end.
	b1 := p.Blocks[1]
	if !b1.RemoveVar("x_next") {
		t.Fatal("no x_next")
	}
	got, _ := x.AppendArgVars(nil, p, 1, 0) // scale(X: x) -> (Out: x_next)
	if len(got) != 2 || got[0] != p.LookupVar(b1, "x") || got[1] != nil {
		t.Errorf("after x_next is removed: %v, want [x, nil]", got)
	}
}
