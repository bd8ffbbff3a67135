package lower

import (
	"strings"
	"testing"

	"github.com/distpass/distpass/ir"
)

// matmulBuild declares x [2, 8] with mapping xm, param w with mapping wm
// and local shape wshape, out with mapping om, and the op typ with attrs.
func matmulBuild(typ string, xm, wm []int, wshape []int64, om []int, outShape []int64, impl int, attrs ...ir.Attr) func(b *ir.Builder) *ir.Op {
	return func(b *ir.Builder) *ir.Op {
		b.Var("x", f32(2, 8)).WithDist("world", xm...)
		b.Param("w", f32(wshape...)).WithDist("world", wm...)
		b.Var("out", f32(outShape...)).WithDist("world", om...)
		return b.Annotate(b.Op(typ, ir.Slots("X", "x", "Y", "w"), ir.Slots("Out", "out"), attrs...), typ, impl)
	}
}

// matmulGradBuild is the grad op of a matmul whose x [2, 8] has its batch
// on dp: (X, Y, Out@GRAD) -> (X@GRAD, Y@GRAD), role backward; withXGrad
// false leaves the X@GRAD slot empty; param false makes w a plain var.
func matmulGradBuild(typ string, wm []int, wshape []int64, om []int, outShape []int64, impl int, withXGrad, param bool, attrs ...ir.Attr) func(b *ir.Builder) *ir.Op {
	return func(b *ir.Builder) *ir.Op {
		b.Var("x", f32(2, 8)).WithDist("world", 0, -1)
		if param {
			b.Param("w", f32(wshape...)).WithDist("world", wm...)
		} else {
			b.Var("w", f32(wshape...)).WithDist("world", wm...)
		}
		b.Var("out@GRAD", f32(outShape...)).WithDist("world", om...)
		b.Var("w@GRAD", f32(wshape...)).WithDist("world", wm...)
		outs := []ir.Slot{ir.S("X@GRAD"), ir.S("Y@GRAD", "w@GRAD")}
		if withXGrad {
			b.Var("x@GRAD", f32(2, 8)).WithDist("world", 0, -1)
			outs[0] = ir.S("X@GRAD", "x@GRAD")
		}
		op := b.Op(typ+"_grad", ir.Slots("X", "x", "Y", "w", "Out@GRAD", "out@GRAD"), outs, attrs...)
		op.WithRole(ir.RoleBackward).WithFwd(100)
		return b.Annotate(op, typ, impl)
	}
}

var (
	noTrans = []ir.Attr{ir.A("trans_x", ir.Bool(false)), ir.A("trans_y", ir.Bool(false))}
	transY  = []ir.Attr{ir.A("trans_x", ir.Bool(false)), ir.A("trans_y", ir.Bool(true))}
)

