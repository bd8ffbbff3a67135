package lower

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/ops"
)

// The exactness of the Paddle-style impls: on the 2×2 mesh, for a
// representative op of each, every combination of its args' mappings
// and of the partial states it may meet (Out partial along a mesh dim;
// X partial, for the ops that carry it) is accepted by the impl's
// Compatible exactly when the op's sharding rule fits it and the impl's
// stated constraint holds. Both sides are computed here on their own:
// the rule's verdict from ops.ShardingRuleOf, the constraint from its
// one-line statement in the impl's doc.

// exactArg is one arg of the representative op.
type exactArg struct {
	slot, name string
	shape      []int64
	input      bool
	ids        bool // integer data
}

// exactCase is an impl's representative op and its stated constraint,
// over the args' mappings by name (the matmul's transposes are off).
type exactCase struct {
	name    string
	impl    *Impl
	op      string
	attrs   []ir.Attr
	args    []exactArg
	partial []string // the args that may be declared partial
	// fixed maps the args not varied (to keep the product small).
	fixed map[string][]int
	// none marks a case whose rule and constraint accept nothing: the
	// exactness is that the impl refuses every combination.
	none bool
	fits func(m map[string][]int, p map[string][]ir.Partial) bool
}

func exactCases() []exactCase {
	last := func(m []int, i int) int { v, _ := at(m, i); return v }
	rep := allReplicated
	mmArgs := func(xs, ys, os []int64) []exactArg {
		return []exactArg{{"X", "x", xs, true, false}, {"Y", "w", ys, true, false}, {"Out", "out", os, false, false}}
	}
	// Shared by column and row: Paddle's middle dims of X and Out.
	middles := func(m map[string][]int) bool {
		return len(m["w"]) >= 2 && rep(middle(m["x"])) && rep(middle(m["out"]))
	}
	column := func(m map[string][]int, _ map[string][]ir.Partial) bool {
		return middles(m) && last(m["x"], -1) == -1 && last(m["w"], -2) == -1 && last(m["w"], -1) != -1
	}
	row := func(m map[string][]int, _ map[string][]ir.Partial) bool {
		return middles(m) && last(m["x"], -1) != -1 && last(m["w"], -2) != -1 && last(m["w"], -1) == -1
	}
	replicated := func(m map[string][]int, _ map[string][]ir.Partial) bool {
		two := func(a []int) []int { return a[max(0, len(a)-2):] }
		return rep(two(m["x"])) && rep(two(m["w"]))
	}
	none := func(map[string][]int, map[string][]ir.Partial) bool { return true }
	var cs []exactCase
	noTrans := []ir.Attr{ir.A("trans_x", ir.Bool(false)), ir.A("trans_y", ir.Bool(false))}
	for _, sh := range [][3][]int64{{{4, 4}, {4, 8}, {4, 8}}, {{4, 4, 4}, {4, 8}, {4, 4, 8}}, {{4, 4, 4}, {4, 4, 8}, {4, 4, 8}}} {
		for i, fits := range []func(map[string][]int, map[string][]ir.Partial) bool{column, row, replicated} {
			impl := [...]*Impl{MatmulColumn(), MatmulRow(), MatmulReplicated()}[i]
			cs = append(cs, exactCase{name: fmt.Sprintf("matmul_v2:%d x%d y%d", i, len(sh[0]), len(sh[1])), impl: impl, op: "matmul_v2",
				attrs: noTrans, args: mmArgs(sh[0], sh[1], sh[2]), partial: []string{"out"}, fits: fits})
		}
	}
	for i, fits := range []func(map[string][]int, map[string][]ir.Partial) bool{column, row, replicated} {
		impl := [...]*Impl{MatmulColumn(), MatmulRow(), MatmulReplicated()}[i]
		cs = append(cs, exactCase{name: fmt.Sprintf("mul:%d", i), impl: impl, op: "mul",
			attrs:   []ir.Attr{ir.A("x_num_col_dims", ir.Int(1)), ir.A("y_num_col_dims", ir.Int(1))},
			args:    mmArgs([]int64{4, 4}, []int64{4, 8}, []int64{4, 8}),
			partial: []string{"out"}, fits: fits})
	}
	vocab := func(m map[string][]int, p map[string][]ir.Partial) bool {
		return m["w"][0] != -1 && last(m["w"], -1) == -1 && rep(m["ids"][1:]) && len(p["out"]) == 0
	}
	embArgs := []exactArg{{"Ids", "ids", []int64{4, 4}, true, true}, {"W", "w", []int64{8, 4}, true, false}, {"Out", "out", []int64{4, 4, 4}, false, false}}
	cs = append(cs,
		exactCase{name: "lookup_table_v2:0", impl: EmbeddingVocabParallel(), op: "lookup_table_v2",
			attrs: []ir.Attr{ir.A("padding_idx", ir.Int(-1))}, args: embArgs, partial: []string{"out"}, fits: vocab},
		// With a padding_idx the rule keeps the vocabulary whole (each
		// rank's c_embedding would look the padding row up, not zero it).
		exactCase{name: "lookup_table_v2:0 padding_idx 0", impl: EmbeddingVocabParallel(), op: "lookup_table_v2",
			attrs: []ir.Attr{ir.A("padding_idx", ir.Int(0))}, args: embArgs, partial: []string{"out"}, fits: vocab, none: true},
		exactCase{name: "elementwise:0 add+bias", impl: Elementwise(), op: "elementwise_add", attrs: []ir.Attr{ir.A("axis", ir.Int(-1))},
			args:    []exactArg{{"X", "x", []int64{4, 8}, true, false}, {"Y", "b", []int64{8}, true, false}, {"Out", "out", []int64{4, 8}, false, false}},
			partial: []string{"x", "out"}, fits: none},
		exactCase{name: "elementwise:0 add broadcast", impl: Elementwise(), op: "elementwise_add", attrs: []ir.Attr{ir.A("axis", ir.Int(-1))},
			args:    []exactArg{{"X", "x", []int64{4, 1, 8}, true, false}, {"Y", "y", []int64{4, 4, 8}, true, false}, {"Out", "out", []int64{4, 4, 8}, false, false}},
			partial: []string{"out"}, fits: none},
		exactCase{name: "elementwise:0 scale", impl: Elementwise(), op: "scale", attrs: []ir.Attr{ir.A("scale", ir.Float(2)), ir.A("bias", ir.Float(0))},
			args:    []exactArg{{"X", "x", []int64{4, 8}, true, false}, {"Out", "out", []int64{4, 8}, false, false}},
			partial: []string{"x", "out"}, fits: none},
		exactCase{name: "elementwise:0 relu", impl: Elementwise(), op: "relu",
			args:    []exactArg{{"X", "x", []int64{4, 4, 8}, true, false}, {"Out", "out", []int64{4, 4, 8}, false, false}},
			partial: []string{"x", "out"}, fits: none},
	)
	cs = append(cs, exactCase{name: "grouped_matmul:0", impl: GroupedMatmulExpert(), op: "grouped_matmul",
		args: []exactArg{{"X", "xr", []int64{8, 4}, true, false}, {"W", "w", []int64{4, 4, 8}, true, false},
			{"ExpertCount", "gc", []int64{4}, true, true}, {"Out", "h", []int64{8, 8}, false, false}},
		partial: []string{"h"},
		fits: func(m map[string][]int, _ map[string][]ir.Partial) bool {
			return m["w"][1] == -1 && m["w"][2] == -1 && m["xr"][1] == -1 && m["h"][1] == -1
		}})
	// Batch norm: X, Scale and Y varied, the statistics replicated.
	bn := exactCase{name: "batch_norm:0", impl: SyncBatchNorm(), op: "batch_norm",
		attrs: []ir.Attr{ir.A("is_test", ir.Bool(false)), ir.A("data_layout", ir.String("NCHW"))},
		fixed: map[string][]int{}, partial: []string{"y"},
		fits: func(m map[string][]int, _ map[string][]ir.Partial) bool { return m["x"][0] != -1 && m["x"][1] == -1 }}
	for _, a := range []struct {
		slot, name string
		nchw, in   bool
	}{{"X", "x", true, true}, {"Scale", "scale", false, true}, {"Bias", "bias", false, true}, {"Mean", "mean", false, true},
		{"Variance", "var", false, true}, {"Y", "y", true, false}, {"MeanOut", "mean", false, false},
		{"VarianceOut", "var", false, false}, {"SavedMean", "smean", false, false}, {"SavedVariance", "svar", false, false}} {
		shape := []int64{4}
		if a.nchw {
			shape = []int64{4, 4, 2, 2}
		} else if a.name != "scale" {
			bn.fixed[a.name] = []int{-1}
		}
		bn.args = append(bn.args, exactArg{a.slot, a.name, shape, a.in, false})
	}
	cs = append(cs, bn)
	softmax := func(axis int) func(map[string][]int, map[string][]ir.Partial) bool {
		return func(m map[string][]int, _ map[string][]ir.Partial) bool {
			return last(m["x"], axis) == -1 && last(m["out"], axis) == -1
		}
	}
	cs = append(cs,
		exactCase{name: "softmax:0 axis -1", impl: SoftmaxReplicateLastAxis(), op: "softmax", attrs: []ir.Attr{ir.A("axis", ir.Int(-1))},
			args:    []exactArg{{"X", "x", []int64{4, 4, 8}, true, false}, {"Out", "out", []int64{4, 4, 8}, false, false}},
			partial: []string{"x", "out"}, fits: softmax(-1)},
		exactCase{name: "softmax:0 axis 1", impl: SoftmaxReplicateLastAxis(), op: "softmax", attrs: []ir.Attr{ir.A("axis", ir.Int(1))},
			args:    []exactArg{{"X", "x", []int64{4, 4, 8}, true, false}, {"Out", "out", []int64{4, 4, 8}, false, false}},
			partial: []string{"x", "out"}, fits: softmax(-2)},
		exactCase{name: "transpose2:0 [0, 2, 1]", impl: TransposeSameMapping(), op: "transpose2", attrs: []ir.Attr{ir.A("axis", ir.Ints{0, 2, 1})},
			args: []exactArg{{"X", "x", []int64{4, 4, 8}, true, false}, {"Out", "out", []int64{4, 8, 4}, false, false},
				{"XShape", "xs", []int64{0, 4, 4, 8}, false, false}},
			partial: []string{"x", "out"}, fits: none},
	)
	reshape := func(kind int, shape []int64, xs, os []int64) exactCase {
		fits := func(m map[string][]int, _ map[string][]ir.Partial) bool {
			x, o := m["x"], m["out"]
			switch kind {
			case 0:
				return len(o) == len(x)+1 && o[len(o)-1] == -1 && slices.Equal(x, o[:len(x)])
			case 1:
				return len(x) == len(o)+1 && x[len(x)-1] == -1 && slices.Equal(x[:len(o)], o)
			}
			return slices.Equal(x, o)
		}
		impl := [...]*Impl{ReshapeAddOneDimBack(), ReshapeRemoveOneDimBack(), ReshapeSameDimShape()}[kind]
		return exactCase{name: fmt.Sprintf("reshape2:%d %v -> %v", kind, xs, os), impl: impl, op: "reshape2",
			attrs: []ir.Attr{ir.A("shape", ir.Ints(shape))},
			args: []exactArg{{"X", "x", xs, true, false}, {"Out", "out", os, false, false},
				{"XShape", "xs", append([]int64{0}, xs...), false, false}},
			partial: []string{"x", "out"}, fits: fits}
	}
	cs = append(cs,
		reshape(0, []int64{4, 8, 1}, []int64{4, 8}, []int64{4, 8, 1}),
		reshape(1, []int64{4, 8}, []int64{4, 8, 1}, []int64{4, 8}),
		reshape(2, []int64{8, 4}, []int64{4, 8}, []int64{8, 4}),
		reshape(2, []int64{4, 8, 4}, []int64{4, 4, 8}, []int64{4, 8, 4}),
		reshape(2, []int64{2, 2, 8}, []int64{4, 8, 1}, []int64{2, 2, 8}),
	)
	return cs
}

