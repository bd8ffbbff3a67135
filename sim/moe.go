package sim

import (
	"math"
	"slices"

	"github.com/distpass/distpass/ir"
)

// Kernels for the ops of a mixture-of-experts layer: gating (top_k_v2),
// token routing (number_count, limit_by_capacity, prune_gate_by_capacity,
// cumsum, assign_pos, gather, scatter), the experts' batched product
// (grouped_matmul) and integer floor division. Index-like inputs must be
// i32 or i64; every kernel works with zero tokens (0-row tensors).

// intIn returns the single tensor of input slot name, which must have an
// integer dtype (i32 or i64).
func intIn(op *ir.Op, in Args, name string) (*Tensor, error) {
	t, err := one(op, in, name)
	if err != nil {
		return nil, err
	}
	if t.DType != ir.I64 && t.DType != ir.I32 {
		return nil, errf(op, "input %s: dtype %s, want i64 or i32", name, t.DType)
	}
	return t, nil
}

// optOne returns the single tensor of an optional input slot, nil when the
// slot is absent or empty, and an error when it holds more than one.
func optOne(op *ir.Op, in Args, name string) (*Tensor, error) {
	switch ts := in[name]; {
	case len(ts) == 0:
		return nil, nil
	case len(ts) > 1 || ts[0] == nil:
		return nil, errf(op, "input %s: want at most one tensor, have %d", name, len(ts))
	default:
		return ts[0], nil
	}
}

// intAttr returns a required int attr that must be at least lo.
func intAttr(op *ir.Op, name string, lo int64) (int64, error) {
	if !op.Attrs.Has(name) {
		return 0, errf(op, "no %s attr", name)
	}
	v := attrInt(op, name, 0)
	if v < lo {
		return 0, errf(op, "%s = %d, want ≥ %d", name, v, lo)
	}
	return v, nil
}

// vec1 checks that t (input slot name) is 1-D and returns its length.
func vec1(op *ir.Op, t *Tensor, name string) (int64, error) {
	if t.Rank() != 1 {
		return 0, errf(op, "input %s: shape %v, want 1-D", name, t.Shape)
	}
	return t.Shape[0], nil
}

// indexRows checks that index (input slot name) is [M] or [M, 1] and that
// each of its values is a row of a tensor with n rows; it returns the rows.
func indexRows(op *ir.Op, idx *Tensor, name string, n int64) ([]int64, error) {
	if idx.Rank() != 1 && (idx.Rank() != 2 || idx.Shape[1] != 1) {
		return nil, errf(op, "input %s: shape %v, want [M] or [M, 1]", name, idx.Shape)
	}
	rows := make([]int64, len(idx.Data))
	for i, v := range idx.Data {
		r := int64(v)
		if r < 0 || r >= n {
			return nil, errf(op, "%s[%d] = %d out of range [0, %d)", name, i, r, n)
		}
		rows[i] = r
	}
	return rows, nil
}

// rowsShape is shape with its first dim replaced by m.
func rowsShape(shape []int64, m int64) []int64 {
	s := slices.Clone(shape)
	s[0] = m
	return s
}

// topKOrder compares a and b so that the values top_k_v2 picks first sort
// first: descending when largest, ascending otherwise. NaN is greater than
// every number (as in Paddle and PyTorch). Ties compare equal, so a stable
// sort keeps the lower index first.
func topKOrder(largest bool) func(a, b float64) int {
	return func(a, b float64) int {
		c := 0
		switch an, bn := math.IsNaN(a), math.IsNaN(b); {
		case an && bn:
		case an:
			c = 1
		case bn:
			c = -1
		case a < b:
			c = -1
		case a > b:
			c = 1
		}
		if largest {
			return -c
		}
		return c
	}
}