func TestMatmulForward(t *testing.T) {
	runLoweringCases(t, []loweringCase{{
		name:     "matmul_v2_column",
		build:    matmulBuild("matmul_v2", []int{0, -1}, []int{-1, 1}, []int64{8, 4}, []int{0, 1}, []int64{2, 4}, 0, noTrans...),
		implType: "matmul_v2", implIndex: 0, fn: MatmulColumn().Forward,
		want: map[int]lowering{
			0: {
				Main: []string{
					"op 2 c_identity(X: x) -> (Out: c_identity.tmp_0) {origin = \"matmul_v2:0 column-parallel: X replicated to the mp group (identity forward, allreduce backward)\", origin_op = 1, ring_id = 3, use_calc_stream = true, use_model_parallel = true} role forward dist @world impl matmul_v2:0 [x: [0, -1] -> c_identity.tmp_0: [0, -1]]",
					"op 1 matmul_v2(X: c_identity.tmp_0, Y: w) -> (Out: out) {trans_x = false, trans_y = false} role forward dist @world impl matmul_v2:0 [c_identity.tmp_0: [0, -1], w: [-1, 1] -> out: [0, 1]]",
				},
				Startup: []string{
					"op 3 c_broadcast(X: w) -> (Out: w) {origin = \"matmul_v2:0 init sync: broadcast w from root 0 over dp\", origin_op = 1, ring_id = 1, root = 0, use_calc_stream = true} role forward dist @world impl matmul_v2:0 [w: [-1, 1] -> w: [-1, 1]]",
				},
			},
			3: {
				Main: []string{
					"op 2 c_identity(X: x) -> (Out: c_identity.tmp_0) {origin = \"matmul_v2:0 column-parallel: X replicated to the mp group (identity forward, allreduce backward)\", origin_op = 1, ring_id = 4, use_calc_stream = true, use_model_parallel = true} role forward dist @world impl matmul_v2:0 [x: [0, -1] -> c_identity.tmp_0: [0, -1]]",
					"op 1 matmul_v2(X: c_identity.tmp_0, Y: w) -> (Out: out) {trans_x = false, trans_y = false} role forward dist @world impl matmul_v2:0 [c_identity.tmp_0: [0, -1], w: [-1, 1] -> out: [0, 1]]",
				},
				Startup: []string{
					"op 3 c_broadcast(X: w) -> (Out: w) {origin = \"matmul_v2:0 init sync: broadcast w from root 0 over dp\", origin_op = 1, ring_id = 2, root = 0, use_calc_stream = true} role forward dist @world impl matmul_v2:0 [w: [-1, 1] -> w: [-1, 1]]",
				},
			},
		},
	}, {
		// trans_y: w is stored [n, k] = [4, 8], its dim 0 is the output dim.
		name:     "matmul_v2_column_trans_y",
		build:    matmulBuild("matmul_v2", []int{0, -1}, []int{1, -1}, []int64{4, 8}, []int{0, 1}, []int64{2, 4}, 0, transY...),
		implType: "matmul_v2", implIndex: 0, fn: MatmulColumn().Forward,
		want: map[int]lowering{
			1: {
				Main: []string{
					"op 2 c_identity(X: x) -> (Out: c_identity.tmp_0) {origin = \"matmul_v2:0 column-parallel: X replicated to the mp group (identity forward, allreduce backward)\", origin_op = 1, ring_id = 3, use_calc_stream = true, use_model_parallel = true} role forward dist @world impl matmul_v2:0 [x: [0, -1] -> c_identity.tmp_0: [0, -1]]",
					"op 1 matmul_v2(X: c_identity.tmp_0, Y: w) -> (Out: out) {trans_x = false, trans_y = true} role forward dist @world impl matmul_v2:0 [c_identity.tmp_0: [0, -1], w: [1, -1] -> out: [0, 1]]",
				},
				Startup: []string{
					"op 3 c_broadcast(X: w) -> (Out: w) {origin = \"matmul_v2:0 init sync: broadcast w from root 0 over dp\", origin_op = 1, ring_id = 2, root = 0, use_calc_stream = true} role forward dist @world impl matmul_v2:0 [w: [1, -1] -> w: [1, -1]]",
				},
			},
		},
	}, {
		name:     "matmul_v2_row",
		build:    matmulBuild("matmul_v2", []int{0, 1}, []int{1, -1}, []int64{4, 8}, []int{0, -1}, []int64{2, 8}, 1, noTrans...),
		implType: "matmul_v2", implIndex: 1, fn: MatmulRow().Forward,
		want: map[int]lowering{
			0: {
				Main: []string{
					"op 1 matmul_v2(X: x, Y: w) -> (Out: c_allreduce_sum.tmp_0) {trans_x = false, trans_y = false} role forward dist @world impl matmul_v2:1 [x: [0, 1], w: [1, -1] -> c_allreduce_sum.tmp_0: [0, -1]]",
					"op 2 c_allreduce_sum(X: c_allreduce_sum.tmp_0) -> (Out: out) {origin = \"matmul_v2:1 row-parallel: partial Out summed over mp\", origin_op = 1, ring_id = 3, use_calc_stream = true, use_model_parallel = true} role forward dist @world impl matmul_v2:1 [c_allreduce_sum.tmp_0: [0, -1] -> out: [0, -1]]",
				},
				Startup: []string{
					"op 3 c_broadcast(X: w) -> (Out: w) {origin = \"matmul_v2:1 init sync: broadcast w from root 0 over dp\", origin_op = 1, ring_id = 1, root = 0, use_calc_stream = true} role forward dist @world impl matmul_v2:1 [w: [1, -1] -> w: [1, -1]]",
				},
			},
			3: {
				Main: []string{
					"op 1 matmul_v2(X: x, Y: w) -> (Out: c_allreduce_sum.tmp_0) {trans_x = false, trans_y = false} role forward dist @world impl matmul_v2:1 [x: [0, 1], w: [1, -1] -> c_allreduce_sum.tmp_0: [0, -1]]",
					"op 2 c_allreduce_sum(X: c_allreduce_sum.tmp_0) -> (Out: out) {origin = \"matmul_v2:1 row-parallel: partial Out summed over mp\", origin_op = 1, ring_id = 4, use_calc_stream = true, use_model_parallel = true} role forward dist @world impl matmul_v2:1 [c_allreduce_sum.tmp_0: [0, -1] -> out: [0, -1]]",
				},
				Startup: []string{
					"op 3 c_broadcast(X: w) -> (Out: w) {origin = \"matmul_v2:1 init sync: broadcast w from root 0 over dp\", origin_op = 1, ring_id = 2, root = 0, use_calc_stream = true} role forward dist @world impl matmul_v2:1 [w: [1, -1] -> w: [1, -1]]",
				},
			},
		},
	}, {
		name:     "matmul_row_transpose_Y",
		build:    matmulBuild("matmul", []int{0, 1}, []int{-1, 1}, []int64{8, 4}, []int{0, -1}, []int64{2, 8}, 1, ir.A("transpose_X", ir.Bool(false)), ir.A("transpose_Y", ir.Bool(true)), ir.A("alpha", ir.Float(1))),
		implType: "matmul", implIndex: 1, fn: MatmulRow().Forward,
		want: map[int]lowering{
			2: {
				Main: []string{
					"op 1 matmul(X: x, Y: w) -> (Out: c_allreduce_sum.tmp_0) {alpha = 1.0, transpose_X = false, transpose_Y = true} role forward dist @world impl matmul:1 [x: [0, 1], w: [-1, 1] -> c_allreduce_sum.tmp_0: [0, -1]]",
					"op 2 c_allreduce_sum(X: c_allreduce_sum.tmp_0) -> (Out: out) {origin = \"matmul:1 row-parallel: partial Out summed over mp\", origin_op = 1, ring_id = 4, use_calc_stream = true, use_model_parallel = true} role forward dist @world impl matmul:1 [c_allreduce_sum.tmp_0: [0, -1] -> out: [0, -1]]",
				},
				Startup: []string{
					"op 3 c_broadcast(X: w) -> (Out: w) {origin = \"matmul:1 init sync: broadcast w from root 0 over dp\", origin_op = 1, ring_id = 1, root = 0, use_calc_stream = true} role forward dist @world impl matmul:1 [w: [-1, 1] -> w: [-1, 1]]",
				},
			},
		},
	}, {
		name:     "mul_column",
		build:    matmulBuild("mul", []int{0, -1}, []int{-1, 1}, []int64{8, 4}, []int{0, 1}, []int64{2, 4}, 0, ir.A("x_num_col_dims", ir.Int(1)), ir.A("y_num_col_dims", ir.Int(1))),
		implType: "mul", implIndex: 0, fn: MatmulColumn().Forward,
		want: map[int]lowering{
			1: {
				Main: []string{
					"op 2 c_identity(X: x) -> (Out: c_identity.tmp_0) {origin = \"mul:0 column-parallel: X replicated to the mp group (identity forward, allreduce backward)\", origin_op = 1, ring_id = 3, use_calc_stream = true, use_model_parallel = true} role forward dist @world impl mul:0 [x: [0, -1] -> c_identity.tmp_0: [0, -1]]",
					"op 1 mul(X: c_identity.tmp_0, Y: w) -> (Out: out) {x_num_col_dims = 1, y_num_col_dims = 1} role forward dist @world impl mul:0 [c_identity.tmp_0: [0, -1], w: [-1, 1] -> out: [0, 1]]",
				},
				Startup: []string{
					"op 3 c_broadcast(X: w) -> (Out: w) {origin = \"mul:0 init sync: broadcast w from root 0 over dp\", origin_op = 1, ring_id = 2, root = 0, use_calc_stream = true} role forward dist @world impl mul:0 [w: [-1, 1] -> w: [-1, 1]]",
				},
			},
		},
	}, {
		name:     "matmul_v2_replicated",
		build:    matmulBuild("matmul_v2", []int{0, -1}, []int{-1, -1}, []int64{8, 8}, []int{0, -1}, []int64{2, 8}, 2, noTrans...),
		implType: "matmul_v2", implIndex: 2, fn: MatmulReplicated().Forward,
		want: map[int]lowering{
			0: {
				Main: []string{
					"op 1 matmul_v2(X: x, Y: w) -> (Out: out) {trans_x = false, trans_y = false} role forward dist @world impl matmul_v2:2 [x: [0, -1], w: [-1, -1] -> out: [0, -1]]",
				},
				Startup: []string{
					"op 2 c_broadcast(X: w) -> (Out: w) {origin = \"matmul_v2:2 init sync: broadcast w from root 0 over dp\", origin_op = 1, ring_id = 1, root = 0, use_calc_stream = true} role forward dist @world impl matmul_v2:2 [w: [-1, -1] -> w: [-1, -1]]",
					"op 3 c_broadcast(X: w) -> (Out: w) {origin = \"matmul_v2:2 init sync: broadcast w from root 0 over mp\", origin_op = 1, ring_id = 3, root = 0, use_calc_stream = true} role forward dist @world impl matmul_v2:2 [w: [-1, -1] -> w: [-1, -1]]",
				},
			},
		},
	}})
}

