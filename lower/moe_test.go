package lower

import (
	"testing"

	"github.com/distpass/distpass/ir"
)

func i64(shape ...int64) ir.Type { return ir.Tensor(ir.I64, shape...) }

// exchangeBuild: typ(X: x [-1, 4], local_count: lc [8], global_count: gc
// [8]) -> (Out: out [-1, 4]) with expert_axis axis (none when nil) and
// the counts mapped cm.
func exchangeBuild(typ string, axis ir.Value, cm []int, n int64) func(b *ir.Builder) *ir.Op {
	return func(b *ir.Builder) *ir.Op {
		b.Var("x", f32(-1, 4)).WithDist("world", -1, -1)
		b.Var("lc", i64(n)).WithDist("world", cm...)
		b.Var("gc", i64(n)).WithDist("world", cm...)
		b.Var("out", f32(-1, 4)).WithDist("world", 0, -1)
		op := b.Op(typ, ir.Slots("X", "x", "local_count", "lc", "global_count", "gc"), ir.Slots("Out", "out"),
			ir.A("ring_id", ir.Int(0)), ir.A("use_calc_stream", ir.Bool(true)))
		if axis != nil {
			op.Attrs.Set(ExpertAxisAttr, axis)
		}
		return b.Annotate(op, typ, 0)
	}
}

// groupedBuild: grouped_matmul(X: xr [-1, 4], W: w [2, 4, 8] (local),
// ExpertCount: gc [4]) -> (Out: h [-1, 8]) and, when grad, its grad op.
func groupedBuild(wm, xm []int, grad bool) func(b *ir.Builder) *ir.Op {
	return func(b *ir.Builder) *ir.Op {
		b.Var("xr", f32(-1, 4)).WithDist("world", xm...)
		b.Param("w", f32(2, 4, 8)).WithDist("world", wm...).WithFlags(ir.FlagTrainable)
		b.Var("gc", i64(4)).WithDist("world", -1)
		b.Var("h", f32(-1, 8)).WithDist("world", xm...)
		op := b.Op("grouped_matmul", ir.Slots("X", "xr", "W", "w", "ExpertCount", "gc"), ir.Slots("Out", "h"))
		if !grad {
			return b.Annotate(op, "grouped_matmul", 0)
		}
		b.Var("h@GRAD", f32(-1, 8)).WithDist("world", xm...)
		b.Var("xr@GRAD", f32(-1, 4)).WithDist("world", xm...)
		b.Var("w@GRAD", f32(2, 4, 8)).WithDist("world", wm...)
		g := b.Op("grouped_matmul_grad", ir.Slots("X", "xr", "W", "w", "ExpertCount", "gc", "Out@GRAD", "h@GRAD"),
			ir.Slots("X@GRAD", "xr@GRAD", "W@GRAD", "w@GRAD")).WithRole(ir.RoleBackward)
		g.Fwd = op.ID
		return b.Annotate(g, "grouped_matmul", 0)
	}
}

func TestExpertExchangeLowering(t *testing.T) {
	// expert_axis mp: rank 0's group along mp is [0, 1] (ring 3), rank
	// 3's [2, 3] (ring 4), in forward and backward alike.
	runLoweringCases(t, []loweringCase{{
		name:     "global_scatter_forward",
		build:    exchangeBuild("global_scatter", ir.String("mp"), []int{-1}, 8),
		implType: "global_scatter", fn: ExpertExchange().Forward,
		want: map[int]lowering{
			0: {Main: []string{"op 1 global_scatter(X: x, local_count: lc, global_count: gc) -> (Out: out) {expert_axis = \"mp\", origin = \"global_scatter:0 expert-parallel: exchange over the mp group\", origin_op = 1, ring_id = 3, use_calc_stream = true} role forward dist @world impl global_scatter:0 [x: [-1, -1], lc: [-1], gc: [-1] -> out: [0, -1]]"}},
			3: {Main: []string{"op 1 global_scatter(X: x, local_count: lc, global_count: gc) -> (Out: out) {expert_axis = \"mp\", origin = \"global_scatter:0 expert-parallel: exchange over the mp group\", origin_op = 1, ring_id = 4, use_calc_stream = true} role forward dist @world impl global_scatter:0 [x: [-1, -1], lc: [-1], gc: [-1] -> out: [0, -1]]"}},
		},
	}, {
		name:     "global_gather_backward",
		build:    exchangeBuild("global_gather", ir.String("dp"), []int{-1}, 8),
		implType: "global_scatter", fn: ExpertExchange().Backward,
		want: map[int]lowering{
			// Along dp, rank 3's group is [1, 3]: ring 2.
			3: {Main: []string{"op 1 global_gather(X: x, local_count: lc, global_count: gc) -> (Out: out) {expert_axis = \"dp\", origin = \"global_scatter:0 expert-parallel: the grad of global_scatter, over the dp group\", origin_op = 1, ring_id = 2, use_calc_stream = true} role forward dist @world impl global_gather:0 [x: [-1, -1], lc: [-1], gc: [-1] -> out: [0, -1]]"}},
		},
	}})
}

