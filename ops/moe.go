package ops

import "github.com/distpass/distpass/ir"

// moeDefs: the mixture-of-experts gate, dispatch and expert ops.
func moeDefs() []*Def {
	exchangeAttrs := []Attr{intAttr("ring_id", 0), boolAttr("use_calc_stream", false)}
	return []*Def{
		{
			Type: "top_k_v2", Doc: "the k largest (or smallest) values of X along axis, and their indices",
			Inputs: slots("X", opt("K")), Outputs: slots("Out", "Indices"),
			Attrs:       []Attr{intAttr("k", 1), intAttr("axis", -1), boolAttr("largest", true), boolAttr("sorted", true)},
			Shape:       "Out = Indices = X with dim axis k (unknown with a K input); Indices int64",
			Infer:       inferTopK,
			Sharding:    alongAxisRule("X", "Out", "Indices"),
			ShardingDoc: alongAxisDoc,
			Grad:        &Grad{Reads: []string{"X", "Indices", "Out@GRAD"}, Diff: []string{"X"}},
		},
		{
			Type: "gather", Doc: "the slices of X at Index along axis",
			Inputs: slots("X", noGrad("Index"), Slot{Name: "Axis", Optional: true, NoGrad: true}), Outputs: in("Out"),
			Attrs:       []Attr{intAttr("axis", 0), boolAttr("overwrite", true)},
			Shape:       "Out = X with dim axis len(Index) (dropped for a 0-D Index)",
			Infer:       inferGather,
			Sharding:    gatherRule,
			ShardingDoc: gatherDoc,
			Indexing:    &Indexing{Index: "Index", RowsIn: []string{"X"}, Axis: "axis"},
			Grad: &Grad{Reads: []string{"X", "Index", "Out@GRAD"}, Diff: []string{"X"},
				Indexing: &Indexing{Index: "Index", RowsIn: []string{"X"}, RowsOut: []string{"X@GRAD"}, Axis: "axis"}},
		},
		{
			Type: "scatter", Doc: "X with the rows at Ids overwritten by (or added from) Updates",
			Inputs: slots("X", noGrad("Ids"), "Updates"), Outputs: in("Out"),
			Attrs:    []Attr{boolAttr("overwrite", true)},
			Shape:    "Out = X; Updates = [len(Ids)] + X[1:]",
			Infer:    inferScatter,
			Sharding: scatterRule, ShardingDoc: scatterDoc,
			Indexing: &Indexing{Index: "Ids", RowsIn: []string{"X"}, RowsOut: []string{"Out"}},
			Grad: &Grad{Reads: []string{"Ids", "Updates", "Out@GRAD"}, Diff: []string{"X", "Updates"},
				Infer: inferScatterGrad, Shape: "X@GRAD = Out@GRAD, Updates@GRAD = Updates",
				Indexing: &Indexing{Index: "Ids", RowsIn: []string{"Out@GRAD"}, RowsOut: []string{"X@GRAD"}}},
		},
		{
			Type: "grouped_matmul", Doc: "each expert's rows of X times its weight W[e], the rows grouped by ExpertCount",
			Inputs: slots("X", "W", noGrad("ExpertCount")), Outputs: in("Out"),
			Shape:    "Out = [M, P] for X [M, K], W [E, K, P]",
			Infer:    inferGroupedMatmul,
			Sharding: groupedRule, ShardingDoc: groupedDoc,
			Grad: &Grad{Reads: []string{"X", "W", "ExpertCount", "Out@GRAD"}, Diff: []string{"X", "W"}},
		},
		{
			Type: "number_count", Doc: "how many of numbers equal each e in [0, upper_range)",
			Inputs: in("numbers"), Outputs: in("Out"),
			Attrs:    []Attr{intAttr("upper_range", 0)},
			Shape:    "Out = [upper_range], int64",
			Sharding: countRule, ShardingDoc: countDoc,
			Infer: func(c *Infer) error {
				if _, ok := c.In("numbers"); !ok {
					return nil
				}
				ur := c.Int("upper_range")
				if ur < 0 {
					return c.Errorf("upper_range %d is negative", ur)
				}
				c.Set("Out", ir.I64, []int64{ur})
				return nil
			},
		},
		{
			Type: "cumsum", Doc: "the running sums of X along axis (over all elements with flatten)",
			Inputs: in("X"), Outputs: in("Out"), Traits: LinearUnary,
			Attrs:       []Attr{intAttr("axis", -1), boolAttr("flatten", false), boolAttr("exclusive", false), boolAttr("reverse", false)},
			Shape:       "Out = X ([numel(X)] with flatten)",
			Sharding:    cumsumRule,
			ShardingDoc: alongAxisDoc,
			// Paddle's grad of a cumsum is a cumsum of Out@GRAD the other
			// way (exclusive stays exclusive).
			Grad: &Grad{Type: "cumsum", Reads: []string{"Out@GRAD"}, Diff: []string{"X"},
				Unsupported: func(fwd *ir.Op) string {
					if f, _ := fwd.Attrs.Bool("flatten"); f {
						return "flatten is not supported (the grad would be flat, not X's shape)"
					}
					return ""
				},
				Emit: func(fwd *ir.Op, _ *ir.Var, outGrads []string, inGrad string) *ir.Op {
					op := &ir.Op{Type: "cumsum", Inputs: ir.Slots("X", outGrads[0]), Outputs: ir.Slots("Out", inGrad), Attrs: fwd.Attrs.Clone()}
					r, _ := fwd.Attrs.Bool("reverse")
					op.Attrs.Set("reverse", ir.Bool(!r))
					return op
				}},
			Infer: func(c *Infer) error {
				x, ok := c.In("X")
				if !ok {
					return nil
				}
				if c.Bool("flatten") || len(x.Shape) == 0 {
					c.Set("Out", x.DType, []int64{prod(x.Shape)})
					return nil
				}
				if _, ok := normAxis(c.Int("axis"), len(x.Shape)); !ok {
					return c.Errorf("X %s %s: axis %d out of range", c.Name("X"), ir.FormatShape(x.Shape), c.Int("axis"))
				}
				c.Set("Out", x.DType, x.Shape)
				return nil
			},
		},
		{
			Type: "assign_pos", Doc: "the token slots of X in expert order, by the prefix counts cum_count",
			Traits:   OwnPart | NumbersRows,
			Inputs:   slots(noGrad("X"), noGrad("cum_count"), Slot{Name: "eff_num_len", Optional: true, NoGrad: true}),
			Outputs:  in("Out"),
			Shape:    "Out = [-1] (the routed slots), int64",
			Sharding: assignPosRule, ShardingDoc: assignDoc,
			Infer: func(c *Infer) error {
				if _, ok := c.In("X"); ok {
					c.Set("Out", ir.I64, []int64{-1})
				}
				return nil
			},
		},
		{
			Type: "limit_by_capacity", Doc: "expert_count cut, worker by worker, to each expert's capacity",
			Traits: OwnPart,
			Inputs: slots(noGrad("expert_count"), noGrad("capacity")), Outputs: in("Out"),
			Attrs:    []Attr{intAttr("n_worker", 1)},
			Shape:    "Out = expert_count",
			Sharding: limitRule, ShardingDoc: limitDoc,
			Infer: func(c *Infer) error {
				ec, ok1 := c.In("expert_count")
				cp, ok2 := c.In("capacity")
				if !ok1 || !ok2 {
					return nil
				}
				w := c.Int("n_worker")
				if len(ec.Shape) == 1 && len(cp.Shape) == 1 && ec.Shape[0] >= 0 && cp.Shape[0] >= 0 && ec.Shape[0] != w*cp.Shape[0] {
					return c.Errorf("expert_count %s %s and capacity %s %s: want n_worker %d times as many counts as capacities",
						c.Name("expert_count"), ir.FormatShape(ec.Shape), c.Name("capacity"), ir.FormatShape(cp.Shape), w)
				}
				c.Set("Out", ec.DType, ec.Shape)
				return nil
			},
		},
		{
			Type: "prune_gate_by_capacity", Doc: "GateIdx with the choices beyond each expert's count set to -1",
			Traits: OwnPart,
			Inputs: slots(noGrad("GateIdx"), noGrad("ExpertCount")), Outputs: in("NewGateIdx"),
			Attrs:    []Attr{longAttr("n_expert", 1), longAttr("n_worker", 1)}, // int64_t's in Paddle
			Shape:    "NewGateIdx = GateIdx",
			Sharding: pruneRule, ShardingDoc: pruneDoc,
			Infer: func(c *Infer) error {
				g, ok1 := c.In("GateIdx")
				ec, ok2 := c.In("ExpertCount")
				if !ok1 || !ok2 {
					return nil
				}
				if n := c.Int("n_expert") * c.Int("n_worker"); len(ec.Shape) == 1 && ec.Shape[0] >= 0 && ec.Shape[0] != n {
					return c.Errorf("ExpertCount %s %s: want n_expert %d × n_worker %d = %d counts",
						c.Name("ExpertCount"), ir.FormatShape(ec.Shape), c.Int("n_expert"), c.Int("n_worker"), n)
				}
				c.Set("NewGateIdx", g.DType, g.Shape)
				return nil
			},
		},
		// Each MoE exchange's grad is the other one with the same counts
		// and attrs: the rows go back where they came from. How many rows
		// arrive is data: only the feature dims are inferred.
		{
			Type: "global_scatter", Doc: "X's rows sent to the ranks of their experts, by local_count and global_count",
			Inputs: slots("X", noGrad("local_count"), noGrad("global_count")), Outputs: in("Out"),
			Attrs: exchangeAttrs, Traits: Collective | OwnPart | DataDependent, Cost: &Cost{Ring: 1},
			Shape: "Out = [-1] + X[1:] (the rows received)",
			Infer: inferExchange, Sharding: exchangeRule, ShardingDoc: exchangeDoc,
			Grad: &Grad{Type: "global_gather", Reads: []string{"Out@GRAD"}, Diff: []string{"X"}, Emit: exchangeGrad("global_gather")}},
		{
			Type: "global_gather", Doc: "global_scatter's inverse: the expert outputs sent back to their tokens' ranks",
			Inputs: slots("X", noGrad("local_count"), noGrad("global_count")), Outputs: in("Out"),
			Attrs: exchangeAttrs, Traits: Collective | OwnPart | DataDependent, Cost: &Cost{Ring: 1},
			Shape: "Out = [-1] + X[1:] (the rows received)",
			Infer: inferExchange, Sharding: exchangeRule, ShardingDoc: exchangeDoc,
			Grad: &Grad{Type: "global_scatter", Reads: []string{"Out@GRAD"}, Diff: []string{"X"}, Emit: exchangeGrad("global_scatter")}},
	}
}