func TestMatmulBackward(t *testing.T) {
	runLoweringCases(t, []loweringCase{{
		name:     "matmul_v2_grad_column",
		build:    matmulGradBuild("matmul_v2", []int{-1, 1}, []int64{8, 4}, []int{0, 1}, []int64{2, 4}, 0, true, true, noTrans...),
		implType: "matmul_v2", implIndex: 0, fn: MatmulColumn().Backward, state: lossGradSeen,
		want: map[int]lowering{
			0: {
				Main: []string{
					"op 1 matmul_v2_grad(X: x, Y: w, Out@GRAD: out@GRAD) -> (X@GRAD: c_identity.tmp_0, Y@GRAD: w@GRAD) {trans_x = false, trans_y = false} role backward fwd 100 dist @world impl matmul_v2:0 [x: [0, -1], w: [-1, 1], out@GRAD: [0, 1] -> c_identity.tmp_0: [0, -1], w@GRAD: [-1, 1]]",
					"op 2 c_allreduce_sum(X: c_identity.tmp_0) -> (Out: x@GRAD) {origin = \"matmul_v2:0 column-parallel: X@GRAD summed over mp\", origin_op = 1, ring_id = 3, use_calc_stream = true, use_model_parallel = true} role backward dist @world impl matmul_v2:0 [c_identity.tmp_0: [0, -1] -> x@GRAD: [0, -1]]",
					"op 3 c_allreduce_sum(X: w@GRAD) -> (Out: w@GRAD) {origin = \"matmul_v2:0 data-parallel: w@GRAD summed over dp\", origin_op = 1, ring_id = 1, use_calc_stream = true} role backward dist @world impl matmul_v2:0 [w@GRAD: [-1, 1] -> w@GRAD: [-1, 1]]",
					"op 4 scale(X: w@GRAD) -> (Out: w@GRAD) {bias = 0.0, bias_after_scale = true, origin = \"matmul_v2:0 data-parallel: w@GRAD averaged over dp\", origin_op = 1, scale = 0.5} role backward dist @world impl matmul_v2:0 [w@GRAD: [-1, 1] -> w@GRAD: [-1, 1]]",
				},
			},
			3: {
				Main: []string{
					"op 1 matmul_v2_grad(X: x, Y: w, Out@GRAD: out@GRAD) -> (X@GRAD: c_identity.tmp_0, Y@GRAD: w@GRAD) {trans_x = false, trans_y = false} role backward fwd 100 dist @world impl matmul_v2:0 [x: [0, -1], w: [-1, 1], out@GRAD: [0, 1] -> c_identity.tmp_0: [0, -1], w@GRAD: [-1, 1]]",
					"op 2 c_allreduce_sum(X: c_identity.tmp_0) -> (Out: x@GRAD) {origin = \"matmul_v2:0 column-parallel: X@GRAD summed over mp\", origin_op = 1, ring_id = 4, use_calc_stream = true, use_model_parallel = true} role backward dist @world impl matmul_v2:0 [c_identity.tmp_0: [0, -1] -> x@GRAD: [0, -1]]",
					"op 3 c_allreduce_sum(X: w@GRAD) -> (Out: w@GRAD) {origin = \"matmul_v2:0 data-parallel: w@GRAD summed over dp\", origin_op = 1, ring_id = 2, use_calc_stream = true} role backward dist @world impl matmul_v2:0 [w@GRAD: [-1, 1] -> w@GRAD: [-1, 1]]",
					"op 4 scale(X: w@GRAD) -> (Out: w@GRAD) {bias = 0.0, bias_after_scale = true, origin = \"matmul_v2:0 data-parallel: w@GRAD averaged over dp\", origin_op = 1, scale = 0.5} role backward dist @world impl matmul_v2:0 [w@GRAD: [-1, 1] -> w@GRAD: [-1, 1]]",
				},
			},
		},
	}, {
		name:     "matmul_v2_grad_column_no_x_grad",
		build:    matmulGradBuild("matmul_v2", []int{-1, 1}, []int64{8, 4}, []int{0, 1}, []int64{2, 4}, 0, false, true, noTrans...),
		implType: "matmul_v2", implIndex: 0, fn: MatmulColumn().Backward, state: lossGradSeen,
		want: map[int]lowering{
			0: {
				Main: []string{
					"op 1 matmul_v2_grad(X: x, Y: w, Out@GRAD: out@GRAD) -> (X@GRAD: [], Y@GRAD: w@GRAD) {trans_x = false, trans_y = false} role backward fwd 100 dist @world impl matmul_v2:0 [x: [0, -1], w: [-1, 1], out@GRAD: [0, 1] -> w@GRAD: [-1, 1]]",
					"op 2 c_allreduce_sum(X: w@GRAD) -> (Out: w@GRAD) {origin = \"matmul_v2:0 data-parallel: w@GRAD summed over dp\", origin_op = 1, ring_id = 1, use_calc_stream = true} role backward dist @world impl matmul_v2:0 [w@GRAD: [-1, 1] -> w@GRAD: [-1, 1]]",
					"op 3 scale(X: w@GRAD) -> (Out: w@GRAD) {bias = 0.0, bias_after_scale = true, origin = \"matmul_v2:0 data-parallel: w@GRAD averaged over dp\", origin_op = 1, scale = 0.5} role backward dist @world impl matmul_v2:0 [w@GRAD: [-1, 1] -> w@GRAD: [-1, 1]]",
				},
			},
		},
	}, {
		name:     "matmul_v2_grad_column_trans_y",
		build:    matmulGradBuild("matmul_v2", []int{1, -1}, []int64{4, 8}, []int{0, 1}, []int64{2, 4}, 0, true, true, transY...),
		implType: "matmul_v2", implIndex: 0, fn: MatmulColumn().Backward, state: lossGradSeen,
		want: map[int]lowering{
			2: {
				Main: []string{
					"op 1 matmul_v2_grad(X: x, Y: w, Out@GRAD: out@GRAD) -> (X@GRAD: c_identity.tmp_0, Y@GRAD: w@GRAD) {trans_x = false, trans_y = true} role backward fwd 100 dist @world impl matmul_v2:0 [x: [0, -1], w: [1, -1], out@GRAD: [0, 1] -> c_identity.tmp_0: [0, -1], w@GRAD: [1, -1]]",
					"op 2 c_allreduce_sum(X: c_identity.tmp_0) -> (Out: x@GRAD) {origin = \"matmul_v2:0 column-parallel: X@GRAD summed over mp\", origin_op = 1, ring_id = 4, use_calc_stream = true, use_model_parallel = true} role backward dist @world impl matmul_v2:0 [c_identity.tmp_0: [0, -1] -> x@GRAD: [0, -1]]",
					"op 3 c_allreduce_sum(X: w@GRAD) -> (Out: w@GRAD) {origin = \"matmul_v2:0 data-parallel: w@GRAD summed over dp\", origin_op = 1, ring_id = 1, use_calc_stream = true} role backward dist @world impl matmul_v2:0 [w@GRAD: [1, -1] -> w@GRAD: [1, -1]]",
					"op 4 scale(X: w@GRAD) -> (Out: w@GRAD) {bias = 0.0, bias_after_scale = true, origin = \"matmul_v2:0 data-parallel: w@GRAD averaged over dp\", origin_op = 1, scale = 0.5} role backward dist @world impl matmul_v2:0 [w@GRAD: [1, -1] -> w@GRAD: [1, -1]]",
				},
			},
		},
	}, {
		name:     "matmul_v2_grad_row",
		build:    matmulGradBuild("matmul_v2", []int{1, -1}, []int64{4, 8}, []int{0, -1}, []int64{2, 8}, 1, true, true, noTrans...),
		implType: "matmul_v2", implIndex: 1, fn: MatmulRow().Backward, state: lossGradSeen,
		want: map[int]lowering{
			1: {
				Main: []string{
					"op 1 matmul_v2_grad(X: x, Y: w, Out@GRAD: out@GRAD) -> (X@GRAD: x@GRAD, Y@GRAD: w@GRAD) {trans_x = false, trans_y = false} role backward fwd 100 dist @world impl matmul_v2:1 [x: [0, -1], w: [1, -1], out@GRAD: [0, -1] -> x@GRAD: [0, -1], w@GRAD: [1, -1]]",
					"op 2 c_allreduce_sum(X: w@GRAD) -> (Out: w@GRAD) {origin = \"matmul_v2:1 data-parallel: w@GRAD summed over dp\", origin_op = 1, ring_id = 2, use_calc_stream = true} role backward dist @world impl matmul_v2:1 [w@GRAD: [1, -1] -> w@GRAD: [1, -1]]",
					"op 3 scale(X: w@GRAD) -> (Out: w@GRAD) {bias = 0.0, bias_after_scale = true, origin = \"matmul_v2:1 data-parallel: w@GRAD averaged over dp\", origin_op = 1, scale = 0.5} role backward dist @world impl matmul_v2:1 [w@GRAD: [1, -1] -> w@GRAD: [1, -1]]",
				},
			},
		},
	}, {
		// Y is not a parameter: X@GRAD is still a part of the sum over
		// the columns, so the mp collective is there (Paddle's G1 leaves
		// it out, and x@GRAD partial); Y@GRAD is a fold over the batch
		// shards all the same (w may be a gathered copy of a param split
		// along dp, whose reshard slices the grad after), so it is summed
		// and averaged over dp as a param's grad is.
		name:     "matmul_v2_grad_column_y_not_param",
		build:    matmulGradBuild("matmul_v2", []int{-1, 1}, []int64{8, 4}, []int{0, 1}, []int64{2, 4}, 0, true, false, noTrans...),
		implType: "matmul_v2", implIndex: 0, fn: MatmulColumn().Backward, state: lossGradSeen,
		want: map[int]lowering{
			0: {
				Main: []string{
					"op 1 matmul_v2_grad(X: x, Y: w, Out@GRAD: out@GRAD) -> (X@GRAD: c_identity.tmp_0, Y@GRAD: w@GRAD) {trans_x = false, trans_y = false} role backward fwd 100 dist @world impl matmul_v2:0 [x: [0, -1], w: [-1, 1], out@GRAD: [0, 1] -> c_identity.tmp_0: [0, -1], w@GRAD: [-1, 1]]",
					"op 2 c_allreduce_sum(X: c_identity.tmp_0) -> (Out: x@GRAD) {origin = \"matmul_v2:0 column-parallel: X@GRAD summed over mp\", origin_op = 1, ring_id = 3, use_calc_stream = true, use_model_parallel = true} role backward dist @world impl matmul_v2:0 [c_identity.tmp_0: [0, -1] -> x@GRAD: [0, -1]]",
					"op 3 c_allreduce_sum(X: w@GRAD) -> (Out: w@GRAD) {origin = \"matmul_v2:0 data-parallel: w@GRAD summed over dp\", origin_op = 1, ring_id = 1, use_calc_stream = true} role backward dist @world impl matmul_v2:0 [w@GRAD: [-1, 1] -> w@GRAD: [-1, 1]]",
					"op 4 scale(X: w@GRAD) -> (Out: w@GRAD) {bias = 0.0, bias_after_scale = true, origin = \"matmul_v2:0 data-parallel: w@GRAD averaged over dp\", origin_op = 1, scale = 0.5} role backward dist @world impl matmul_v2:0 [w@GRAD: [-1, 1] -> w@GRAD: [-1, 1]]",
				},
			},
		},
	}, {
		// Before the loss grad: the mp allreduce, no data-parallel sync.
		name:     "mul_grad_column_before_loss_grad",
		build:    matmulGradBuild("mul", []int{-1, 1}, []int64{8, 4}, []int{0, 1}, []int64{2, 4}, 0, true, true),
		implType: "mul", implIndex: 0, fn: MatmulColumn().Backward,
		want: map[int]lowering{
			3: {
				Main: []string{
					"op 1 mul_grad(X: x, Y: w, Out@GRAD: out@GRAD) -> (X@GRAD: c_identity.tmp_0, Y@GRAD: w@GRAD) role backward fwd 100 dist @world impl mul:0 [x: [0, -1], w: [-1, 1], out@GRAD: [0, 1] -> c_identity.tmp_0: [0, -1], w@GRAD: [-1, 1]]",
					"op 2 c_allreduce_sum(X: c_identity.tmp_0) -> (Out: x@GRAD) {origin = \"mul:0 column-parallel: X@GRAD summed over mp\", origin_op = 1, ring_id = 4, use_calc_stream = true, use_model_parallel = true} role backward dist @world impl mul:0 [c_identity.tmp_0: [0, -1] -> x@GRAD: [0, -1]]",
				},
			},
		},
	}, {
		name:     "matmul_v2_grad_replicated",
		build:    matmulGradBuild("matmul_v2", []int{-1, -1}, []int64{8, 8}, []int{0, -1}, []int64{2, 8}, 2, true, true, noTrans...),
		implType: "matmul_v2", implIndex: 2, fn: MatmulReplicated().Backward, state: lossGradSeen,
		want: map[int]lowering{
			3: {
				Main: []string{
					"op 1 matmul_v2_grad(X: x, Y: w, Out@GRAD: out@GRAD) -> (X@GRAD: x@GRAD, Y@GRAD: w@GRAD) {trans_x = false, trans_y = false} role backward fwd 100 dist @world impl matmul_v2:2 [x: [0, -1], w: [-1, -1], out@GRAD: [0, -1] -> x@GRAD: [0, -1], w@GRAD: [-1, -1]]",
					"op 2 c_allreduce_sum(X: w@GRAD) -> (Out: w@GRAD) {origin = \"matmul_v2:2 data-parallel: w@GRAD summed over dp\", origin_op = 1, ring_id = 2, use_calc_stream = true} role backward dist @world impl matmul_v2:2 [w@GRAD: [-1, -1] -> w@GRAD: [-1, -1]]",
					"op 3 scale(X: w@GRAD) -> (Out: w@GRAD) {bias = 0.0, bias_after_scale = true, origin = \"matmul_v2:2 data-parallel: w@GRAD averaged over dp\", origin_op = 1, scale = 0.5} role backward dist @world impl matmul_v2:2 [w@GRAD: [-1, -1] -> w@GRAD: [-1, -1]]",
				},
			},
		},
	}})
}