// topKPlan resolves k (a K input, when given, overrides the k attr) and
// the axis of top_k_v2 for x. A 0-D x is a lane of one element.
func topKPlan(op *ir.Op, in Args, x *Tensor) (k int64, ax int, err error) {
	k = attrInt(op, "k", 1)
	kt, err := optOne(op, in, "K")
	if err != nil {
		return 0, 0, err
	}
	if kt != nil {
		if kt.Numel() != 1 {
			return 0, 0, errf(op, "input K: shape %v, want one element", kt.Shape)
		}
		k = int64(kt.Data[0])
	}
	n := int64(1)
	if x.Rank() > 0 {
		if ax, err = normAxis(op, attrInt(op, "axis", -1), x.Rank()); err != nil {
			return 0, 0, err
		}
		n = x.Shape[ax]
	}
	if k < 1 || k > n {
		return 0, 0, errf(op, "k = %d out of range [1, %d] for X %v along axis %d", k, n, x.Shape, ax)
	}
	return k, ax, nil
}

// topKShape is x's shape with the axis dim replaced by k (a 0-D x stays 0-D).
func topKShape(x *Tensor, ax int, k int64) []int64 {
	s := slices.Clone(x.Shape)
	if len(s) > 0 {
		s[ax] = k
	}
	return s
}

// topKLanes calls f for every lane along ax: the offset of the lane's first
// element in X and in the [.., k, ..] outputs, and the stride along ax.
func topKLanes(shape []int64, ax int, k int64, f func(xb, ob, st int64)) {
	if len(shape) == 0 {
		f(0, 0, 1)
		return
	}
	outer, inner, n := numel(shape[:ax]), numel(shape[ax+1:]), shape[ax]
	for o := range outer {
		for i := range inner {
			f(o*n*inner+i, o*k*inner+i, inner)
		}
	}
}

// topK is top_k_v2: along axis, the k largest (largest=false: smallest)
// values and their indices, ties broken by lower index first. sorted=false
// returns the same (sorted) order, which Paddle's unspecified order allows.
func topK(op *ir.Op, in Args) (Args, error) {
	x, err := one(op, in, "X")
	if err != nil {
		return nil, err
	}
	k, ax, err := topKPlan(op, in, x)
	if err != nil {
		return nil, err
	}
	shape := topKShape(x, ax, k)
	out, idx := Zeros(x.DType, shape...), Zeros(ir.I64, shape...)
	n := int64(1)
	if x.Rank() > 0 {
		n = x.Shape[ax]
	}
	cmpf := topKOrder(attrBool(op, "largest", true))
	order := make([]int64, n)
	topKLanes(x.Shape, ax, k, func(xb, ob, st int64) {
		for j := range order {
			order[j] = int64(j)
		}
		slices.SortStableFunc(order, func(a, b int64) int {
			return cmpf(x.Data[xb+a*st], x.Data[xb+b*st])
		})
		for j, src := range order[:k] {
			out.Data[ob+int64(j)*st] = x.Data[xb+src*st]
			idx.Data[ob+int64(j)*st] = float64(src)
		}
	})
	return Args{"Out": {out}, "Indices": {idx}}, nil
}

// topKGrad is top_k_v2_grad: X@GRAD is zero but for Out@GRAD added at the
// Indices positions along axis.
func topKGrad(op *ir.Op, in Args) (Args, error) {
	x, err := one(op, in, "X")
	if err != nil {
		return nil, err
	}
	idx, err := intIn(op, in, "Indices")
	if err != nil {
		return nil, err
	}
	g, err := one(op, in, "Out@GRAD")
	if err != nil {
		return nil, err
	}
	if !slices.Equal(idx.Shape, g.Shape) {
		return nil, errf(op, "Indices shape %v and Out@GRAD shape %v differ", idx.Shape, g.Shape)
	}
	ax, n, k := 0, int64(1), int64(1)
	if x.Rank() > 0 {
		if ax, err = normAxis(op, attrInt(op, "axis", -1), x.Rank()); err != nil {
			return nil, err
		}
		n = x.Shape[ax]
		if g.Rank() == x.Rank() {
			k = g.Shape[ax]
		}
	}
	if want := topKShape(x, ax, k); !slices.Equal(g.Shape, want) || k > n {
		return nil, errf(op, "Out@GRAD shape %v does not fit X %v along axis %d", g.Shape, x.Shape, ax)
	}
	if !wants(op, "X@GRAD") {
		return Args{}, nil
	}
	dx := like(x)
	var bad error
	topKLanes(x.Shape, ax, k, func(xb, ob, st int64) {
		for j := range k {
			o := ob + j*st
			i := int64(idx.Data[o])
			if i < 0 || i >= n {
				if bad == nil {
					bad = errf(op, "Indices[%d] = %d out of range [0, %d)", o, i, n)
				}
				continue
			}
			dx.Data[xb+i*st] += g.Data[o]
		}
	})
	if bad != nil {
		return nil, bad
	}
	return out1("X@GRAD", dx), nil
}

