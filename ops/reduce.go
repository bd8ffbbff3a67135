package ops

import "github.com/distpass/distpass/ir"

// reduceDefs: reductions over all or some dims, and sum, the n-ary add.
func reduceDefs() []*Def {
	reduce := func(t, doc string, grad bool, r ir.Reduce) *Def {
		d := &Def{
			Type: t, Doc: doc,
			Inputs: in("X"), Outputs: in("Out"),
			Attrs: []Attr{intsAttr("dim", 0), boolAttr("keep_dim", false), boolAttr("reduce_all", false),
				dtypeAttr("in_dtype", -1), dtypeAttr("out_dtype", -1)},
			Traits:      Reduction,
			Shape:       "Out = X without the dims of dim (1 each with keep_dim); a scalar when reduce_all or dim is empty",
			Infer:       inferReduce,
			Sharding:    reduceRule(r),
			ShardingDoc: reduceDoc,
		}
		if grad {
			d.Grad = &Grad{Reads: []string{"X", "Out@GRAD"}, Diff: []string{"X"}}
		}
		return d
	}
	// reduce_prod's reduced dims are replicated: its shards would
	// multiply, which no partial reduction here does.
	prod := reduce("reduce_prod", "the product of X over dim", false, ir.ReduceSum)
	prod.Sharding, prod.ShardingDoc = reduceRuleOf(ir.ReduceSum, true), prodDoc
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
			Sharding:    reduceRule(ir.ReduceAvg),
			ShardingDoc: reduceDoc,
			Grad:        &Grad{Reads: []string{"X", "Out@GRAD"}, Diff: []string{"X"}},
		},
		reduce("reduce_sum", "the sum of X over dim", true, ir.ReduceSum),
		reduce("reduce_mean", "the mean of X over dim", true, ir.ReduceAvg),
		reduce("reduce_max", "the maximum of X over dim", false, ir.ReduceMax),
		reduce("reduce_min", "the minimum of X over dim", false, ir.ReduceMin),
		prod,
		{
			Type: "sum", Doc: "the elementwise sum of the tensors of X, which share one shape",
			Inputs: []Slot{many("X")}, Outputs: in("Out"), Traits: Elementwise | Additive,
			Shape:       "Out = X[0], every X of its shape",
			Infer:       inferSum,
			Sharding:    sumRule,
			ShardingDoc: sumDoc,
		},
	}
}

// inferReduce follows Paddle's reduce ops: dim lists the dims to fold,
// negative ones counted from the end; reduce_all, an empty dim, a dim
// naming every dim or a 0-D X fold them all into a scalar, or into 1s
// with keep_dim. reduce_sum's Out has dtype out_dtype when it is set
// (>= 0), else int64 for a bool or int32 X (SumRawInferMeta); the other
// reductions keep X's dtype (Paddle drops their out_dtype).
func inferReduce(c *Infer) error {
	x, ok := c.In("X")
	if !ok {
		return nil
	}
	r := len(x.Shape)
	if r > 64 {
		return c.Errorf("X %s has rank %d; reductions take at most 64 dims", c.Name("X"), r)
	}
	dims, _ := c.Ints("dim")
	all := c.Bool("reduce_all") || len(dims) == 0 || r == 0
	var red uint64 // bit i: dim i is folded
	for _, d := range dims {
		if r == 0 {
			if d != 0 && d != -1 {
				return c.Errorf("dim %s out of range for 0-D X %s", ir.FormatShape(dims), c.Name("X"))
			}
			continue
		}
		if d < -int64(r) || d >= int64(r) {
			return c.Errorf("dim %s out of range for X %s %s", ir.FormatShape(dims), c.Name("X"), ir.FormatShape(x.Shape))
		}
		if d < 0 {
			d += int64(r)
		}
		red |= 1 << d
	}
	if r > 0 && red == (^uint64(0))>>(64-r) {
		all = true
	}
	dt := x.DType
	if c.Op().Type == "reduce_sum" { // the other reductions keep X's dtype
		switch {
		case c.Int("out_dtype") >= 0:
			dt = c.dtypeOf("out_dtype")
		case dt == ir.Boolean || dt == ir.I32:
			dt = ir.I64
		}
	}
	keep := c.Bool("keep_dim")
	if all && !keep {
		c.SetScalar("Out", dt)
		return nil
	}
	var buf [8]int64
	out := buf[:0]
	for i, n := range x.Shape {
		switch {
		case !all && red&(1<<i) == 0:
			out = append(out, n)
		case keep:
			out = append(out, 1)
		}
	}
	c.Set("Out", dt, out)
	return nil
}

// inferSum: Out has the type of X[0]; every X has a shape compatible
// with it, and a dim X[0] leaves unknown takes the first known one.
func inferSum(c *Infer) error {
	first, ok := c.InAt("X", 0)
	if !ok {
		return nil
	}
	names := c.Op().Input("X")
	out := c.Shape(len(first.Shape))
	copy(out, first.Shape)
	for i := 1; i < len(names); i++ {
		t, ok := c.InAt("X", i)
		if !ok {
			continue
		}
		if !Compatible(first.Shape, t.Shape) {
			return c.Errorf("X %s %s and X %s %s: sum needs one shape", names[0], ir.FormatShape(first.Shape), names[i], ir.FormatShape(t.Shape))
		}
		for k, d := range t.Shape {
			if out[k] < 0 {
				out[k] = d
			}
		}
	}
	c.Set("Out", first.DType, out)
	return nil
}