// exchangeGrad returns the Emit of global_scatter's or global_gather's
// grad: the inverse exchange, typ, over the forward op's counts.
func exchangeGrad(typ string) func(fwd *ir.Op, _ *ir.Var, outGrads []string, inGrad string) *ir.Op {
	return func(fwd *ir.Op, _ *ir.Var, outGrads []string, inGrad string) *ir.Op {
		return &ir.Op{Type: typ,
			Inputs: []ir.Slot{ir.S("X", outGrads[0]), ir.S("local_count", fwd.Input("local_count")...),
				ir.S("global_count", fwd.Input("global_count")...)},
			Outputs: ir.Slots("Out", inGrad), Attrs: fwd.Attrs.Clone()}
	}
}

func inferTopK(c *Infer) error {
	x, ok := c.In("X")
	if !ok {
		return nil
	}
	out := c.Shape(len(x.Shape))
	copy(out, x.Shape)
	if len(x.Shape) > 0 {
		ax, ok := normAxis(c.Int("axis"), len(x.Shape))
		if !ok {
			return c.Errorf("X %s %s: axis %d out of range", c.Name("X"), ir.FormatShape(x.Shape), c.Int("axis"))
		}
		k := int64(-1)
		if c.NumIn("K") == 0 {
			k = c.Int("k")
			if k < 1 || x.Shape[ax] >= 0 && k > x.Shape[ax] {
				return c.Errorf("X %s %s: k %d out of range [1, %d] along axis %d", c.Name("X"), ir.FormatShape(x.Shape), k, x.Shape[ax], ax)
			}
		}
		out[ax] = k
	}
	c.Set("Out", x.DType, out)
	c.Set("Indices", ir.I64, out)
	return nil
}