// numberCount is number_count: Out[e] counts the numbers equal to e, for e
// in [0, upper_range); negative numbers (dropped tokens) are skipped.
func numberCount(op *ir.Op, in Args) (Args, error) {
	nums, err := intIn(op, in, "numbers")
	if err != nil {
		return nil, err
	}
	ur, err := intAttr(op, "upper_range", 0)
	if err != nil {
		return nil, err
	}
	out := Zeros(ir.I64, ur)
	for i, v := range nums.Data {
		e := int64(v)
		switch {
		case e < 0:
		case e >= ur:
			return nil, errf(op, "numbers[%d] = %d, want < upper_range %d", i, e, ur)
		default:
			out.Data[e]++
		}
	}
	return out1("Out", out), nil
}

// cumsum sums X along axis (or over all elements in row-major order when
// flatten, giving a 1-D Out). exclusive leaves each element out of its own
// sum; reverse sums from the end.
func cumsum(op *ir.Op, in Args) (Args, error) {
	x, err := one(op, in, "X")
	if err != nil {
		return nil, err
	}
	if x.DType == ir.Boolean {
		return nil, errf(op, "X dtype %s, want a number", x.DType)
	}
	flatten := attrBool(op, "flatten", false)
	shape, ax := x.Shape, 0
	switch {
	case flatten || x.Rank() == 0:
		shape = []int64{x.Numel()}
	default:
		if ax, err = normAxis(op, attrInt(op, "axis", -1), x.Rank()); err != nil {
			return nil, err
		}
	}
	excl, rev := attrBool(op, "exclusive", false), attrBool(op, "reverse", false)
	out := like(x)
	if flatten {
		out.Shape = slices.Clone(shape)
	}
	n := shape[ax]
	lanes(shape, ax, func(base, st int64) {
		s := 0.0
		for i := range n {
			o := base + i*st
			if rev {
				o = base + (n-1-i)*st
			}
			if excl {
				out.Data[o] = s
				s += x.Data[o]
			} else {
				s += x.Data[o]
				out.Data[o] = s
			}
		}
	})
	return out1("Out", out), nil
}

// assignPos is assign_pos: Out lists the flattened slot indices i of X with
// X[i] ≥ 0, by expert X[i] ascending and then by i (a stable, deterministic
// order). cum_count is the inclusive prefix sum of the per-expert counts;
// it must agree with X. eff_num_len, when given, must equal the total.
func assignPos(op *ir.Op, in Args) (Args, error) {
	x, err := intIn(op, in, "X")
	if err != nil {
		return nil, err
	}
	cc, err := intIn(op, in, "cum_count")
	if err != nil {
		return nil, err
	}
	e, err := vec1(op, cc, "cum_count")
	if err != nil {
		return nil, err
	}
	eff, err := optOne(op, in, "eff_num_len")
	if err != nil {
		return nil, err
	}
	count := make([]int64, e)
	for i, v := range x.Data {
		g := int64(v)
		switch {
		case g < 0:
		case g >= e:
			return nil, errf(op, "X[%d] = %d out of range for %d experts (cum_count %v)", i, g, e, cc.Shape)
		default:
			count[g]++
		}
	}
	start := make([]int64, e+1) // start[g]: first output slot of expert g
	for g := range e {
		c := int64(cc.Data[g])
		if n := c - start[g]; n != count[g] {
			return nil, errf(op, "expert %d: cum_count gives %d slots (cum_count[%d] = %d), X routes %d tokens to it", g, n, g, c, count[g])
		}
		start[g+1] = c
	}
	total := start[e]
	if eff != nil {
		if eff.Numel() != 1 || !eff.DType.IsInteger() {
			return nil, errf(op, "input eff_num_len: %s%v, want one integer", eff.DType, eff.Shape)
		}
		if l := int64(eff.Data[0]); l != total {
			return nil, errf(op, "eff_num_len = %d, cum_count total %d", l, total)
		}
	}
	out := Zeros(ir.I64, total)
	next := start[:e]
	for i, v := range x.Data {
		if g := int64(v); g >= 0 {
			out.Data[next[g]] = float64(i)
			next[g]++
		}
	}
	return out1("Out", out), nil
}

