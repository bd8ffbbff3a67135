package sim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/distpass/distpass/ir"
)

func TestKernelValues(t *testing.T) {
	x23 := tf(sh(2, 3), 1, 2, 3, 4, 5, 6)
	cases := []struct {
		name string
		op   *ir.Op
		in   Args
		slot string
		want *Tensor
	}{
		{"matmul_v2", mkOp("matmul_v2", Sl("X", "x", "Y", "y"), Sl("Out", "o")),
			Args{"X": {x23}, "Y": {tf(sh(3, 2), 1, 0, 0, 1, 1, 1)}}, "Out", tf(sh(2, 2), 4, 5, 10, 11)},
		{"matmul_v2/trans_x", mkOp("matmul_v2", Sl("X", "x", "Y", "y"), Sl("Out", "o"), A("trans_x", ir.Bool(true))),
			Args{"X": {x23}, "Y": {tf(sh(2, 1), 1, -1)}}, "Out", tf(sh(3, 1), -3, -3, -3)},
		{"matmul_v2/batch", mkOp("matmul_v2", Sl("X", "x", "Y", "y"), Sl("Out", "o")),
			Args{"X": {tf(sh(2, 1, 2), 1, 2, 3, 4)}, "Y": {tf(sh(2, 1), 10, 1)}}, "Out", tf(sh(2, 1, 1), 12, 34)},
		{"matmul/alpha", mkOp("matmul", Sl("X", "x", "Y", "y"), Sl("Out", "o"), A("alpha", ir.Float(0.5)), A("transpose_Y", ir.Bool(true))),
			Args{"X": {tf(sh(1, 2), 1, 2)}, "Y": {tf(sh(1, 2), 3, 4)}}, "Out", tf(sh(1, 1), 5.5)},
		{"mul", mkOp("mul", Sl("X", "x", "Y", "y"), Sl("Out", "o"), A("x_num_col_dims", ir.Int(1))),
			Args{"X": {tf(sh(1, 2, 2), 1, 2, 3, 4)}, "Y": {tf(sh(4, 1), 1, 1, 1, 1)}}, "Out", tf(sh(1, 1), 10)},
		{"elementwise_add/axis", mkOp("elementwise_add", Sl("X", "x", "Y", "y"), Sl("Out", "o"), A("axis", ir.Int(0))),
			Args{"X": {x23}, "Y": {tf(sh(2), 10, 20)}}, "Out", tf(sh(2, 3), 11, 12, 13, 24, 25, 26)},
		{"elementwise_sub/trailing", mkOp("elementwise_sub", Sl("X", "x", "Y", "y"), Sl("Out", "o"), A("axis", ir.Int(-1))),
			Args{"X": {x23}, "Y": {tf(sh(3), 1, 2, 3)}}, "Out", tf(sh(2, 3), 0, 0, 0, 3, 3, 3)},
		{"elementwise_mul", mkOp("elementwise_mul", Sl("X", "x", "Y", "y"), Sl("Out", "o")),
			Args{"X": {x23}, "Y": {tf(sh(), 2)}}, "Out", tf(sh(2, 3), 2, 4, 6, 8, 10, 12)},
		{"elementwise_div", mkOp("elementwise_div", Sl("X", "x", "Y", "y"), Sl("Out", "o")),
			Args{"X": {x23}, "Y": {tf(sh(2, 1), 2, 4)}}, "Out", tf(sh(2, 3), 0.5, 1, 1.5, 1, 1.25, 1.5)},
		{"less_than", mkOp("less_than", Sl("X", "x", "Y", "y"), Sl("Out", "o")),
			Args{"X": {tf(sh(3), 1, 2, 3)}, "Y": {tf(sh(1), 2)}}, "Out", MustFromData(ir.Boolean, sh(3), []float64{1, 0, 0})},
		{"relu", mkOp("relu", Sl("X", "x"), Sl("Out", "o")), Args{"X": {tf(sh(3), -1, 0, 2)}}, "Out", tf(sh(3), 0, 0, 2)},
		{"relu_grad", mkOp("relu_grad", Sl("Out", "o", "Out@GRAD", "g"), Sl("X@GRAD", "d")),
			Args{"Out": {tf(sh(3), 0, 0, 2)}, "Out@GRAD": {tf(sh(3), 5, 6, 7)}}, "X@GRAD", tf(sh(3), 0, 0, 7)},
		{"gelu", mkOp("gelu", Sl("X", "x"), Sl("Out", "o")), Args{"X": {td(sh(3), 0, 1, -1)}}, "Out",
			td(sh(3), 0, 0.5*(1+math.Erf(1/math.Sqrt2)), -0.5*(1-math.Erf(1/math.Sqrt2)))},
		{"tanh", mkOp("tanh", Sl("X", "x"), Sl("Out", "o")), Args{"X": {td(sh(2), 0, 1)}}, "Out", td(sh(2), 0, math.Tanh(1))},
		{"scale", mkOp("scale", Sl("X", "x"), Sl("Out", "o"), A("scale", ir.Float(2)), A("bias", ir.Float(1))),
			Args{"X": {tf(sh(2), 1, 2)}}, "Out", tf(sh(2), 3, 5)},
		{"scale/bias_before", mkOp("scale", Sl("X", "x"), Sl("Out", "o"), A("scale", ir.Float(2)), A("bias", ir.Float(1)), A("bias_after_scale", ir.Bool(false))),
			Args{"X": {tf(sh(2), 1, 2)}}, "Out", tf(sh(2), 4, 6)},
		{"softmax", mkOp("softmax", Sl("X", "x"), Sl("Out", "o"), A("axis", ir.Int(-1))),
			Args{"X": {td(sh(1, 2), 0, math.Log(3))}}, "Out", td(sh(1, 2), 0.25, 0.75)},
		{"reduce_sum", mkOp("reduce_sum", Sl("X", "x"), Sl("Out", "o"), A("dim", ir.Ints{0})), Args{"X": {x23}}, "Out", tf(sh(3), 5, 7, 9)},
		{"reduce_mean/keep", mkOp("reduce_mean", Sl("X", "x"), Sl("Out", "o"), A("dim", ir.Ints{-1}), A("keep_dim", ir.Bool(true))),
			Args{"X": {x23}}, "Out", tf(sh(2, 1), 2, 5)},
		{"reduce_sum/all", mkOp("reduce_sum", Sl("X", "x"), Sl("Out", "o"), A("reduce_all", ir.Bool(true))), Args{"X": {x23}}, "Out", tf(sh(), 21)},
		{"sum", mkOp("sum", Sl("X", "a"), Sl("Out", "o")), Args{"X": {tf(sh(2), 1, 2), tf(sh(2), 10, 20), tf(sh(2), 100, 200)}}, "Out", tf(sh(2), 111, 222)},
		{"mean", mkOp("mean", Sl("X", "x"), Sl("Out", "o")), Args{"X": {x23}}, "Out", tf(sh(), 3.5)},
		{"mean_grad", mkOp("mean_grad", Sl("X", "x", "Out@GRAD", "g"), Sl("X@GRAD", "d")), Args{"X": {tf(sh(2, 2), 1, 2, 3, 4)}, "Out@GRAD": {tf(sh(), 2)}},
			"X@GRAD", tf(sh(2, 2), 0.5, 0.5, 0.5, 0.5)},
		{"fill_constant", mkOp("fill_constant", nil, Sl("Out", "o"), A("dtype", ir.Int(3)), A("shape", ir.Ints{2}), A("value", ir.Float(7.9))),
			Args{}, "Out", MustFromData(ir.I64, sh(2), []float64{7, 7})},
		{"cast", mkOp("cast", Sl("X", "x"), Sl("Out", "o"), A("in_dtype", ir.Int(5)), A("out_dtype", ir.Int(2))),
			Args{"X": {tf(sh(3), -1.5, 0.5, 2.75)}}, "Out", MustFromData(ir.I32, sh(3), []float64{-1, 0, 2})},
		{"cast/bool", mkOp("cast", Sl("X", "x"), Sl("Out", "o"), A("out_dtype", ir.Int(0))),
			Args{"X": {tf(sh(2), 0, -3)}}, "Out", MustFromData(ir.Boolean, sh(2), []float64{0, 1})},
		{"reshape2", mkOp("reshape2", Sl("X", "x"), Sl("Out", "o"), A("shape", ir.Ints{0, -1, 1})), Args{"X": {x23}}, "Out", tf(sh(2, 3, 1), 1, 2, 3, 4, 5, 6)},
		{"transpose2", mkOp("transpose2", Sl("X", "x"), Sl("Out", "o"), A("axis", ir.Ints{1, 0})), Args{"X": {x23}}, "Out", tf(sh(3, 2), 1, 4, 2, 5, 3, 6)},
		{"lookup_table_v2", mkOp("lookup_table_v2", Sl("Ids", "i", "W", "w"), Sl("Out", "o")),
			Args{"Ids": {MustFromData(ir.I64, sh(3), []float64{2, 0, 2})}, "W": {tf(sh(3, 2), 1, 2, 3, 4, 5, 6)}}, "Out", tf(sh(3, 2), 5, 6, 1, 2, 5, 6)},
		{"c_embedding", mkOp("c_embedding", Sl("Ids", "i", "W", "w"), Sl("Out", "o"), A("start_index", ir.Int(1))),
			Args{"Ids": {MustFromData(ir.I64, sh(3), []float64{0, 1, 2})}, "W": {tf(sh(1, 2), 7, 8)}}, "Out", tf(sh(3, 2), 0, 0, 7, 8, 0, 0)},
		{"c_embedding_grad", mkOp("c_embedding_grad", Sl("Ids", "i", "W", "w", "Out@GRAD", "g"), Sl("W@GRAD", "d"), A("start_index", ir.Int(1))),
			Args{"Ids": {MustFromData(ir.I64, sh(3), []float64{1, 0, 1})}, "W": {tf(sh(1, 2), 7, 8)}, "Out@GRAD": {tf(sh(3, 2), 1, 2, 3, 4, 5, 6)}},
			"W@GRAD", tf(sh(1, 2), 6, 8)},
		{"softmax_with_cross_entropy", mkOp("softmax_with_cross_entropy", Sl("Logits", "x", "Label", "l"), Sl("Softmax", "s", "Loss", "o")),
			Args{"Logits": {td(sh(1, 2), 0, math.Log(3))}, "Label": {MustFromData(ir.I64, sh(1, 1), []float64{1})}}, "Loss", td(sh(1, 1), -math.Log(0.75))},
		{"layer_norm", mkOp("layer_norm", Sl("X", "x"), Sl("Y", "y", "Mean", "m", "Variance", "v"), A("epsilon", ir.Float(0))),
			Args{"X": {td(sh(1, 2), 1, 3)}}, "Y", td(sh(1, 2), -1, 1)},
		{"sgd", mkOp("sgd", Sl("Param", "p", "Grad", "g", "LearningRate", "lr"), Sl("ParamOut", "p")),
			Args{"Param": {tf(sh(2), 1, 2)}, "Grad": {tf(sh(2), 10, -10)}, "LearningRate": {tf(sh(1), 0.5)}}, "ParamOut", tf(sh(2), -4, 7)},
		{"momentum", mkOp("momentum", Sl("Param", "p", "Grad", "g", "Velocity", "v", "LearningRate", "lr"), Sl("ParamOut", "p", "VelocityOut", "v"), A("mu", ir.Float(0.5))),
			Args{"Param": {tf(sh(1), 1)}, "Grad": {tf(sh(1), 2)}, "Velocity": {tf(sh(1), 4)}, "LearningRate": {tf(sh(1), 0.25)}}, "ParamOut", tf(sh(1), 0)},
		{"increment", mkOp("increment", Sl("X", "x"), Sl("Out", "x"), A("step", ir.Float(2))),
			Args{"X": {MustFromData(ir.I64, sh(1), []float64{3})}}, "Out", MustFromData(ir.I64, sh(1), []float64{5})},
		{"assign", mkOp("assign", Sl("X", "x"), Sl("Out", "o")), Args{"X": {x23}}, "Out", x23},
		{"reshard", mkOp("reshard", Sl("X", "x"), Sl("Out", "o"), A("origin", ir.String("op 2 relu X"))), Args{"X": {x23}}, "Out", x23},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := run(t, c.op, c.in)
			want := c.want
			if len(out[c.slot]) != 1 {
				t.Fatalf("no %s", c.slot)
			}
			got := out[c.slot][0]
			if d, err := MaxAbsDiff(got, want); err != nil || d > 1e-15 || got.DType != want.DType {
				t.Errorf("%s = %v, want %v", c.slot, got, want)
			}
		})
	}
}

