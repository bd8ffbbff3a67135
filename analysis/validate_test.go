package analysis_test

import (
	"strings"
	"testing"

	"github.com/distpass/distpass/analysis"
)

func run(*analysis.Inputs) (any, error) { return nil, nil }

func an(name string, requires ...*analysis.Analyzer) *analysis.Analyzer {
	return &analysis.Analyzer{Name: name, Doc: "Test analyzer " + name + ".", Run: run, Requires: requires}
}

func TestValidate(t *testing.T) {
	cyclic := func() []*analysis.Analyzer {
		a, b, c := an("a"), an("b"), an("c")
		a.Requires = []*analysis.Analyzer{b}
		b.Requires = []*analysis.Analyzer{c}
		c.Requires = []*analysis.Analyzer{a}
		return []*analysis.Analyzer{an("root", a)}
	}
	self := an("self")
	self.Requires = []*analysis.Analyzer{self}
	shared := an("shared")

	for _, tc := range []struct {
		name string
		as   []*analysis.Analyzer
		want string // "" for valid
	}{
		{"ours", []*analysis.Analyzer{analysis.Index, analysis.DefUse, analysis.Roles, analysis.GradMaps,
			analysis.Annotations, analysis.LocalShapes(3), analysis.LocalShapes(0), analysis.Comm, analysis.Memory}, ""},
		{"diamond", []*analysis.Analyzer{an("top", an("left", shared), an("right", shared))}, ""},
		{"same value twice", []*analysis.Analyzer{shared, shared}, ""},
		{"parameters", []*analysis.Analyzer{an("x{a=1}"), an("x{a=1,b-c=2.5}"), an("y{rank=-1}"), an("z9-1{k=A_b}")}, ""},
		{"cycle", cyclic(), "analyzers form a cycle: a -> b -> c -> a"},
		{"self cycle", []*analysis.Analyzer{self}, "analyzers form a cycle: self -> self"},
		{"duplicate", []*analysis.Analyzer{an("dup"), an("x", an("dup"))}, "analyzer dup: name used by two different analyzers"},
		{"upper case", []*analysis.Analyzer{an("Def-use")}, `analyzer "Def-use": name is not kebab-case`},
		{"underscore", []*analysis.Analyzer{an("def_use")}, `analyzer "def_use": name is not kebab-case`},
		{"double dash", []*analysis.Analyzer{an("def--use")}, `analyzer "def--use": name is not kebab-case`},
		{"trailing dash", []*analysis.Analyzer{an("def-")}, `analyzer "def-": name is not kebab-case`},
		{"leading digit", []*analysis.Analyzer{an("9x")}, `analyzer "9x": name is not kebab-case`},
		{"space", []*analysis.Analyzer{an("def use")}, `analyzer "def use": name is not kebab-case`},
		{"empty params", []*analysis.Analyzer{an("x{}")}, `analyzer "x{}": name is not kebab-case`},
		{"empty value", []*analysis.Analyzer{an("x{rank=}")}, `analyzer "x{rank=}": name is not kebab-case`},
		{"unclosed", []*analysis.Analyzer{an("x{rank=3")}, `analyzer "x{rank=3": name is not kebab-case`},
		{"bad key", []*analysis.Analyzer{an("x{Rank=3}")}, `analyzer "x{Rank=3}": name is not kebab-case`},
		{"text after params", []*analysis.Analyzer{an("x{a=1}y")}, `analyzer "x{a=1}y": name is not kebab-case`},
		{"empty name", []*analysis.Analyzer{an("")}, `analyzer "": empty name`},
		{"empty doc", []*analysis.Analyzer{{Name: "a", Doc: " ", Run: run}}, "analyzer a: empty Doc"},
		{"nil run", []*analysis.Analyzer{{Name: "a", Doc: "A."}}, "analyzer a: nil Run"},
		{"nil in list", []*analysis.Analyzer{an("a"), nil}, "analyzer 1 of 2 is nil"},
		{"nil requirement", []*analysis.Analyzer{an("a", an("b"), nil)}, "analyzer a: Requires[1] is nil"},
		{"every problem, in walk order", []*analysis.Analyzer{
			{Name: "A", Requires: []*analysis.Analyzer{an("b_")}},
			an("c"),
			nil,
		}, `analyzer "A": name is not kebab-case
analyzer "A": empty Doc
analyzer "A": nil Run
analyzer "b_": name is not kebab-case
analyzer 2 of 3 is nil`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := analysis.Validate(tc.as)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tc.want {
				t.Errorf("Validate:\ngot  %s\nwant %s", got, tc.want)
			}
		})
	}
}

func TestClosure(t *testing.T) {
	c := an("c")
	b := an("b", c)
	a := an("a", b, c)
	var got []string
	for _, x := range analysis.Closure(a, nil, c, an("d", c)) {
		got = append(got, x.Name)
	}
	if want := "c b a d"; strings.Join(got, " ") != want {
		t.Errorf("Closure = %v, want %s", got, want)
	}
	// Preserving the closure of def-use keeps def-use; preserving def-use
	// alone does not, since the index it requires is dropped.
	m := example(t, "mlp_dp_mp.dpir")
	cache := analysis.NewCache(m)
	get[*analysis.DefUseInfo](t, cache, analysis.DefUse)
	cache.Invalidate(analysis.Closure(analysis.DefUse)...)
	if !cache.Cached(analysis.DefUse) || !cache.Cached(analysis.Index) {
		t.Error("Invalidate(Closure(DefUse)...) dropped def-use or index")
	}
	cache.Invalidate(analysis.DefUse)
	if cache.Cached(analysis.DefUse) {
		t.Error("Invalidate(DefUse) kept def-use without its index")
	}
}