// gatherPlan checks gather's and gather_grad's inputs: X with rank ≥ 1,
// Index [M] or [M, 1], axis 0 only.
func gatherPlan(op *ir.Op, in Args) (x *Tensor, rows []int64, err error) {
	x, err = one(op, in, "X")
	if err != nil {
		return nil, nil, err
	}
	idx, err := intIn(op, in, "Index")
	if err != nil {
		return nil, nil, err
	}
	if len(in["Axis"]) > 0 {
		return nil, nil, errf(op, "an Axis input is not supported (only axis 0)")
	}
	if a := attrInt(op, "axis", 0); a != 0 {
		return nil, nil, errf(op, "axis %d not supported (only axis 0)", a)
	}
	if x.Rank() == 0 {
		return nil, nil, errf(op, "X is 0-D, want rank ≥ 1")
	}
	rows, err = indexRows(op, idx, "Index", x.Shape[0])
	return x, rows, err
}

// gather is Out[i] = X[Index[i]] along axis 0.
func gather(op *ir.Op, in Args) (Args, error) {
	x, rows, err := gatherPlan(op, in)
	if err != nil {
		return nil, err
	}
	d := numel(x.Shape[1:])
	out := Zeros(x.DType, rowsShape(x.Shape, int64(len(rows)))...)
	for i, r := range rows {
		copy(out.Data[int64(i)*d:], x.Data[r*d:(r+1)*d])
	}
	return out1("Out", out), nil
}

// gatherGrad scatter-adds the Out@GRAD rows into a zero X@GRAD at Index.
func gatherGrad(op *ir.Op, in Args) (Args, error) {
	x, rows, err := gatherPlan(op, in)
	if err != nil {
		return nil, err
	}
	g, err := one(op, in, "Out@GRAD")
	if err != nil {
		return nil, err
	}
	if want := rowsShape(x.Shape, int64(len(rows))); !slices.Equal(g.Shape, want) {
		return nil, errf(op, "Out@GRAD shape %v, want %v", g.Shape, want)
	}
	if !wants(op, "X@GRAD") {
		return Args{}, nil
	}
	d := numel(x.Shape[1:])
	dx := like(x)
	for i, r := range rows {
		for j := range d {
			dx.Data[r*d+j] += g.Data[int64(i)*d+j]
		}
	}
	return out1("X@GRAD", dx), nil
}

// scatterIds checks scatter's Ids against a tensor of shape xs (X or
// Out@GRAD) and Updates, returning the rows.
func scatterIds(op *ir.Op, in Args, xs []int64) (rows []int64, upd *Tensor, err error) {
	ids, err := intIn(op, in, "Ids")
	if err != nil {
		return nil, nil, err
	}
	upd, err = one(op, in, "Updates")
	if err != nil {
		return nil, nil, err
	}
	if len(xs) == 0 {
		return nil, nil, errf(op, "X is 0-D, want rank ≥ 1")
	}
	if rows, err = indexRows(op, ids, "Ids", xs[0]); err != nil {
		return nil, nil, err
	}
	if want := rowsShape(xs, int64(len(rows))); !slices.Equal(upd.Shape, want) {
		return nil, nil, errf(op, "Updates shape %v, want %v (one row per id)", upd.Shape, want)
	}
	return rows, upd, nil
}

