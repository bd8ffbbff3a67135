package opdef

import "github.com/distpass/distpass/ir"

// dataDefs: constants, copies, casts and views.
func dataDefs() []*Def {
	return []*Def{
		// TODO(defs): attrs and Infer for each; the rest of the family.
		{Type: "reshape2", Inputs: slots("X", opt("Shape"), optMany("ShapeTensor")), Outputs: slots("Out", opt("XShape")),
			Traits: View, Grad: &Grad{Reads: []string{"XShape|X", "Out@GRAD"}, Diff: []string{"X"}}},
		{Type: "transpose2", Inputs: in("X"), Outputs: slots("Out", opt("XShape")),
			Traits: View, Grad: &Grad{Reads: []string{"XShape", "Out@GRAD"}, Diff: []string{"X"}}},
		// cast's grad casts the gradient back; assign's copies it.
		{Type: "cast", Inputs: in("X"), Outputs: in("Out"), Traits: Elementwise,
			Attrs: []Attr{dtypeAttr("in_dtype", 5), dtypeAttr("out_dtype", 5)},
			Grad: &Grad{
				Type: "cast", Reads: []string{"Out@GRAD"}, Diff: []string{"X"},
				Emit: func(fwd *ir.Op, x *ir.Var, outGrad, inGrad string) *ir.Op {
					op := &ir.Op{Type: "cast", Inputs: ir.Slots("X", outGrad), Outputs: ir.Slots("Out", inGrad)}
					if v, ok := fwd.Attrs.Int("out_dtype"); ok {
						op.Attrs.Set("in_dtype", ir.Int(v))
					}
					if v, ok := fwd.Attrs.Int("in_dtype"); ok {
						op.Attrs.Set("out_dtype", ir.Int(v))
					} else if c, ok := x.Type.DType.PaddleCode(); ok {
						op.Attrs.Set("out_dtype", ir.Int(c))
					}
					return op
				},
			}},
		{Type: "assign", Inputs: in("X"), Outputs: in("Out"), Traits: Elementwise,
			Shape: "Out = X", Infer: sameAs("X", "Out"),
			Grad: &Grad{
				Type: "assign", Reads: []string{"Out@GRAD"}, Diff: []string{"X"},
				Emit: func(_ *ir.Op, _ *ir.Var, outGrad, inGrad string) *ir.Op {
					return &ir.Op{Type: "assign", Inputs: ir.Slots("X", outGrad), Outputs: ir.Slots("Out", inGrad)}
				},
			}},
	}
}
