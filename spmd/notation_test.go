package spmd

import (
	"strings"
	"testing"
)

// TestNotationParse: what prints parses back to itself, the ellipsis and
// the words included; what the grammar refuses says where.
func TestNotationParse(t *testing.T) {
	for _, src := range []string{
		"(X: ...mk, Y: ...kn) -> (Out: ...mn) sum strict-backward",
		"(X: ...A) -> (Out: ...A) strict",
		"(X: ...) -> (Out: ) avg",
		"(W: kn, Ids: ...) -> (Out: ...n) sum strict",
		"(X: ..., cum_count: *) -> (Out: *) no-partial",
		"(X: rk, W: ekp) -> (Out: rp) sum select:e",
		"(Input: ncHW, Filter: mcKL) -> (Output: nmPQ) sum",
	} {
		n, at, err := ParseNotation(src)
		if err != nil {
			t.Errorf("%q: at %d: %v", src, at, err)
			continue
		}
		if got := n.String(); got != src {
			t.Errorf("%q prints %q", src, got)
		}
	}
	for src, want := range map[string]string{
		"(X: a) -> (Out: ...a)":        "output Out has leading dims (...) and no input has",
		"(X: ...) -> (Out: ...) max":   "a reduction (max) but no reduced dim",
		"(X: ab) -> (Out: a) sideways": `not "sideways"`,
		"(X: a, X: a) -> (Out: a)":     "slot X is spelled twice",
	} {
		if _, _, err := ParseNotation(src); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want %q", src, err, want)
		}
	}
}

// TestNotationExpand: leading dims are right-aligned across the inputs,
// an output's the longest input's.
func TestNotationExpand(t *testing.T) {
	n, _, err := ParseNotation("(X: ...mk, Y: ...kn) -> (Out: ...mn) sum")
	if err != nil {
		t.Fatal(err)
	}
	ranks := map[string]int{"X": 4, "Y": 3}
	e, err := n.Expand(func(s string) int { return ranks[s] })
	if err != nil {
		t.Fatal(err)
	}
	if got, want := e.String(), "(X: abmk, Y: bkn) -> (Out: abmn) sum"; got != want {
		t.Errorf("expanded %q, want %q", got, want)
	}
	ranks["X"] = 1
	if _, err := n.Expand(func(s string) int { return ranks[s] }); err == nil {
		t.Errorf("X of 1 dim expands against ...mk")
	}
}