// inferGather follows Paddle's gather: dim axis of X becomes Index's
// length (Index [M] or [M, 1]; a 0-D Index drops the dim). An Axis input
// leaves Out open.
func inferGather(c *Infer) error {
	x, okx := c.In("X")
	idx, oki := c.In("Index")
	if !okx || !oki || c.NumIn("Axis") > 0 {
		return nil
	}
	ax, ok := normAxis(c.Int("axis"), len(x.Shape))
	if !ok {
		return c.Errorf("X %s %s: axis %d out of range", c.Name("X"), ir.FormatShape(x.Shape), c.Int("axis"))
	}
	if len(idx.Shape) > 2 || len(idx.Shape) == 2 && idx.Shape[1] != 1 && idx.Shape[1] != -1 {
		return c.Errorf("X %s %s and Index %s %s: Index must be [M] or [M, 1]", c.Name("X"), ir.FormatShape(x.Shape), c.Name("Index"), ir.FormatShape(idx.Shape))
	}
	var buf [8]int64
	out := append(buf[:0], x.Shape[:ax]...)
	if len(idx.Shape) > 0 {
		out = append(out, idx.Shape[0])
	}
	out = append(out, x.Shape[ax+1:]...)
	c.Set("Out", x.DType, out)
	return nil
}

func inferScatter(c *Infer) error {
	x, okx := c.In("X")
	ids, oki := c.In("Ids")
	u, oku := c.In("Updates")
	if !okx || !oki || !oku {
		return nil
	}
	if err := checkScatter(c, "X", x, ids, u); err != nil {
		return err
	}
	c.Set("Out", x.DType, x.Shape)
	return nil
}

