package check_test

import (
	"strings"
	"testing"

	"github.com/distpass/distpass/check"
	"github.com/distpass/distpass/ir"
)

// provenVariants proves src data-parallel (provenDataParallel) in every
// variant: each value of the placeholder split (how a param is split, ""
// for not at all), each rank order for RANKS, in f32 and f64; then
// hands each variant's module and report to more.
func provenVariants(t *testing.T, src, split string, splits, rankOrders []string, more func(t *testing.T, splitAs string, m *ir.Module, rep *check.Report)) {
	t.Helper()
	for _, s := range splits {
		for _, ranks := range rankOrders {
			for _, f64 := range []bool{false, true} {
				name := split + s + "/" + ranks
				if f64 {
					name += "/f64"
				}
				t.Run(name, func(t *testing.T) {
					m, rep := provenDataParallel(t, strings.NewReplacer(split, s, "RANKS", ranks).Replace(src), f64)
					if more != nil {
						more(t, s, m, rep)
					}
				})
			}
		}
	}
}

// wantCompared fails t unless check compared each of vars.
func wantCompared(t *testing.T, rep *check.Report, vars ...string) {
	t.Helper()
	seen := map[string]bool{}
	for _, row := range rep.Rows {
		seen[row.Var] = true
	}
	for _, v := range vars {
		if !seen[v] {
			t.Errorf("check did not compare %s", v)
		}
	}
}