// scatter copies X and writes the Updates rows at Ids: overwrite (later
// rows win), or (overwrite=false) zero the rows at Ids and add every
// Updates row.
func scatter(op *ir.Op, in Args) (Args, error) {
	x, err := one(op, in, "X")
	if err != nil {
		return nil, err
	}
	rows, upd, err := scatterIds(op, in, x.Shape)
	if err != nil {
		return nil, err
	}
	if upd.DType != x.DType {
		return nil, errf(op, "Updates dtype %s, X dtype %s", upd.DType, x.DType)
	}
	d := numel(x.Shape[1:])
	out := x.Clone()
	over := attrBool(op, "overwrite", true)
	if !over {
		for _, r := range rows {
			clear(out.Data[r*d : (r+1)*d])
		}
	}
	for i, r := range rows {
		dst, src := out.Data[r*d:(r+1)*d], upd.Data[int64(i)*d:(int64(i)+1)*d]
		if over {
			copy(dst, src)
			continue
		}
		for j := range dst {
			dst[j] += src[j]
		}
	}
	return out1("Out", out), nil
}

// scatterGrad is X@GRAD = Out@GRAD with the rows at Ids zeroed and
// Updates@GRAD[i] = Out@GRAD[Ids[i]] (both modes; with overwrite and
// duplicate ids this is Paddle's rule, not the exact derivative).
func scatterGrad(op *ir.Op, in Args) (Args, error) {
	g, err := one(op, in, "Out@GRAD")
	if err != nil {
		return nil, err
	}
	rows, upd, err := scatterIds(op, in, g.Shape)
	if err != nil {
		return nil, err
	}
	d := numel(g.Shape[1:])
	out := Args{}
	if wants(op, "X@GRAD") {
		dx := g.Clone()
		for _, r := range rows {
			clear(dx.Data[r*d : (r+1)*d])
		}
		out["X@GRAD"] = []*Tensor{dx}
	}
	if wants(op, "Updates@GRAD") {
		du := Zeros(upd.DType, upd.Shape...)
		for i, r := range rows {
			copy(du.Data[int64(i)*d:], g.Data[r*d:(r+1)*d])
		}
		out["Updates@GRAD"] = []*Tensor{du}
	}
	return out, nil
}

// gmm is a checked grouped_matmul: rows start[e]..start[e+1] of X belong
// to expert e.
type gmm struct {
	x, w    *Tensor
	m, k, p int64
	start   []int64
}

func planGrouped(op *ir.Op, in Args) (*gmm, error) {
	x, err := one(op, in, "X")
	if err != nil {
		return nil, err
	}
	w, err := one(op, in, "W")
	if err != nil {
		return nil, err
	}
	ec, err := intIn(op, in, "ExpertCount")
	if err != nil {
		return nil, err
	}
	if x.Rank() != 2 || w.Rank() != 3 {
		return nil, errf(op, "X %v and W %v: want X [M, K] and W [n, K, P]", x.Shape, w.Shape)
	}
	if x.Shape[1] != w.Shape[1] {
		return nil, errf(op, "X %v and W %v: K differs (%d and %d)", x.Shape, w.Shape, x.Shape[1], w.Shape[1])
	}
	if x.DType != w.DType {
		return nil, errf(op, "X dtype %s, W dtype %s", x.DType, w.DType)
	}
	n := w.Shape[0]
	if n == 0 {
		return nil, errf(op, "W %v has no experts", w.Shape)
	}
	l, err := vec1(op, ec, "ExpertCount")
	if err != nil {
		return nil, err
	}
	if l == 0 || l%n != 0 {
		return nil, errf(op, "ExpertCount length %d is not a positive multiple of the %d experts of W %v", l, n, w.Shape)
	}
	start := make([]int64, n+1)
	for i, v := range ec.Data {
		c := int64(v)
		if c < 0 {
			return nil, errf(op, "ExpertCount[%d] = %d is negative", i, c)
		}
		start[int64(i)%n+1] += c
	}
	for e := range n {
		start[e+1] += start[e]
	}
	if start[n] != x.Shape[0] {
		return nil, errf(op, "ExpertCount sums to %d rows, X has %d (shape %v)", start[n], x.Shape[0], x.Shape)
	}
	return &gmm{x: x, w: w, m: x.Shape[0], k: x.Shape[1], p: w.Shape[2], start: start}, nil
}

