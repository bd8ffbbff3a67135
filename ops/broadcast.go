package ops

import (
	"slices"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/spmd"
)

// broadcastDefs: ops that repeat or stack their inputs (expand_v2, tile,
// stack) and the elementwise select where. Their grads sum the copies
// back (expand_v2_grad, tile_grad) or cut them apart (stack_grad).
func broadcastDefs() []*Def {
	return []*Def{
		{
			Type: "expand_v2", Doc: "X broadcast to shape (-1 keeps X's dim; X right-aligned)",
			Inputs:      slots("X", Slot{Name: "Shape", Optional: true, NoGrad: true}, Slot{Name: "expand_shapes_tensor", Optional: true, Variadic: true, NoGrad: true}),
			Outputs:     in("Out"),
			Attrs:       []Attr{intsAttr("shape", []int64{}...)},
			Shape:       "Out = shape, -1 taking X's dim (X right-aligned, each of its dims 1 or the target)",
			Infer:       inferExpand,
			Sharding:    repeatRule,
			ShardingDoc: repeatDoc,
			// The grads read X and Out@GRAD: the shapes, however given, are theirs.
			Grad: &Grad{Reads: []string{"X", "Out@GRAD"}, Diff: []string{"X"}},
		},
		{
			Type: "tile", Doc: "X repeated repeat_times[i] times along dim i",
			Inputs:      slots("X", Slot{Name: "RepeatTimes", Optional: true, NoGrad: true}, Slot{Name: "repeat_times_tensor", Optional: true, Variadic: true, NoGrad: true}),
			Outputs:     in("Out"),
			Attrs:       []Attr{intsAttr("repeat_times", []int64{}...)},
			Shape:       "Out[i] = X[i] * repeat_times[i], the shorter of the two padded with leading 1s",
			Infer:       inferTile,
			Sharding:    repeatRule,
			ShardingDoc: repeatDoc,
			Grad:        &Grad{Reads: []string{"X", "Out@GRAD"}, Diff: []string{"X"}},
		},
		{
			Type: "stack", Doc: "the X, all of one shape, stacked along a new dim axis",
			Inputs: slots(many("X")), Outputs: in("Y"),
			Attrs:       []Attr{intAttr("axis", 0)},
			Shape:       "Y = X[0] with len(X) inserted at axis",
			Infer:       inferStack,
			Sharding:    stackRule,
			ShardingDoc: stackDoc,
			Grad: &Grad{Reads: []string{"Y@GRAD"}, Diff: []string{"X"},
				Infer: inferStackGrad, Shape: "each X@GRAD = Y@GRAD without dim axis"},
		},
		{
			Type: "where", Doc: "X where Condition holds, Y elsewhere",
			Inputs: slots(noGrad("Condition"), "X", "Y"), Outputs: in("Out"),
			Shape:       "Out = X = Y = Condition (bool)",
			Infer:       inferWhere,
			Sharding:    whereRule,
			ShardingDoc: whereDoc,
			Grad:        &Grad{Reads: []string{"Condition", "X", "Y", "Out@GRAD"}, Diff: []string{"X", "Y"}},
		},
	}
}

// expandShape returns the shape expand_v2 broadcasts x to, or a message.
func expandShape(x, shape []int64) ([]int64, string) {
	if len(shape) < len(x) {
		return nil, "shape has fewer dims than X"
	}
	out := slices.Clone(shape)
	off := len(shape) - len(x)
	for i, t := range shape {
		if i < off {
			if t < 0 {
				return nil, "a new leading dim is -1"
			}
			continue
		}
		d := x[i-off]
		switch {
		case t == -1:
			out[i] = d
		case t < 0:
			return nil, "a target dim below -1"
		case d >= 0 && d != 1 && d != t:
			return nil, "a dim of X is neither 1 nor the target"
		}
	}
	return out, ""
}

