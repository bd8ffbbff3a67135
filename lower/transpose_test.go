package lower

import (
	"testing"

	"github.com/distpass/distpass/ir"
)

// transposeBuild: transpose2(X: x [2, 6, 16]) -> (Out: out, XShape: xs)
// {axis: perm}; a nil xsm leaves out XShape.
func transposeBuild(xm, om, xsm []int, perm ...int64) func(b *ir.Builder) *ir.Op {
	return func(b *ir.Builder) *ir.Op {
		b.Var("x", f32(2, 6, 16)).WithDist("world", xm...)
		b.Var("out", f32(2, 16, 6)).WithDist("world", om...)
		outs := ir.Slots("Out", "out")
		if xsm != nil {
			b.Var("xs", f32(0, 2, 6, 16)).WithDist("world", xsm...)
			outs = append(outs, ir.S("XShape", "xs"))
		}
		op := b.Op("transpose2", ir.Slots("X", "x"), outs, ir.A("axis", ir.Ints(perm)))
		return b.Annotate(op, "transpose2", 0)
	}
}

func TestTranspose(t *testing.T) {
	runLoweringCases(t, []loweringCase{{
		name:     "transpose2_forward",
		build:    transposeBuild([]int{0, -1, 1}, []int{0, 1, -1}, []int{-1, 0, -1, 1}, 0, 2, 1),
		implType: "transpose2", fn: TransposeSameMapping().Forward,
		want: map[int]lowering{
			3: {
				Main: []string{
					"op 1 transpose2(X: x) -> (Out: out, XShape: xs) {axis = [0, 2, 1]} role forward dist @world impl transpose2:0 [x: [0, -1, 1] -> out: [0, 1, -1], xs: [-1, 0, -1, 1]]",
				},
			},
		},
	}})
}

func TestTransposeCompatible(t *testing.T) {
	impl := TransposeSameMapping()
	for _, c := range []struct {
		name  string
		build func(b *ir.Builder) *ir.Op
		err   string
	}{
		{"ok", transposeBuild([]int{0, -1, 1}, []int{0, 1, -1}, []int{-1, 0, -1, 1}, 0, 2, 1), ""},
		{"ok without XShape", transposeBuild([]int{0, -1, 1}, []int{1, -1, 0}, nil, 2, 1, 0), ""},
		{"not permuted", transposeBuild([]int{0, -1, 1}, []int{0, -1, 1}, nil, 0, 2, 1),
			"op 1 transpose2: same_mapping_transpose needs Out out [0, 1, -1] and not partial as its rule abc->acb gives; its dist says [0, -1, 1] and not partial"},
		{"perm too short", transposeBuild([]int{0, -1, 1}, []int{0, 1, -1}, nil, 0, 2),
			"same_mapping_transpose needs X, Out and axis [0 2] of one rank"},
		{"perm out of range", transposeBuild([]int{0, -1, 1}, []int{0, 1, -1}, nil, 0, 3, 1),
			"op 1 transpose2: attr axis [0 3 1]: entry 1 is out of range for rank 3"},
		{"bad XShape", transposeBuild([]int{0, -1, 1}, []int{0, 1, -1}, []int{-1, 0, 1, -1}, 0, 2, 1),
			"op 1 transpose2: same_mapping_transpose needs XShape xs [-1, 0, -1, 1] and not partial as its rule abc->acb,1abc gives; its dist says [-1, 0, 1, -1] and not partial"},
	} {
		t.Run(c.name, func(t *testing.T) { checkCompat(t, c.build, impl, c.err) })
	}
	noAxis := func(b *ir.Builder) *ir.Op {
		op := transposeBuild([]int{0, -1, 1}, []int{0, 1, -1}, nil, 0, 2, 1)(b)
		op.Attrs.Delete("axis")
		return op
	}
	checkCompat(t, noAxis, impl, "op 1 transpose2 has no attr axis (the permutation)")
	wrongKind := func(b *ir.Builder) *ir.Op {
		op := transposeBuild([]int{0, -1, 1}, []int{0, 1, -1}, nil, 0, 2, 1)(b)
		op.Attrs.Set("axis", ir.Int(1))
		return op
	}
	checkCompat(t, wrongKind, impl, "op 1 transpose2: attr axis has kind int, want ints")
	if _, err := lower(t, wrongKind, 0, "transpose2", 0, forward(impl), nil); err == nil {
		t.Error("forward with an int axis attr: no error")
	}
}