func TestAdamStep(t *testing.T) {
	op := mkOp("adam", Sl("Param", "p", "Grad", "g", "LearningRate", "lr", "Moment1", "m1", "Moment2", "m2", "Beta1Pow", "b1", "Beta2Pow", "b2"),
		Sl("ParamOut", "p", "Moment1Out", "m1", "Moment2Out", "m2", "Beta1PowOut", "b1", "Beta2PowOut", "b2"),
		A("beta1", ir.Float(0.5)), A("beta2", ir.Float(0.75)), A("epsilon", ir.Float(0)))
	out := run(t, op, Args{"Param": {td(sh(1), 1)}, "Grad": {td(sh(1), 2)}, "LearningRate": {td(sh(1), 0.5)},
		"Moment1": {td(sh(1), 0)}, "Moment2": {td(sh(1), 0)}, "Beta1Pow": {td(sh(1), 0.5)}, "Beta2Pow": {td(sh(1), 0.75)}})
	// m1 = 1, m2 = 1, lr' = 0.5*sqrt(0.25)/0.5 = 0.5, p = 1 - 0.5*1/1
	wantT(t, "Moment1Out", out["Moment1Out"][0], td(sh(1), 1))
	wantT(t, "Moment2Out", out["Moment2Out"][0], td(sh(1), 1))
	wantT(t, "ParamOut", out["ParamOut"][0], td(sh(1), 0.5))
	wantT(t, "Beta1PowOut", out["Beta1PowOut"][0], td(sh(1), 0.25))
	wantT(t, "Beta2PowOut", out["Beta2PowOut"][0], td(sh(1), 0.5625))
}

