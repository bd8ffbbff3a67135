package lower

import (
	"testing"

	"github.com/distpass/distpass/ir"
)

// reshapeBuild: reshape2(X: x) -> (Out: out, XShape: xs) {shape}, vars
// with the given local shapes and mappings; a nil xsm leaves out XShape.
func reshapeBuild(impl int, xshape []int64, xm []int, oshape []int64, om, xsm []int, shape ...int64) func(b *ir.Builder) *ir.Op {
	return func(b *ir.Builder) *ir.Op {
		b.Var("x", f32(xshape...)).WithDist("world", xm...)
		b.Var("out", f32(oshape...)).WithDist("world", om...)
		outs := ir.Slots("Out", "out")
		if xsm != nil {
			b.Var("xs", f32(append([]int64{0}, xshape...)...)).WithDist("world", xsm...)
			outs = append(outs, ir.S("XShape", "xs"))
		}
		op := b.Op("reshape2", ir.Slots("X", "x"), outs, ir.A("shape", ir.Ints(shape)))
		return b.Annotate(op, "reshape2", impl)
	}
}

func TestReshape(t *testing.T) {
	runLoweringCases(t, []loweringCase{{
		// Global [4, 6, 32] -> [-1, 6, 32, 1]: -1 stays -1 (floor
		// division), 32 becomes 16 on the mp-split dim.
		name:     "reshape2_add_one_dim_back",
		build:    reshapeBuild(0, []int64{2, 6, 16}, []int{0, -1, 1}, []int64{2, 6, 16, 1}, []int{0, -1, 1, -1}, []int{-1, 0, -1, 1}, -1, 6, 32, 1),
		implType: "reshape2", implIndex: 0, fn: ReshapeAddOneDimBack().Forward,
		want: map[int]lowering{
			0: {
				Main: []string{
					"op 1 reshape2(X: x) -> (Out: out, XShape: xs) {shape = [-1, 6, 16, 1]} role forward dist @world impl reshape2:0 [x: [0, -1, 1] -> out: [0, -1, 1, -1], xs: [-1, 0, -1, 1]]",
				},
			},
		},
	}, {
		// 0 (copy the dim) stays 0.
		name:     "reshape2_remove_one_dim_back",
		build:    reshapeBuild(1, []int64{2, 6, 16, 1}, []int{0, -1, 1, -1}, []int64{2, 6, 16}, []int{0, -1, 1}, []int{-1, 0, -1, 1, -1}, 0, 6, 32),
		implType: "reshape2", implIndex: 1, fn: ReshapeRemoveOneDimBack().Forward,
		want: map[int]lowering{
			3: {
				Main: []string{
					"op 1 reshape2(X: x) -> (Out: out, XShape: xs) {shape = [0, 6, 16]} role forward dist @world impl reshape2:1 [x: [0, -1, 1, -1] -> out: [0, -1, 1], xs: [-1, 0, -1, 1, -1]]",
				},
			},
		},
	}, {
		name:     "reshape2_same_dim_shape",
		build:    reshapeBuild(2, []int64{2, 3, 32}, []int{0, -1, -1}, []int64{2, 6, 16}, []int{0, -1, -1}, nil, 4, 6, 16),
		implType: "reshape2", implIndex: 2, fn: ReshapeSameDimShape().Forward,
		want: map[int]lowering{
			1: {
				Main: []string{
					"op 1 reshape2(X: x) -> (Out: out) {shape = [2, 6, 16]} role forward dist @world impl reshape2:2 [x: [0, -1, -1] -> out: [0, -1, -1]]",
				},
			},
		},
	}, {
		name: "reshape2_grad",
		build: func(b *ir.Builder) *ir.Op {
			b.Var("xs", f32(0, 2, 6, 16)).WithDist("world", -1, 0, -1, 1)
			b.Var("out@GRAD", f32(2, 6, 16, 1)).WithDist("world", 0, -1, 1, -1)
			b.Var("x@GRAD", f32(2, 6, 16)).WithDist("world", 0, -1, 1)
			op := b.Op("reshape2_grad", ir.Slots("XShape", "xs", "Out@GRAD", "out@GRAD"), ir.Slots("X@GRAD", "x@GRAD"))
			op.WithRole(ir.RoleBackward)
			return b.Annotate(op, "reshape2", 0)
		},
		implType: "reshape2", implIndex: 0, fn: ReshapeAddOneDimBack().Backward, state: lossGradSeen,
		want: map[int]lowering{
			0: {
				Main: []string{
					"op 1 reshape2_grad(XShape: xs, Out@GRAD: out@GRAD) -> (X@GRAD: x@GRAD) role backward dist @world impl reshape2:0 [xs: [-1, 0, -1, 1], out@GRAD: [0, -1, 1, -1] -> x@GRAD: [0, -1, 1]]",
				},
			},
		},
	}})
}

