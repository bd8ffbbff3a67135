package passes

import (
	"fmt"
	"slices"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/ops"
)

// AnnotateTensorParallelPass annotates the weights of a transformer's
// MLPs and attention output projections by pattern, Megatron's way: an
// MLP's first matmul column-parallel, its second and an attention's
// projection row-parallel, so that the activation (the heads) before
// them stays split and one all-reduce joins their partial sums.
func AnnotateTensorParallelPass() *Pass {
	return &Pass{
		Name: "annotate-tensor-parallel",
		Doc: `annotate the MLPs and attention projections for tensor parallelism, by pattern
An MLP is a matmul_v2 (or matmul, without transposes) of an activation
and a 2-D trainable param W1, an optional elementwise_add of a 1-D
param b1, one unary elementwise op with a gradient (the activation:
gelu, swish, relu, ...), an optional dropout, and a matmul of that and
a 2-D trainable param W2. Each gets W1 @MESH[-1, axis] (its columns
split), b1 @MESH[axis] and W2 @MESH[axis, -1] (its rows split): the
activation between them stays split along axis, the second matmul's
output is partial, summed by one all-reduce. Params with a dist already
are left as they are (and their MLP with them). An attention block's
output projection is a matmul of a 2-D trainable param Wo reading the
heads merged back (reshape2 of transpose2) from the attention-weighted
values (a matmul reading a softmax, or its dropout): Wo gets @MESH[axis,
-1], and completion splits the heads before it alike (the q, k and v
cut from a replicated projection locally). A fused q/k/v projection
whose output is reshaped as [.., 3, heads, head_dim] stays whole: a
column block of it is not a block of heads. The mesh is mesh=NAME,
declared, with a dim named axis; each split dim must divide by its
size. Finding neither pattern is an error. Run it before append-backward
(the grads take the params' dists), then complete infers every other
dist. Counts annotated (MLPs and projections).`,
		Options: []Option{
			{Name: "mesh", Kind: OptString, Default: "world", Doc: "the declared mesh"},
			{Name: "axis", Kind: OptString, Default: "mp", Doc: "the mesh dim to split the MLPs along"},
		},
		Run: func(ctx *Context, m *ir.Module) error {
			n, err := AnnotateTensorParallel(m, ctx.String("mesh"), ctx.String("axis"))
			ctx.Count("annotated", n)
			return err
		},
	}
}

