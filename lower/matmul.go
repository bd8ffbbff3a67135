package lower

import (
	"fmt"
	"slices"
	"strings"

	"github.com/distpass/distpass/ir"
)

// The matmul impls serve matmul_v2 (attrs trans_x, trans_y), matmul
// (transpose_X, transpose_Y) and mul (no transposes), registered in
// Paddle's order: 0 column_parallel, 1 row_parallel, 2 replicate_parallel.
// Y is the right operand, normally the weight.

// MatmulColumn is impl 0: Y split on its last (output) dim over an mp
// axis. Forward replicates X to the mp group with c_identity and computes
// a column shard of Out; backward sums X@GRAD over the mp group.
func MatmulColumn() *Impl {
	return &Impl{
		Name:       "column_parallel",
		Doc:        "c_identity(X) then the matmul; backward sums X@GRAD over the mp group",
		Compatible: func(ctx *Lowering, op *ir.Op) error { return matmulCompatible(ctx, op, 0) },
		Forward:    matmulColumnForward,
		Backward:   matmulBackward,
	}
}

// MatmulRow is impl 1: Y split on its first (reduction) dim, X on its
// last. Forward computes a partial Out and sums it over the mp group;
// an Out whose dist is partial (a sum along that mesh dim) is left so,
// for whoever needs it whole or split to pay.
func MatmulRow() *Impl {
	return &Impl{
		Name:       "row_parallel",
		Doc:        "the matmul into a partial Out, then c_allreduce_sum over the mp group (none for an Out declared partial)",
		Compatible: func(ctx *Lowering, op *ir.Op) error { return matmulCompatible(ctx, op, 1) },
		Reduces:    true,
		Forward:    matmulRowForward,
		Backward:   matmulBackward,
	}
}

// MatmulReplicated is impl 2: the matrix dims of X, Y and Out are all
// replicated (batch dims may be split). Forward is the default's.
func MatmulReplicated() *Impl {
	return &Impl{
		Name:       "replicate_parallel",
		Doc:        "the matmul as is, matrix dims replicated",
		Compatible: func(ctx *Lowering, op *ir.Op) error { return matmulCompatible(ctx, op, 2) },
		Forward:    DefaultImpl().Forward,
		Backward:   matmulBackward,
	}
}

var matmulImplNames = [3]string{"column_parallel", "row_parallel", "replicate_parallel"}

// matmulArgs are a matmul op's args and their expected mappings; xt and
// yt are the mappings with the last two entries swapped when the
// operand is transposed.
type matmulArgs struct {
	x, y           string
	xm, ym, xt, yt []int
	transX, transY bool
}

// transAttrs returns the names of the transpose attrs of a matmul type
// (its forward type for a grad op), or "" for mul.
func transAttrs(op *ir.Op) (string, string, error) {
	switch strings.TrimSuffix(op.Type, "_grad") {
	case "matmul_v2":
		return "trans_x", "trans_y", nil
	case "matmul":
		return "transpose_X", "transpose_Y", nil
	case "mul":
		return "", "", nil
	}
	return "", "", fmt.Errorf("%s is not a matmul_v2, matmul or mul op", op)
}

func readMatmulArgs(ctx *Lowering, op *ir.Op) (a matmulArgs, err error) {
	tx, ty, err := transAttrs(op)
	if err != nil {
		return a, err
	}
	if tx != "" {
		if a.transX, err = boolAttr(op, tx); err != nil {
			return a, err
		}
		if a.transY, err = boolAttr(op, ty); err != nil {
			return a, err
		}
	}
	if a.x, a.xm, err = argMapping(ctx, op, "X", true); err != nil {
		return a, err
	}
	if a.y, a.ym, err = argMapping(ctx, op, "Y", true); err != nil {
		return a, err
	}
	a.xt, a.yt = swapLastTwo(a.xm, a.transX), swapLastTwo(a.ym, a.transY)
	return a, nil
}

// swapLastTwo returns m with its last two entries swapped (a copy) when
// swap is set and m has two or more entries, else m itself.
func swapLastTwo(m []int, swap bool) []int {
	if !swap || len(m) < 2 {
		return m // read only: no copy needed
	}
	c := slices.Clone(m)
	c[len(c)-1], c[len(c)-2] = c[len(c)-2], c[len(c)-1]
	return c
}