// groupedMatmul is grouped_matmul: the rows of X of expert e times W[e].
func groupedMatmul(op *ir.Op, in Args) (Args, error) {
	g, err := planGrouped(op, in)
	if err != nil {
		return nil, err
	}
	out := Zeros(g.x.DType, g.m, g.p)
	for e := range len(g.start) - 1 {
		we := g.w.Data[int64(e)*g.k*g.p:]
		for r := g.start[e]; r < g.start[e+1]; r++ {
			xr, orow := g.x.Data[r*g.k:(r+1)*g.k], out.Data[r*g.p:(r+1)*g.p]
			for l, xv := range xr {
				for j := range orow {
					orow[j] += xv * we[int64(l)*g.p+int64(j)]
				}
			}
		}
	}
	return out1("Out", out), nil
}

// groupedMatmulGrad is X@GRAD[r] = Out@GRAD[r] W[e]ᵀ and W@GRAD[e] = the
// sum over expert e's rows r of X[r]ᵀ Out@GRAD[r] (zero without rows).
func groupedMatmulGrad(op *ir.Op, in Args) (Args, error) {
	g, err := planGrouped(op, in)
	if err != nil {
		return nil, err
	}
	dy, err := one(op, in, "Out@GRAD")
	if err != nil {
		return nil, err
	}
	if want := []int64{g.m, g.p}; !slices.Equal(dy.Shape, want) {
		return nil, errf(op, "Out@GRAD shape %v, want %v", dy.Shape, want)
	}
	var dx, dw *Tensor
	if wants(op, "X@GRAD") {
		dx = like(g.x)
	}
	if wants(op, "W@GRAD") {
		dw = like(g.w)
	}
	for e := range len(g.start) - 1 {
		base := int64(e) * g.k * g.p
		for r := g.start[e]; r < g.start[e+1]; r++ {
			gr := dy.Data[r*g.p : (r+1)*g.p]
			for l := range g.k {
				wo := base + l*g.p
				if dx != nil {
					s := 0.0
					for j, gv := range gr {
						s += gv * g.w.Data[wo+int64(j)]
					}
					dx.Data[r*g.k+l] = s
				}
				if dw != nil {
					xv := g.x.Data[r*g.k+l]
					for j, gv := range gr {
						dw.Data[wo+int64(j)] += xv * gv
					}
				}
			}
		}
	}
	out := Args{}
	if dx != nil {
		out["X@GRAD"] = []*Tensor{dx}
	}
	if dw != nil {
		out["W@GRAD"] = []*Tensor{dw}
	}
	return out, nil
}

// floorDiv is elementwise_floordiv on integers: the quotient rounded
// toward -Inf, as Python's //, with the elementwise broadcasting rule.
func floorDiv(op *ir.Op, in Args) (Args, error) {
	x, err := intIn(op, in, "X")
	if err != nil {
		return nil, err
	}
	y, err := intIn(op, in, "Y")
	if err != nil {
		return nil, err
	}
	if x.DType != y.DType {
		return nil, errf(op, "X dtype %s, Y dtype %s", x.DType, y.DType)
	}
	p, err := planBroadcast(op, x, y)
	if err != nil {
		return nil, err
	}
	out := Zeros(x.DType, p.out...)
	for i := range out.Data {
		a, b := int64(x.Data[p.xi[i]]), int64(y.Data[p.yi[i]])
		if b == 0 {
			return nil, errf(op, "division by zero: Y[%d] is 0 (X[%d] = %d)", p.yi[i], p.xi[i], a)
		}
		q := a / b
		if a%b != 0 && (a < 0) != (b < 0) {
			q--
		}
		out.Data[i] = float64(q)
	}
	return out1("Out", out), nil
}

