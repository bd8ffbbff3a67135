package custom

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/ops"
	"github.com/distpass/distpass/spmd"
)

// TestBuiltinRulesRoundTrip: every built-in rule that prints as an
// einsum reads back, through a definition file's rule parser, as a rule
// that gives what the built-in gives, both ways, on the samples it was
// printed from and (when folded) on a rank beyond them.
func TestBuiltinRulesRoundTrip(t *testing.T) {
	n := 0
	for _, d := range ops.All() {
		p := d.Rule()
		if p == nil || !p.Einsum() {
			continue
		}
		r, _, err := parseRule(p.Notation.String())
		if err != nil {
			t.Errorf("%s: rule %q does not parse: %v", d.Type, p.Notation.String(), err)
			continue
		}
		ranks := []int{p.Rank}
		if p.Instance == "" {
			ranks = append(ranks, p.Rank+1, p.Rank+2, p.Rank+3)
		}
		back := *d
		back.Sharding = r.sharding
		for _, rank := range ranks {
			s := d.RuleSample(rank, p.Square)
			if s == nil {
				continue
			}
			want, err := d.ShardingRule(s.Op, s.Lookup)
			if err != nil || want == nil {
				t.Errorf("%s at rank %d: the built-in rule: %v", d.Type, rank, err)
				continue
			}
			got, err := back.ShardingRule(s.Op, s.Lookup)
			if err != nil || got == nil {
				t.Errorf("%s at rank %d: rule %q: %v", d.Type, rank, r, err)
				continue
			}
			if msg := sameBehaviour(s, want, got); msg != "" {
				t.Errorf("%s at rank %d: rule %q: %s", d.Type, rank, r, msg)
			}
			n++
		}
	}
	t.Logf("%d samples", n)
	if n < 100 {
		t.Errorf("%d samples round-tripped; the table's einsum rules give more", n)
	}
}

// sameBehaviour compares two rules' Forward and Backward on a 2×2 mesh
// over mappings of the sample's args: each replicated, each dim alone on
// each mesh dim, and random ones; "" when they agree on all.
func sameBehaviour(s *ops.RuleSample, a, b spmd.ShardingRule) string {
	mesh := []int{2, 2}
	ranks := func(ss []ir.Slot) []int {
		var rs []int
		for _, sl := range ss {
			for _, arg := range sl.Args {
				r := -1
				if v := s.Vars[arg]; v != nil && v.Type.IsTensor() {
					r = len(v.Type.Shape)
				}
				rs = append(rs, r)
			}
		}
		return rs
	}
	rng := rand.New(rand.NewPCG(1, 2))
	mappings := func(rs []int) [][][]int {
		fill := func(f func(k, i int) int) [][]int {
			ms := make([][]int, len(rs))
			for k, r := range rs {
				if r < 0 {
					continue
				}
				ms[k] = make([]int, r)
				for i := range ms[k] {
					ms[k][i] = f(k, i)
				}
			}
			return ms
		}
		all := [][][]int{fill(func(int, int) int { return -1 })}
		for k, r := range rs {
			for i := range max(r, 0) {
				for md := range mesh {
					all = append(all, fill(func(kk, ii int) int {
						if kk == k && ii == i {
							return md
						}
						return -1
					}))
				}
			}
		}
		for range 40 {
			all = append(all, fill(func(int, int) int { return rng.IntN(len(mesh)+1) - 1 }))
		}
		return all
	}
	describe := func(sh spmd.Sharding, err error) string {
		if err != nil {
			return "error"
		}
		return fmt.Sprint(sh.Inputs, sh.Outputs, sh.Partial)
	}
	for _, in := range mappings(ranks(s.Op.Inputs)) {
		x, errA := a.Forward(mesh, in)
		y, errB := b.Forward(mesh, in)
		if da, db := describe(x, errA), describe(y, errB); da != db || !reflect.DeepEqual(x, y) && errA == nil {
			return fmt.Sprintf("Forward of %v: built-in %s (%v), read back %s (%v)", in, da, errA, db, errB)
		}
	}
	for _, out := range mappings(ranks(s.Op.Outputs)) {
		x, errA := a.Backward(mesh, out)
		y, errB := b.Backward(mesh, out)
		if da, db := describe(x, errA), describe(y, errB); da != db {
			return fmt.Sprintf("Backward of %v: built-in %s (%v), read back %s (%v)", out, da, errA, db, errB)
		}
	}
	return ""
}
