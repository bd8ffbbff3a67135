package lower

import (
	"testing"

	"github.com/distpass/distpass/ir"
)

// softmaxBuild: softmax(X: x [2, 6, 16]) -> (Out: out), with an axis
// attr unless axis is nil.
func softmaxBuild(xm, om []int, axis ir.Value) func(b *ir.Builder) *ir.Op {
	return func(b *ir.Builder) *ir.Op {
		b.Var("x", f32(2, 6, 16)).WithDist("world", xm...)
		b.Var("out", f32(2, 6, 16)).WithDist("world", om...)
		op := b.Op("softmax", ir.Slots("X", "x"), ir.Slots("Out", "out"))
		if axis != nil {
			op.Attrs.Set("axis", axis)
		}
		return b.Annotate(op, "softmax", 0)
	}
}

func TestSoftmax(t *testing.T) {
	runLoweringCases(t, []loweringCase{{
		name:     "softmax_forward",
		build:    softmaxBuild([]int{0, 1, -1}, []int{0, 1, -1}, ir.Int(-1)),
		implType: "softmax", fn: SoftmaxReplicateLastAxis().Forward,
		want: map[int]lowering{
			1: {
				Main: []string{
					"op 1 softmax(X: x) -> (Out: out) {axis = -1} role forward dist @world impl softmax:0 [x: [0, 1, -1] -> out: [0, 1, -1]]",
				},
			},
		},
	}})
}

func TestSoftmaxCompatible(t *testing.T) {
	impl := SoftmaxReplicateLastAxis()
	for _, c := range []struct {
		name  string
		build func(b *ir.Builder) *ir.Op
		err   string
	}{
		{"last replicated", softmaxBuild([]int{0, 1, -1}, []int{0, 1, -1}, ir.Int(-1)), ""},
		{"default axis", softmaxBuild([]int{0, 1, -1}, []int{0, 1, -1}, nil), ""},
		{"axis 1 replicated", softmaxBuild([]int{0, -1, 1}, []int{0, -1, 1}, ir.Int(1)), ""},
		{"last sharded", softmaxBuild([]int{0, -1, 1}, []int{0, -1, 1}, nil),
			"op 1 softmax: replicate_last_axis needs X's softmax axis -1 replicated; X x has dims_mapping [0, -1, 1]"},
		{"Out sharded on axis", softmaxBuild([]int{0, -1, -1}, []int{0, 1, -1}, ir.Int(-2)),
			"replicate_last_axis needs Out's softmax axis -2 replicated; Out out has dims_mapping [0, 1, -1]"},
		{"axis out of range", softmaxBuild([]int{0, -1, -1}, []int{0, -1, -1}, ir.Int(3)),
			"op 1 softmax: attr axis 3 is out of range for X x of rank 3"},
		{"axis wrong kind", softmaxBuild([]int{0, -1, -1}, []int{0, -1, -1}, ir.Float(1)),
			"op 1 softmax: attr axis has kind float, want int"},
	} {
		t.Run(c.name, func(t *testing.T) { checkCompat(t, c.build, impl, c.err) })
	}
}