// exactMappings returns every dims_mapping of a rank-r tensor on a mesh
// of dims mesh dims: each entry -1 or a mesh dim, none twice.
func exactMappings(r, dims int) [][]int {
	out := [][]int{{}}
	for range r {
		var next [][]int
		for _, m := range out {
			for a := -1; a < dims; a++ {
				if a < 0 || !slices.Contains(m, a) {
					next = append(next, append(slices.Clone(m), a))
				}
			}
		}
		out = next
	}
	return out
}

// exactCombo is one combination: each arg's mapping, and the partial
// state of the args declared partial.
type exactCombo struct {
	m map[string][]int
	p map[string][]ir.Partial
}

func (c exactCase) combos(dims int) []exactCombo {
	out := []exactCombo{{m: map[string][]int{}, p: map[string][]ir.Partial{}}}
	for _, a := range c.args {
		var next []exactCombo
		for _, x := range out {
			dms := exactMappings(len(a.shape), dims)
			if f, ok := c.fixed[a.name]; ok {
				dms = [][]int{f}
			}
			for _, dm := range dms {
				y := exactCombo{m: clone(x.m), p: clone(x.p)}
				y.m[a.name] = dm
				next = append(next, y)
			}
		}
		out = next
	}
	for _, name := range c.partial {
		var next []exactCombo
		for _, x := range out {
			next = append(next, x)
			for d := range dims {
				if slices.Contains(x.m[name], d) {
					continue
				}
				y := exactCombo{m: x.m, p: clone(x.p)}
				y.p[name] = []ir.Partial{{Dim: d, Reduce: ir.ReduceSum}}
				next = append(next, y)
			}
		}
		out = next
	}
	return out
}

