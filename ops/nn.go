package ops

import "github.com/distpass/distpass/ir"

// nnDefs: embeddings, losses, normalisation, dropout.
func nnDefs() []*Def {
	embedAttrs := func() []Attr {
		return []Attr{longAttr("padding_idx", -1), boolAttr("is_sparse", false)}
	}
	return []*Def{
		{
			Type: "dropout", Doc: "X with each element zeroed with probability dropout_prob (kept ones scaled in upscale_in_train)",
			// Mask is dispensable: Paddle's inference programs may omit it.
			Inputs: slots("X", Slot{Name: "Seed", Optional: true, NoGrad: true}), Outputs: slots("Out", opt("Mask")),
			Attrs: []Attr{floatAttr("dropout_prob", 0.5), boolAttr("is_test", false), boolAttr("fix_seed", false),
				intAttr("seed", 0), stringAttr("dropout_implementation", "downgrade_in_infer", "downgrade_in_infer", "upscale_in_train"),
				intsAttr("global_shape"), intsAttr("shard_offset")},
			// Elementwise: each Out element is its X element times its mask
			// element (which the derived grad's X@GRAD = Out@GRAD relies on).
			Traits:      Elementwise | Random,
			Shape:       "Out = X, Mask = X's shape in u8",
			Infer:       inferDropout,
			Sharding:    unaryRule,
			ShardingDoc: unaryDoc,
			Grad: &Grad{Reads: []string{"Mask", "Out@GRAD"}, Diff: []string{"X"},
				Unsupported: func(fwd *ir.Op) string {
					if len(fwd.Output("Mask")) == 0 {
						return "no Mask output, which the grad reads"
					}
					return ""
				}},
		},
		{
			Type: "lookup_table_v2", Doc: "the rows of W the ids of Ids name (padding_idx gives zeros)",
			Inputs: slots("W", noGrad("Ids")), Outputs: in("Out"),
			Attrs:       embedAttrs(),
			Shape:       "Out = Ids + [W[1]]",
			Infer:       inferEmbedding(false),
			Sharding:    embeddingRule,
			ShardingDoc: embeddingDoc,
			Grad:        &Grad{Reads: []string{"Ids", "W", "Out@GRAD"}, Diff: []string{"W"}},
		},
		{
			Type: "lookup_table", Doc: "the rows of W the ids of Ids name, Ids ending in a dim of 1 (Paddle 1.x)",
			Inputs: slots("W", noGrad("Ids")), Outputs: in("Out"),
			Attrs:    embedAttrs(),
			Shape:    "Out = Ids[:-1] + [W[1]], Ids[-1] = 1",
			Infer:    inferEmbedding(true),
			Sharding: embeddingRule, ShardingDoc: embeddingDoc,
		},
		{
			// The registry's vocabulary-parallel lowering of lookup_table_v2
			// emits it and its grad; autodiff never does.
			Type: "c_embedding", Doc: "the rows of the local vocabulary shard W (rows from start_index) the ids name; zeros for ids outside",
			Inputs: slots("W", noGrad("Ids")), Outputs: in("Out"),
			Attrs:    []Attr{longAttr("start_index", 0), longAttr("vocab_size", -1)},
			Traits:   RankStart,
			Shape:    "Out = Ids + [W[1]]",
			Infer:    inferEmbedding(false),
			Sharding: cEmbeddingRule, ShardingDoc: cEmbeddingDoc,
		},
		{
			Type: "c_embedding_grad", Doc: "the gradient of c_embedding: Out@GRAD rows summed into the local shard's rows",
			Inputs: slots("W", noGrad("Ids"), "Out@GRAD"), Outputs: in("W@GRAD"),
			Attrs:    []Attr{longAttr("start_index", 0), longAttr("vocab_size", -1)},
			Traits:   RankStart,
			Shape:    "W@GRAD = W",
			Infer:    inferCEmbeddingGrad,
			Sharding: cEmbeddingRule, ShardingDoc: cEmbeddingDoc,
		},
		{
			Type: "softmax_with_cross_entropy", Doc: "softmax of Logits along axis and its cross entropy against Label",
			Inputs: slots("Logits", noGrad("Label")), Outputs: in("Softmax", "Loss"),
			Attrs: []Attr{boolAttr("soft_label", false), boolAttr("use_softmax", true), boolAttr("numeric_stable_mode", true),
				intAttr("ignore_index", -100), intAttr("axis", -1)},
			Shape:       "Softmax = Logits, Loss = Logits with 1 on axis; Label = Loss (hard) or Logits (soft_label)",
			Infer:       inferSoftmaxXent,
			Sharding:    softmaxXentRule,
			ShardingDoc: xentDoc,
			Grad: &Grad{
				Reads: []string{"Label", "Softmax", "Loss@GRAD"}, Diff: []string{"Logits"},
				Unsupported: func(fwd *ir.Op) string {
					if v, _ := fwd.Attrs.Bool("soft_label"); v {
						return "soft_label is not supported"
					}
					if v, ok := fwd.Attrs.Bool("use_softmax"); ok && !v {
						return "use_softmax = false is not supported"
					}
					return ""
				},
				// Logits@GRAD has Softmax's type: the grad does not read Logits.
				Infer: gradFrom("Softmax"),
				Shape: "Logits@GRAD = Softmax",
			},
		},
		{
			Type: "cross_entropy", Doc: "the cross entropy of the probabilities X against Label along the last dim",
			Inputs: slots("X", noGrad("Label")), Outputs: in("Y"),
			Attrs:    []Attr{boolAttr("soft_label", false), intAttr("ignore_index", -100)},
			Shape:    "Y = Label with a last dim of 1; Label = X[:-1] + [1] or X[:-1] (hard), X (soft_label)",
			Infer:    inferCrossEntropy,
			Sharding: crossEntropyRule, ShardingDoc: ceDoc,
		},
		{
			Type: "cross_entropy2", Doc: "the cross entropy of the probabilities X against hard Label along the last dim",
			Inputs: slots("X", noGrad("Label")), Outputs: in("Y", "MatchX", "XShape"),
			Attrs:    []Attr{intAttr("ignore_index", -100)},
			Shape:    "Y = Label with a last dim of 1, MatchX = X[:-1] + [1], XShape = X + [0]; Label = X[:-1] + [1] or X[:-1]",
			Infer:    inferCrossEntropy,
			Sharding: crossEntropyRule, ShardingDoc: ceDoc,
		},
		{
			Type: "layer_norm", Doc: "X normalised over its dims from begin_norm_axis, times Scale plus Bias",
			Inputs: slots("X", opt("Scale"), opt("Bias")), Outputs: in("Y", "Mean", "Variance"),
			Attrs:       []Attr{floatAttr("epsilon", 1e-5), intAttr("begin_norm_axis", 1)},
			Shape:       "Y = X; Mean = Variance = [prod(X[:begin_norm_axis])], or X[:begin_norm_axis] (Paddle 3), f32 for f16/bf16 X; Scale = Bias = [prod(X[begin_norm_axis:])]",
			Infer:       inferLayerNorm,
			Sharding:    layerNormRule,
			ShardingDoc: layerNormDoc,
			Grad: &Grad{
				Reads: []string{"X", "Scale", "Bias", "Mean", "Variance", "Y@GRAD"},
				Diff:  []string{"X", "Scale", "Bias"},
			},
		},
	}
}

