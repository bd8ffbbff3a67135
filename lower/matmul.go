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

// matmulCompatible holds the op to its sharding rule (ruleFit; the
// row-parallel Out may be whole, its sum being the impl's) and to the
// impl's own constraint, checked on the transpose-swapped mappings:
// matmulColumnFits, matmulRowFits or matmulReplicatedFits.
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
	if strings.TrimSuffix(op.Type, "_grad") == "mul" && (len(a.xm) != 2 || len(a.ym) != 2) {
		return fmt.Errorf("%s: the matmul impls lower a mul of 2-D X and Y only (x_num_col_dims flattens others); X %s has %d dims, Y %s %d",
			op, a.x, len(a.xm), a.y, len(a.ym))
	}
	// The operands are described only on failure: this runs for every op.
	fail := func(need string, what func() string) error {
		return fmt.Errorf("%s: %s needs %s; %s", op, name, need, what())
	}
	if err := [...]func(matmulArgs, string, []int, func(string, func() string) error) error{
		matmulColumnFits, matmulRowFits, matmulReplicatedFits,
	}[impl](a, out, om, fail); err != nil {
		return err
	}
	return ruleFit(ctx, op, ruleOpts{impl: name, reduces: impl == 1, carries: true, spell: true})
}

// matmulColumnFits: Y's last (output) dim split, the reduction dim (X's
// last, Y's second-to-last) replicated; and, as Paddle's
// DistributedMatmulV2Impl0 asks (is_input_compatible,
// is_output_compatible in dist_matmul.py), X's and Out's dims between
// the first and the last replicated.
func matmulColumnFits(a matmulArgs, out string, om []int, fail func(string, func() string) error) error {
	if err := matmulSplitFits(a, out, om, fail); err != nil {
		return err
	}
	x1, _ := at(a.xt, -1)
	y1, _ := at(a.yt, -1)
	y2, _ := at(a.yt, -2)
	switch {
	case x1 != -1:
		return fail("X's last dim replicated", a.xd)
	case y2 != -1:
		return fail("Y's second-to-last dim replicated", a.yd)
	case y1 == -1:
		return fail("Y's last dim sharded", a.yd)
	}
	return nil
}

// matmulRowFits: the reduction dim (X's last, Y's second-to-last) split,
// Y's last dim replicated; and, as Paddle's DistributedMatmulV2Impl1
// asks, X's and Out's dims between the first and the last replicated.
func matmulRowFits(a matmulArgs, out string, om []int, fail func(string, func() string) error) error {
	if err := matmulSplitFits(a, out, om, fail); err != nil {
		return err
	}
	x1, _ := at(a.xt, -1)
	y1, _ := at(a.yt, -1)
	y2, _ := at(a.yt, -2)
	switch {
	case x1 == -1:
		return fail("X's last dim sharded", a.xd)
	case y2 == -1:
		return fail("Y's second-to-last dim sharded", a.yd)
	case y1 != -1:
		return fail("Y's last dim replicated", a.yd)
	}
	return nil
}

// matmulSplitFits is what the column- and row-parallel impls share: Y of
// rank 2 or more, and X's and Out's middle dims replicated (Paddle's).
func matmulSplitFits(a matmulArgs, out string, om []int, fail func(string, func() string) error) error {
	if len(a.yt) < 2 {
		return fail("Y of rank 2 or more", a.yd)
	}
	if !allReplicated(middle(a.xt)) {
		return fail("X's dims between the first and the last replicated", a.xd)
	}
	if !allReplicated(middle(om)) {
		return fail("Out's dims between the first and the last replicated", func() string { return describe("Out", out, om, om, false) })
	}
	return nil
}

// matmulReplicatedFits: the matrix dims (the last two) of X and Y
// replicated; batch dims may be split.
func matmulReplicatedFits(a matmulArgs, _ string, _ []int, fail func(string, func() string) error) error {
	if x1, ok := at(a.xt, -1); ok && x1 != -1 || len(a.xt) >= 2 && a.xt[len(a.xt)-2] != -1 {
		return fail("X's last two dims replicated", a.xd)
	}
	if y1, ok := at(a.yt, -1); ok && y1 != -1 || len(a.yt) >= 2 && a.yt[len(a.yt)-2] != -1 {
		return fail("Y's last two dims replicated", a.yd)
	}
	return nil
}

// xd and yd describe X and Y for messages.
func (a matmulArgs) xd() string { return describe("X", a.x, a.xm, a.xt, a.transX) }
func (a matmulArgs) yd() string { return describe("Y", a.y, a.ym, a.yt, a.transY) }

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