func TestF32Rounding(t *testing.T) {
	op := mkOp("scale", Sl("X", "x"), Sl("Out", "o"), A("scale", ir.Float(0.1)))
	got := run(t, op, Args{"X": {tf(sh(1), 1)}})["Out"][0].Data[0]
	if got != float64(float32(0.1)) {
		t.Errorf("f32 scale by 0.1 = %v, want float32(0.1)", got)
	}
}

func TestRandomSequence(t *testing.T) {
	op := mkOp("uniform_random", nil, Sl("Out", "o"), A("shape", ir.Ints{2, 2}), A("min", ir.Float(-1)), A("max", ir.Float(1)), A("seed", ir.Int(3)), A("dtype", ir.Int(6)))
	a := run(t, op, Args{})["Out"][0]
	r := rand.New(rand.NewPCG(3, 0))
	for i, v := range a.Data {
		if want := -1 + 2*r.Float64(); v != want {
			t.Fatalf("uniform_random[%d] = %v, want %v", i, v, want)
		}
	}
	g := mkOp("gaussian_random", nil, Sl("Out", "o"), A("shape", ir.Ints{3}), A("mean", ir.Float(1)), A("std", ir.Float(2)), A("seed", ir.Int(4)), A("dtype", ir.Int(6)))
	b := run(t, g, Args{})["Out"][0]
	r = rand.New(rand.NewPCG(4, 0))
	for i, v := range b.Data {
		if want := 1 + 2*r.NormFloat64(); v != want {
			t.Fatalf("gaussian_random[%d] = %v, want %v", i, v, want)
		}
	}
}