func inferDropout(c *Infer) error {
	x, ok := c.In("X")
	if !ok {
		return nil
	}
	if p := c.Float("dropout_prob"); !(p >= 0 && p <= 1) {
		return c.Errorf("dropout_prob %v outside [0, 1]", p)
	}
	c.Set("Out", x.DType, x.Shape)
	c.Set("Mask", ir.U8, x.Shape)
	return checkShardDraw(c, x.Shape)
}

// inferEmbedding infers an embedding lookup: Out has a row of W's width
// per id, in W's dtype. lookup_table's Ids end in a dim of 1, which the
// row replaces (trailing).
func inferEmbedding(trailing bool) func(c *Infer) error {
	return func(c *Infer) error {
		w, okw := c.In("W")
		ids, oki := c.In("Ids")
		if !okw || !oki {
			return nil
		}
		if len(w.Shape) != 2 {
			return c.Errorf("W %s %s: want a 2-D table", c.Name("W"), ir.FormatShape(w.Shape))
		}
		if s := c.Int("start_index"); s < 0 {
			return c.Errorf("start_index %d is negative", s)
		}
		if !ids.DType.IsInteger() {
			return c.Errorf("Ids %s has dtype %s; want an integer dtype", c.Name("Ids"), ids.DType)
		}
		rows := ids.Shape
		if trailing {
			if n := len(rows); n == 0 || rows[n-1] != 1 && rows[n-1] >= 0 {
				return c.Errorf("Ids %s %s: want a last dim of 1", c.Name("Ids"), ir.FormatShape(ids.Shape))
			}
			rows = rows[:len(rows)-1]
		}
		var buf [8]int64
		out := append(append(buf[:0], rows...), w.Shape[1])
		c.Set("Out", w.DType, out)
		return nil
	}
}

