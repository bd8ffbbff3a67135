package complete_test

import (
	"github.com/distpass/distpass/ir"
)

// strip drops every dist of m but those of the main program's data vars
// and parameters (and the startup program's), as a user who annotates
// only those would write it.
func strip(m *ir.Module, keep func(v *ir.Var) bool) {
	if keep == nil {
		keep = func(v *ir.Var) bool { return v.Has(ir.FlagIsData) || v.Kind == ir.KindParam }
	}
	for _, p := range m.Programs() {
		for _, b := range p.Blocks {
			for _, v := range b.Vars() {
				if p != m.Main || !keep(v) {
					v.Dist = nil
				}
			}
			for _, op := range b.Ops {
				op.Dist = nil
			}
		}
	}
}