func TestExpertExchangeCompatible(t *testing.T) {
	impl := ExpertExchange()
	for _, c := range []struct {
		name  string
		build func(b *ir.Builder) *ir.Op
		err   string
	}{
		{"fits", exchangeBuild("global_scatter", ir.String("mp"), []int{-1}, 8), ""},
		{"no axis", exchangeBuild("global_scatter", nil, []int{-1}, 8),
			"op 1 global_scatter: expert_parallel needs attr expert_axis, the name of the mesh dim the experts are split along (mesh world has dims [dp, mp])"},
		{"axis not a string", exchangeBuild("global_scatter", ir.Int(1), []int{-1}, 8),
			"op 1 global_scatter: attr expert_axis has kind int, want string"},
		{"unknown axis", exchangeBuild("global_gather", ir.String("ep"), []int{-1}, 8),
			`op 1 global_gather: attr expert_axis is "ep", not a dim of mesh world (dims [dp, mp])`},
		{"counts sharded", exchangeBuild("global_scatter", ir.String("mp"), []int{0}, 8),
			"op 1 global_scatter: expert_parallel needs the counts replicated (every rank holds n_expert × world of them); local_count lc has dims_mapping [0]"},
		{"counts uneven", exchangeBuild("global_scatter", ir.String("mp"), []int{-1}, 7),
			"op 1 global_scatter: local_count lc has shape [7]: the counts must be one vector of n_expert × 2 entries (mesh dim mp)"},
	} {
		t.Run(c.name, func(t *testing.T) { checkCompat(t, c.build, impl, c.err) })
	}
}