// describe spells an operand for messages: "Y w has dims_mapping
// [-1, 0]", noting the swap of a transposed operand.
func describe(slot, name string, m, t []int, trans bool) string {
	s := fmt.Sprintf("%s %s has dims_mapping %s", slot, name, ir.FormatInts(m))
	if trans && len(m) >= 2 {
		s += fmt.Sprintf(" (transposed: %s)", ir.FormatInts(t))
	}
	return s
}

// matmulCompatible is the table of §3.3 for impl 0, 1 or 2, checked on
// the transpose-swapped mappings.
func matmulCompatible(ctx *Lowering, op *ir.Op, impl int) error {
	a, err := readMatmulArgs(ctx, op)
	if err != nil {
		return err
	}
	out, om, err := argMapping(ctx, op, "Out", false)
	if err != nil {
		return err
	}
	name := matmulImplNames[impl]
	// The operands are described only on failure: this runs for every op.
	xd := func() string { return describe("X", a.x, a.xm, a.xt, a.transX) }
	yd := func() string { return describe("Y", a.y, a.ym, a.yt, a.transY) }
	od := func() string { return describe("Out", out, om, om, false) }
	fail := func(need string, what func() string) error {
		return fmt.Errorf("%s: %s needs %s; %s", op, name, need, what())
	}
	if len(a.xt) == 0 {
		return fail("X of rank 1 or more", xd)
	}
	if len(a.yt) == 0 {
		return fail("Y of rank 1 or more", yd)
	}
	if len(om) == 0 {
		return fail("Out of rank 1 or more", od)
	}
	x1, _ := at(a.xt, -1)
	y1, _ := at(a.yt, -1)
	y2, hasY2 := at(a.yt, -2)
	o1, _ := at(om, -1)
	switch impl {
	case 0, 1:
		if !hasY2 {
			return fail("Y of rank 2 or more", yd)
		}
		if !allReplicated(middle(a.xt)) {
			return fail("X's dims between the first and the last replicated", xd)
		}
		if !allReplicated(middle(om)) {
			return fail("Out's dims between the first and the last replicated", od)
		}
	}
	switch impl {
	case 0:
		switch {
		case x1 != -1:
			return fail("X's last dim replicated", xd)
		case y2 != -1:
			return fail("Y's second-to-last dim replicated", yd)
		case y1 == -1:
			return fail("Y's last dim sharded", yd)
		case o1 == -1:
			return fail("Out's last dim sharded", od)
		}
	case 1:
		switch {
		case x1 == -1:
			return fail("X's last dim sharded", xd)
		case y2 == -1:
			return fail("Y's second-to-last dim sharded", yd)
		case y1 != -1:
			return fail("Y's last dim replicated", yd)
		case o1 != -1:
			return fail("Out's last dim replicated", od)
		case x1 != y2:
			// Each rank multiplies its slice of the reduction dim: X's
			// and Y's slices must be the same one.
			return fail("X's last dim and Y's second-to-last split along one mesh dim", func() string { return xd() + ", " + yd() })
		}
		if v := ctx.Var(out); v != nil && v.Dist.IsPartial() {
			// A partial Out is the local product itself: whoever needs
			// it whole pays for the sum.
			if len(v.Dist.Partial) != 1 || v.Dist.Partial[0] != (ir.Partial{Dim: y2, Reduce: ir.ReduceSum}) {
				return fmt.Errorf("%s: %s leaves Out partial only along mesh dim %d of the contracted dim, as a sum (partial [%d]); Out %s is %s",
					op, name, y2, y2, out, v.Dist.String())
			}
			return matmulAligned(ctx, op, name, a, out, om, true)
		}
	case 2:
		if x2, ok := at(a.xt, -2); x1 != -1 || ok && x2 != -1 {
			return fail("X's last two dims replicated", xd)
		}
		if y1 != -1 || hasY2 && y2 != -1 {
			return fail("Y's last two dims replicated", yd)
		}
		if o2, ok := at(om, -2); o1 != -1 || ok && o2 != -1 {
			return fail("Out's last two dims replicated", od)
		}
	}
	return matmulAligned(ctx, op, name, a, out, om, false)
}

