package opdef

import "github.com/distpass/distpass/ir"

// moeDefs: the mixture-of-experts gate, dispatch and expert ops.
func moeDefs() []*Def {
	return []*Def{
		// TODO(defs): attrs and Infer for each; the rest of the family.
		{Type: "top_k_v2", Inputs: slots("X", opt("K")), Outputs: slots("Out", "Indices"),
			Grad: &Grad{Reads: []string{"X", "Indices", "Out@GRAD"}, Diff: []string{"X"}}},
		{Type: "gather", Inputs: slots("X", noGrad("Index"), opt("Axis")), Outputs: in("Out"),
			Grad: &Grad{Reads: []string{"X", "Index", "Out@GRAD"}, Diff: []string{"X"}}},
		{Type: "scatter", Inputs: slots("X", noGrad("Ids"), "Updates"), Outputs: in("Out"),
			Grad: &Grad{Reads: []string{"Ids", "Updates", "Out@GRAD"}, Diff: []string{"X", "Updates"}}},
		{Type: "grouped_matmul", Inputs: slots("X", "W", noGrad("ExpertCount")), Outputs: in("Out"),
			Grad: &Grad{Reads: []string{"X", "W", "ExpertCount", "Out@GRAD"}, Diff: []string{"X", "W"}}},
		// Each MoE exchange's grad is the other one with the same counts
		// and attrs: the rows go back where they came from.
		{Type: "global_scatter", Inputs: slots("X", noGrad("local_count"), noGrad("global_count")), Outputs: in("Out"),
			Traits: Collective,
			Grad:   &Grad{Type: "global_gather", Reads: []string{"Out@GRAD"}, Diff: []string{"X"}, Emit: exchangeGrad("global_gather")}},
		{Type: "global_gather", Inputs: slots("X", noGrad("local_count"), noGrad("global_count")), Outputs: in("Out"),
			Traits: Collective,
			Grad:   &Grad{Type: "global_scatter", Reads: []string{"Out@GRAD"}, Diff: []string{"X"}, Emit: exchangeGrad("global_scatter")}},
	}
}

// exchangeGrad returns the Emit of global_scatter's or global_gather's
// grad: the inverse exchange, typ, over the forward op's counts.
func exchangeGrad(typ string) func(fwd *ir.Op, _ *ir.Var, outGrad, inGrad string) *ir.Op {
	return func(fwd *ir.Op, _ *ir.Var, outGrad, inGrad string) *ir.Op {
		return &ir.Op{Type: typ,
			Inputs: []ir.Slot{ir.S("X", outGrad), ir.S("local_count", fwd.Input("local_count")...),
				ir.S("global_count", fwd.Input("global_count")...)},
			Outputs: ir.Slots("Out", inGrad), Attrs: fwd.Attrs.Clone()}
	}
}