// AnnotateTensorParallel is the annotate-tensor-parallel pass: it
// returns the MLPs and attention projections it annotated. On error the
// module is unchanged.
func AnnotateTensorParallel(m *ir.Module, meshName, axisName string) (int, error) {
	if m.Main == nil || len(m.Main.Blocks) == 0 {
		return 0, fmt.Errorf("no main program")
	}
	pm := m.Mesh(meshName)
	if pm == nil {
		return 0, fmt.Errorf("mesh=%s: no such mesh is declared (annotate{mesh=...} declares one)", meshName)
	}
	axis := pm.DimIndex(axisName)
	if axis < 0 {
		return 0, fmt.Errorf("axis=%s: mesh %s has dims %v", axisName, meshName, pm.DimNames)
	}
	g := m.Main.Global()
	readers := map[string][]*ir.Op{}
	for _, op := range g.Ops {
		for a := range op.InputNames {
			readers[a] = append(readers[a], op)
		}
	}
	// next is the one op that reads v, when exactly one does.
	next := func(v string) *ir.Op {
		if rs := readers[v]; len(rs) == 1 {
			return rs[0]
		}
		return nil
	}
	param := func(name string, rank int) *ir.Var {
		v := g.Var(name)
		if v == nil || v.Kind != ir.KindParam || !v.Has(ir.FlagTrainable) || v.Dist != nil || v.Type.Rank() != rank {
			return nil
		}
		return v
	}
	// An MLP's fc1 (w1, b1) and fc2 (w2); an attention block's output
	// projection is w2 alone.
	type mlp struct{ w1, b1, w2 *ir.Var }
	var found []mlp
	for _, op := range g.Ops {
		w1 := plainMatmulWeight(op, param)
		if w1 == nil {
			continue
		}
		h := firstArg(op.Output("Out"))
		var b1 *ir.Var
		cur := next(h)
		if cur != nil && cur.Type == "elementwise_add" && firstArg(cur.Input("X")) == h {
			if b1 = param(firstArg(cur.Input("Y")), 1); b1 == nil {
				continue
			}
			h = firstArg(cur.Output("Out"))
			cur = next(h)
		}
		if cur == nil || !isActivation(cur) {
			continue
		}
		h = firstArg(cur.Output("Out"))
		cur = next(h)
		if cur != nil && cur.Type == "dropout" {
			h = firstArg(cur.Output("Out"))
			cur = next(h)
		}
		if cur == nil || firstArg(cur.Input("X")) != h {
			continue
		}
		w2 := plainMatmulWeight(cur, param)
		if w2 == nil {
			continue
		}
		found = append(found, mlp{w1, b1, w2})
	}
	// The attention blocks' output projections: a matmul of a 2-D param
	// reading the heads merged back (reshape2 of transpose2) from the
	// attention-weighted values (a matmul of a softmax, or of its
	// dropout). Its rows split, the heads before it are split alike.
	writer := map[string]*ir.Op{}
	for _, op := range g.Ops {
		for a := range op.OutputNames {
			writer[a] = op
		}
	}
	from := func(op *ir.Op, slot string, types ...string) *ir.Op {
		if op == nil {
			return nil
		}
		w := writer[firstArg(op.Input(slot))]
		if w == nil || !slices.Contains(types, w.Type) {
			return nil
		}
		return w
	}
	for _, op := range g.Ops {
		wo := plainMatmulWeight(op, param)
		if wo == nil {
			continue
		}
		av := from(from(from(op, "X", "reshape2"), "X", "transpose2"), "X", "matmul_v2", "matmul")
		probs := from(av, "X", "softmax", "dropout")
		if probs != nil && probs.Type == "dropout" {
			probs = from(probs, "X", "softmax")
		}
		if probs == nil {
			continue
		}
		found = append(found, mlp{w2: wo})
	}
	if len(found) == 0 {
		return 0, fmt.Errorf("no MLP or attention output projection found: matmul of a 2-D param, [bias add], activation, [dropout], matmul of a 2-D param; or a matmul of a 2-D param reading reshape2(transpose2(matmul(softmax, ...)))")
	}
	n := int64(pm.Shape[axis])
	split := func(v *ir.Var, dims ...int) error {
		if d := v.Type.Shape[dimOf(dims, axis)]; d < 0 || d%n != 0 {
			return fmt.Errorf("param %s %s: its dim %d does not split over mesh dim %s of size %d", v.Name(), v.Type, dimOf(dims, axis), axisName, n)
		}
		return nil
	}
	for _, f := range found {
		for _, c := range []struct {
			v    *ir.Var
			dims []int
		}{{f.w1, []int{-1, axis}}, {f.b1, []int{axis}}, {f.w2, []int{axis, -1}}} {
			if c.v == nil {
				continue
			}
			if err := split(c.v, c.dims...); err != nil {
				return 0, err
			}
		}
	}
	for _, f := range found {
		if f.w1 != nil {
			f.w1.Dist = &ir.TensorDist{Mesh: meshName, DimsMapping: []int{-1, axis}}
		}
		if f.b1 != nil {
			f.b1.Dist = &ir.TensorDist{Mesh: meshName, DimsMapping: []int{axis}}
		}
		f.w2.Dist = &ir.TensorDist{Mesh: meshName, DimsMapping: []int{axis, -1}}
	}
	return len(found), nil
}

// dimOf is the index of mesh dim axis in a dims mapping.
func dimOf(dims []int, axis int) int {
	for i, d := range dims {
		if d == axis {
			return i
		}
	}
	return 0
}

// plainMatmulWeight returns the param Y of a matmul without transposes
// (matmul_v2, matmul), as param finds it, or nil.
func plainMatmulWeight(op *ir.Op, param func(string, int) *ir.Var) *ir.Var {
	if op.Type != "matmul_v2" && op.Type != "matmul" {
		return nil
	}
	for _, t := range []string{"trans_x", "trans_y", "transpose_X", "transpose_Y"} {
		if ops.AttrOn(op, t) {
			return nil
		}
	}
	return param(firstArg(op.Input("Y")), 2)
}

// isActivation reports whether op is a unary elementwise op with a
// gradient, reading one X.
func isActivation(op *ir.Op) bool {
	d := ops.Lookup(op.Type)
	if d == nil || d.Grad == nil || !ops.Has(op.Type, ops.Elementwise) || len(op.Input("X")) != 1 {
		return false
	}
	for _, s := range op.Inputs {
		if s.Name != "X" && len(s.Args) > 0 {
			return false
		}
	}
	return true
}