// TestDropoutShardedMask checks that a rank's dropout, given the global
// shape and its block's offset, draws its part of the serial mask.
func TestDropoutShardedMask(t *testing.T) {
	op := mkOp("dropout", Sl("X", "x"), Sl("Out", "o", "Mask", "m"), A("dropout_prob", ir.Float(0.5)), A("seed", ir.Int(11)))
	x := Full(ir.F64, 1, 4, 6)
	serial := run(t, op, Args{"X": {x}})["Mask"][0]
	kept := 0.0
	for _, v := range serial.Data {
		kept += v
	}
	if kept == 0 || kept == 24 {
		t.Fatalf("mask keeps %v of 24", kept)
	}
	var parts []*Tensor
	for r := range int64(2) {
		shard, _ := x.Slice(1, 3*r, 3*r+3)
		rop := mkOp("dropout", Sl("X", "x"), Sl("Out", "o", "Mask", "m"), A("dropout_prob", ir.Float(0.5)), A("seed", ir.Int(11)),
			A("global_shape", ir.Ints{4, 6}), A("shard_offset", ir.Ints{0, 3 * r}))
		parts = append(parts, run(t, rop, Args{"X": {shard}})["Mask"][0])
	}
	got, err := Concat(1, parts...)
	if err != nil {
		t.Fatal(err)
	}
	wantT(t, "gathered mask", got, serial)
}