// inferCEmbeddingGrad: W@GRAD has W's type; Out@GRAD has the shape
// c_embedding's Out had.
func inferCEmbeddingGrad(c *Infer) error {
	w, okw := c.In("W")
	ids, oki := c.In("Ids")
	g, okg := c.In("Out@GRAD")
	if !okw || !oki || !okg {
		return nil
	}
	if len(w.Shape) != 2 {
		return c.Errorf("W %s %s: want a 2-D table", c.Name("W"), ir.FormatShape(w.Shape))
	}
	var buf [8]int64
	want := append(append(buf[:0], ids.Shape...), w.Shape[1])
	if !Compatible(g.Shape, want) {
		return c.Errorf("Out@GRAD %s %s, Ids %s %s and W %s %s: want Out@GRAD %s", c.Name("Out@GRAD"), ir.FormatShape(g.Shape),
			c.Name("Ids"), ir.FormatShape(ids.Shape), c.Name("W"), ir.FormatShape(w.Shape), ir.FormatShape(want))
	}
	c.Set("W@GRAD", w.DType, w.Shape)
	return nil
}

// inferSoftmaxXent follows Paddle's CrossEntropyWithSoftmaxInferMeta:
// Label has Logits' rank and dims but on axis, where it has 1 (hard
// labels) or Logits' dim (soft_label).
func inferSoftmaxXent(c *Infer) error {
	x, okx := c.In("Logits")
	l, okl := c.In("Label")
	if !okx || !okl {
		return nil
	}
	if len(x.Shape) == 0 {
		return c.Errorf("Logits %s is 0-D; want at least one dim", c.Name("Logits"))
	}
	ax, err := axisOf(c, "axis", "Logits", x.Shape)
	if err != nil {
		return err
	}
	if ax != len(x.Shape)-1 && !c.Bool("numeric_stable_mode") {
		return c.Errorf("axis %d is not Logits' last dim: Paddle needs numeric_stable_mode there", c.Int("axis"))
	}
	var buf [8]int64
	want := append(buf[:0], x.Shape...)
	if !c.Bool("soft_label") {
		want[ax] = 1
	}
	if !Compatible(l.Shape, want) {
		return c.Errorf("Logits %s %s and Label %s %s: want Label %s (axis %d)", c.Name("Logits"), ir.FormatShape(x.Shape),
			c.Name("Label"), ir.FormatShape(l.Shape), ir.FormatShape(want), c.Int("axis"))
	}
	c.Set("Softmax", x.DType, x.Shape)
	want[ax] = 1
	c.Set("Loss", x.DType, want)
	return nil
}