func TestMatmulCompatible(t *testing.T) {
	col, row, rep := MatmulColumn(), MatmulRow(), MatmulReplicated()
	mm := func(xm, wm, om []int, attrs ...ir.Attr) func(b *ir.Builder) *ir.Op {
		return matmulBuild("matmul_v2", xm, wm, []int64{8, 8}, om, []int64{2, 8}, 0, attrs...)
	}
	for _, c := range []struct {
		name  string
		build func(b *ir.Builder) *ir.Op
		impl  *Impl
		err   string
	}{
		{"col ok", mm([]int{0, -1}, []int{-1, 1}, []int{0, 1}, noTrans...), col, ""},
		{"col Y replicated", mm([]int{0, -1}, []int{-1, -1}, []int{0, -1}, noTrans...), col,
			"op 1 matmul_v2: column_parallel needs Y's last dim sharded; Y w has dims_mapping [-1, -1]"},
		{"col X last sharded", mm([]int{-1, 0}, []int{-1, 1}, []int{-1, 1}, noTrans...), col,
			"column_parallel needs X's last dim replicated; X x has dims_mapping [-1, 0]"},
		{"col Y k sharded", mm([]int{-1, -1}, []int{0, 1}, []int{-1, 1}, noTrans...), col,
			"needs Y's second-to-last dim replicated"},
		{"col Out replicated", mm([]int{0, -1}, []int{-1, 1}, []int{0, -1}, noTrans...), col,
			"column_parallel needs Out out [0, 1] and not partial as its rule mk,kn->mn gives; its dist says [0, -1] and not partial"},
		{"col trans_y ok", mm([]int{0, -1}, []int{1, -1}, []int{0, 1}, transY...), col, ""},
		{"col trans_y wrong", mm([]int{0, -1}, []int{-1, 1}, []int{0, 1}, transY...), col,
			"column_parallel needs Y's second-to-last dim replicated; Y w has dims_mapping [-1, 1] (transposed: [1, -1])"},
		{"col no attrs is no transpose", mm([]int{0, -1}, []int{-1, 1}, []int{0, 1}), col, ""},
		{"row ok", mm([]int{0, 1}, []int{1, -1}, []int{0, -1}, noTrans...), row, ""},
		{"row X replicated", mm([]int{0, -1}, []int{1, -1}, []int{0, -1}, noTrans...), row,
			"row_parallel needs X's last dim sharded"},
		{"row Y n sharded", mm([]int{-1, 1}, []int{1, 0}, []int{-1, -1}, noTrans...), row,
			"row_parallel needs Y's last dim replicated; Y w has dims_mapping [1, 0]"},
		{"row Out sharded", mm([]int{-1, 1}, []int{1, -1}, []int{-1, 0}, noTrans...), row,
			"row_parallel needs Out out [-1, -1] whole (its collective reduces it) or partial [1] as its rule mk,kn->mn gives; its dist says [-1, 0] and not partial"},
		{"rep ok", mm([]int{-1, -1}, []int{-1, -1}, []int{-1, -1}, noTrans...), rep, ""},
		// As in Paddle, impl 2 wants X[-2] replicated: a 2-D X split on
		// its rows (the batch) is not replicate_parallel.
		{"rep X batch sharded", mm([]int{0, -1}, []int{-1, -1}, []int{0, -1}, noTrans...), rep,
			"replicate_parallel needs X's last two dims replicated; X x has dims_mapping [0, -1]"},
		{"rep X M sharded", mm([]int{1, -1}, []int{-1, -1}, []int{1, -1}, noTrans...), rep,
			"replicate_parallel needs X's last two dims replicated; X x has dims_mapping [1, -1]"},
		{"rep Y sharded", mm([]int{-1, -1}, []int{-1, 1}, []int{-1, 1}, noTrans...), rep,
			"replicate_parallel needs Y's last two dims replicated"},
		// Issue 22, finding 3: every arg against the rule, not some.
		{"col X rows on mp, Out rows on dp", mm([]int{1, -1}, []int{-1, 1}, []int{0, 1}, noTrans...), col,
			"op 1 matmul_v2: column_parallel needs Y w split [-1, -1] as its rule mk,kn->mn gives; its dist says [-1, 1] (the rule merges X x [1, -1], Y w [-1, 1]: mesh dim 1 splits another of their dims first)"},
		{"col Out columns on another axis than Y's", mm([]int{-1, -1}, []int{-1, 0}, []int{-1, 1}, noTrans...), col,
			"op 1 matmul_v2: column_parallel needs Out out [-1, 0] and not partial as its rule mk,kn->mn gives; its dist says [-1, 1] and not partial"},
		{"row X and Y reduction dims on different axes", mm([]int{-1, 0}, []int{1, -1}, []int{-1, -1}, noTrans...), row,
			"op 1 matmul_v2: row_parallel: its rule mk,kn->mn refuses the mappings: rule mk,kn->mn: dim \"k\" is sharded along two mesh dims, 0 and 1"},
		{"row Out rows not X's", mm([]int{-1, 1}, []int{1, -1}, []int{0, -1}, noTrans...), row,
			"op 1 matmul_v2: row_parallel needs Out out [-1, -1] whole (its collective reduces it) or partial [1] as its rule mk,kn->mn gives; its dist says [0, -1] and not partial"},
		// An int is a bool, as verify and Paddle's loader read it
		// (TestIntegerBoolAttrsReadAlike); a string is not.
		{"trans attr wrong kind", mm([]int{0, -1}, []int{-1, 1}, []int{0, 1}, ir.A("trans_y", ir.String("yes"))), col,
			"op 1 matmul_v2: attr trans_y has kind string, want bool"},
		{"mapping axis out of range", mm([]int{0, -1}, []int{-1, 2}, []int{0, 1}, noTrans...), col,
			"op 1 matmul_v2: Y w: dims_mapping [-1, 2]: entry 1 is 2, out of range for a mesh of 2 dims"},
	} {
		t.Run(c.name, func(t *testing.T) { checkCompat(t, c.build, c.impl, c.err) })
	}
}

