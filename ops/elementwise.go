package ops

import "github.com/distpass/distpass/ir"

func elementwiseDefs() []*Def {
	binary := func(t, doc string, grad bool) *Def {
		d := &Def{
			Type: t, Doc: doc,
			Inputs: in("X", "Y"), Outputs: in("Out"),
			Attrs:  []Attr{intAttr("axis", -1)},
			Traits: Elementwise,
			Shape:  "Out = broadcast(X, Y) with Y aligned at axis (-1: trailing)",
			Infer:  inferBroadcast(ir.DTypeInvalid),
			// Compare ops keep it: their bool Out is sharded as X and Y.
			Sharding:    broadcastRule,
			ShardingDoc: broadcastDoc,
		}
		if grad {
			d.Grad = &Grad{Reads: []string{"X", "Y", "Out@GRAD"}, Diff: []string{"X", "Y"}}
		}
		return d
	}
	compare := func(t, doc string) *Def {
		d := binary(t, doc, false)
		d.Shape = "Out = broadcast(X, Y), bool"
		d.Infer = inferBroadcast(ir.Boolean)
		d.Attrs = append(d.Attrs, boolAttr("force_cpu", false))
		return d
	}
	// Integer arithmetic on positions keeps them positions (tok = pos //
	// k): KeepsIndex.
	index := func(d *Def) *Def {
		d.Traits |= KeepsIndex
		return d
	}
	return []*Def{
		additive(index(binary("elementwise_add", "X + Y", true))),
		additive(index(binary("elementwise_sub", "X - Y", true))),
		linearIn(index(binary("elementwise_mul", "X * Y", true)), "X", "Y"),
		linearIn(binary("elementwise_div", "X / Y", true), "X"),
		binary("elementwise_max", "max(X, Y)", false),
		binary("elementwise_min", "min(X, Y)", false),
		index(binary("elementwise_floordiv", "X // Y, rounding down", false)),
		binary("elementwise_pow", "X ** Y", false),
		index(binary("elementwise_mod", "X % Y, with the sign of Y", false)),
		compare("less_than", "X < Y"),
		compare("less_equal", "X <= Y"),
		compare("greater_than", "X > Y"),
		compare("greater_equal", "X >= Y"),
		compare("equal", "X == Y"),
		compare("not_equal", "X != Y"),
	}
}

// inferBroadcast infers Out of a binary elementwise op: the dtype of X
// (or d when it is valid), the shape of X and Y broadcast.
func inferBroadcast(d ir.DType) func(c *Infer) error {
	return func(c *Infer) error {
		x, okx := c.In("X")
		y, oky := c.In("Y")
		if !okx || !oky {
			return nil
		}
		out, err := Broadcast(c, x.Shape, y.Shape, int(c.Int("axis")))
		if err != nil {
			return c.Errorf("X %s %s and Y %s %s: %v", c.Name("X"), ir.FormatShape(x.Shape), c.Name("Y"), ir.FormatShape(y.Shape), err)
		}
		dt := d
		if dt == ir.DTypeInvalid {
			dt = x.DType
		}
		c.Set("Out", dt, out)
		return nil
	}
}

// Broadcast returns the shape of x and y broadcast as Paddle's
// elementwise ops do: the shorter operand's dims are aligned with the
// longer's starting at axis (-1: aligned to the trailing dims, as numpy
// does); aligned dims are equal, or one of them is 1; an unknown dim
// (-1) gives the other when it is above 1, else unknown. The result is
// scratch of c.
func Broadcast(c *Infer, x, y []int64, axis int) ([]int64, error) {
	long, short := x, y
	if len(y) > len(x) {
		long, short = y, x
	}
	if axis < 0 || len(x) == len(y) {
		axis = len(long) - len(short)
	}
	if axis+len(short) > len(long) {
		return nil, c.Errorf("axis %d leaves no room for %d dims in %d", axis, len(short), len(long))
	}
	out := c.Shape(len(long))
	copy(out, long)
	for i, s := range short {
		l := long[axis+i]
		switch {
		case l == s:
		case l < 0 || s < 0:
			out[axis+i] = max(l, s)
			if out[axis+i] <= 1 {
				out[axis+i] = -1
			}
		case s == 1:
		case l == 1:
			out[axis+i] = s
		default:
			return nil, c.Errorf("dim %d: %d and %d do not broadcast", axis+i, l, s)
		}
	}
	return out, nil
}

// additive marks d's op as a sum or difference of its inputs (Additive).
func additive(d *Def) *Def {
	d.Traits |= Additive
	return d
}

// linearIn gives d the input slots its op is linear in (LinearIn).
func linearIn(d *Def, slots ...string) *Def {
	d.LinearIn = slots
	return d
}