// inferCrossEntropy follows Paddle's CrossEntropyInferMeta (and
// CrossEntropy2InferMeta, whose labels are hard): Label has X's dims but
// the last, where it has X's (soft_label), 1, or no dim at all (hard);
// Y is Label with a last dim of 1.
func inferCrossEntropy(c *Infer) error {
	x, okx := c.In("X")
	l, okl := c.In("Label")
	if !okx || !okl {
		return nil
	}
	n := len(x.Shape)
	if n == 0 {
		return c.Errorf("X %s is 0-D; want at least one dim", c.Name("X"))
	}
	soft := c.Bool("soft_label")
	ok := len(l.Shape) == n || !soft && len(l.Shape) == n-1
	if ok {
		ok = Compatible(x.Shape[:n-1], l.Shape[:n-1])
	}
	if ok && len(l.Shape) == n {
		last := l.Shape[n-1]
		if soft {
			ok = last < 0 || x.Shape[n-1] < 0 || last == x.Shape[n-1]
		} else {
			ok = last < 0 || last == 1
		}
	}
	if !ok {
		want := "X's dims with the last one 1, or without it"
		if soft {
			want = "X's shape (soft_label)"
		}
		return c.Errorf("X %s %s and Label %s %s: want Label of %s", c.Name("X"), ir.FormatShape(x.Shape),
			c.Name("Label"), ir.FormatShape(l.Shape), want)
	}
	var buf [8]int64
	y := append(buf[:0], l.Shape...)
	if len(y) == n {
		y[n-1] = 1
	}
	c.Set("Y", x.DType, y)
	if c.Op().Type == "cross_entropy2" {
		m := c.Shape(n)
		copy(m, x.Shape)
		m[n-1] = 1
		c.Set("MatchX", x.DType, m)
		xs := c.Shape(n + 1)
		copy(xs, x.Shape)
		xs[n] = 0
		c.Set("XShape", x.DType, xs)
	}
	return nil
}

// inferLayerNorm follows Paddle's LayerNormInferMeta: X splits at
// begin_norm_axis (in [1, rank)) into rows and the normalised width;
// Scale and Bias are 1-D of that width; epsilon is in [0, 0.001].
func inferLayerNorm(c *Infer) error {
	x, ok := c.In("X")
	if !ok {
		return nil
	}
	b := c.Int("begin_norm_axis")
	if b < 1 || b >= int64(len(x.Shape)) {
		return c.Errorf("begin_norm_axis %d out of range [1, %d) for X %s %s", b, len(x.Shape), c.Name("X"), ir.FormatShape(x.Shape))
	}
	if e := c.Float("epsilon"); !(e >= 0 && e <= 0.001) {
		return c.Errorf("epsilon %v outside [0, 0.001]", e)
	}
	left, right := prod(x.Shape[:b]), prod(x.Shape[b:])
	for _, s := range [2]string{"Scale", "Bias"} {
		t, ok := c.In(s)
		if !ok {
			continue
		}
		if len(t.Shape) != 1 || t.Shape[0] >= 0 && right >= 0 && t.Shape[0] != right {
			return c.Errorf("%s %s %s and X %s %s: want %s [%d] (begin_norm_axis %d)", s, c.Name(s), ir.FormatShape(t.Shape),
				c.Name("X"), ir.FormatShape(x.Shape), s, right, b)
		}
	}
	c.Set("Y", x.DType, x.Shape)
	st := x.DType
	if st == ir.F16 || st == ir.BF16 {
		st = ir.F32
	}
	rows := [1]int64{left}
	for _, s := range [2]string{"Mean", "Variance"} {
		// Paddle 3 keeps the statistics' dims (X[:begin_norm_axis]);
		// earlier versions flatten them. The declared rank says which.
		if t, ok := c.Out(s, 0); ok && b > 1 && len(t.Shape) == int(b) {
			c.Set(s, st, x.Shape[:b])
		} else {
			c.Set(s, st, rows[:])
		}
	}
	return nil
}