func clone[V any](m map[string]V) map[string]V {
	c := make(map[string]V, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

func (c exactCase) spell(x exactCombo) string {
	var parts []string
	for _, a := range c.args {
		s := a.name + "=" + ir.FormatInts(x.m[a.name])
		if p := x.p[a.name]; len(p) > 0 {
			s += " partial " + ir.FormatPartial(p)
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, " ")
}

// build declares the args as combination x maps them and the op.
func (c exactCase) build(x exactCombo) func(b *ir.Builder) *ir.Op {
	return func(b *ir.Builder) *ir.Op {
		var ins, outs []string
		declared := map[string]bool{}
		for _, a := range c.args {
			if a.input {
				ins = append(ins, a.slot, a.name)
			} else {
				outs = append(outs, a.slot, a.name)
			}
			if declared[a.name] {
				continue // an in-place output (batch norm's MeanOut)
			}
			declared[a.name] = true
			dt := ir.F32
			if a.ids {
				dt = ir.I64
			}
			v := b.Var(a.name, ir.Tensor(dt, a.shape...)).WithDist("world", x.m[a.name]...)
			for _, p := range x.p[a.name] {
				v.WithPartial(p.Dim, p.Reduce)
			}
		}
		typ := c.op
		if strings.HasPrefix(c.name, "elementwise") {
			typ = ElementwiseType
		}
		return b.Annotate(b.Op(c.op, ir.Slots(ins...), ir.Slots(outs...), c.attrs...), typ, 0)
	}
}

// ruleAccepts is the rule's verdict on op, computed apart from the
// impls: the inputs a fixpoint of the rule's Forward, the outputs as it
// maps them (replicated where it leaves them free), each output partial
// as it says (or whole, for an impl that reduces), X's partial state
// carried into Out by an op that passes it and no other input partial.
func ruleAccepts(ctx *Lowering, op *ir.Op, reduces bool) bool {
	rule, err := ops.ShardingRuleOf(op, ctx.Var)
	if err != nil || rule == nil {
		return false
	}
	var in, out [][]int
	var outSlots []string
	var outParts [][]ir.Partial
	var carried []ir.Partial
	for _, s := range op.Inputs {
		for _, a := range s.Args {
			m, _ := op.Dist.InputMapping(a)
			in = append(in, m)
			if p := ctx.Var(a).Dist.Partial; len(p) > 0 {
				if s.Name != "X" || !ops.PassesPartial(op, p) {
					return false
				}
				carried = p
			}
		}
	}
	for _, s := range op.Outputs {
		for _, a := range s.Args {
			m, _ := op.Dist.OutputMapping(a)
			out = append(out, m)
			outSlots = append(outSlots, s.Name)
			outParts = append(outParts, ctx.Var(a).Dist.Partial)
		}
	}
	sh, err := rule.Forward(ctx.Mesh().Shape, in)
	if err != nil {
		return false
	}
	orRep := func(ms [][]int, i int, like []int) []int {
		if i < len(ms) && ms[i] != nil {
			return ms[i]
		}
		return slices.Repeat([]int{-1}, len(like))
	}
	for i, m := range in {
		if !slices.Equal(orRep(sh.Inputs, i, m), m) {
			return false
		}
	}
	for j, m := range out {
		if !slices.Equal(orRep(sh.Outputs, j, m), m) {
			return false
		}
		var want []ir.Partial
		if j < len(sh.Partial) {
			want = slices.Clone(sh.Partial[j])
		}
		if outSlots[j] == "Out" {
			want = append(want, carried...)
		}
		have := outParts[j]
		if !(slices.Equal(want, have) || reduces && len(want) > 0 && len(have) == 0 && len(carried) == 0) {
			return false
		}
	}
	return true
}

// IMPLS_EXACT_DUMP=file writes each combination's verdict to file
// instead of judging it: run at two revisions and diff the files to list
// where two versions of the impls disagree.
func TestImplsExact(t *testing.T) {
	dump := os.Getenv("IMPLS_EXACT_DUMP")
	var sb strings.Builder
	for _, c := range exactCases() {
		accepted := 0
		for _, x := range c.combos(2) {
			m, b := testModule()
			op := c.build(x)(b)
			if err := b.Err(); err != nil {
				t.Fatalf("%s %s: build: %v", c.name, c.spell(x), err)
			}
			buildGroups(m)
			ctx := newLowering(m, 0, m.Main.Global(), newState())
			ctx.begin(op, m.Mesh(op.Dist.Mesh), "t", 0)
			err := c.impl.Compatible(ctx, op)
			if err == nil {
				accepted++
			}
			if dump != "" {
				fmt.Fprintf(&sb, "%s | %s | %v\n", c.name, c.spell(x), err == nil)
				continue
			}
			want := ruleAccepts(ctx, op, c.impl.Reduces) && c.fits(x.m, x.p)
			switch {
			case want && err != nil:
				t.Errorf("%s: %s: the rule fits and the constraint holds, but the impl refuses: %v", c.name, c.spell(x), err)
			case !want && err == nil:
				t.Errorf("%s: %s: the impl accepts what the rule or the constraint refuses", c.name, c.spell(x))
			}
		}
		if accepted == 0 && !c.none {
			t.Errorf("%s: no combination is accepted", c.name)
		}
	}
	if dump != "" {
		if err := os.WriteFile(dump, []byte(sb.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