// TestRandomFillShardedDraw checks that uniform_random and
// gaussian_random, given the global shape and a block's offset, draw
// exactly that block of the serial draw, for blocks along either dim and
// both, and that two blocks of one draw differ.
func TestRandomFillShardedDraw(t *testing.T) {
	for _, typ := range []string{"uniform_random", "gaussian_random"} {
		serialOp := mkOp(typ, nil, Sl("Out", "o"), A("shape", ir.Ints{4, 6}), A("seed", ir.Int(7)), A("dtype", ir.Int(6)))
		serial := run(t, serialOp, Args{})["Out"][0]
		for _, c := range []struct{ local, offset []int64 }{
			{[]int64{4, 3}, []int64{0, 3}}, {[]int64{2, 6}, []int64{2, 0}}, {[]int64{2, 3}, []int64{2, 3}}, {[]int64{2, 3}, []int64{0, 0}},
		} {
			op := mkOp(typ, nil, Sl("Out", "o"), A("shape", ir.Ints(c.local)), A("seed", ir.Int(7)), A("dtype", ir.Int(6)),
				A("global_shape", ir.Ints{4, 6}), A("shard_offset", ir.Ints(c.offset)))
			got := run(t, op, Args{})["Out"][0]
			want, _ := serial.Slice(0, c.offset[0], c.offset[0]+c.local[0])
			want, _ = want.Slice(1, c.offset[1], c.offset[1]+c.local[1])
			wantT(t, fmt.Sprintf("%s block %v at %v", typ, c.local, c.offset), got, want)
		}
		a := run(t, mkOp(typ, nil, Sl("Out", "o"), A("shape", ir.Ints{4, 3}), A("seed", ir.Int(7)), A("dtype", ir.Int(6)),
			A("global_shape", ir.Ints{4, 6}), A("shard_offset", ir.Ints{0, 0})), Args{})["Out"][0]
		b := run(t, mkOp(typ, nil, Sl("Out", "o"), A("shape", ir.Ints{4, 3}), A("seed", ir.Int(7)), A("dtype", ir.Int(6)),
			A("global_shape", ir.Ints{4, 6}), A("shard_offset", ir.Ints{0, 3})), Args{})["Out"][0]
		if slices.Equal(a.Data, b.Data) {
			t.Errorf("%s: the two column halves of one draw are equal", typ)
		}
		bad := mkOp(typ, nil, Sl("Out", "o"), A("shape", ir.Ints{4, 4}), A("seed", ir.Int(7)),
			A("global_shape", ir.Ints{4, 6}), A("shard_offset", ir.Ints{0, 3}))
		if _, err := DefaultKernels()[typ](bad, Args{}); err == nil || !strings.Contains(err.Error(), "does not fit") {
			t.Errorf("%s: a block past the global shape: err %v, want \"does not fit\"", typ, err)
		}
	}
}

