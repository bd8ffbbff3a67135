package lower

import (
	"testing"

	"github.com/distpass/distpass/ir"
)

// addBuild: x [2, 6, 8] + param b [8] -> y, with the given mappings.
func addBuild(xm, bm, ym []int) func(b *ir.Builder) *ir.Op {
	return func(b *ir.Builder) *ir.Op {
		b.Var("x", f32(2, 6, 8)).WithDist("world", xm...)
		b.Param("b", f32(8)).WithDist("world", bm...)
		b.Var("y", f32(2, 6, 8)).WithDist("world", ym...)
		op := b.Op("elementwise_add", ir.Slots("X", "x", "Y", "b"), ir.Slots("Out", "y"), ir.A("axis", ir.Int(-1)))
		return b.Annotate(op, "elementwise", 0)
	}
}

func addGradBuild(b *ir.Builder) *ir.Op {
	b.Var("x", f32(2, 6, 8)).WithDist("world", 0, -1, 1)
	b.Param("b", f32(8)).WithDist("world", 1)
	b.Var("y@GRAD", f32(2, 6, 8)).WithDist("world", 0, -1, 1)
	b.Var("x@GRAD", f32(2, 6, 8)).WithDist("world", 0, -1, 1)
	b.Var("b@GRAD", f32(8)).WithDist("world", 1)
	op := b.Op("elementwise_add_grad", ir.Slots("X", "x", "Y", "b", "Out@GRAD", "y@GRAD"), ir.Slots("X@GRAD", "x@GRAD", "Y@GRAD", "b@GRAD"),
		ir.A("axis", ir.Int(-1)))
	op.WithRole(ir.RoleBackward).WithFwd(7)
	return b.Annotate(op, "elementwise", 0)
}

func TestElementwise(t *testing.T) {
	impl := Elementwise()
	runLoweringCases(t, []loweringCase{{
		name:     "elementwise_add_forward",
		build:    addBuild([]int{0, -1, 1}, []int{1}, []int{0, -1, 1}),
		implType: "elementwise", fn: impl.Forward,
		want: map[int]lowering{
			0: {
				Main: []string{
					"op 1 elementwise_add(X: x, Y: b) -> (Out: y) {axis = -1} role forward dist @world impl elementwise:0 [x: [0, -1, 1], b: [1] -> y: [0, -1, 1]]",
				},
				Startup: []string{
					"op 2 c_broadcast(X: b) -> (Out: b) {origin = \"elementwise:0 init sync: broadcast b from root 0 over dp\", origin_op = 1, ring_id = 1, root = 0, use_calc_stream = true} role forward dist @world impl elementwise:0 [b: [1] -> b: [1]]",
				},
			},
			3: {
				Main: []string{
					"op 1 elementwise_add(X: x, Y: b) -> (Out: y) {axis = -1} role forward dist @world impl elementwise:0 [x: [0, -1, 1], b: [1] -> y: [0, -1, 1]]",
				},
				Startup: []string{
					"op 2 c_broadcast(X: b) -> (Out: b) {origin = \"elementwise:0 init sync: broadcast b from root 0 over dp\", origin_op = 1, ring_id = 2, root = 0, use_calc_stream = true} role forward dist @world impl elementwise:0 [b: [1] -> b: [1]]",
				},
			},
		},
	}, {
		name:     "elementwise_add_backward",
		build:    addGradBuild,
		implType: "elementwise", fn: impl.Backward, state: lossGradSeen,
		want: map[int]lowering{
			2: {
				Main: []string{
					"op 1 elementwise_add_grad(X: x, Y: b, Out@GRAD: y@GRAD) -> (X@GRAD: x@GRAD, Y@GRAD: b@GRAD) {axis = -1} role backward fwd 7 dist @world impl elementwise:0 [x: [0, -1, 1], b: [1], y@GRAD: [0, -1, 1] -> x@GRAD: [0, -1, 1], b@GRAD: [1]]",
					"op 2 c_allreduce_sum(X: b@GRAD) -> (Out: b@GRAD) {origin = \"elementwise:0 data-parallel: b@GRAD summed over dp\", origin_op = 1, ring_id = 1, use_calc_stream = true} role backward dist @world impl elementwise:0 [b@GRAD: [1] -> b@GRAD: [1]]",
					"op 3 scale(X: b@GRAD) -> (Out: b@GRAD) {bias = 0.0, bias_after_scale = true, origin = \"elementwise:0 data-parallel: b@GRAD averaged over dp\", origin_op = 1, scale = 0.5} role backward dist @world impl elementwise:0 [b@GRAD: [1] -> b@GRAD: [1]]",
				},
			},
		},
	}})
}

func TestElementwiseCompatible(t *testing.T) {
	impl := Elementwise()
	for _, c := range []struct {
		name  string
		build func(b *ir.Builder) *ir.Op
		err   string
	}{
		{"aligned", addBuild([]int{0, -1, 1}, []int{1}, []int{0, -1, 1}), ""},
		// Each rank holds half of x's last dim and all of b: the blocks
		// do not line up (the old check took -1 as fitting anything).
		{"bias replicated", addBuild([]int{0, -1, 1}, []int{-1}, []int{0, -1, 1}),
			"op 1 elementwise_add: elementwise needs Y b split [1] as its rule abc,c->abc gives; its dist says [-1] (the rule merges X x [0, -1, 1], Y b [-1])"},
		{"all replicated", addBuild([]int{-1, -1, -1}, []int{-1}, []int{-1, -1, -1}), ""},
		{"bias on another axis", addBuild([]int{-1, -1, 1}, []int{0}, []int{-1, -1, 1}),
			"op 1 elementwise_add: elementwise: its rule abc,c->abc refuses the mappings: rule abc,c->abc: dim \"c\" is sharded along two mesh dims, 1 and 0"},
		{"out differs", addBuild([]int{0, -1, -1}, []int{-1}, []int{1, -1, -1}),
			"op 1 elementwise_add: elementwise needs Out y [0, -1, -1] and not partial as its rule abc,c->abc gives; its dist says [1, -1, -1] and not partial"},
		{"axis out of range", addBuild([]int{0, -1, 3}, []int{-1}, []int{0, -1, 1}),
			"op 1 elementwise_add: elementwise: X x: dims_mapping [0, -1, 3]: entry 2 is 3, out of range for a mesh of 2 dims"},
		{"axis used twice", addBuild([]int{1, -1, 1}, []int{1}, []int{0, -1, 1}),
			"op 1 elementwise_add: elementwise: X x: dims_mapping [1, -1, 1] uses mesh dim 1 twice"},
		{"axis used twice, not in a row", addBuild([]int{0, -1, 1}, []int{1}, []int{1, 0, 1}),
			"op 1 elementwise_add: elementwise: Out y: dims_mapping [1, 0, 1] uses mesh dim 1 twice"},
	} {
		t.Run(c.name, func(t *testing.T) { checkCompat(t, c.build, impl, c.err) })
	}
}
