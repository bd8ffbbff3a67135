package opdef

import "github.com/distpass/distpass/ir"

// activationDefs: unary elementwise ops, scale and softmax.
func activationDefs() []*Def {
	unary := func(t, doc, src string) *Def {
		return &Def{
			Type: t, Doc: doc,
			Inputs: in("X"), Outputs: in("Out"),
			Traits: Elementwise,
			Shape:  "Out = X",
			Infer:  sameAs("X", "Out"),
			Grad:   &Grad{Reads: []string{src, "Out@GRAD"}, Diff: []string{"X"}},
		}
	}
	gelu := unary("gelu", "X * Phi(X), exact or tanh-approximated", "X")
	gelu.Attrs = []Attr{boolAttr("approximate", false)}
	softmax := unary("softmax", "exp(X) / sum(exp(X)) along axis", "Out")
	softmax.Traits = 0
	softmax.Attrs = []Attr{intAttr("axis", -1)}
	scale := unary("scale", "scale * X + bias, or scale * (X + bias)", "Out")
	scale.Inputs = slots("X", opt("ScaleTensor"))
	scale.Attrs = []Attr{floatAttr("scale", 1), floatAttr("bias", 0), boolAttr("bias_after_scale", true)}
	scale.Grad = &Grad{
		Reads: []string{"Out@GRAD"}, Diff: []string{"X"},
		Unsupported: func(fwd *ir.Op) string {
			if len(fwd.Input("ScaleTensor")) > 0 {
				return "a ScaleTensor input is not supported (the grad reads the scale attr)"
			}
			return ""
		},
	}
	return []*Def{
		unary("relu", "max(X, 0)", "Out"),
		unary("tanh", "tanh(X)", "Out"),
		unary("sigmoid", "1 / (1 + exp(-X))", "Out"),
		gelu, softmax, scale,
	}
}
