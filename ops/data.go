package ops

import "github.com/distpass/distpass/ir"

// dataDefs: constants, random fills, copies, casts, logical ops and views.
func dataDefs() []*Def {
	// The XShape output of Paddle's *2 view ops: [0] + X's dims, no
	// elements; their grads read X's shape from it.
	xshapeOut := opt("XShape")
	fillAttrs := func(extra ...Attr) []Attr {
		// Paddle's fill_constant shape is int64_t's.
		return append([]Attr{dtypeAttr("dtype", 5), longsAttr("shape", []int64{}...),
			floatAttr("value", 0), stringAttr("str_value", ""), boolAttr("force_cpu", false)}, extra...)
	}
	randAttrs := func(extra ...Attr) []Attr {
		// Paddle's gaussian_random and uniform_random shapes are
		// int64_t's, and so are a tensor's global shape and offsets;
		// seed is a 32-bit int.
		return append([]Attr{dtypeAttr("dtype", 5), longsAttr("shape", []int64{}...), intAttr("seed", 0),
			longsAttr("global_shape"), longsAttr("shard_offset")}, extra...)
	}
	logical := func(t, doc string) *Def {
		return &Def{Type: t, Doc: doc, Inputs: in("X", "Y"), Outputs: in("Out"), Traits: Elementwise,
			Shape: "Out = broadcast(X, Y), bool", Infer: inferLogical,
			Sharding: numpyRule("X", "Y", "Out"), ShardingDoc: numpyDoc}
	}
	argMinMax := func(t, doc string) *Def {
		// No gradient: Out is an index. X is marked so that no gradient
		// is looked for through it.
		return &Def{Type: t, Doc: doc, Inputs: slots(noGrad("X")), Outputs: in("Out"), Traits: Reduction,
			Attrs: []Attr{{Name: "axis", Type: ir.KindLong, Default: ir.Long(-1)}, boolAttr("keepdims", false),
				boolAttr("flatten", false),
				// -1 (int64) is what Paddle 1.x wrote.
				dtypeAttr("dtype", 3, -1, 2, 3)},
			Shape: "Out = X without dim axis (1 with keepdims; a scalar with flatten), int64 or dtype",
			Infer: inferArgMinMax, Sharding: argRule, ShardingDoc: argDoc}
	}
	return []*Def{
		{
			Type: "fill_constant", Doc: "a tensor of shape filled with value",
			Traits:      ShapeOfOut,
			Inputs:      slots(opt("ValueTensor"), opt("ShapeTensor"), optMany("ShapeTensorList")),
			Outputs:     in("Out"),
			Attrs:       fillAttrs(intAttr("place_type", -1)),
			Shape:       "Out = shape (-1 dims from ShapeTensor(List)), dtype",
			Infer:       inferFill,
			Sharding:    fillRule("Out"),
			ShardingDoc: fillDoc,
		},
		{
			Type: "fill_any_like", Doc: "a tensor of X's shape filled with value",
			Inputs: in("X"), Outputs: in("Out"),
			Attrs: []Attr{floatAttr("value", 0), dtypeAttr("dtype", -1)},
			Shape: "Out = X, in dtype (-1: X's)",
			// Paddle's FullLikeInferSpmd: Out as X, never partial.
			Sharding: unaryRule, ShardingDoc: unaryDoc,
			Infer: func(c *Infer) error {
				x, ok := c.In("X")
				if !ok {
					return nil
				}
				d := x.DType
				if c.Int("dtype") != -1 {
					d = c.dtypeOf("dtype")
				}
				c.Set("Out", d, x.Shape)
				return nil
			},
		},
		{
			Type: "fill_constant_batch_size_like", Doc: "a tensor of shape filled with value, one dim taken from Input",
			Traits: ShapeOfOut,
			Inputs: in("Input"), Outputs: in("Out"),
			Attrs:    fillAttrs(intAttr("input_dim_idx", 0), intAttr("output_dim_idx", 0)),
			Shape:    "Out = shape with Out[output_dim_idx] = Input[input_dim_idx], dtype",
			Infer:    inferFillBatchSizeLike,
			Sharding: fillLikeRule, ShardingDoc: fillLikeDoc,
		},
		{
			Type: "uniform_random", Doc: "uniform random numbers in [min, max)",
			Inputs: slots(opt("ShapeTensor"), optMany("ShapeTensorList")), Outputs: in("Out"),
			Attrs: randAttrs(floatAttr("min", -1), floatAttr("max", 1),
				intAttr("diag_num", 0), intAttr("diag_step", 0), floatAttr("diag_val", 1)),
			Traits:   Random | ShapeOfOut,
			Shape:    "Out = shape (-1 dims from ShapeTensor(List)), dtype",
			Infer:    inferRandomFill,
			Sharding: fillRule("Out"), ShardingDoc: fillDoc,
		},
		{
			Type: "gaussian_random", Doc: "normal random numbers of mean and std",
			Inputs: slots(opt("ShapeTensor"), optMany("ShapeTensorList")), Outputs: in("Out"),
			Attrs:    randAttrs(floatAttr("mean", 0), floatAttr("std", 1)),
			Traits:   Random | ShapeOfOut,
			Shape:    "Out = shape (-1 dims from ShapeTensor(List)), dtype",
			Infer:    inferRandomFill,
			Sharding: fillRule("Out"), ShardingDoc: fillDoc,
		},
		// cast's grad casts the gradient back; assign's copies it.
		{
			Type: "cast", Doc: "X converted to out_dtype",
			Inputs: in("X"), Outputs: in("Out"), Traits: Elementwise | KeepsIndex | Monotone,
			Attrs:       []Attr{dtypeAttr("in_dtype", 5), dtypeAttr("out_dtype", 5)},
			Check:       checkDTypes("in_dtype", "out_dtype"),
			Shape:       "Out = X, out_dtype",
			Sharding:    unaryRule,
			ShardingDoc: unaryDoc,
			Infer: func(c *Infer) error {
				if x, ok := c.In("X"); ok {
					c.Set("Out", c.dtypeOf("out_dtype"), x.Shape)
				}
				return nil
			},
			Grad: &Grad{
				Type: "cast", Reads: []string{"Out@GRAD"}, Diff: []string{"X"},
				Emit: func(fwd *ir.Op, x *ir.Var, outGrads []string, inGrad string) *ir.Op {
					op := &ir.Op{Type: "cast", Inputs: ir.Slots("X", outGrads[0]), Outputs: ir.Slots("Out", inGrad)}
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
		{
			Type: "assign", Doc: "a copy of X",
			Sharding: unaryRule, ShardingDoc: unaryDoc,
			Inputs: in("X"), Outputs: in("Out"), Traits: Elementwise | KeepsIndex | Identity,
			Shape: "Out = X", Infer: sameAs("X", "Out"),
			Grad: &Grad{
				Type: "assign", Reads: []string{"Out@GRAD"}, Diff: []string{"X"},
				Emit: func(_ *ir.Op, _ *ir.Var, outGrads []string, inGrad string) *ir.Op {
					return &ir.Op{Type: "assign", Inputs: ir.Slots("X", outGrads[0]), Outputs: ir.Slots("Out", inGrad)}
				},
			}},
		{
			Type: "increment", Doc: "X + step, for a one-element X (a loop counter)",
			Inputs: in("X"), Outputs: in("Out"), Traits: Elementwise,
			Attrs:    []Attr{floatAttr("step", 1)},
			Shape:    "Out = X, one element",
			Sharding: unaryRule, ShardingDoc: unaryDoc,
			Infer: func(c *Infer) error {
				x, ok := c.In("X")
				if !ok {
					return nil
				}
				if n := prod(x.Shape); n >= 0 && n != 1 {
					return c.Errorf("X %s %s: increment needs one element, X has %d", c.Name("X"), ir.FormatShape(x.Shape), n)
				}
				c.Set("Out", x.DType, x.Shape)
				return nil
			},
		},
		{
			Type: "logical_not", Doc: "not X, elementwise",
			Inputs: in("X"), Outputs: in("Out"), Traits: Elementwise,
			Sharding: unaryRule, ShardingDoc: unaryDoc,
			Shape: "Out = X, bool",
			Infer: func(c *Infer) error {
				if x, ok := c.In("X"); ok {
					c.Set("Out", ir.Boolean, x.Shape)
				}
				return nil
			},
		},
		logical("logical_and", "X and Y, elementwise"),
		logical("logical_or", "X or Y, elementwise"),
		logical("logical_xor", "X xor Y, elementwise"),
		{
			Type: "reshape2", Doc: "X's elements in shape (0 copies X's dim, one -1 is inferred)",
			Inputs:      slots("X", opt("Shape"), optMany("ShapeTensor")),
			Outputs:     slots("Out", xshapeOut),
			Attrs:       []Attr{intsAttr("shape", []int64{}...)},
			Traits:      View | KeepsIndex | Identity,
			Shape:       "Out = shape with 0 = X's dim and -1 inferred; XShape = [0] + X",
			Infer:       inferReshape,
			Sharding:    viewRule,
			ShardingDoc: viewDoc,
			Grad:        &Grad{Reads: []string{"XShape|X", "Out@GRAD"}, Diff: []string{"X"}, Infer: inferViewGrad, Shape: "X@GRAD = XShape[1:] (or X), dtype of Out@GRAD"},
		},
		{
			Type: "transpose2", Doc: "X with its dims permuted by axis",
			Inputs: in("X"), Outputs: slots("Out", xshapeOut),
			Attrs:       []Attr{intsAttr("axis"), stringAttr("data_format", "AnyLayout")},
			Traits:      View | Identity,
			Shape:       "Out[i] = X[axis[i]]; XShape = [0] + X",
			Infer:       inferTranspose,
			Sharding:    transposeRule,
			ShardingDoc: transposeDoc,
			Grad:        &Grad{Reads: []string{"XShape", "Out@GRAD"}, Diff: []string{"X"}, Infer: inferTransposeGrad, Shape: "X@GRAD = XShape[1:], or Out@GRAD permuted back by axis"},
		},
		{
			Type: "squeeze2", Doc: "X without the size-1 dims axes names (every size-1 dim when empty)",
			Inputs: in("X"), Outputs: slots("Out", xshapeOut),
			Attrs:       []Attr{intsAttr("axes", []int64{}...)},
			Traits:      View | KeepsIndex | Identity,
			Shape:       "Out = X without dims axes of size 1 (or -1); XShape = [0] + X",
			Infer:       inferSqueeze,
			Sharding:    viewRule,
			ShardingDoc: viewDoc,
			Grad:        viewGradOf(),
		},
		{
			Type: "unsqueeze2", Doc: "X with size-1 dims inserted at axes",
			Inputs: slots("X", opt("AxesTensor"), optMany("AxesTensorList")), Outputs: slots("Out", xshapeOut),
			Attrs:       []Attr{intsAttr("axes", []int64{}...)},
			Traits:      View | KeepsIndex | Identity,
			Shape:       "Out = X with 1 inserted at each of axes, in order; XShape = [0] + X",
			Infer:       inferUnsqueeze,
			Sharding:    viewRule,
			ShardingDoc: viewDoc,
			Grad:        unsqueezeGrad(),
		},
		{
			Type: "flatten_contiguous_range", Doc: "X with dims start_axis..stop_axis merged into one",
			Inputs: in("X"), Outputs: slots("Out", xshapeOut),
			Attrs:       []Attr{intAttr("start_axis", 1), intAttr("stop_axis", 1)},
			Traits:      View | KeepsIndex | Identity,
			Shape:       "Out = X[:start] + [prod(X[start:stop+1])] + X[stop+1:]; XShape = [0] + X",
			Infer:       inferFlatten,
			Sharding:    viewRule,
			ShardingDoc: viewDoc,
			Grad:        viewGradOf(),
		},
		{
			Type: "flatten2", Doc: "X as a matrix: the dims before axis merged into rows, the rest into columns",
			Inputs: in("X"), Outputs: slots("Out", xshapeOut),
			Attrs:       []Attr{intAttr("axis", 1)},
			Traits:      View | KeepsIndex | Identity,
			Shape:       "Out = [prod(X[:axis]), prod(X[axis:])]; XShape = [0] + X",
			Infer:       inferFlatten2,
			Sharding:    viewRule,
			ShardingDoc: viewDoc,
			Grad:        viewGradOf(),
		},
		{
			Type: "concat", Doc: "the X joined along axis",
			Inputs: slots(many("X"), opt("AxisTensor")), Outputs: in("Out"),
			Attrs: []Attr{intAttr("axis", 0)},
			Shape: "Out = X[0] with dim axis the sum of the X's",
			Infer: inferConcat,
			// With an AxisTensor the axis is data: no rule.
			Sharding:    alongAxisRule("X", "Out"),
			ShardingDoc: alongAxisDoc,
			Grad: &Grad{Reads: []string{"X", "Out@GRAD"}, Diff: []string{"X"},
				Unsupported: func(fwd *ir.Op) string {
					if len(fwd.Input("AxisTensor")) > 0 {
						return "an AxisTensor input is not supported (the grad cuts along the axis attr)"
					}
					return ""
				}},
		},
		{
			Type: "split", Doc: "X cut along axis into num equal parts or parts of sections",
			Inputs:      slots("X", opt("AxisTensor"), optMany("SectionsTensorList")),
			Outputs:     slots(many("Out")),
			Attrs:       []Attr{intAttr("axis", 0), intAttr("num", 0), intsAttr("sections", []int64{}...)},
			Shape:       "Out[i] = X with dim axis X[axis]/num or sections[i] (one -1 inferred)",
			Infer:       inferSplit,
			Sharding:    alongAxisRule("X", "Out"),
			ShardingDoc: alongAxisDoc,
			// Paddle's grad of a split is the concat of its Out@GRADs.
			Grad: &Grad{Type: "concat", Reads: []string{"Out@GRAD"}, Diff: []string{"X"},
				Unsupported: func(fwd *ir.Op) string {
					for _, s := range []string{"AxisTensor", "SectionsTensorList"} {
						if len(fwd.Input(s)) > 0 {
							return "an input " + s + " is not supported (the grad joins along the axis attr)"
						}
					}
					return ""
				},
				Emit: func(fwd *ir.Op, _ *ir.Var, outGrads []string, inGrad string) *ir.Op {
					op := &ir.Op{Type: "concat", Inputs: []ir.Slot{ir.S("X", outGrads...)}, Outputs: ir.Slots("Out", inGrad)}
					op.Attrs.Set("axis", ir.Int(0))
					if v := fwd.Attrs.Get("axis"); v != nil {
						op.Attrs.Set("axis", v)
					}
					return op
				}},
		},
		{
			Type: "slice", Doc: "Input[starts:ends] along axes, decrease_axis dims dropped",
			Inputs: slots("Input", opt("StartsTensor"), opt("EndsTensor"),
				optMany("StartsTensorList"), optMany("EndsTensorList")),
			Outputs: in("Out"),
			Attrs: []Attr{intsAttr("axes"), intsAttr("starts", []int64{}...), intsAttr("ends", []int64{}...),
				intsAttr("infer_flags", []int64{}...), intsAttr("decrease_axis", []int64{}...)},
			Shape:       "Out[axes[i]] = clamp(ends[i]) - clamp(starts[i]), decrease_axis dropped",
			Infer:       inferSlice,
			Sharding:    sliceRule,
			ShardingDoc: sliceDoc,
			Grad: &Grad{Reads: []string{"Input", "Out@GRAD"}, Diff: []string{"Input"},
				Unsupported: func(fwd *ir.Op) string {
					for _, s := range []string{"StartsTensor", "EndsTensor", "StartsTensorList", "EndsTensorList"} {
						if len(fwd.Input(s)) > 0 {
							return "bounds from " + s + " are not supported (the grad reads the starts and ends attrs)"
						}
					}
					return ""
				}},
		},
		argMinMax("arg_max", "the index of the largest element along axis"),
		argMinMax("arg_min", "the index of the smallest element along axis"),
		{
			Type: "shape", Doc: "the dims of Input, as a 1-D int32 tensor",
			Inputs: in("Input"), Outputs: in("Out"),
			Shape:    "Out = [rank(Input)], int32",
			Sharding: shapeRule, ShardingDoc: shapeDoc,
			Infer: func(c *Infer) error {
				if x, ok := c.In("Input"); ok {
					c.Set("Out", ir.I32, []int64{int64(len(x.Shape))})
				}
				return nil
			},
		},
	}
}

// inferFill infers fill_constant, uniform_random and gaussian_random: the
// shape attr and dtype; a ShapeTensor [n] or a ShapeTensorList of n
// tensors gives n unknown dims instead.
func inferFill(c *Infer) error {
	var buf [8]int64
	out := buf[:0]
	switch {
	case c.NumIn("ShapeTensor") > 0:
		t, ok := c.In("ShapeTensor")
		if !ok {
			return nil
		}
		if len(t.Shape) != 1 || t.Shape[0] < 0 {
			return nil // its length, the rank of Out, is not known
		}
		for range t.Shape[0] {
			out = append(out, -1)
		}
	case c.NumIn("ShapeTensorList") > 0:
		for range c.NumIn("ShapeTensorList") {
			out = append(out, -1)
		}
	default:
		shape, _ := c.Ints("shape")
		for i, d := range shape {
			if d < -1 {
				return c.Errorf("attr shape %s: dim %d is %d", ir.FormatShape(shape), i, d)
			}
		}
		out = append(out, shape...)
	}
	c.Set("Out", c.dtypeOf("dtype"), out)
	return nil
}

// inferRandomFill is inferFill with the block of a larger draw an op
// partitioned for a rank may hold (checkShardDraw).
func inferRandomFill(c *Infer) error {
	if err := inferFill(c); err != nil {
		return err
	}
	shape, _ := c.Ints("shape")
	return checkShardDraw(c, shape)
}

// checkShardDraw checks the global_shape and shard_offset attrs of a
// random op (Random trait) drawing a tensor of shape local: both absent,
// or both of local's rank with local's block at shard_offset inside
// global_shape. Such an op writes that block of what it would draw with
// shape global_shape, so that each rank of a partitioned program draws
// its own part of the serial program's numbers.
func checkShardDraw(c *Infer, local []int64) error {
	global, hasG := c.Ints("global_shape")
	offset, hasO := c.Ints("shard_offset")
	hasG, hasO = hasG && len(global) > 0, hasO && len(offset) > 0
	switch {
	case !hasG && !hasO:
		return nil
	case hasG != hasO:
		return c.Errorf("global_shape %s and shard_offset %s: one without the other", ir.FormatShape(global), ir.FormatShape(offset))
	case len(global) != len(local) || len(offset) != len(local):
		return c.Errorf("global_shape %s and shard_offset %s do not have the rank of the drawn shape %s", ir.FormatShape(global), ir.FormatShape(offset), ir.FormatShape(local))
	}
	for d := range local {
		if local[d] < 0 || global[d] < 0 || offset[d] < 0 || offset[d]+local[d] > global[d] {
			return c.Errorf("the block of shape %s at shard_offset %s does not fit in global_shape %s (dim %d)", ir.FormatShape(local), ir.FormatShape(offset), ir.FormatShape(global), d)
		}
	}
	return nil
}

func inferFillBatchSizeLike(c *Infer) error {
	x, ok := c.In("Input")
	if !ok {
		return nil
	}
	shape, _ := c.Ints("shape")
	var buf [8]int64
	out := append(buf[:0], shape...)
	in, o := c.Int("input_dim_idx"), c.Int("output_dim_idx")
	if in < 0 || in >= int64(len(x.Shape)) || o < 0 || o >= int64(len(out)) {
		return c.Errorf("Input %s %s and attr shape %s: input_dim_idx %d or output_dim_idx %d out of range",
			c.Name("Input"), ir.FormatShape(x.Shape), ir.FormatShape(shape), in, o)
	}
	out[o] = x.Shape[in]
	c.Set("Out", c.dtypeOf("dtype"), out)
	return nil
}

// inferLogical infers logical_and, _or, _xor: numpy broadcasting (these
// ops have no axis attr), bool.
func inferLogical(c *Infer) error {
	x, okx := c.In("X")
	y, oky := c.In("Y")
	if !okx || !oky {
		return nil
	}
	out, err := Broadcast(c, x.Shape, y.Shape, -1)
	if err != nil {
		return c.Errorf("X %s %s and Y %s %s: %v", c.Name("X"), ir.FormatShape(x.Shape), c.Name("Y"), ir.FormatShape(y.Shape), err)
	}
	c.Set("Out", ir.Boolean, out)
	return nil
}

// viewGradOf is the Grad of squeeze2 and flatten_contiguous_range, whose
// grad ops (as Paddle's) read X's shape from XShape, and Out@GRAD.
// unsqueezeGrad is a view's grad, for axes given by the attr alone.
func unsqueezeGrad() *Grad {
	g := viewGradOf()
	g.Unsupported = func(fwd *ir.Op) string {
		if len(fwd.Input("AxesTensor"))+len(fwd.Input("AxesTensorList")) > 0 {
			return "axes from tensors are not supported"
		}
		return ""
	}
	return g
}

func viewGradOf() *Grad {
	return &Grad{Reads: []string{"XShape|X", "Out@GRAD"}, Diff: []string{"X"},
		Infer: inferViewGrad, Shape: "X@GRAD = XShape[1:], dtype of Out@GRAD"}
}

// setXShape sets the XShape output of a view op: [0] + X's dims.
func setXShape(c *Infer, x ir.Type) {
	if c.NumOut("XShape") == 0 {
		return
	}
	s := c.Shape(len(x.Shape) + 1)
	s[0] = 0
	copy(s[1:], x.Shape)
	c.Set("XShape", x.DType, s)
}

// inferViewGrad infers the grad of reshape2 and transpose2: X@GRAD has
// X's shape, read from XShape (its dims after the leading 0) or from X,
// and the dtype of Out@GRAD.
func inferViewGrad(c *Infer) error {
	if c.NumOut("X@GRAD") == 0 {
		return nil
	}
	g, ok := c.In("Out@GRAD")
	if !ok {
		return nil
	}
	if xs, ok := c.In("XShape"); ok {
		if len(xs.Shape) == 0 {
			return c.Errorf("XShape %s is 0-D: want [0] + X's dims", c.Name("XShape"))
		}
		c.Set("X@GRAD", g.DType, xs.Shape[1:])
		return nil
	}
	if x, ok := c.In("X"); ok {
		c.Set("X@GRAD", g.DType, x.Shape)
	}
	return nil
}

// inferReshape follows Paddle's reshape2: in attr shape, 0 copies X's
// dim at that index and one -1 is what the other dims leave of X's
// elements (unknown when X has an unknown dim). A Shape input [n] or a
// ShapeTensor list of n gives n unknown dims instead.
func inferReshape(c *Infer) error {
	x, ok := c.In("X")
	if !ok {
		return nil
	}
	setXShape(c, x)
	var buf [8]int64
	out := buf[:0]
	switch {
	case c.NumIn("ShapeTensor") > 0:
		for range c.NumIn("ShapeTensor") {
			out = append(out, -1)
		}
	case c.NumIn("Shape") > 0:
		t, ok := c.In("Shape")
		if !ok || len(t.Shape) != 1 || t.Shape[0] < 0 {
			return nil
		}
		for range t.Shape[0] {
			out = append(out, -1)
		}
	default:
		shape, _ := c.Ints("shape")
		out = append(out, shape...)
		infer := -1
		known := int64(1) // the product of the dims other than -1; -1 when one is unknown
		for i, d := range out {
			switch {
			case d == 0:
				if i >= len(x.Shape) {
					return c.Errorf("X %s %s: attr shape %s copies dim %d, which X does not have", c.Name("X"), ir.FormatShape(x.Shape), ir.FormatShape(shape), i)
				}
				out[i] = x.Shape[i]
			case d == -1:
				if infer >= 0 {
					return c.Errorf("X %s %s: attr shape %s has two -1 dims", c.Name("X"), ir.FormatShape(x.Shape), ir.FormatShape(shape))
				}
				infer = i
				continue
			case d < 0:
				return c.Errorf("X %s %s: attr shape %s has dim %d", c.Name("X"), ir.FormatShape(x.Shape), ir.FormatShape(shape), d)
			}
			if known >= 0 && out[i] >= 0 {
				known *= out[i]
			} else {
				known = -1
			}
		}
		n := prod(x.Shape)
		switch {
		case infer >= 0 && n >= 0 && known > 0:
			if n%known != 0 {
				return c.Errorf("X %s %s (%d elements) does not reshape to %s", c.Name("X"), ir.FormatShape(x.Shape), n, ir.FormatShape(shape))
			}
			out[infer] = n / known
		case infer >= 0 && n >= 0 && known == 0:
			return c.Errorf("X %s %s (%d elements) does not reshape to %s: the -1 dim is not determined", c.Name("X"), ir.FormatShape(x.Shape), n, ir.FormatShape(shape))
		case infer < 0 && n >= 0 && known >= 0 && n != known:
			return c.Errorf("X %s %s (%d elements) does not reshape to %s (%d elements)", c.Name("X"), ir.FormatShape(x.Shape), n, ir.FormatShape(shape), known)
		}
	}
	c.Set("Out", x.DType, out)
	return nil
}

// normAxis returns axis (negative counts from the end) of a rank-r
// tensor, and whether it is in range.
func normAxis(axis int64, r int) (int, bool) {
	if axis < 0 {
		axis += int64(r)
	}
	return int(axis), axis >= 0 && axis < int64(r)
}

// inferTransposeGrad: X@GRAD is XShape's X, or without XShape Out@GRAD
// permuted back by axis.
func inferTransposeGrad(c *Infer) error {
	if c.NumIn("XShape") > 0 {
		return inferViewGrad(c)
	}
	g, ok := c.In("Out@GRAD")
	if !ok || c.NumOut("X@GRAD") == 0 {
		return nil
	}
	perm, _ := c.Ints("axis")
	if len(perm) != len(g.Shape) {
		return c.Errorf("Out@GRAD %s %s: attr axis %s has %d dims, Out@GRAD %d", c.Name("Out@GRAD"), ir.FormatShape(g.Shape), ir.FormatShape(perm), len(perm), len(g.Shape))
	}
	out := c.Shape(len(perm))
	for i := range out {
		out[i] = -2
	}
	for i, p := range perm {
		a, ok := normAxis(p, len(perm))
		if !ok || out[a] != -2 {
			return c.Errorf("Out@GRAD %s %s: attr axis %s is not a permutation of its dims", c.Name("Out@GRAD"), ir.FormatShape(g.Shape), ir.FormatShape(perm))
		}
		out[a] = g.Shape[i]
	}
	c.Set("X@GRAD", g.DType, out)
	return nil
}

func inferTranspose(c *Infer) error {
	x, ok := c.In("X")
	if !ok {
		return nil
	}
	setXShape(c, x)
	perm, _ := c.Ints("axis")
	if len(perm) != len(x.Shape) {
		return c.Errorf("X %s %s: attr axis %s has %d dims, X %d", c.Name("X"), ir.FormatShape(x.Shape), ir.FormatShape(perm), len(perm), len(x.Shape))
	}
	out := c.Shape(len(perm))
	var seen uint64
	for i, p := range perm {
		a, ok := normAxis(p, len(x.Shape))
		if !ok || a < 64 && seen&(1<<a) != 0 {
			return c.Errorf("X %s %s: attr axis %s is not a permutation of its dims", c.Name("X"), ir.FormatShape(x.Shape), ir.FormatShape(perm))
		}
		if a < 64 {
			seen |= 1 << a
		}
		out[i] = x.Shape[a]
	}
	c.Set("Out", x.DType, out)
	return nil
}

// inferSqueeze follows Paddle's squeeze2 at compile time: without axes
// every dim of size 1 goes; with axes, each named dim of size 1 or
// unknown goes, another stays.
func inferSqueeze(c *Infer) error {
	x, ok := c.In("X")
	if !ok {
		return nil
	}
	setXShape(c, x)
	axes, _ := c.Ints("axes")
	var drop uint64
	for _, a := range axes {
		i, ok := normAxis(a, len(x.Shape))
		if !ok || i >= 64 {
			return c.Errorf("X %s %s: attr axes %s names dim %d, out of range", c.Name("X"), ir.FormatShape(x.Shape), ir.FormatShape(axes), a)
		}
		if x.Shape[i] == 1 || x.Shape[i] == -1 {
			drop |= 1 << i
		}
	}
	var buf [8]int64
	out := buf[:0]
	for i, d := range x.Shape {
		if len(axes) == 0 && d == 1 || i < 64 && drop&(1<<i) != 0 {
			continue
		}
		out = append(out, d)
	}
	c.Set("Out", x.DType, out)
	return nil
}

// inferUnsqueeze follows Paddle's unsqueeze2: each axis in turn inserts
// a 1 into the dims so far (a negative axis counts from the end of
// them, plus one). AxesTensor or AxesTensorList leave Out open.
func inferUnsqueeze(c *Infer) error {
	x, ok := c.In("X")
	if !ok {
		return nil
	}
	setXShape(c, x)
	if c.NumIn("AxesTensor") > 0 || c.NumIn("AxesTensorList") > 0 {
		return nil
	}
	axes, _ := c.Ints("axes")
	var buf [8]int64
	out := append(buf[:0], x.Shape...)
	for _, a := range axes {
		r := int64(len(out))
		if a < 0 {
			a += r + 1
		}
		if a < 0 || a > r {
			return c.Errorf("X %s %s: attr axes %s: axis out of range for %d dims", c.Name("X"), ir.FormatShape(x.Shape), ir.FormatShape(axes), r)
		}
		out = append(out, 0)
		copy(out[a+1:], out[a:])
		out[a] = 1
	}
	c.Set("Out", x.DType, out)
	return nil
}

func inferFlatten(c *Infer) error {
	x, ok := c.In("X")
	if !ok {
		return nil
	}
	setXShape(c, x)
	if len(x.Shape) == 0 {
		c.Set("Out", x.DType, []int64{1})
		return nil
	}
	start, ok1 := normAxis(c.Int("start_axis"), len(x.Shape))
	stop, ok2 := normAxis(c.Int("stop_axis"), len(x.Shape))
	if !ok1 || !ok2 || start > stop {
		return c.Errorf("X %s %s: start_axis %d and stop_axis %d are not a range of its dims", c.Name("X"), ir.FormatShape(x.Shape), c.Int("start_axis"), c.Int("stop_axis"))
	}
	var buf [8]int64
	out := append(buf[:0], x.Shape[:start]...)
	out = append(out, prod(x.Shape[start:stop+1]))
	out = append(out, x.Shape[stop+1:]...)
	c.Set("Out", x.DType, out)
	return nil
}

func inferFlatten2(c *Infer) error {
	x, ok := c.In("X")
	if !ok {
		return nil
	}
	setXShape(c, x)
	ax := c.Int("axis")
	if ax < 0 || ax > int64(len(x.Shape)) {
		return c.Errorf("X %s %s: axis %d out of range [0, %d]", c.Name("X"), ir.FormatShape(x.Shape), ax, len(x.Shape))
	}
	c.Set("Out", x.DType, []int64{prod(x.Shape[:ax]), prod(x.Shape[ax:])})
	return nil
}

func inferConcat(c *Infer) error {
	if c.NumIn("AxisTensor") > 0 {
		return nil // the axis is data
	}
	x0, ok := c.In("X")
	if !ok {
		return nil
	}
	ax, ok := normAxis(c.Int("axis"), len(x0.Shape))
	if !ok {
		return c.Errorf("X %s %s: axis %d out of range", c.Name("X"), ir.FormatShape(x0.Shape), c.Int("axis"))
	}
	out := c.Shape(len(x0.Shape))
	copy(out, x0.Shape)
	for i := 1; i < c.NumIn("X"); i++ {
		xi, ok := c.InAt("X", i)
		if !ok {
			return nil
		}
		if len(xi.Shape) != len(out) {
			return c.Errorf("X %s %s and X %s %s: ranks differ", c.Name("X"), ir.FormatShape(x0.Shape), c.op.Input("X")[i], ir.FormatShape(xi.Shape))
		}
		for d, n := range xi.Shape {
			switch {
			case d == ax:
				if out[d] >= 0 && n >= 0 {
					out[d] += n
				} else {
					out[d] = -1
				}
			case out[d] < 0:
				out[d] = n
			case n >= 0 && n != out[d]:
				return c.Errorf("X %s %s and X %s %s: dim %d differs off the concat axis %d", c.Name("X"), ir.FormatShape(x0.Shape), c.op.Input("X")[i], ir.FormatShape(xi.Shape), d, ax)
			}
		}
	}
	c.Set("Out", x0.DType, out)
	return nil
}

func inferSplit(c *Infer) error {
	x, ok := c.In("X")
	if !ok || c.NumIn("AxisTensor") > 0 {
		return nil
	}
	ax, ok := normAxis(c.Int("axis"), len(x.Shape))
	if !ok {
		return c.Errorf("X %s %s: axis %d out of range", c.Name("X"), ir.FormatShape(x.Shape), c.Int("axis"))
	}
	n := c.NumOut("Out")
	num := c.Int("num")
	sections, _ := c.Ints("sections")
	dim := x.Shape[ax]
	set := func(i int, d int64) {
		s := c.Shape(len(x.Shape))
		copy(s, x.Shape)
		s[ax] = d
		c.res = append(c.res, result{slot: "Out", i: i, dtype: x.DType, shape: s})
	}
	if num > 0 {
		if int64(n) != num {
			return c.Errorf("X %s %s: num %d, but %d outputs", c.Name("X"), ir.FormatShape(x.Shape), num, n)
		}
		if dim >= 0 && dim%num != 0 {
			return c.Errorf("X %s %s: dim %d (%d) does not split into %d", c.Name("X"), ir.FormatShape(x.Shape), ax, dim, num)
		}
		part := int64(-1)
		if dim >= 0 {
			part = dim / num
		}
		for i := range n {
			set(i, part)
		}
		return nil
	}
	if len(sections) != n {
		return c.Errorf("X %s %s: %d sections %s, but %d outputs", c.Name("X"), ir.FormatShape(x.Shape), len(sections), ir.FormatShape(sections), n)
	}
	if c.NumIn("SectionsTensorList") > 0 {
		for i := range n {
			set(i, -1)
		}
		return nil
	}
	infer, sum := -1, int64(0)
	for i, s := range sections {
		switch {
		case s == -1 && infer < 0:
			infer = i
		case s < 0:
			return c.Errorf("X %s %s: sections %s: bad section %d", c.Name("X"), ir.FormatShape(x.Shape), ir.FormatShape(sections), s)
		default:
			sum += s
		}
	}
	left := int64(-1)
	if dim >= 0 {
		left = dim - sum
		if left < 0 || infer < 0 && left != 0 {
			return c.Errorf("X %s %s: sections %s do not sum to dim %d (%d)", c.Name("X"), ir.FormatShape(x.Shape), ir.FormatShape(sections), ax, dim)
		}
	}
	for i, s := range sections {
		if i == infer {
			s = left
		}
		set(i, s)
	}
	return nil
}

// inferSlice follows Paddle's slice: each of axes becomes
// clamp(end) - clamp(start), negative indices counting from the end;
// dims whose bounds come from tensors (or infer_flags -1) are unknown;
// decrease_axis dims, which must be 1, are dropped.
func inferSlice(c *Infer) error {
	x, ok := c.In("Input")
	if !ok {
		return nil
	}
	axes, _ := c.Ints("axes")
	starts, _ := c.Ints("starts")
	ends, _ := c.Ints("ends")
	flags, _ := c.Ints("infer_flags")
	dec, _ := c.Ints("decrease_axis")
	fromTensors := c.NumIn("StartsTensor")+c.NumIn("EndsTensor")+c.NumIn("StartsTensorList")+c.NumIn("EndsTensorList") > 0
	if !fromTensors && (len(starts) != len(axes) || len(ends) != len(axes)) {
		return c.Errorf("Input %s %s: axes %s, starts %s and ends %s differ in length", c.Name("Input"), ir.FormatShape(x.Shape),
			ir.FormatShape(axes), ir.FormatShape(starts), ir.FormatShape(ends))
	}
	var buf [8]int64
	out := append(buf[:0], x.Shape...)
	for i, a := range axes {
		ax, ok := normAxis(a, len(x.Shape))
		if !ok {
			return c.Errorf("Input %s %s: axes %s names dim %d, out of range", c.Name("Input"), ir.FormatShape(x.Shape), ir.FormatShape(axes), a)
		}
		d := x.Shape[ax]
		if d < 0 || fromTensors || i < len(flags) && flags[i] == -1 {
			out[ax] = -1
			continue
		}
		s, e := clampIndex(starts[i], d), clampIndex(ends[i], d)
		out[ax] = max(e-s, 0)
	}
	if len(dec) == 0 {
		c.Set("Out", x.DType, out)
		return nil
	}
	var drop uint64
	for _, a := range dec {
		ax, ok := normAxis(a, len(x.Shape))
		if !ok || ax >= 64 {
			return c.Errorf("Input %s %s: decrease_axis %s names dim %d, out of range", c.Name("Input"), ir.FormatShape(x.Shape), ir.FormatShape(dec), a)
		}
		if out[ax] != 1 && out[ax] != -1 {
			return c.Errorf("Input %s %s: decrease_axis %s drops dim %d of size %d, not 1", c.Name("Input"), ir.FormatShape(x.Shape), ir.FormatShape(dec), ax, out[ax])
		}
		drop |= 1 << ax
	}
	k := 0
	for i, d := range out {
		if i < 64 && drop&(1<<i) != 0 {
			continue
		}
		out[k] = d
		k++
	}
	if k == 0 {
		c.SetScalar("Out", x.DType)
		return nil
	}
	c.Set("Out", x.DType, out[:k])
	return nil
}

// clampIndex resolves a slice bound against a dim of size d: negative
// counts from the end, then clamped to [0, d].
func clampIndex(i, d int64) int64 {
	if i < 0 {
		i += d
	}
	return min(max(i, 0), d)
}

func inferArgMinMax(c *Infer) error {
	x, ok := c.In("X")
	if !ok {
		return nil
	}
	d := ir.I64
	if code := c.Int("dtype"); code != -1 {
		d = c.dtypeOf("dtype")
	}
	keep := c.Bool("keepdims")
	if c.Bool("flatten") || len(x.Shape) == 0 {
		if !keep || len(x.Shape) == 0 {
			c.SetScalar("Out", d)
			return nil
		}
		out := c.Shape(len(x.Shape))
		for i := range out {
			out[i] = 1
		}
		c.Set("Out", d, out)
		return nil
	}
	ax, ok := normAxis(c.Int("axis"), len(x.Shape))
	if !ok {
		return c.Errorf("X %s %s: axis %d out of range", c.Name("X"), ir.FormatShape(x.Shape), c.Int("axis"))
	}
	var buf [8]int64
	out := append(buf[:0], x.Shape[:ax]...)
	if keep {
		out = append(out, 1)
	}
	out = append(out, x.Shape[ax+1:]...)
	c.Set("Out", d, out)
	return nil
}
