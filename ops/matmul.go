package ops

import "github.com/distpass/distpass/ir"

func matmulDefs() []*Def {
	binGrad := func() *Grad {
		return &Grad{Reads: []string{"X", "Y", "Out@GRAD"}, Diff: []string{"X", "Y"}}
	}
	return []*Def{
		{
			Type: "matmul_v2", Doc: "batched matrix product of X and Y, each optionally transposed",
			Inputs: in("X", "Y"), Outputs: in("Out"), LinearIn: []string{"X", "Y"},
			Attrs:       []Attr{boolAttr("trans_x", false), boolAttr("trans_y", false)},
			Shape:       "Out = broadcast(X[:-2], Y[:-2]) + [M, N] for X [.., M, K], Y [.., K, N]",
			Infer:       inferMatmul("trans_x", "trans_y"),
			Sharding:    matmulRule("trans_x", "trans_y"),
			ShardingDoc: matmulDoc,
			Grad:        binGrad(),
		},
		{
			Type: "matmul", Doc: "alpha times the batched matrix product of X and Y (Paddle 1.x)",
			Inputs: in("X", "Y"), Outputs: in("Out"), LinearIn: []string{"X", "Y"},
			Attrs: []Attr{
				boolAttr("transpose_X", false), boolAttr("transpose_Y", false), floatAttr("alpha", 1),
				intAttr("head_number", 1),
				intsAttr("fused_reshape_X"), intsAttr("fused_reshape_Y"), intsAttr("fused_reshape_Out"),
				intsAttr("fused_transpose_X"), intsAttr("fused_transpose_Y"), intsAttr("fused_transpose_Out"),
			},
			Shape: "Out = (X[:-2] if X has batch dims, else Y[:-2]) + [M, N] for X [.., M, K], Y [.., K, N]; batches do not broadcast",
			Infer: inferMatmulV1,
			// Paddle 1.x's batches do not broadcast, so they are equal:
			// matmul_v2's letters fit.
			Sharding:    matmulRule("transpose_X", "transpose_Y"),
			ShardingDoc: matmulDoc,
			Grad:        binGrad(),
		},
		{
			Type: "mul", Doc: "X flattened to a matrix at x_num_col_dims times Y flattened at y_num_col_dims",
			Inputs: in("X", "Y"), Outputs: in("Out"), LinearIn: []string{"X", "Y"},
			Attrs:       []Attr{intAttr("x_num_col_dims", 1), intAttr("y_num_col_dims", 1)},
			Shape:       "Out = X[:xn] + Y[yn:], with prod(X[xn:]) = prod(Y[:yn])",
			Infer:       inferMul,
			Sharding:    mulRule,
			ShardingDoc: mulDoc,
			Grad:        binGrad(),
		},
	}
}

// inferMatmul infers matmul_v2 and matmul: a 1-D X is a row, a 1-D Y a
// column, and the dim they add is dropped again; batch dims broadcast.
func inferMatmul(transX, transY string) func(c *Infer) error {
	return func(c *Infer) error {
		x, okx := c.In("X")
		y, oky := c.In("Y")
		if !okx || !oky {
			return nil
		}
		xs, ys := x.Shape, y.Shape
		if len(xs) == 0 || len(ys) == 0 {
			return c.Errorf("X %s %s and Y %s %s: matmul needs at least 1-D operands", c.Name("X"), ir.FormatShape(xs), c.Name("Y"), ir.FormatShape(ys))
		}
		var m, kx, ky, n int64 = -2, 0, 0, -2 // -2: the dim a 1-D operand adds, dropped from Out
		if len(xs) == 1 {
			kx = xs[0]
		} else {
			m, kx = xs[len(xs)-2], xs[len(xs)-1]
			if c.Bool(transX) {
				m, kx = kx, m
			}
		}
		if len(ys) == 1 {
			ky = ys[0]
		} else {
			ky, n = ys[len(ys)-2], ys[len(ys)-1]
			if c.Bool(transY) {
				ky, n = n, ky
			}
		}
		if kx >= 0 && ky >= 0 && kx != ky {
			return c.Errorf("X %s %s and Y %s %s: contracted dims %d and %d differ", c.Name("X"), ir.FormatShape(xs), c.Name("Y"), ir.FormatShape(ys), kx, ky)
		}
		bx, by := xs[:max(len(xs)-2, 0)], ys[:max(len(ys)-2, 0)]
		batch, err := Broadcast(c, bx, by, -1)
		if err != nil {
			return c.Errorf("X %s %s and Y %s %s: batch dims: %v", c.Name("X"), ir.FormatShape(xs), c.Name("Y"), ir.FormatShape(ys), err)
		}
		var buf [8]int64
		out := append(buf[:0], batch...)
		if m != -2 {
			out = append(out, m)
		}
		if n != -2 {
			out = append(out, n)
		}
		c.Set("Out", x.DType, out)
		return nil
	}
}

