package opdef

func matmulDefs() []*Def {
	binGrad := func() *Grad {
		return &Grad{Reads: []string{"X", "Y", "Out@GRAD"}, Diff: []string{"X", "Y"}}
	}
	return []*Def{
		{
			Type: "matmul_v2", Doc: "batched matrix product of X and Y, each optionally transposed",
			Inputs: in("X", "Y"), Outputs: in("Out"),
			Attrs: []Attr{boolAttr("trans_x", false), boolAttr("trans_y", false)},
			Shape: "Out = broadcast(X[:-2], Y[:-2]) + [M, N] for X [.., M, K], Y [.., K, N]",
			Infer: inferMatmul("trans_x", "trans_y"),
			Grad:  binGrad(),
		},
		{
			Type: "matmul", Doc: "alpha times the batched matrix product of X and Y (Paddle 1.x)",
			Inputs: in("X", "Y"), Outputs: in("Out"),
			Attrs: []Attr{boolAttr("transpose_X", false), boolAttr("transpose_Y", false), floatAttr("alpha", 1)},
			Shape: "Out = broadcast(X[:-2], Y[:-2]) + [M, N] for X [.., M, K], Y [.., K, N]",
			Infer: inferMatmul("transpose_X", "transpose_Y"),
			Grad:  binGrad(),
		},
		{
			Type: "mul", Doc: "X flattened to a matrix at x_num_col_dims times Y flattened at y_num_col_dims",
			Inputs: in("X", "Y"), Outputs: in("Out"),
			Attrs: []Attr{intAttr("x_num_col_dims", 1), intAttr("y_num_col_dims", 1)},
			Shape: "Out = X[:xn] + Y[yn:], with prod(X[xn:]) = prod(Y[:yn])",
			Infer: inferMul,
			Grad:  binGrad(),
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
			return c.Errorf("X %s %s and Y %s %s: matmul needs at least 1-D operands", c.Name("X"), shapeString(xs), c.Name("Y"), shapeString(ys))
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
			return c.Errorf("X %s %s and Y %s %s: contracted dims %d and %d differ", c.Name("X"), shapeString(xs), c.Name("Y"), shapeString(ys), kx, ky)
		}
		bx, by := xs[:max(len(xs)-2, 0)], ys[:max(len(ys)-2, 0)]
		batch, err := Broadcast(c, bx, by, -1)
		if err != nil {
			return c.Errorf("X %s %s and Y %s %s: batch dims: %v", c.Name("X"), shapeString(xs), c.Name("Y"), shapeString(ys), err)
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
		return c.Errorf("X %s %s and Y %s %s: x_num_col_dims %d or y_num_col_dims %d out of range", c.Name("X"), shapeString(x.Shape), c.Name("Y"), shapeString(y.Shape), xn, yn)
	}
	kx, ky := prod(x.Shape[xn:]), prod(y.Shape[:yn])
	if kx >= 0 && ky >= 0 && kx != ky {
		return c.Errorf("X %s %s and Y %s %s: contracted sizes %d and %d differ", c.Name("X"), shapeString(x.Shape), c.Name("Y"), shapeString(y.Shape), kx, ky)
	}
	var buf [8]int64
	out := append(buf[:0], x.Shape[:xn]...)
	out = append(out, y.Shape[yn:]...)
	c.Set("Out", x.DType, out)
	return nil
}