func TestGroupedMatmulLowering(t *testing.T) {
	runLoweringCases(t, []loweringCase{{
		// Experts along mp, rows along dp: W@GRAD is averaged over mp
		// without communication, then summed and averaged over dp.
		name:     "grouped_matmul_backward",
		build:    groupedBuild([]int{1, -1, -1}, []int{0, -1}, true),
		implType: "grouped_matmul", fn: GroupedMatmulExpert().Backward, state: lossGradSeen,
		want: map[int]lowering{
			// dp groups: rank 0's [0, 2] is ring 1, rank 3's [1, 3] ring 2.
			0: {
				Main: []string{
					"op 2 grouped_matmul_grad(X: xr, W: w, ExpertCount: gc, Out@GRAD: h@GRAD) -> (X@GRAD: xr@GRAD, W@GRAD: w@GRAD) role backward fwd 1 dist @world impl grouped_matmul:0 [xr: [0, -1], w: [1, -1, -1], gc: [-1], h@GRAD: [0, -1] -> xr@GRAD: [0, -1], w@GRAD: [1, -1, -1]]",
					"op 3 scale(X: w@GRAD) -> (Out: w@GRAD) {bias = 0.0, bias_after_scale = true, origin = \"grouped_matmul:0 expert-parallel: w@GRAD holds the grads of the tokens of all 2 ranks along mp, each of its own rank's loss; averaged, not summed over ranks\", origin_op = 2, scale = 0.5} role backward dist @world impl grouped_matmul:0 [w@GRAD: [1, -1, -1] -> w@GRAD: [1, -1, -1]]",
					"op 4 c_allreduce_sum(X: w@GRAD) -> (Out: w@GRAD) {origin = \"grouped_matmul:0 data-parallel: w@GRAD summed over dp\", origin_op = 2, ring_id = 1, use_calc_stream = true} role backward dist @world impl grouped_matmul:0 [w@GRAD: [1, -1, -1] -> w@GRAD: [1, -1, -1]]",
					"op 5 scale(X: w@GRAD) -> (Out: w@GRAD) {bias = 0.0, bias_after_scale = true, origin = \"grouped_matmul:0 data-parallel: w@GRAD averaged over dp\", origin_op = 2, scale = 0.5} role backward dist @world impl grouped_matmul:0 [w@GRAD: [1, -1, -1] -> w@GRAD: [1, -1, -1]]",
				},
			},
			3: {
				Main: []string{
					"op 2 grouped_matmul_grad(X: xr, W: w, ExpertCount: gc, Out@GRAD: h@GRAD) -> (X@GRAD: xr@GRAD, W@GRAD: w@GRAD) role backward fwd 1 dist @world impl grouped_matmul:0 [xr: [0, -1], w: [1, -1, -1], gc: [-1], h@GRAD: [0, -1] -> xr@GRAD: [0, -1], w@GRAD: [1, -1, -1]]",
					"op 3 scale(X: w@GRAD) -> (Out: w@GRAD) {bias = 0.0, bias_after_scale = true, origin = \"grouped_matmul:0 expert-parallel: w@GRAD holds the grads of the tokens of all 2 ranks along mp, each of its own rank's loss; averaged, not summed over ranks\", origin_op = 2, scale = 0.5} role backward dist @world impl grouped_matmul:0 [w@GRAD: [1, -1, -1] -> w@GRAD: [1, -1, -1]]",
					"op 4 c_allreduce_sum(X: w@GRAD) -> (Out: w@GRAD) {origin = \"grouped_matmul:0 data-parallel: w@GRAD summed over dp\", origin_op = 2, ring_id = 2, use_calc_stream = true} role backward dist @world impl grouped_matmul:0 [w@GRAD: [1, -1, -1] -> w@GRAD: [1, -1, -1]]",
					"op 5 scale(X: w@GRAD) -> (Out: w@GRAD) {bias = 0.0, bias_after_scale = true, origin = \"grouped_matmul:0 data-parallel: w@GRAD averaged over dp\", origin_op = 2, scale = 0.5} role backward dist @world impl grouped_matmul:0 [w@GRAD: [1, -1, -1] -> w@GRAD: [1, -1, -1]]",
				},
			},
		},
	}, {
		// Without the loss grad seen and with W replicated: the grad op
		// alone.
		name:     "grouped_matmul_backward_replicated",
		build:    groupedBuild([]int{-1, -1, -1}, []int{-1, -1}, true),
		implType: "grouped_matmul", fn: GroupedMatmulExpert().Backward,
		want: map[int]lowering{0: {Main: []string{
			"op 2 grouped_matmul_grad(X: xr, W: w, ExpertCount: gc, Out@GRAD: h@GRAD) -> (X@GRAD: xr@GRAD, W@GRAD: w@GRAD) role backward fwd 1 dist @world impl grouped_matmul:0 [xr: [-1, -1], w: [-1, -1, -1], gc: [-1], h@GRAD: [-1, -1] -> xr@GRAD: [-1, -1], w@GRAD: [-1, -1, -1]]",
		}}},
	}})
}

func TestGroupedMatmulCompatible(t *testing.T) {
	impl := GroupedMatmulExpert()
	for _, c := range []struct {
		name  string
		build func(b *ir.Builder) *ir.Op
		err   string
	}{
		{"experts split", groupedBuild([]int{1, -1, -1}, []int{0, -1}, false), ""},
		{"replicated", groupedBuild([]int{-1, -1, -1}, []int{-1, -1}, false), ""},
		{"W split on K", groupedBuild([]int{-1, 1, -1}, []int{-1, -1}, false),
			"op 1 grouped_matmul: expert_parallel needs W [experts, in, out] split at most along the experts; W w has dims_mapping [-1, 1, -1]"},
		{"features split", groupedBuild([]int{1, -1, -1}, []int{-1, 0}, false),
			"op 1 grouped_matmul: expert_parallel needs X's feature dim replicated; X xr has dims_mapping [-1, 0]"},
	} {
		t.Run(c.name, func(t *testing.T) { checkCompat(t, c.build, impl, c.err) })
	}
}