// matmulAligned checks what every impl's local matmul needs to compute
// this rank's block of Out: Out's rows split as X's, its columns as Y's
// (Y's last dim; the row-parallel sum leaves them as they are), its
// batch dims as the operands' (right-aligned, as matmul broadcasts them;
// an operand's dim of size 1 broadcasts and is not compared), and no
// arg partial: the kernels compute on whole values (but a row-parallel
// Out, partialOut, which matmulCompatible checked).
func matmulAligned(ctx *Lowering, op *ir.Op, name string, a matmulArgs, out string, om []int, partialOut bool) error {
	// Spelled only on failure, as in matmulCompatible (closures passed in
	// would escape, one allocation each for every op).
	xd := func() string { return describe("X", a.x, a.xm, a.xt, a.transX) }
	yd := func() string { return describe("Y", a.y, a.ym, a.yt, a.transY) }
	od := func() string { return describe("Out", out, om, om, false) }
	fail := func(need string, what func() string) error {
		return fmt.Errorf("%s: %s needs %s; %s", op, name, need, what())
	}
	if strings.TrimSuffix(op.Type, "_grad") == "mul" && (len(a.xm) != 2 || len(a.ym) != 2) {
		return fmt.Errorf("%s: the matmul impls lower a mul of 2-D X and Y only (x_num_col_dims flattens others); X %s has %d dims, Y %s %d",
			op, a.x, len(a.xm), a.y, len(a.ym))
	}
	for _, n := range []string{a.x, a.y, out} {
		if n == out && partialOut {
			continue
		}
		if err := notPartial(ctx, op, name, n); err != nil {
			return err
		}
	}
	rx, ry := len(a.xt), len(a.yt)
	xBatch, yBatch := 0, 0 // the number of batch dims of each operand
	if rx >= 2 {
		xBatch = rx - 2
	}
	if ry >= 2 {
		yBatch = ry - 2
	}
	// Out is [batch..., m (when X has 2 dims or more), n (when Y has)].
	mat := 0
	if rx >= 2 {
		mat++
	}
	if ry >= 2 {
		mat++
	}
	oBatch := len(om) - mat
	if oBatch != max(xBatch, yBatch) {
		return fail(fmt.Sprintf("Out of %d dims for X of %d and Y of %d", max(xBatch, yBatch)+mat, rx, ry), od)
	}
	if rx >= 2 && om[oBatch] != a.xt[rx-2] {
		return fail("Out's rows (its dim -2 or its only matrix dim) split as X's (X's dim -2)", func() string { return xd() + ", " + od() })
	}
	if ry >= 2 && om[len(om)-1] != a.yt[ry-1] {
		return fail("Out's last dim split as Y's", func() string { return yd() + ", " + od() })
	}
	xs, ys := varShape(ctx, a.x), varShape(ctx, a.y)
	for p := 1; p <= oBatch; p++ {
		ob := om[oBatch-p]
		for _, opd := range []struct {
			shape []int64
			mm    []int
			n     int
			d     func() string
		}{{xs, a.xt, xBatch, xd}, {ys, a.yt, yBatch, yd}} {
			if p > opd.n {
				continue
			}
			i := opd.n - p
			if opd.mm[i] == ob {
				continue
			}
			if opd.mm[i] == -1 && i < len(opd.shape) && opd.shape[i] == 1 {
				continue // broadcast
			}
			d := opd.d
			return fail(fmt.Sprintf("Out's batch dim %d split as the operands' batch dims it comes from", oBatch-p),
				func() string { return d() + ", " + od() })
		}
	}
	return nil
}

// varShape returns the shape of var name, or nil.
func varShape(ctx *Lowering, name string) []int64 {
	if v := ctx.Var(name); v != nil {
		return v.Type.Shape
	}
	return nil
}

// matmulColumnForward: c_identity(X) -> tmp over the mp group of Y's
// output dim, then the matmul reading tmp.
func matmulColumnForward(ctx *Lowering, op *ir.Op) error {
	a, _ := readMatmulArgs(ctx, op)
	axis := a.yt[len(a.yt)-1]
	id, _, err := group(ctx, op, axis)
	if err != nil {
		return err
	}
	xv, err := lookupVar(ctx, op, "X", a.x)
	if err != nil {
		return err
	}
	tmp := ctx.NewVar("c_identity.tmp", xv, &ir.TensorDist{Mesh: ctx.Mesh().Name, DimsMapping: a.xm})
	ctx.Emit("c_identity", ctx.Slot("X", a.x), ctx.Slot("Out", tmp.Name()),
		"column-parallel: X replicated to the "+ctx.Mesh().DimNames[axis]+" group (identity forward, allreduce backward)",
		collectiveAttrs(id, true)...)
	renameArg(ctx, op, "X", true, a.x, tmp.Name())
	ctx.Keep(op)
	return SyncParams(ctx, op)
}