func TestReshapeCompatible(t *testing.T) {
	add, rm, same := ReshapeAddOneDimBack(), ReshapeRemoveOneDimBack(), ReshapeSameDimShape()
	s3, s4 := []int64{2, 6, 16}, []int64{2, 6, 16, 1}
	for _, c := range []struct {
		name  string
		build func(b *ir.Builder) *ir.Op
		impl  *Impl
		err   string
	}{
		{"add ok", reshapeBuild(0, s3, []int{0, -1, 1}, s4, []int{0, -1, 1, -1}, []int{-1, 0, -1, 1}), add, ""},
		{"add wrong rank", reshapeBuild(0, s3, []int{0, -1, 1}, s3, []int{0, -1, 1}, nil), add,
			"op 1 reshape2: add_one_dim_back needs Out of one dim more than X; X x has dims_mapping [0, -1, 1], Out out [0, -1, 1]"},
		{"add last sharded", reshapeBuild(0, s3, []int{0, -1, -1}, s4, []int{0, -1, -1, 1}, nil), add,
			"add_one_dim_back needs Out's last dim replicated"},
		{"add split differs", reshapeBuild(0, s3, []int{0, -1, 1}, s4, []int{0, 1, -1, -1}, nil), add,
			"add_one_dim_back needs Out's dims but the last split as X's"},
		{"add bad XShape", reshapeBuild(0, s3, []int{0, -1, 1}, s4, []int{0, -1, 1, -1}, []int{0, -1, -1, 1}), add,
			"op 1 reshape2: add_one_dim_back needs XShape xs [-1, 0, -1, 1] and not partial as its rule reshape [2, 6, 16] -> [2, 6, 16, 1] gives; its dist says [0, -1, -1, 1] and not partial"},
		{"remove ok", reshapeBuild(1, s4, []int{0, -1, 1, -1}, s3, []int{0, -1, 1}, nil), rm, ""},
		{"remove last sharded", reshapeBuild(1, s4, []int{0, -1, -1, 1}, s3, []int{0, -1, -1}, nil), rm,
			"remove_one_dim_back needs X's last dim replicated"},
		{"remove wrong rank", reshapeBuild(1, s3, []int{0, -1, 1}, s3, []int{0, -1, 1}, nil), rm,
			"remove_one_dim_back needs Out of one dim less than X"},
		{"same ok", reshapeBuild(2, s3, []int{0, -1, 1}, s3, []int{0, -1, 1}, []int{-1, 0, -1, 1}), same, ""},
		{"same split differs", reshapeBuild(2, s3, []int{0, -1, 1}, s3, []int{0, 1, -1}, nil), same,
			"same_dim_shape needs X and Out split alike"},
		{"same wrong rank", reshapeBuild(2, s3, []int{0, -1, 1}, s4, []int{0, -1, 1, -1}, nil), same,
			"same_dim_shape needs X and Out of the same rank"},
	} {
		t.Run(c.name, func(t *testing.T) { checkCompat(t, c.build, c.impl, c.err) })
	}
	// A shape attr of the wrong kind is an error, not a silent copy.
	bad := func(b *ir.Builder) *ir.Op {
		op := reshapeBuild(2, s3, []int{0, -1, 1}, s3, []int{0, -1, 1}, nil)(b)
		op.Attrs.Set("shape", ir.String("4,6,32"))
		return op
	}
	if _, err := lower(t, bad, 0, "reshape2", 2, same.Forward, nil); err == nil || err.Error() != "op 1 reshape2: attr shape has kind string, want ints" {
		t.Errorf("string shape attr: %v", err)
	}
}