// matmulFusions are the attrs of Paddle's oneDNN matmul fusion pass: a
// reshape and transpose folded into an operand or the output, which
// change the shapes.
var matmulFusions = [...]string{"fused_reshape_X", "fused_reshape_Y", "fused_reshape_Out", "fused_transpose_X", "fused_transpose_Y", "fused_transpose_Out"}

// inferMatmulV1 infers Paddle 1.x matmul, which is not matmul_v2: batch
// dims do not broadcast (Out takes X's batch dims when X has some, else
// Y's, and the two batches hold as many matrices); a 1-D X is a row and
// a 1-D Y a column, transposed as asked, and their dim is dropped from
// Out only when it is 1. 1-D times 1-D is [1] (Paddle 2.5+: []).
func inferMatmulV1(c *Infer) error {
	x, okx := c.In("X")
	y, oky := c.In("Y")
	if !okx || !oky {
		return nil
	}
	for _, a := range matmulFusions {
		if v, _ := c.Ints(a); len(v) > 0 {
			return c.Errorf("attr %s %s: matmul with a oneDNN reshape or transpose fused in is not supported", a, ir.FormatShape(v))
		}
	}
	if h := c.Int("head_number"); h > 1 {
		return c.Errorf("attr head_number %d: a multi-head matmul (an MKLML kernel's) is not supported", h)
	}
	xs, ys := x.Shape, y.Shape
	both := func() string {
		return "X " + c.Name("X") + " " + ir.FormatShape(xs) + " and Y " + c.Name("Y") + " " + ir.FormatShape(ys)
	}
	if len(xs) == 0 || len(ys) == 0 {
		return c.Errorf("%s: matmul needs at least 1-D operands", both())
	}
	var m, kx, ky, n int64 = 1, xs[0], ys[0], 1
	if len(xs) > 1 {
		m, kx = xs[len(xs)-2], xs[len(xs)-1]
	}
	if len(ys) > 1 {
		ky, n = ys[len(ys)-2], ys[len(ys)-1]
	}
	if c.Bool("transpose_X") {
		m, kx = kx, m
	}
	if c.Bool("transpose_Y") {
		ky, n = n, ky
	}
	if kx >= 0 && ky >= 0 && kx != ky {
		return c.Errorf("%s: contracted dims %d and %d differ", both(), kx, ky)
	}
	bx, by := xs[:max(len(xs)-2, 0)], ys[:max(len(ys)-2, 0)]
	if len(bx) > 0 && len(by) > 0 {
		if px, py := prod(bx), prod(by); px >= 0 && py >= 0 && px != py {
			return c.Errorf("%s: batches of %d and %d matrices (matmul does not broadcast; matmul_v2 does)", both(), px, py)
		}
	}
	var buf [8]int64
	out := buf[:0]
	if len(bx) > 0 {
		out = append(out, bx...)
	} else {
		out = append(out, by...)
	}
	out = append(out, m, n)
	if len(xs) == 1 && out[len(out)-2] == 1 {
		out = append(out[:len(out)-2], out[len(out)-1])
	}
	if len(ys) == 1 && out[len(out)-1] == 1 {
		out = out[:len(out)-1]
	}
	if len(out) == 0 {
		c.SetScalar("Out", x.DType)
		return nil
	}
	c.Set("Out", x.DType, out)
	return nil
}

// prod multiplies dims; -1 when one is unknown.
func prod(dims []int64) int64 {
	p := int64(1)
	for _, d := range dims {
		if d < 0 {
			return -1
		}
		p *= d
	}
	return p
}

func inferMul(c *Infer) error {
	x, okx := c.In("X")
	y, oky := c.In("Y")
	if !okx || !oky {
		return nil
	}
	xn, yn := int(c.Int("x_num_col_dims")), int(c.Int("y_num_col_dims"))
	if xn < 1 || xn >= len(x.Shape) || yn < 1 || yn >= len(y.Shape) {
		return c.Errorf("X %s %s and Y %s %s: x_num_col_dims %d or y_num_col_dims %d out of range", c.Name("X"), ir.FormatShape(x.Shape), c.Name("Y"), ir.FormatShape(y.Shape), xn, yn)
	}
	kx, ky := prod(x.Shape[xn:]), prod(y.Shape[:yn])
	if kx >= 0 && ky >= 0 && kx != ky {
		return c.Errorf("X %s %s and Y %s %s: contracted sizes %d and %d differ", c.Name("X"), ir.FormatShape(x.Shape), c.Name("Y"), ir.FormatShape(y.Shape), kx, ky)
	}
	var buf [8]int64
	out := append(buf[:0], x.Shape[:xn]...)
	out = append(out, y.Shape[yn:]...)
	c.Set("Out", x.DType, out)
	return nil
}