func TestMatmulErrors(t *testing.T) {
	// An op without a dist, or whose dist lacks Y, is an error, not a panic.
	noDist := func(b *ir.Builder) *ir.Op {
		op := matmulBuild("matmul_v2", []int{0, -1}, []int{-1, 1}, []int64{8, 4}, []int{0, 1}, []int64{2, 4}, 0)(b)
		op.Dist.Inputs = op.Dist.Inputs[:1]
		return op
	}
	_, err := lower(t, noDist, 0, "matmul_v2", 0, forward(MatmulColumn()), nil)
	if err == nil || err.Error() != "op 1 matmul_v2: Y w has no dims_mapping in the op's dist" {
		t.Errorf("forward without Y's mapping: %v", err)
	}
	_, err = lower(t, noDist, 0, "matmul_v2", 0, MatmulColumn().Backward, nil)
	if err == nil {
		t.Error("backward without Y's mapping: no error")
	}
	// A forward lowering of an incompatible op says why.
	bad := matmulBuild("matmul_v2", []int{0, -1}, []int{-1, -1}, []int64{8, 8}, []int{0, -1}, []int64{2, 8}, 0)
	if _, err := lower(t, bad, 0, "matmul_v2", 0, forward(MatmulColumn()), nil); err == nil {
		t.Error("column forward of a replicated Y: no error")
	}
	if _, err := lower(t, bad, 0, "matmul_v2", 1, forward(MatmulRow()), nil); err == nil {
		t.Error("row forward of a replicated Y: no error")
	}
}