// checkScatter checks scatter's Ids and Updates against the rows of
// slot s (X, or the grad's Out@GRAD) of type x.
func checkScatter(c *Infer, s string, x, ids, u ir.Type) error {
	if len(x.Shape) == 0 {
		return c.Errorf("%s %s is 0-D: scatter needs rows", s, c.Name(s))
	}
	if len(ids.Shape) > 2 || len(ids.Shape) == 2 && ids.Shape[1] != 1 && ids.Shape[1] != -1 {
		return c.Errorf("Ids %s %s: want [M] or [M, 1]", c.Name("Ids"), ir.FormatShape(ids.Shape))
	}
	bad := len(u.Shape) != len(x.Shape)
	if !bad && len(ids.Shape) > 0 && !Compatible(u.Shape[:1], ids.Shape[:1]) {
		bad = true
	}
	if !bad && !Compatible(u.Shape[1:], x.Shape[1:]) {
		bad = true
	}
	if bad {
		return c.Errorf("%s %s %s, Ids %s %s and Updates %s %s: want Updates = [len(Ids)] + %s[1:]", s, c.Name(s), ir.FormatShape(x.Shape),
			c.Name("Ids"), ir.FormatShape(ids.Shape), c.Name("Updates"), ir.FormatShape(u.Shape), s)
	}
	return nil
}

// inferScatterGrad: X@GRAD has Out@GRAD's type (the grad does not read
// X), Updates@GRAD Updates'.
func inferScatterGrad(c *Infer) error {
	g, okg := c.In("Out@GRAD")
	ids, oki := c.In("Ids")
	u, oku := c.In("Updates")
	if !okg || !oki || !oku {
		return nil
	}
	if err := checkScatter(c, "Out@GRAD", g, ids, u); err != nil {
		return err
	}
	if c.NumOut("X@GRAD") > 0 {
		c.Set("X@GRAD", g.DType, g.Shape)
	}
	if c.NumOut("Updates@GRAD") > 0 {
		c.Set("Updates@GRAD", u.DType, u.Shape)
	}
	return nil
}

func inferGroupedMatmul(c *Infer) error {
	x, okx := c.In("X")
	w, okw := c.In("W")
	if !okx || !okw {
		return nil
	}
	if len(x.Shape) != 2 || len(w.Shape) != 3 {
		return c.Errorf("X %s %s and W %s %s: want X [M, K] and W [E, K, P]", c.Name("X"), ir.FormatShape(x.Shape), c.Name("W"), ir.FormatShape(w.Shape))
	}
	if k1, k2 := x.Shape[1], w.Shape[1]; k1 >= 0 && k2 >= 0 && k1 != k2 {
		return c.Errorf("X %s %s and W %s %s: contracted dims %d and %d differ", c.Name("X"), ir.FormatShape(x.Shape), c.Name("W"), ir.FormatShape(w.Shape), k1, k2)
	}
	c.Set("Out", x.DType, []int64{x.Shape[0], w.Shape[2]})
	return nil
}

// inferExchange infers global_scatter and global_gather: the rows
// received are data, the features are X's.
func inferExchange(c *Infer) error {
	x, ok := c.In("X")
	if !ok {
		return nil
	}
	if len(x.Shape) == 0 {
		return c.Errorf("X %s is 0-D: the exchange moves rows", c.Name("X"))
	}
	out := c.Shape(len(x.Shape))
	copy(out, x.Shape)
	out[0] = -1
	c.Set("Out", x.DType, out)
	return nil
}