func inferExpand(c *Infer) error {
	x, ok := c.In("X")
	if !ok {
		return nil
	}
	shape, _ := c.Ints("shape")
	if c.NumIn("Shape")+c.NumIn("expand_shapes_tensor") > 0 {
		n := len(shape)
		if t, ok := c.In("Shape"); ok && len(t.Shape) == 1 && t.Shape[0] >= 0 {
			n = int(t.Shape[0])
		} else if k := c.NumIn("expand_shapes_tensor"); k > 0 {
			n = k
		}
		out := c.Shape(n)
		for i := range out {
			out[i] = -1
		}
		c.Set("Out", x.DType, out)
		return nil
	}
	out, why := expandShape(x.Shape, shape)
	if why != "" {
		return c.Errorf("X %s %s, shape %s: %s", c.Name("X"), ir.FormatShape(x.Shape), ir.FormatShape(shape), why)
	}
	c.Set("Out", x.DType, out)
	return nil
}

// tileShape returns Out's shape for x tiled by reps.
func tileShape(x, reps []int64) ([]int64, string) {
	n := max(len(x), len(reps))
	out := make([]int64, n)
	for i := range n {
		d, r := int64(1), int64(1)
		if j := i - (n - len(x)); j >= 0 {
			d = x[j]
		}
		if j := i - (n - len(reps)); j >= 0 {
			r = reps[j]
		}
		switch {
		case r <= 0:
			return nil, "a repeat below 1"
		case d < 0:
			out[i] = -1
		default:
			out[i] = d * r
		}
	}
	return out, ""
}

func inferTile(c *Infer) error {
	x, ok := c.In("X")
	if !ok {
		return nil
	}
	reps, _ := c.Ints("repeat_times")
	if c.NumIn("RepeatTimes")+c.NumIn("repeat_times_tensor") > 0 {
		n := len(x.Shape)
		if t, ok := c.In("RepeatTimes"); ok && len(t.Shape) == 1 && t.Shape[0] >= 0 {
			n = max(n, int(t.Shape[0]))
		} else {
			n = max(n, c.NumIn("repeat_times_tensor"))
		}
		out := c.Shape(n)
		for i := range out {
			out[i] = -1
		}
		c.Set("Out", x.DType, out)
		return nil
	}
	out, why := tileShape(x.Shape, reps)
	if why != "" {
		return c.Errorf("X %s %s, repeat_times %s: %s", c.Name("X"), ir.FormatShape(x.Shape), ir.FormatShape(reps), why)
	}
	c.Set("Out", x.DType, out)
	return nil
}

func inferStack(c *Infer) error {
	x0, ok := c.In("X")
	if !ok {
		return nil
	}
	n := c.NumIn("X")
	for i := 1; i < n; i++ {
		xi, ok := c.InAt("X", i)
		if !ok {
			return nil
		}
		if !sameDims(xi.Shape, x0.Shape) {
			return c.Errorf("X %s %s and X %s %s: stack needs one shape", c.Name("X"), ir.FormatShape(x0.Shape), c.op.Input("X")[i], ir.FormatShape(xi.Shape))
		}
	}
	ax, ok := normAxis(c.Int("axis"), len(x0.Shape)+1)
	if !ok {
		return c.Errorf("X %s %s: axis %d out of range for the stacked rank %d", c.Name("X"), ir.FormatShape(x0.Shape), c.Int("axis"), len(x0.Shape)+1)
	}
	out := c.Shape(len(x0.Shape) + 1)
	copy(out, x0.Shape[:ax])
	out[ax] = int64(n)
	copy(out[ax+1:], x0.Shape[ax:])
	c.Set("Y", x0.DType, out)
	return nil
}

// sameDims reports whether two shapes agree where both dims are known.
func sameDims(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] >= 0 && b[i] >= 0 && a[i] != b[i] {
			return false
		}
	}
	return true
}