// A rank outside the op's mesh is an error from every lowering that
// needs a group or a coordinate, not a panic.
func TestImplsRankNotInMesh(t *testing.T) {
	for _, c := range []struct {
		name  string
		build func(b *ir.Builder) *ir.Op
		fn    func(*Lowering, *ir.Op) error
	}{
		{"column", matmulBuild("matmul_v2", []int{0, -1}, []int{-1, 1}, []int64{8, 4}, []int{0, 1}, []int64{2, 4}, 0), MatmulColumn().Forward},
		{"row", matmulBuild("matmul_v2", []int{0, 1}, []int{1, -1}, []int64{4, 8}, []int{0, -1}, []int64{2, 8}, 1), MatmulRow().Forward},
		{"column grad", matmulGradBuild("matmul_v2", []int{-1, 1}, []int64{8, 4}, []int{0, 1}, []int64{2, 4}, 0, true, true), MatmulColumn().Backward},
		{"embedding", embeddingBuild("lookup_table_v2", []int{0, -1}, []int{1, -1}, []int{0, -1, -1}), EmbeddingVocabParallel().Forward},
		{"embedding grad", embeddingGradBuild, EmbeddingVocabParallel().Backward},
	} {
		if _, err := lower(t, c.build, 7, "t", 0, c.fn, nil); err == nil || !strings.Contains(err.Error(), "rank 7 is not in mesh") {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}