// limitByCapacity is limit_by_capacity: for each expert e, workers j in
// order take min(expert_count[j*n+e], what is left of capacity[e]).
func limitByCapacity(op *ir.Op, in Args) (Args, error) {
	ec, err := intIn(op, in, "expert_count")
	if err != nil {
		return nil, err
	}
	capT, err := intIn(op, in, "capacity")
	if err != nil {
		return nil, err
	}
	w, err := intAttr(op, "n_worker", 1)
	if err != nil {
		return nil, err
	}
	n, err := vec1(op, capT, "capacity")
	if err != nil {
		return nil, err
	}
	l, err := vec1(op, ec, "expert_count")
	if err != nil {
		return nil, err
	}
	if l != w*n {
		return nil, errf(op, "expert_count length %d, want n_worker %d × %d experts (capacity length) = %d", l, w, n, w*n)
	}
	out := like(ec)
	for e := range n {
		left := int64(capT.Data[e])
		if left < 0 {
			return nil, errf(op, "capacity[%d] = %d is negative", e, left)
		}
		for j := range w {
			i := j*n + e
			c := int64(ec.Data[i])
			if c < 0 {
				return nil, errf(op, "expert_count[%d] = %d is negative", i, c)
			}
			c = min(c, left)
			left -= c
			out.Data[i] = float64(c)
		}
	}
	return out1("Out", out), nil
}

// pruneGate is prune_gate_by_capacity: in flattened order, token i keeps
// its expert g = GateIdx[i] while ExpertCount[g] (a private copy) has room
// left, taking one unit, and gets -1 once it has not; negative g stays -1.
func pruneGate(op *ir.Op, in Args) (Args, error) {
	gi, err := intIn(op, in, "GateIdx")
	if err != nil {
		return nil, err
	}
	ec, err := intIn(op, in, "ExpertCount")
	if err != nil {
		return nil, err
	}
	ne, err := intAttr(op, "n_expert", 1)
	if err != nil {
		return nil, err
	}
	nw, err := intAttr(op, "n_worker", 1)
	if err != nil {
		return nil, err
	}
	l, err := vec1(op, ec, "ExpertCount")
	if err != nil {
		return nil, err
	}
	if l != ne*nw {
		return nil, errf(op, "ExpertCount length %d, want n_worker %d × n_expert %d = %d", l, nw, ne, ne*nw)
	}
	left := slices.Clone(ec.Data)
	out := like(gi)
	for i, v := range gi.Data {
		g := int64(v)
		switch {
		case g < 0:
			out.Data[i] = -1
		case g >= l:
			return nil, errf(op, "GateIdx[%d] = %d out of range [0, %d)", i, g, l)
		case left[g] > 0:
			left[g]--
			out.Data[i] = float64(g)
		default:
			out.Data[i] = -1
		}
	}
	return out1("NewGateIdx", out), nil
}

// moeKernels are the kernels of this file, by op type.
func moeKernels() Kernels {
	return Kernels{
		"top_k_v2": topK, "top_k_v2_grad": topKGrad,
		"gather": gather, "gather_grad": gatherGrad,
		"scatter": scatter, "scatter_grad": scatterGrad,
		"grouped_matmul": groupedMatmul, "grouped_matmul_grad": groupedMatmulGrad,
		"number_count": numberCount, "cumsum": cumsum, "assign_pos": assignPos,
		"limit_by_capacity": limitByCapacity, "prune_gate_by_capacity": pruneGate,
		"elementwise_floordiv": floorDiv,
	}
}