// matmulRowForward: the matmul writes a partial Out into tmp, then
// c_allreduce_sum(tmp) -> Out over the mp group of Y's reduction dim;
// an Out whose dist is partial (along that dim: Compatible checked) is
// the matmul's own, and nothing is summed.
func matmulRowForward(ctx *Lowering, op *ir.Op) error {
	a, _ := readMatmulArgs(ctx, op)
	out, _ := slotArg(op, "Out", false)
	if v := ctx.Var(out); v != nil && v.Dist.IsPartial() {
		ctx.Keep(op)
		return SyncParams(ctx, op)
	}
	axis := a.yt[len(a.yt)-2]
	id, _, err := group(ctx, op, axis)
	if err != nil {
		return err
	}
	ov, err := lookupVar(ctx, op, "Out", out)
	if err != nil {
		return err
	}
	tmp := ctx.NewVar("c_allreduce_sum.tmp", ov, tempDist(ctx, out))
	renameArg(ctx, op, "Out", false, out, tmp.Name())
	ctx.Keep(op)
	ctx.Emit("c_allreduce_sum", ctx.Slot("X", tmp.Name()), ctx.Slot("Out", out),
		"row-parallel: partial Out summed over "+ctx.Mesh().DimNames[axis],
		collectiveAttrs(id, true)...)
	return SyncParams(ctx, op)
}

// matmulBackward is the backward of all three impls (the G1 flavour of
// Paddle's right-operand-parameter backward, without the row-parallel
// c_identity marker): when Y is split column-wise,
// the grad op writes X@GRAD into a temp and c_allreduce_sum(temp) ->
// X@GRAD runs over the mp group, before the data-parallel sync of Y@GRAD.
// Row-parallel and unsharded Y: the grad op as is.
func matmulBackward(ctx *Lowering, op *ir.Op) error {
	a, err := readMatmulArgs(ctx, op)
	if err != nil {
		return err
	}
	// Y's matrix dims, after the transpose swap: k (reduction) and n
	// (output). Paddle reads Ydm[0] and Ydm[1]; for a 2-D Y these are
	// the same, and a batched Y keeps its batch dims out of it.
	ydm := a.yt
	k, hasK := at(ydm, -2)
	n, _ := at(ydm, -1)
	xgs := op.Output("X@GRAD")
	// Column split, whether Y is a parameter or not: each rank's X@GRAD
	// is Out@GRAD's columns times its rows of Y^T, a part of the sum
	// (Paddle's G1 sums only for a parameter Y, which leaves an
	// activation Y's X@GRAD partial).
	colParallel := sharded(ydm) && hasK && k < 0 && n >= 0
	if !colParallel || len(xgs) == 0 || xgs[0] == "" {
		ctx.Keep(op)
		return SyncGrads(ctx, op)
	}
	axis := n
	id, _, err := group(ctx, op, axis)
	if err != nil {
		return err
	}
	xg := xgs[0]
	xgv, err := lookupVar(ctx, op, "X@GRAD", xg)
	if err != nil {
		return err
	}
	if xgv.Dist.IsPartial() {
		// The sum makes it whole: parts declared pending would be
		// reduced again.
		return fmt.Errorf("%s: column_parallel sums X@GRAD %s over %s into a whole value, but its dist says %s",
			op, xg, ctx.Mesh().DimNames[axis], xgv.Dist.String())
	}
	tmp := ctx.NewVar("c_identity.tmp", xgv, tempDist(ctx, xg))
	renameArg(ctx, op, "X@GRAD", false, xg, tmp.Name())
	ctx.Keep(op)
	ctx.Emit("c_allreduce_sum", ctx.Slot("X", tmp.Name()), ctx.Slot("Out", xg),
		"column-parallel: X@GRAD summed over "+ctx.Mesh().DimNames[axis],
		collectiveAttrs(id, true)...)
	return SyncGrads(ctx, op)
}
