package analysis_test

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/distpass/distpass/analysis"
	"github.com/distpass/distpass/internal/irgen"
	"github.com/distpass/distpass/ir"
)

type ref = analysis.OpRef

func TestDefUseWhileLoop(t *testing.T) {
	m := example(t, "while_loop.dpir")
	du := get[*analysis.DefUseInfo](t, analysis.NewCache(m), analysis.DefUse)
	p := m.Main
	// Block 0: #0 op 1 fill_constant(i), #1 op 2 fill_constant(n),
	// #2 op 3 less_than(i, n -> cond), #3 op 4 while(x, i, n, cond -> x, i, scopes).
	// Block 1: #0 op 5 scale(x -> x_next), #1 op 6 assign(x_next -> x),
	// #2 op 7 increment(i -> i), #3 op 8 less_than(i, n -> cond).
	for _, tc := range []struct {
		block      int
		name       string
		defs, uses []ref
	}{
		{0, "x", []ref{{0, 3}, {1, 1}}, []ref{{0, 3}, {1, 0}}},
		{0, "i", []ref{{0, 0}, {0, 3}, {1, 2}}, []ref{{0, 2}, {0, 3}, {1, 2}, {1, 3}}},
		{0, "n", []ref{{0, 1}}, []ref{{0, 2}, {0, 3}, {1, 3}}},
		{0, "cond", []ref{{0, 2}, {1, 3}}, []ref{{0, 3}}},
		{0, "scopes", []ref{{0, 3}}, []ref{}},
		{1, "x_next", []ref{{1, 0}}, []ref{{1, 1}}},
		// Names used in block 1 resolve to the block-0 vars.
		{1, "x", []ref{{0, 3}, {1, 1}}, []ref{{0, 3}, {1, 0}}},
		{1, "i", []ref{{0, 0}, {0, 3}, {1, 2}}, []ref{{0, 2}, {0, 3}, {1, 2}, {1, 3}}},
		// x_next is not visible from block 0; nothing is called y.
		{0, "x_next", nil, nil},
		{1, "y", nil, nil},
	} {
		t.Run(fmt.Sprintf("b%d:%s", tc.block, tc.name), func(t *testing.T) {
			if diff := cmp.Diff(tc.defs, du.Defs(p, tc.block, tc.name)); diff != "" {
				t.Errorf("Defs (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.uses, du.Uses(p, tc.block, tc.name)); diff != "" {
				t.Errorf("Uses (-want +got):\n%s", diff)
			}
		})
	}

	x := get[*analysis.IndexInfo](t, analysis.NewCache(m), analysis.Index)
	id, ok := x.Lookup(p, 1, "i")
	if want := (analysis.VarID{Prog: p, Block: 0, Name: "i"}); !ok || id != want {
		t.Errorf("Lookup(1, i) = %v, %v; want %v", id, ok, want)
	}
	if diff := cmp.Diff([]ref{{0, 0}, {0, 3}, {1, 2}}, du.DefsOf(id)); diff != "" {
		t.Errorf("DefsOf (-want +got):\n%s", diff)
	}
	if got := du.UsesOf(analysis.VarID{Prog: p, Block: 1, Name: "i"}); got != nil {
		t.Errorf("UsesOf(b1:i) = %v; i is declared in block 0, not 1", got)
	}

	for _, tc := range []struct {
		op   ref
		want []ref
	}{
		{ref{1, 2}, []ref{{0, 2}, {0, 3}, {1, 2}, {1, 3}}},         // increment: the users of i
		{ref{0, 3}, []ref{{0, 2}, {0, 3}, {1, 0}, {1, 2}, {1, 3}}}, // while: of x, i and scopes
		{ref{1, 3}, []ref{{0, 3}}},                                 // less_than: of cond
	} {
		if diff := cmp.Diff(tc.want, du.Users(tc.op.Op(p))); diff != "" {
			t.Errorf("Users(%v) (-want +got):\n%s", tc.op, diff)
		}
	}
}

func TestDefUseMLP(t *testing.T) {
	m := example(t, "mlp_dp_mp.dpir")
	du := get[*analysis.DefUseInfo](t, analysis.NewCache(m), analysis.DefUse)
	// Ops by id; block 0 of main holds ops 1..11 at positions 0..10.
	want := map[string][2]string{ // defs, uses
		"x":         {"", "1 9"},
		"w1":        {"10", "1 9 10"},
		"w2":        {"11", "3 7 11"},
		"lr":        {"", "10 11"},
		"h1":        {"1", "2"},
		"a1":        {"2", "3 7 8"},
		"h2":        {"3", "4 6"},
		"loss":      {"4", ""},
		"loss@GRAD": {"5", "6"},
		"h2@GRAD":   {"6", "7"},
		"a1@GRAD":   {"7", "8"},
		"h1@GRAD":   {"8", "9"},
		"w1@GRAD":   {"9", "10"},
		"w2@GRAD":   {"7", "11"},
	}
	got := map[string][2]string{}
	for _, v := range m.Main.Global().Vars() {
		got[v.Name()] = [2]string{ids(m.Main, du.Defs(m.Main, 0, v.Name())), ids(m.Main, du.Uses(m.Main, 0, v.Name()))}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("main defs, uses (-want +got):\n%s", diff)
	}
	for name, def := range map[string]string{"w1": "1", "w2": "2", "lr": "3"} {
		if got := ids(m.Startup, du.Defs(m.Startup, 0, name)); got != def {
			t.Errorf("startup Defs(%s) = %s, want %s", name, got, def)
		}
		if got := du.Uses(m.Startup, 0, name); len(got) != 0 {
			t.Errorf("startup Uses(%s) = %v, want none", name, got)
		}
	}

	users := func(p *ir.Program, pos int) string { return ids(p, du.Users(p.Global().Ops[pos])) }
	for _, tc := range []struct {
		p    *ir.Program
		pos  int
		want string
	}{
		{m.Main, 6, "8 11"},   // matmul_v2_grad: a1@GRAD, w2@GRAD
		{m.Main, 9, "1 9 10"}, // sgd of w1 reads w1 itself
		{m.Main, 0, "2"},      // op 1 -> h1
		{m.Startup, 0, ""},    // startup op 1, not main's op 1
		{m.Main, 3, ""},       // the loss has no users
		{m.Startup, 2, ""},    // lr in startup
	} {
		if got := users(tc.p, tc.pos); got != tc.want {
			t.Errorf("%s Users(#%d) = %q, want %q", tc.p.Name, tc.pos, got, tc.want)
		}
	}
	if got := du.Users(&ir.Op{ID: 1}); got != nil {
		t.Errorf("Users of a stray op = %v", got)
	}
}

// TestDefUseAgainstNaive compares DefUse with a direct map-based
// computation on modules of every shape.
func TestDefUseAgainstNaive(t *testing.T) {
	mods := map[string]*ir.Module{
		"mlp":       example(t, "mlp_dp_mp.dpir"),
		"while":     example(t, "while_loop.dpir"),
		"synthetic": irgen.Synthetic(300),
	}
	for seed := range uint64(200) {
		mods[fmt.Sprint("random", seed)] = irgen.Random(seed)
	}
	for name, m := range mods {
		du := get[*analysis.DefUseInfo](t, analysis.NewCache(m), analysis.DefUse)
		for _, p := range m.Programs() {
			defs, uses := naiveDefUse(p)
			for bi, b := range p.Blocks {
				for _, v := range b.Vars() {
					id := analysis.VarID{Prog: p, Block: bi, Name: v.Name()}
					if diff := cmp.Diff(defs[id], du.Defs(p, bi, v.Name())); diff != "" {
						t.Errorf("%s %s: Defs(%s) (-naive +got):\n%s", name, p.Name, varID(id), diff)
					}
					if diff := cmp.Diff(uses[id], du.Uses(p, bi, v.Name())); diff != "" {
						t.Errorf("%s %s: Uses(%s) (-naive +got):\n%s", name, p.Name, varID(id), diff)
					}
				}
			}
		}
	}
}

func naiveDefUse(p *ir.Program) (defs, uses map[analysis.VarID][]ref) {
	defs, uses = map[analysis.VarID][]ref{}, map[analysis.VarID][]ref{}
	declaring := func(bi int, name string) (analysis.VarID, bool) {
		for steps := 0; bi >= 0 && bi < len(p.Blocks) && steps <= len(p.Blocks); steps++ {
			if p.Blocks[bi].Var(name) != nil {
				return analysis.VarID{Prog: p, Block: bi, Name: name}, true
			}
			if bi == 0 {
				break
			}
			bi = p.Blocks[bi].Parent
		}
		return analysis.VarID{}, false
	}
	add := func(m map[analysis.VarID][]ref, bi int, slots []ir.Slot, r ref) {
		for _, s := range slots {
			for _, a := range s.Args {
				id, ok := declaring(bi, a)
				if !ok {
					continue
				}
				if l := m[id]; len(l) > 0 && l[len(l)-1] == r {
					continue
				}
				m[id] = append(m[id], r)
			}
		}
	}
	for bi, b := range p.Blocks {
		for pos, op := range b.Ops {
			r := ref{Block: int32(bi), Pos: int32(pos)}
			add(uses, bi, op.Inputs, r)
			add(defs, bi, op.Outputs, r)
		}
	}
	// The analysis returns empty, non-nil lists for declared vars.
	for _, m := range []map[analysis.VarID][]ref{defs, uses} {
		for bi, b := range p.Blocks {
			for _, v := range b.Vars() {
				id := analysis.VarID{Prog: p, Block: bi, Name: v.Name()}
				if m[id] == nil {
					m[id] = []ref{}
				}
			}
		}
	}
	return defs, uses
}
