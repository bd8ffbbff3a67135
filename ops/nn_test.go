package ops_test

import (
	"testing"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/ops"
)

func TestNNInferErrors(t *testing.T) {
	emb := func(typ, ids, w, o, attrs string) string {
		return " var ids : " + ids + "\n var w : " + w + "\n var o : " + o + "\n op 1 " + typ + "(Ids: ids, W: w) -> (Out: o) " + attrs
	}
	xent := func(x, l, sm, loss, attrs string) string {
		return " var x : " + x + "\n var l : " + l + "\n var sm : " + sm + "\n var loss : " + loss +
			"\n op 1 softmax_with_cross_entropy(Logits: x, Label: l) -> (Softmax: sm, Loss: loss) " + attrs
	}
	ln := func(x, s, y, m, attrs string) string {
		return " var x : " + x + "\n var s : " + s + "\n var y : " + y + "\n var m : " + m + "\n var v : " + m +
			"\n op 1 layer_norm(X: x, Scale: s) -> (Y: y, Mean: m, Variance: v) " + attrs
	}
	runDefCases(t, []defCase{
		{"lookup_table_v2", emb("lookup_table_v2", "i64[2, 3]", "f32[10, 4]", "f32[2, 3, 4]", ""), ""},
		{"lookup_table_v2 shape", emb("lookup_table_v2", "i64[2, 3]", "f32[10, 4]", "f32[2, 3, 10]", ""),
			"op 1 lookup_table_v2: output Out o: declared f32[2, 3, 10], inferred [2, 3, 4] from Ids i64[2, 3], W f32[10, 4]"},
		{"lookup_table_v2 float ids", emb("lookup_table_v2", "f32[2, 3]", "f32[10, 4]", "f32[2, 3, 4]", ""),
			"Ids ids has dtype f32; want an integer dtype"},
		{"lookup_table_v2 3-D W", emb("lookup_table_v2", "i64[2]", "f32[10, 4, 1]", "f32[2, 4]", ""),
			"W w [10, 4, 1]: want a 2-D table"},
		{"lookup_table", emb("lookup_table", "i64[6, 1]", "f32[10, 4]", "f32[6, 4]", ""), ""},
		{"lookup_table ids", emb("lookup_table", "i64[2, 6]", "f32[10, 4]", "f32[2, 6, 4]", ""),
			"Ids ids [2, 6]: want a last dim of 1"},
		{"c_embedding local", emb("c_embedding", "i64[2, 3]", "f32[5, 4]", "f32[2, 3, 4]", "{start_index = 5}"), ""},
		{"c_embedding start", emb("c_embedding", "i64[2, 3]", "f32[5, 4]", "f32[2, 3, 4]", "{start_index = -5}"),
			"start_index -5 is negative"},
		{"c_embedding_grad", " var ids : i64[2, 3]\n var w : f32[5, 4]\n var g : f32[2, 4]\n var dw : f32[5, 4]\n" +
			" op 1 c_embedding_grad(Ids: ids, W: w, Out@GRAD: g) -> (W@GRAD: dw) {start_index = 0}",
			"Out@GRAD g [2, 4], Ids ids [2, 3] and W w [5, 4]: want Out@GRAD [2, 3, 4]"},
		{"xent", xent("f32[4, 5]", "i64[4, 1]", "f32[4, 5]", "f32[4, 1]", ""), ""},
		{"xent label", xent("f32[4, 5]", "i64[4]", "f32[4, 5]", "f32[4, 1]", ""),
			"Logits x [4, 5] and Label l [4]: want Label [4, 1] (axis -1)"},
		{"xent soft label", xent("f32[4, 5]", "f32[4, 5]", "f32[4, 5]", "f32[4, 1]", "{soft_label = true}"), ""},
		{"xent loss", xent("f32[2, 4, 5]", "i64[2, 1, 5]", "f32[2, 4, 5]", "f32[2, 4, 1]", "{axis = 1}"),
			"op 1 softmax_with_cross_entropy: output Loss loss: declared f32[2, 4, 1], inferred [2, 1, 5] from Logits f32[2, 4, 5], Label i64[2, 1, 5]"},
		{"xent unstable", xent("f32[2, 4, 5]", "i64[2, 1, 5]", "f32[2, 4, 5]", "f32[2, 1, 5]", "{axis = 1, numeric_stable_mode = false}"),
			"axis 1 is not Logits' last dim: Paddle needs numeric_stable_mode there"},
		{"xent grad", " var l : i64[4, 1]\n var sm : f32[4, 5]\n var g : f32[4, 1]\n var dx : f32[4, 1]\n" +
			" op 1 softmax_with_cross_entropy_grad(Label: l, Softmax: sm, Loss@GRAD: g) -> (Logits@GRAD: dx)",
			"op 1 softmax_with_cross_entropy_grad: output Logits@GRAD dx: declared f32[4, 1], inferred [4, 5] from Label i64[4, 1], Softmax f32[4, 5], Loss@GRAD f32[4, 1]"},
		{"cross_entropy2", " var x : f32[4, 5]\n var l : i64[4, 1]\n var y : f32[4, 1]\n var mx : f32[4, 1]\n var xs : f32[4, 5, 0]\n" +
			" op 1 cross_entropy2(X: x, Label: l) -> (Y: y, MatchX: mx, XShape: xs)", ""},
		{"cross_entropy2 XShape", " var x : f32[4, 5]\n var l : i64[4, 1]\n var y : f32[4, 1]\n var mx : f32[4, 1]\n var xs : f32[0, 4, 5]\n" +
			" op 1 cross_entropy2(X: x, Label: l) -> (Y: y, MatchX: mx, XShape: xs)",
			"op 1 cross_entropy2: output XShape xs: declared f32[0, 4, 5], inferred [4, 5, 0]"},
		{"cross_entropy label without last dim", " var x : f32[4, 5]\n var l : i64[4]\n var y : f32[4]\n op 1 cross_entropy(X: x, Label: l) -> (Y: y)", ""},
		{"cross_entropy soft label", " var x : f32[4, 5]\n var l : f32[4, 1]\n var y : f32[4, 1]\n op 1 cross_entropy(X: x, Label: l) -> (Y: y) {soft_label = true}",
			"X x [4, 5] and Label l [4, 1]: want Label of X's shape (soft_label)"},
		{"cross_entropy hard label", " var x : f32[4, 5]\n var l : i64[3, 1]\n var y : f32[4, 1]\n op 1 cross_entropy(X: x, Label: l) -> (Y: y)",
			"X x [4, 5] and Label l [3, 1]: want Label of X's dims with the last one 1, or without it"},
		{"layer_norm", ln("f32[2, 3, 4]", "f32[4]", "f32[2, 3, 4]", "f32[6]", "{begin_norm_axis = 2}"), ""},
		{"layer_norm Paddle 3 stats", ln("f32[2, 3, 4]", "f32[4]", "f32[2, 3, 4]", "f32[2, 3]", "{begin_norm_axis = 2}"), ""},
		{"layer_norm Paddle 3 stats dims", ln("f32[2, 3, 4]", "f32[4]", "f32[2, 3, 4]", "f32[3, 2]", "{begin_norm_axis = 2}"),
			"op 1 layer_norm: output Mean m: declared f32[3, 2], inferred [2, 3] from X f32[2, 3, 4], Scale f32[4]"},
		{"layer_norm epsilon", ln("f32[2, 4]", "f32[4]", "f32[2, 4]", "f32[2]", "{epsilon = 0.5}"),
			"epsilon 0.5 outside [0, 0.001]"},
		{"layer_norm mean", ln("f32[2, 3, 4]", "f32[12]", "f32[2, 3, 4]", "f32[6]", "{begin_norm_axis = 1}"),
			"op 1 layer_norm: output Mean m: declared f32[6], inferred [2] from X f32[2, 3, 4], Scale f32[12]"},
		{"layer_norm f16 stats", ln("f16[2, 4]", "f16[4]", "f16[2, 4]", "f16[2]", "{begin_norm_axis = 1}"),
			"op 1 layer_norm: output Mean m: declared f16[2], inferred dtype f32 from X f16[2, 4], Scale f16[4]"},
		{"layer_norm scale", ln("f32[2, 3, 4]", "f32[4]", "f32[2, 3, 4]", "f32[2]", "{begin_norm_axis = 1}"),
			"Scale s [4] and X x [2, 3, 4]: want Scale [12] (begin_norm_axis 1)"},
		{"layer_norm axis", ln("f32[2, 4]", "f32[4]", "f32[2, 4]", "f32[2]", "{begin_norm_axis = 2}"),
			"begin_norm_axis 2 out of range [1, 2) for X x [2, 4]"},
		{"dropout", " var x : f32[3, 4]\n var o : f32[3, 4]\n var m : u8[3, 4]\n op 1 dropout(X: x) -> (Out: o, Mask: m) {dropout_prob = 0.1}", ""},
		{"dropout mask", " var x : f32[3, 4]\n var o : f32[3, 4]\n var m : f32[3, 4]\n op 1 dropout(X: x) -> (Out: o, Mask: m)",
			"op 1 dropout: output Mask m: declared f32[3, 4], inferred dtype u8 from X f32[3, 4]"},
		{"dropout mode", " var x : f32[3]\n var o : f32[3]\n var m : u8[3]\n op 1 dropout(X: x) -> (Out: o, Mask: m) {dropout_implementation = \"upscale\"}",
			`op 1 dropout: attr dropout_implementation = "upscale" is not one of ["downgrade_in_infer", "upscale_in_train"]`},
		{"dropout prob", " var x : f32[3]\n var o : f32[3]\n var m : u8[3]\n op 1 dropout(X: x) -> (Out: o, Mask: m) {dropout_prob = 1.5}",
			"dropout_prob 1.5 outside [0, 1]"},
		// Mask is dispensable (Paddle's inference programs omit it); Out is not.
		{"dropout without Out", " var x : f32[3]\n var m : u8[3]\n op 1 dropout(X: x) -> (Mask: m)",
			"op 1 dropout: output slot Out required, not given"},
		{"dropout_grad", " var m : u8[3, 4]\n var g : f32[3, 4]\n var dx : f32[4, 3]\n op 1 dropout_grad(Mask: m, Out@GRAD: g) -> (X@GRAD: dx)",
			"op 1 dropout_grad: output X@GRAD dx: declared f32[4, 3], inferred [3, 4] from Mask u8[3, 4], Out@GRAD f32[3, 4]"},
	})
}

// TestXentGradUnsupported: append-backward refuses the cross entropies the
// simulator's grad kernel does not compute, rather than emit a grad op
// that fails at run.
func TestXentGradUnsupported(t *testing.T) {
	g := ops.Lookup("softmax_with_cross_entropy").Grad
	for _, c := range []struct {
		attrs []ir.Attr
		want  string
	}{
		{nil, ""},
		{[]ir.Attr{ir.A("use_softmax", ir.Bool(true))}, ""},
		{[]ir.Attr{ir.A("soft_label", ir.Bool(true))}, "soft_label is not supported"},
		{[]ir.Attr{ir.A("use_softmax", ir.Bool(false))}, "use_softmax = false is not supported"},
	} {
		op := &ir.Op{ID: 1, Type: "softmax_with_cross_entropy"}
		for _, a := range c.attrs {
			op.Attrs.Set(a.Name, a.Value)
		}
		if got := g.Unsupported(op); got != c.want {
			t.Errorf("%v: Unsupported = %q, want %q", c.attrs, got, c.want)
		}
	}
}