func inferStackGrad(c *Infer) error {
	g, ok := c.In("Y@GRAD")
	if !ok || len(g.Shape) == 0 {
		return nil
	}
	ax, ok := normAxis(c.Int("axis"), len(g.Shape))
	if !ok {
		return c.Errorf("Y@GRAD %s %s: axis %d out of range", c.Name("Y@GRAD"), ir.FormatShape(g.Shape), c.Int("axis"))
	}
	if n := g.Shape[ax]; n >= 0 && n != int64(c.NumOut("X@GRAD")) {
		return c.Errorf("Y@GRAD %s %s: %d along axis %d, but %d X@GRAD", c.Name("Y@GRAD"), ir.FormatShape(g.Shape), n, ax, c.NumOut("X@GRAD"))
	}
	for i := range c.NumOut("X@GRAD") {
		s := c.Shape(len(g.Shape) - 1)
		copy(s, g.Shape[:ax])
		copy(s[ax:], g.Shape[ax+1:])
		c.SetAt("X@GRAD", i, g.DType, s)
	}
	return nil
}

func inferWhere(c *Infer) error {
	cond, okc := c.In("Condition")
	x, okx := c.In("X")
	y, oky := c.In("Y")
	if !okc || !okx || !oky {
		return nil
	}
	if cond.DType != ir.Boolean {
		return c.Errorf("Condition %s is %s, not bool", c.Name("Condition"), cond.DType)
	}
	if x.DType != y.DType {
		return c.Errorf("X %s is %s and Y %s is %s: where needs one dtype", c.Name("X"), x.DType, c.Name("Y"), y.DType)
	}
	if !sameDims(x.Shape, y.Shape) || !sameDims(x.Shape, cond.Shape) {
		return c.Errorf("Condition %s %s, X %s %s, Y %s %s: where needs one shape (broadcast them first)",
			c.Name("Condition"), ir.FormatShape(cond.Shape), c.Name("X"), ir.FormatShape(x.Shape), c.Name("Y"), ir.FormatShape(y.Shape))
	}
	c.Set("Out", x.DType, x.Shape)
	return nil
}

const (
	repeatDoc = "a dim X keeps (neither broadcast nor repeated) passes through; a broadcast, repeated or new dim is not sharded"
	stackDoc  = "every dim of the X passes through to Y; the new dim axis is not sharded"
	whereDoc  = "Condition, X, Y and Out share every dim"
)

// repeatRule: expand_v2's and tile's. A dim X keeps passes its sharding
// through; a dim copied (broadcast from 1, repeated) is whole in X and
// Out: a rank holding a block of the copies would need X's whole dim.
func repeatRule(c *Infer) (spmd.ShardingRule, error) {
	x, okx := c.In("X")
	o, oko := c.Out("Out", 0)
	if !okx || !oko || len(o.Shape) < len(x.Shape) {
		return nil, nil
	}
	off := len(o.Shape) - len(x.Shape)
	xs, os := []byte(alphabet[:len(x.Shape)]), make([]byte, len(o.Shape))
	for i := range os {
		os[i] = '1'
	}
	for i, d := range x.Shape {
		t := o.Shape[off+i]
		if d < 0 || t < 0 || d != t {
			xs[i] = '1'
			continue
		}
		os[off+i] = xs[i]
	}
	return c.einsum(map[string]string{"X": string(xs)}, map[string]string{"Out": string(os)})
}

// stackRule: the X's dims pass through; the stacked axis is whole.
func stackRule(c *Infer) (spmd.ShardingRule, error) {
	n := c.rank("X")
	if n < 0 {
		return nil, nil
	}
	ax, ok := normAxis(c.Int("axis"), n+1)
	if !ok {
		return nil, nil
	}
	l := alphabet[:n]
	return c.einsum(map[string]string{"X": l}, map[string]string{"Y": l[:ax] + "1" + l[ax:]})
}

// whereRule: one shape, every dim shared.
func whereRule(c *Infer) (spmd.ShardingRule, error) {
	n := c.rank("X")
	if n < 0 {
		return nil, nil
	}
	l := alphabet[:n]
	return c.einsum(map[string]string{"Condition": l, "X": l, "Y": l}, map[string]string{"Out": l})
}
