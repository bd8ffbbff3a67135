package viz

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/distpass/distpass/ir"
)

// Names that are keywords elsewhere, a quoted name, a mesh and a mesh dim
// that share names with vars: only vars (declared, in slots, in op dists,
// in grads) and op ids (after op and fwd) are marked.
func TestMarkTextKeywordNames(t *testing.T) {
	m, err := ir.ParseString("names.dpir", `
mesh op shape [2] dims [var] ranks [0, 1]
program main {
  block 0 {
    var op : f32[4] @op[0]
    var "a b" : f32[4]
    var dist : f32[4] {stop_gradient}
    op 7 relu(X: op) -> (Out: "a b") {role = "x", var = 1} role forward fwd 3
         dist @op impl elementwise:0 [op: [0] -> "a b": [-1]]
    op 8 sum(X: ["a b", op]) -> (Out: dist) role forward
  }
}
program startup {
  block 0 {
    var op : f32[4]
    op 7 fill_constant() -> (Out: op) {dtype = 5, shape = [4], value = 1.0} role forward
  }
}
grads op -> dist
`)
	if err != nil {
		t.Fatal(err)
	}
	text := ir.Print(m)
	var got []string
	for _, mk := range markText(text) {
		kind := "var"
		if mk.op {
			kind = "op"
		}
		if tok := string(text[mk.start:mk.end]); kind == "var" && tok != mk.key || kind == "op" && !strings.HasSuffix(mk.key, ":"+tok) {
			t.Errorf("mark %q has key %q", tok, mk.key)
		}
		got = append(got, kind+" "+mk.key)
	}
	want := []string{
		"var op", `var "a b"`, "var dist",
		"op main:7", "var op", `var "a b"`, "op main:3", "var op", `var "a b"`,
		"op main:8", `var "a b"`, "var op", "var dist",
		"var op", "op startup:7", "var op",
		"var op", "var dist",
	}
	if !slices.Equal(got, want) {
		t.Errorf("marks:\n got %q\nwant %q\nin:\n%s", got, want, text)
	}
}

// Every var and op of a real module is marked where the printer names
// it: the marks cover exactly the occurrences a count of the module finds.
func TestMarkTextCountsMLP(t *testing.T) {
	m := parseExample(t, "../examples/mlp_dp_mp.dpir")
	text := ir.Print(m)
	got := map[string]int{}
	for _, mk := range markText(text) {
		got[fmt.Sprint(mk.op, mk.key)]++
	}
	want := map[string]int{}
	for _, p := range m.Programs() {
		for _, b := range p.Blocks {
			for _, v := range b.Vars() {
				want[fmt.Sprint(false, v.Name())]++ // the declaration
			}
			for _, op := range b.Ops {
				want[fmt.Sprint(true, p.Name+":"+fmt.Sprint(op.ID))]++
				if op.Fwd != 0 {
					want[fmt.Sprint(true, p.Name+":"+fmt.Sprint(op.Fwd))]++
				}
				for _, ss := range [][]ir.Slot{op.Inputs, op.Outputs} {
					for _, s := range ss {
						for _, a := range s.Args {
							want[fmt.Sprint(false, a)]++
						}
					}
				}
				if op.Dist != nil {
					for _, as := range [][]ir.ArgDist{op.Dist.Inputs, op.Dist.Outputs} {
						for _, a := range as {
							want[fmt.Sprint(false, a.Name)]++
						}
					}
				}
			}
		}
	}
	for _, pg := range m.ParamGrads {
		want[fmt.Sprint(false, pg.Param)]++
		want[fmt.Sprint(false, pg.Grad)]++
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("marks by key:\n got %v\nwant %v", got, want)
	}
}

func TestDiffLines(t *testing.T) {
	for _, tc := range []struct {
		name, old, new string
		add            []int // lines of new, 0-based
		removed        map[int]int
	}{
		{"same", "a\nb\n", "a\nb\n", nil, nil},
		{"insert", "a\nb\nc\n", "a\nb\nx\nc\n", []int{2}, nil},
		{"delete", "a\nb\nc\nd\n", "a\nc\nd\n", nil, map[int]int{1: 1}},
		{"delete at end", "a\nb\nc\n", "a\nb\n", nil, map[int]int{2: 1}},
		{"change", "a\nb\nc\nd\ne\nf\ng\nh\n", "a\nb\nc\nD\ne\nf\ng\nh\n", []int{3}, map[int]int{3: 1}},
		{"from empty", "", "a\nb\n", []int{0, 1}, nil},
		{"to empty", "a\nb\n", "", nil, map[int]int{0: 2}},
		{"far apart", "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n", "0\n1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\n", []int{0, 13}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := diffLines([]byte(tc.old), []byte(tc.new))
			var add []int
			for i, a := range d.add {
				if a {
					add = append(add, i)
				}
			}
			removed := map[int]int{}
			for i, n := range d.removedBefore {
				if n > 0 {
					removed[i] = n
				}
			}
			if !slices.Equal(add, tc.add) {
				t.Errorf("added lines %v, want %v", add, tc.add)
			}
			if tc.removed == nil {
				tc.removed = map[int]int{}
			}
			if fmt.Sprint(removed) != fmt.Sprint(tc.removed) {
				t.Errorf("removed %v, want %v", removed, tc.removed)
			}
			if d.added != len(tc.add) {
				t.Errorf("added count %d, want %d", d.added, len(tc.add))
			}
		})
	}
}

func parseExample(t *testing.T, path string) *ir.Module {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m, err := ir.Parse(path, src)
	if err != nil {
		t.Fatal(err)
	}
	return m
}