func TestShapeErrors(t *testing.T) {
	mm := mkOp("matmul_v2", Sl("X", "x", "Y", "y"), Sl("Out", "o"))
	mm.ID = 3
	wantErr(t, mm, Args{"X": {Zeros(ir.F32, 2, 3)}, "Y": {Zeros(ir.F32, 4, 5)}}, "op 3 matmul_v2: matmul of shapes [2 3] and [4 5]")
	wantErr(t, mm, Args{"X": {Zeros(ir.F32, 2, 2, 3)}, "Y": {Zeros(ir.F32, 3, 3, 5)}}, "batch dims do not broadcast")
	wantErr(t, mm, Args{"X": {Zeros(ir.F32, 2, 3)}}, "op 3 matmul_v2: input Y")
	add := mkOp("elementwise_add", Sl("X", "x", "Y", "y"), Sl("Out", "o"), A("axis", ir.Int(-1)))
	wantErr(t, add, Args{"X": {Zeros(ir.F32, 2, 3)}, "Y": {Zeros(ir.F32, 2)}}, "op 1 elementwise_add: shapes [2 3] and [2] do not broadcast")
	rs := mkOp("reshape2", Sl("X", "x"), Sl("Out", "o"), A("shape", ir.Ints{4, -1}))
	wantErr(t, rs, Args{"X": {Zeros(ir.F32, 2, 3)}}, "op 1 reshape2: cannot reshape X [2 3]")
	tr := mkOp("transpose2", Sl("X", "x"), Sl("Out", "o"), A("axis", ir.Ints{0, 0}))
	wantErr(t, tr, Args{"X": {Zeros(ir.F32, 2, 3)}}, "not a permutation")
	emb := mkOp("lookup_table_v2", Sl("Ids", "i", "W", "w"), Sl("Out", "o"))
	wantErr(t, emb, Args{"Ids": {Full(ir.I64, 5, 1)}, "W": {Zeros(ir.F32, 3, 2)}}, "id 5 out of range for W [3 2]")
	sg := mkOp("sgd", Sl("Param", "p", "Grad", "g", "LearningRate", "lr"), Sl("ParamOut", "p"))
	wantErr(t, sg, Args{"Param": {Zeros(ir.F32, 2)}, "Grad": {Zeros(ir.F32, 3)}, "LearningRate": {Zeros(ir.F32, 1)}}, "Param shape [2], Grad shape [3]")
	xe := mkOp("softmax_with_cross_entropy", Sl("Logits", "x", "Label", "l"), Sl("Softmax", "s", "Loss", "o"))
	wantErr(t, xe, Args{"Logits": {Zeros(ir.F32, 2, 3)}, "Label": {Zeros(ir.I64, 2)}}, "Label shape [2]")
	fc := mkOp("fill_constant", nil, Sl("Out", "o"), A("dtype", ir.Int(99)), A("shape", ir.Ints{1}))
	wantErr(t, fc, Args{}, "unknown dtype code dtype = 99")
}
