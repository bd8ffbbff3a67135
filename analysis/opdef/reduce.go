package opdef

func reduceDefs() []*Def {
	return []*Def{
		{
			Type: "mean", Doc: "the mean of every element of X",
			Inputs: in("X"), Outputs: in("Out"), Traits: Reduction,
			Shape: "Out = scalar",
			Infer: func(c *Infer) error {
				if x, ok := c.In("X"); ok {
					c.SetScalar("Out", x.DType)
				}
				return nil
			},
			Grad: &Grad{Reads: []string{"X", "Out@GRAD"}, Diff: []string{"X"}},
		},
		// TODO(defs): reduce_sum, reduce_mean, reduce_max, ... with dim, keep_dim, reduce_all.
		{Type: "reduce_sum", Inputs: in("X"), Outputs: in("Out"), Traits: Reduction,
			Grad: &Grad{Reads: []string{"X", "Out@GRAD"}, Diff: []string{"X"}}},
		{Type: "reduce_mean", Inputs: in("X"), Outputs: in("Out"), Traits: Reduction,
			Grad: &Grad{Reads: []string{"X", "Out@GRAD"}, Diff: []string{"X"}}},
	}
}
