package opdef

import "github.com/distpass/distpass/ir"

// nnDefs: embeddings, losses, normalisation, dropout.
func nnDefs() []*Def {
	return []*Def{
		// TODO(defs): attrs and Infer for each.
		{Type: "dropout", Inputs: slots("X", opt("Seed")), Outputs: slots("Out", opt("Mask")),
			Traits: Random, Grad: &Grad{Reads: []string{"Mask", "Out@GRAD"}, Diff: []string{"X"}}},
		{Type: "lookup_table_v2", Inputs: slots(noGrad("Ids"), "W"), Outputs: in("Out"),
			Grad: &Grad{Reads: []string{"Ids", "W", "Out@GRAD"}, Diff: []string{"W"}}},
		{Type: "softmax_with_cross_entropy", Inputs: slots("Logits", noGrad("Label")), Outputs: in("Softmax", "Loss"),
			Grad: &Grad{
				Reads: []string{"Label", "Softmax", "Loss@GRAD"}, Diff: []string{"Logits"},
				Unsupported: func(fwd *ir.Op) string {
					if v, _ := fwd.Attrs.Bool("soft_label"); v {
						return "soft_label is not supported"
					}
					return ""
				},
			}},
		{Type: "layer_norm", Inputs: slots("X", opt("Scale"), opt("Bias")), Outputs: slots("Y", opt("Mean"), opt("Variance")),
			Grad: &Grad{
				Reads: []string{"X", "Scale", "Bias", "Mean", "Variance", "Y@GRAD"},
				Diff:  []string{"X", "Scale", "Bias"},
			}},
	}
}
