package ops

import "strings"

// gradDef derives the def of d's grad op from d.Grad: its inputs are the
// forward slots and output gradients it reads, its outputs the gradients
// of Diff, its attrs the forward op's (autodiff copies them).
func gradDef(d *Def) *Def {
	g := d.Grad
	gd := &Def{
		Type:   d.GradType(),
		Family: d.Family,
		Doc:    "the gradient of " + d.Type,
		Attrs:  d.Attrs,
		// What the op's shape is, how it computes (elementwise, a
		// view) carries to its grad; what it does as a forward op does
		// not (a draw, a collective, a shape attr, positions, parts).
		Traits: d.Traits &^ (Random | Collective | SideEffects | ShapeOfOut | BackwardOnly | OwnPart | KeepsIndex | Identity | LinearUnary | Additive | Monotone | DataDependent | RankStart | NumbersRows),
		Shape:  "each X@GRAD = X",
		Infer:  g.Infer,
		of:     d,
	}
	for _, r := range g.Reads {
		if s, ok := strings.CutSuffix(r, "@GRAD"); ok {
			sl := d.slot(s)
			sl.Name = r
			gd.Inputs = append(gd.Inputs, sl)
			continue
		}
		alts := strings.Split(r, "|")
		for _, a := range alts {
			sl := d.slot(a)
			// The grad op reads a forward slot when the forward op has it.
			sl.Optional = sl.Optional || len(alts) > 1
			gd.Inputs = append(gd.Inputs, sl)
		}
	}
	for _, s := range g.Diff {
		sl := d.slot(s)
		sl.Name += "@GRAD"
		sl.Optional, sl.NoGrad = true, false
		gd.Outputs = append(gd.Outputs, sl)
	}
	if g.Shape != "" {
		gd.Shape = g.Shape
	}
	gd.Indexing = g.Indexing
	if d.Sharding != nil {
		gd.Sharding, gd.ShardingDoc = gradSharding, gradShardingDoc
	}
	if gd.Infer == nil {
		gd.Infer = inferGradLike
		if d.Traits&Elementwise != 0 && len(g.Diff) == 1 {
			gd.Shape = "X@GRAD = X, or Out@GRAD when X is not read"
		}
	}
	return gd
}

// slot returns d's input or output slot name; a slot d does not declare
// is optional and variadic.
func (d *Def) slot(name string) Slot {
	for _, ss := range [2][]Slot{d.Inputs, d.Outputs} {
		for _, s := range ss {
			if s.Name == name {
				return s
			}
		}
	}
	return Slot{Name: name, Optional: true, Variadic: true}
}

// inferGradLike gives each gradient output the type of the forward input
// it is the gradient of, when the grad op reads that input; for a unary
// elementwise op that does not read X (relu_grad reads Out), the type of
// the output gradient.
func inferGradLike(c *Infer) error {
	fwd := c.def.of
	for k, s := range fwd.Grad.Diff {
		gs := c.def.Outputs[k].Name // s + "@GRAD", without building it per op
		n := c.NumOut(gs)
		for i := range n {
			if t, ok := c.InAt(s, i); ok {
				c.SetAt(gs, i, t.DType, t.Shape)
			} else if fwd.Traits&Elementwise != 0 && len(fwd.Grad.Diff) == 1 {
				if t, ok := c.In(gradOf(fwd)); ok {
					c.SetAt(gs, i, t.DType, t.Shape)
				}
			}
		}
	}
	return nil
}

// gradOf returns the name of the output gradient slot a one-output op's
// grad reads ("Out@GRAD").
func gradOf(d *Def) string {
	for _, r := range d.Grad.Reads {
		if strings.HasSuffix(r, "@GRAD") {
			return r
		}
	}
	return "Out@GRAD"
}

// sameAs is an Infer that gives output slot out the type of input slot in.
func sameAs(in, out string) func(c *Infer) error {
	return func(c *Infer) error {
		if t, ok := c.In(in); ok {
			c.Set(out, t.DType, t.Shape)
		}
		return nil
	}
}
