package sim

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/distpass/distpass/ir"
)

// ti returns an i64 tensor.
func ti(shape []int64, data ...float64) *Tensor { return MustFromData(ir.I64, shape, data) }

// kcase is one kernel call with the exact outputs it must give.
type kcase struct {
	name string
	op   *ir.Op
	in   Args
	want Args
}

// checkCases runs each case, compares every wanted output slot exactly
// (dtype, shape and bits), and checks that the inputs are left unchanged.
func checkCases(t *testing.T, cases []kcase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := Args{}
			for s, ts := range c.in {
				for _, x := range ts {
					before[s] = append(before[s], x.Clone())
				}
			}
			out := run(t, c.op, c.in)
			for slot, ws := range c.want {
				if len(out[slot]) != len(ws) {
					t.Fatalf("%s: have %d tensors, want %d", slot, len(out[slot]), len(ws))
				}
				for i, w := range ws {
					wantT(t, slot, out[slot][i], w)
				}
			}
			for s, ts := range before {
				for i, x := range ts {
					if !Equal(c.in[s][i], x) {
						t.Errorf("input %s modified: %v, was %v", s, c.in[s][i], x)
					}
				}
			}
		})
	}
}

func topKOp(attrs ...ir.Attr) *ir.Op {
	return mkOp("top_k_v2", Sl("X", "x"), Sl("Out", "o", "Indices", "i"), attrs...)
}

func topKGradOp(attrs ...ir.Attr) *ir.Op {
	return mkOp("top_k_v2_grad", Sl("X", "x", "Indices", "i", "Out@GRAD", "g"), Sl("X@GRAD", "dx"), attrs...)
}

func gmmOp() *ir.Op {
	return mkOp("grouped_matmul", Sl("X", "x", "W", "w", "ExpertCount", "c"), Sl("Out", "o"))
}

func gmmGradOp() *ir.Op {
	return mkOp("grouped_matmul_grad", Sl("X", "x", "W", "w", "ExpertCount", "c", "Out@GRAD", "g"), Sl("X@GRAD", "dx", "W@GRAD", "dw"))
}

func TestMoEKernelValues(t *testing.T) {
	k := func(v int64) ir.Attr { return A("k", ir.Int(v)) }
	x24 := tf(sh(2, 4), 1, 3, 3, 2, 5, -1, 0, 5)
	x32 := tf(sh(3, 2), 1, 2, 3, 4, 5, 6)
	i23 := ti(sh(2, 3), 1, 2, 3, 4, 5, 6)
	cumOp := func(attrs ...ir.Attr) *ir.Op { return mkOp("cumsum", Sl("X", "x"), Sl("Out", "o"), attrs...) }
	gatherOp := mkOp("gather", Sl("X", "x", "Index", "i"), Sl("Out", "o"))
	scatterOp := func(over bool) *ir.Op {
		return mkOp("scatter", Sl("X", "x", "Ids", "i", "Updates", "u"), Sl("Out", "o"), A("overwrite", ir.Bool(over)))
	}
	ids := ti(sh(3), 2, 0, 2)
	upd := tf(sh(3, 2), 10, 20, 30, 40, 50, 60)
	fdiv := func(attrs ...ir.Attr) *ir.Op {
		return mkOp("elementwise_floordiv", Sl("X", "x", "Y", "y"), Sl("Out", "o"), attrs...)
	}
	num := ti(sh(2, 3), 7, -7, 7, -7, 6, -6)
	w := tf(sh(2, 2, 2), 1, 0, 0, 1, 1, 1, 0, 2) // W[0] = I, W[1] = [[1, 1], [0, 2]]
	ec := ti(sh(4), 1, 0, 1, 1)                  // 2 workers: expert 0 has 1+1 rows, expert 1 has 0+1
	cases := []kcase{
		// top_k_v2: ties go to the lower index
		{"top_k_v2/largest-ties", topKOp(k(2)), Args{"X": {x24}},
			Args{"Out": {tf(sh(2, 2), 3, 3, 5, 5)}, "Indices": {ti(sh(2, 2), 1, 2, 0, 3)}}},
		{"top_k_v2/smallest", topKOp(k(3), A("largest", ir.Bool(false))), Args{"X": {x24}},
			Args{"Out": {tf(sh(2, 3), 1, 2, 3, -1, 0, 5)}, "Indices": {ti(sh(2, 3), 0, 3, 1, 1, 2, 0)}}},
		{"top_k_v2/axis0", topKOp(k(1), A("axis", ir.Int(0))), Args{"X": {tf(sh(2, 3), 1, 5, 2, 4, 0, 2)}},
			Args{"Out": {tf(sh(1, 3), 4, 5, 2)}, "Indices": {ti(sh(1, 3), 1, 0, 0)}}},
		{"top_k_v2/unsorted-same-order", topKOp(k(2), A("sorted", ir.Bool(false))), Args{"X": {x24}},
			Args{"Out": {tf(sh(2, 2), 3, 3, 5, 5)}, "Indices": {ti(sh(2, 2), 1, 2, 0, 3)}}},
		{"top_k_v2/nan-largest", topKOp(k(2)), Args{"X": {td(sh(3), 1, math.NaN(), 2)}},
			Args{"Out": {td(sh(2), math.NaN(), 2)}, "Indices": {ti(sh(2), 1, 2)}}},
		{"top_k_v2/i64", topKOp(), Args{"X": {ti(sh(3), 4, 9, 1)}},
			Args{"Out": {ti(sh(1), 9)}, "Indices": {ti(sh(1), 1)}}},
		{"top_k_v2/K-input", mkOp("top_k_v2", Sl("X", "x", "K", "k"), Sl("Out", "o", "Indices", "i"), k(1)),
			Args{"X": {tf(sh(3), 4, 9, 1)}, "K": {MustFromData(ir.I32, sh(1), []float64{2})}},
			Args{"Out": {tf(sh(2), 9, 4)}, "Indices": {ti(sh(2), 1, 0)}}},
		{"top_k_v2_grad", topKGradOp(k(2)),
			Args{"X": {tf(sh(2, 3), 9, 9, 9, 9, 9, 9)}, "Indices": {ti(sh(2, 2), 2, 0, 1, 1)}, "Out@GRAD": {tf(sh(2, 2), 1, 2, 3, 4)}},
			Args{"X@GRAD": {tf(sh(2, 3), 2, 0, 1, 0, 7, 0)}}},
		{"top_k_v2_grad/axis0", topKGradOp(k(1), A("axis", ir.Int(0))),
			Args{"X": {tf(sh(2, 3), 1, 5, 2, 4, 0, 2)}, "Indices": {ti(sh(1, 3), 1, 0, 0)}, "Out@GRAD": {tf(sh(1, 3), 7, 8, 9)}},
			Args{"X@GRAD": {tf(sh(2, 3), 0, 8, 9, 7, 0, 0)}}},

		// number_count: -1 (dropped) is skipped
		{"number_count", mkOp("number_count", Sl("numbers", "n"), Sl("Out", "o"), A("upper_range", ir.Int(4))),
			Args{"numbers": {ti(sh(2, 3), 0, 2, -1, 2, 2, 1)}}, Args{"Out": {ti(sh(4), 1, 1, 3, 0)}}},

		// cumsum
		{"cumsum/last", cumOp(), Args{"X": {i23}}, Args{"Out": {ti(sh(2, 3), 1, 3, 6, 4, 9, 15)}}},
		{"cumsum/axis0", cumOp(A("axis", ir.Int(0))), Args{"X": {i23}}, Args{"Out": {ti(sh(2, 3), 1, 2, 3, 5, 7, 9)}}},
		{"cumsum/exclusive", cumOp(A("axis", ir.Int(1)), A("exclusive", ir.Bool(true))), Args{"X": {i23}},
			Args{"Out": {ti(sh(2, 3), 0, 1, 3, 0, 4, 9)}}},
		{"cumsum/reverse", cumOp(A("reverse", ir.Bool(true))), Args{"X": {i23}},
			Args{"Out": {ti(sh(2, 3), 6, 5, 3, 15, 11, 6)}}},
		{"cumsum/exclusive-reverse", cumOp(A("reverse", ir.Bool(true)), A("exclusive", ir.Bool(true))), Args{"X": {i23}},
			Args{"Out": {ti(sh(2, 3), 5, 3, 0, 11, 6, 0)}}},
		{"cumsum/flatten", cumOp(A("flatten", ir.Bool(true)), A("axis", ir.Int(0))), Args{"X": {i23}},
			Args{"Out": {ti(sh(6), 1, 3, 6, 10, 15, 21)}}},
		{"cumsum/f32", cumOp(), Args{"X": {tf(sh(3), 0.5, 0.25, -1)}}, Args{"Out": {tf(sh(3), 0.5, 0.75, -0.25)}}},

		// assign_pos: slots of expert 0 (1, 5), then 1 (0, 3), then 2 (4); slot 2 dropped
		{"assign_pos", mkOp("assign_pos", Sl("X", "x", "cum_count", "c", "eff_num_len", "n"), Sl("Out", "o")),
			Args{"X": {ti(sh(2, 3), 1, 0, -1, 1, 2, 0)}, "cum_count": {ti(sh(3), 2, 4, 5)}, "eff_num_len": {ti(sh(1), 5)}},
			Args{"Out": {ti(sh(5), 1, 5, 0, 3, 4)}}},
		{"assign_pos/empty-expert", mkOp("assign_pos", Sl("X", "x", "cum_count", "c"), Sl("Out", "o")),
			Args{"X": {ti(sh(4), 2, -1, 2, 0)}, "cum_count": {ti(sh(3), 1, 1, 3)}},
			Args{"Out": {ti(sh(3), 3, 0, 2)}}},

		// gather, gather_grad
		{"gather", gatherOp, Args{"X": {x32}, "Index": {ids}}, Args{"Out": {tf(sh(3, 2), 5, 6, 1, 2, 5, 6)}}},
		{"gather/index-M1", gatherOp, Args{"X": {x32}, "Index": {ti(sh(2, 1), 2, 1)}}, Args{"Out": {tf(sh(2, 2), 5, 6, 3, 4)}}},
		{"gather/i32-3d", gatherOp, Args{"X": {tf(sh(2, 1, 2), 1, 2, 3, 4)}, "Index": {MustFromData(ir.I32, sh(1), []float64{1})}},
			Args{"Out": {tf(sh(1, 1, 2), 3, 4)}}},
		{"gather_grad", mkOp("gather_grad", Sl("X", "x", "Index", "i", "Out@GRAD", "g"), Sl("X@GRAD", "dx")),
			Args{"X": {x32}, "Index": {ids}, "Out@GRAD": {tf(sh(3, 2), 1, 2, 3, 4, 5, 6)}},
			Args{"X@GRAD": {tf(sh(3, 2), 3, 4, 0, 0, 6, 8)}}},

		// scatter, scatter_grad
		{"scatter/overwrite", scatterOp(true), Args{"X": {x32}, "Ids": {ids}, "Updates": {upd}},
			Args{"Out": {tf(sh(3, 2), 30, 40, 3, 4, 50, 60)}}},
		{"scatter/add", scatterOp(false), Args{"X": {x32}, "Ids": {ids}, "Updates": {upd}},
			Args{"Out": {tf(sh(3, 2), 30, 40, 3, 4, 60, 80)}}},
		{"scatter/ids-M1", scatterOp(true), Args{"X": {x32}, "Ids": {ti(sh(1, 1), 1)}, "Updates": {tf(sh(1, 2), 7, 8)}},
			Args{"Out": {tf(sh(3, 2), 1, 2, 7, 8, 5, 6)}}},
		{"scatter_grad", mkOp("scatter_grad", Sl("Ids", "i", "Updates", "u", "Out@GRAD", "g"), Sl("X@GRAD", "dx", "Updates@GRAD", "du")),
			Args{"Ids": {ids}, "Updates": {upd}, "Out@GRAD": {tf(sh(3, 2), 1, 2, 3, 4, 5, 6)}},
			Args{"X@GRAD": {tf(sh(3, 2), 0, 0, 3, 4, 0, 0)}, "Updates@GRAD": {tf(sh(3, 2), 5, 6, 1, 2, 5, 6)}}},

		// grouped_matmul: rows 0-1 to expert 0 (identity), row 2 to expert 1
		{"grouped_matmul", gmmOp(), Args{"X": {x32}, "W": {w}, "ExpertCount": {ec}},
			Args{"Out": {tf(sh(3, 2), 1, 2, 3, 4, 5, 17)}}},
		{"grouped_matmul_grad", gmmGradOp(),
			Args{"X": {x32}, "W": {w}, "ExpertCount": {ec}, "Out@GRAD": {tf(sh(3, 2), 1, 0, 0, 1, 1, 1)}},
			Args{"X@GRAD": {tf(sh(3, 2), 1, 0, 0, 1, 2, 2)}, "W@GRAD": {tf(sh(2, 2, 2), 1, 3, 2, 4, 5, 5, 6, 6)}}},
		{"grouped_matmul_grad/idle-expert", gmmGradOp(),
			Args{"X": {tf(sh(2, 2), 1, 2, 3, 4)}, "W": {w}, "ExpertCount": {ti(sh(2), 2, 0)}, "Out@GRAD": {tf(sh(2, 2), 1, 0, 0, 1)}},
			Args{"X@GRAD": {tf(sh(2, 2), 1, 0, 0, 1)}, "W@GRAD": {tf(sh(2, 2, 2), 1, 3, 2, 4, 0, 0, 0, 0)}}},

		// elementwise_floordiv rounds toward -Inf
		{"elementwise_floordiv", fdiv(), Args{"X": {num}, "Y": {ti(sh(3), 2, 2, -2)}},
			Args{"Out": {ti(sh(2, 3), 3, -4, -4, -4, 3, 3)}}},
		{"elementwise_floordiv/axis0", fdiv(A("axis", ir.Int(0))), Args{"X": {num}, "Y": {ti(sh(2), 3, -3)}},
			Args{"Out": {ti(sh(2, 3), 2, -3, 2, 2, -2, 2)}}},
		{"elementwise_floordiv/scalar-i32", fdiv(),
			Args{"X": {MustFromData(ir.I32, sh(4), []float64{0, -1, 5, -5})}, "Y": {MustFromData(ir.I32, sh(), []float64{5})}},
			Args{"Out": {MustFromData(ir.I32, sh(4), []float64{0, -1, 1, -1})}}},

		// limit_by_capacity: expert 0 gets 4 then 1, expert 1 gets 1 then 1, expert 2 gets 0 then 3
		{"limit_by_capacity", mkOp("limit_by_capacity", Sl("expert_count", "e", "capacity", "c"), Sl("Out", "o"), A("n_worker", ir.Int(2))),
			Args{"expert_count": {ti(sh(6), 4, 1, 0, 3, 2, 5)}, "capacity": {ti(sh(3), 5, 2, 3)}},
			Args{"Out": {ti(sh(6), 4, 1, 0, 1, 1, 3)}}},

		// prune_gate_by_capacity
		{"prune_gate_by_capacity", mkOp("prune_gate_by_capacity", Sl("GateIdx", "g", "ExpertCount", "e"), Sl("NewGateIdx", "o"),
			A("n_expert", ir.Int(2)), A("n_worker", ir.Int(2))),
			Args{"GateIdx": {ti(sh(3, 3), 0, 0, 1, 2, -1, 2, 2, 3, 0)}, "ExpertCount": {ti(sh(4), 1, 0, 2, 3)}},
			Args{"NewGateIdx": {ti(sh(3, 3), 0, -1, -1, 2, -1, 2, -1, 3, -1)}}},
	}
	checkCases(t, cases)
}

// TestTopKTiesLongLane checks ties keep index order in a lane long enough
// (30) that an unstable sort would reorder them: X[i] = i mod 3.
func TestTopKTiesLongLane(t *testing.T) {
	x := Zeros(ir.F32, 30)
	for i := range x.Data {
		x.Data[i] = float64(i % 3)
	}
	for _, largest := range []bool{true, false} {
		out := run(t, topKOp(A("k", ir.Int(30)), A("largest", ir.Bool(largest))), Args{"X": {x}})
		wantV, wantI := Zeros(ir.F32, 30), Zeros(ir.I64, 30)
		j := 0
		for v := range 3 {
			if largest {
				v = 2 - v
			}
			for i := v; i < 30; i += 3 { // value v at i = v, v+3, ...
				wantV.Data[j], wantI.Data[j] = float64(v), float64(i)
				j++
			}
		}
		wantT(t, "Out", out["Out"][0], wantV)
		wantT(t, "Indices", out["Indices"][0], wantI)
	}
}

// TestMoEZeroTokens runs the MoE kernels with no tokens (0-row tensors).
func TestMoEZeroTokens(t *testing.T) {
	e0 := Zeros(ir.I64, 0)
	cases := []kcase{
		{"top_k_v2", topKOp(A("k", ir.Int(2))), Args{"X": {Zeros(ir.F32, 0, 4)}},
			Args{"Out": {Zeros(ir.F32, 0, 2)}, "Indices": {Zeros(ir.I64, 0, 2)}}},
		{"top_k_v2_grad", topKGradOp(A("k", ir.Int(2))),
			Args{"X": {Zeros(ir.F32, 0, 4)}, "Indices": {Zeros(ir.I64, 0, 2)}, "Out@GRAD": {Zeros(ir.F32, 0, 2)}},
			Args{"X@GRAD": {Zeros(ir.F32, 0, 4)}}},
		{"number_count", mkOp("number_count", Sl("numbers", "n"), Sl("Out", "o"), A("upper_range", ir.Int(3))),
			Args{"numbers": {Zeros(ir.I64, 0, 2)}}, Args{"Out": {Zeros(ir.I64, 3)}}},
		{"cumsum", mkOp("cumsum", Sl("X", "x"), Sl("Out", "o"), A("axis", ir.Int(0))),
			Args{"X": {Zeros(ir.I64, 0, 3)}}, Args{"Out": {Zeros(ir.I64, 0, 3)}}},
		{"assign_pos", mkOp("assign_pos", Sl("X", "x", "cum_count", "c", "eff_num_len", "n"), Sl("Out", "o")),
			Args{"X": {e0}, "cum_count": {Zeros(ir.I64, 3)}, "eff_num_len": {ti(sh(1), 0)}}, Args{"Out": {e0}}},
		{"gather/no-index", mkOp("gather", Sl("X", "x", "Index", "i"), Sl("Out", "o")),
			Args{"X": {tf(sh(2, 2), 1, 2, 3, 4)}, "Index": {e0}}, Args{"Out": {Zeros(ir.F32, 0, 2)}}},
		{"gather_grad/no-index", mkOp("gather_grad", Sl("X", "x", "Index", "i", "Out@GRAD", "g"), Sl("X@GRAD", "dx")),
			Args{"X": {tf(sh(2, 2), 1, 2, 3, 4)}, "Index": {e0}, "Out@GRAD": {Zeros(ir.F32, 0, 2)}}, Args{"X@GRAD": {Zeros(ir.F32, 2, 2)}}},
		{"scatter/no-ids", mkOp("scatter", Sl("X", "x", "Ids", "i", "Updates", "u"), Sl("Out", "o")),
			Args{"X": {tf(sh(2, 2), 1, 2, 3, 4)}, "Ids": {e0}, "Updates": {Zeros(ir.F32, 0, 2)}}, Args{"Out": {tf(sh(2, 2), 1, 2, 3, 4)}}},
		{"scatter/empty-x", mkOp("scatter", Sl("X", "x", "Ids", "i", "Updates", "u"), Sl("Out", "o")),
			Args{"X": {Zeros(ir.F32, 0, 2)}, "Ids": {e0}, "Updates": {Zeros(ir.F32, 0, 2)}}, Args{"Out": {Zeros(ir.F32, 0, 2)}}},
		{"grouped_matmul", gmmOp(), Args{"X": {Zeros(ir.F32, 0, 2)}, "W": {Full(ir.F32, 1, 2, 2, 3)}, "ExpertCount": {Zeros(ir.I64, 4)}},
			Args{"Out": {Zeros(ir.F32, 0, 3)}}},
		{"grouped_matmul_grad", gmmGradOp(),
			Args{"X": {Zeros(ir.F32, 0, 2)}, "W": {Full(ir.F32, 1, 2, 2, 3)}, "ExpertCount": {Zeros(ir.I64, 4)}, "Out@GRAD": {Zeros(ir.F32, 0, 3)}},
			Args{"X@GRAD": {Zeros(ir.F32, 0, 2)}, "W@GRAD": {Zeros(ir.F32, 2, 2, 3)}}},
		{"elementwise_floordiv", mkOp("elementwise_floordiv", Sl("X", "x", "Y", "y"), Sl("Out", "o")),
			Args{"X": {Zeros(ir.I64, 0, 3)}, "Y": {ti(sh(3), 1, 2, 3)}}, Args{"Out": {Zeros(ir.I64, 0, 3)}}},
		{"prune_gate_by_capacity", mkOp("prune_gate_by_capacity", Sl("GateIdx", "g", "ExpertCount", "e"), Sl("NewGateIdx", "o"),
			A("n_expert", ir.Int(2)), A("n_worker", ir.Int(1))),
			Args{"GateIdx": {Zeros(ir.I64, 0, 2)}, "ExpertCount": {ti(sh(2), 1, 1)}}, Args{"NewGateIdx": {Zeros(ir.I64, 0, 2)}}},
	}
	checkCases(t, cases)
}

// TestZeroSizeExistingKernels checks the existing kernels an expert with
// no rows runs through (matmul_v2, relu, gelu, elementwise_add/mul with
// broadcasting, reshape2 and their grads) accept a 0-size dim.
func TestZeroSizeExistingKernels(t *testing.T) {
	mmGrad := mkOp("matmul_v2_grad", Sl("X", "x", "Y", "y", "Out@GRAD", "g"), Sl("X@GRAD", "dx", "Y@GRAD", "dy"))
	y32 := tf(sh(3, 2), 1, 2, 3, 4, 5, 6)
	unary := func(typ, src string, x *Tensor) []kcase {
		return []kcase{
			{typ, mkOp(typ, Sl("X", "x"), Sl("Out", "o")), Args{"X": {x}}, Args{"Out": {like(x)}}},
			{typ + "_grad", mkOp(typ+"_grad", Sl(src, "s", "Out@GRAD", "g"), Sl("X@GRAD", "dx")),
				Args{src: {x}, "Out@GRAD": {like(x)}}, Args{"X@GRAD": {like(x)}}},
		}
	}
	bin := func(typ string, x, y *Tensor, out []int64, axis int64) []kcase {
		return []kcase{
			{typ + "/" + ir.Tensor(x.DType, x.Shape...).String() + "," + ir.Tensor(y.DType, y.Shape...).String(),
				mkOp(typ, Sl("X", "x", "Y", "y"), Sl("Out", "o"), A("axis", ir.Int(axis))),
				Args{"X": {x}, "Y": {y}}, Args{"Out": {Zeros(x.DType, out...)}}},
			{typ + "_grad/" + ir.Tensor(x.DType, x.Shape...).String() + "," + ir.Tensor(y.DType, y.Shape...).String(),
				mkOp(typ+"_grad", Sl("X", "x", "Y", "y", "Out@GRAD", "g"), Sl("X@GRAD", "dx", "Y@GRAD", "dy"), A("axis", ir.Int(axis))),
				Args{"X": {x}, "Y": {y}, "Out@GRAD": {Zeros(x.DType, out...)}},
				// the grad of a broadcast operand sums over no rows: zeros
				Args{"X@GRAD": {like(x)}, "Y@GRAD": {like(y)}}},
		}
	}
	cases := []kcase{
		{"matmul_v2/0-rows", mkOp("matmul_v2", Sl("X", "x", "Y", "y"), Sl("Out", "o")),
			Args{"X": {Zeros(ir.F32, 0, 3)}, "Y": {y32}}, Args{"Out": {Zeros(ir.F32, 0, 2)}}},
		{"matmul_v2_grad/0-rows", mmGrad, Args{"X": {Zeros(ir.F32, 0, 3)}, "Y": {y32}, "Out@GRAD": {Zeros(ir.F32, 0, 2)}},
			Args{"X@GRAD": {Zeros(ir.F32, 0, 3)}, "Y@GRAD": {Zeros(ir.F32, 3, 2)}}},
		{"matmul_v2/0-rows-trans_x", mkOp("matmul_v2", Sl("X", "x", "Y", "y"), Sl("Out", "o"), A("trans_x", ir.Bool(true))),
			Args{"X": {Zeros(ir.F32, 3, 0)}, "Y": {y32}}, Args{"Out": {Zeros(ir.F32, 0, 2)}}},
		{"matmul_v2/0-contracted", mkOp("matmul_v2", Sl("X", "x", "Y", "y"), Sl("Out", "o")),
			Args{"X": {Zeros(ir.F32, 2, 0)}, "Y": {Zeros(ir.F32, 0, 3)}}, Args{"Out": {Zeros(ir.F32, 2, 3)}}},
		{"matmul_v2_grad/0-contracted", mmGrad, Args{"X": {Zeros(ir.F32, 2, 0)}, "Y": {Zeros(ir.F32, 0, 3)}, "Out@GRAD": {Full(ir.F32, 1, 2, 3)}},
			Args{"X@GRAD": {Zeros(ir.F32, 2, 0)}, "Y@GRAD": {Zeros(ir.F32, 0, 3)}}},
		{"reshape2/infer", mkOp("reshape2", Sl("X", "x"), Sl("Out", "o", "XShape", "xs"), A("shape", ir.Ints{-1, 2})),
			Args{"X": {Zeros(ir.F32, 0, 4)}}, Args{"Out": {Zeros(ir.F32, 0, 2)}, "XShape": {Zeros(ir.F32, 0, 0, 4)}}},
		{"reshape2/copy-dim", mkOp("reshape2", Sl("X", "x"), Sl("Out", "o"), A("shape", ir.Ints{0, 2, 2})),
			Args{"X": {Zeros(ir.F32, 0, 4)}}, Args{"Out": {Zeros(ir.F32, 0, 2, 2)}}},
		{"reshape2_grad", mkOp("reshape2_grad", Sl("XShape", "xs", "Out@GRAD", "g"), Sl("X@GRAD", "dx")),
			Args{"XShape": {Zeros(ir.F32, 0, 0, 4)}, "Out@GRAD": {Zeros(ir.F32, 0, 2)}}, Args{"X@GRAD": {Zeros(ir.F32, 0, 4)}}},
	}
	cases = append(cases, unary("relu", "Out", Zeros(ir.F32, 0, 4))...)
	cases = append(cases, unary("gelu", "X", Zeros(ir.F32, 0, 4))...)
	for _, typ := range []string{"elementwise_add", "elementwise_mul"} {
		cases = append(cases, bin(typ, Zeros(ir.F32, 0, 4), Full(ir.F32, 2, 4), sh(0, 4), -1)...)
		cases = append(cases, bin(typ, Zeros(ir.F32, 0, 4), Full(ir.F32, 2, 1, 4), sh(0, 4), -1)...)
		cases = append(cases, bin(typ, Zeros(ir.F32, 0, 1), Full(ir.F32, 2, 3), sh(0, 3), -1)...)
		cases = append(cases, bin(typ, Zeros(ir.F32, 0, 4), Zeros(ir.F32, 0), sh(0, 4), 0)...)
	}
	checkCases(t, cases)
	// [0, -1] on 0 elements is ambiguous (any size fits); Paddle rejects it too
	wantErr(t, mkOp("reshape2", Sl("X", "x"), Sl("Out", "o"), A("shape", ir.Ints{0, -1})),
		Args{"X": {Zeros(ir.F32, 0, 4)}}, "cannot reshape X [0 4] to [0 -1]")
}

func TestMoEKernelErrors(t *testing.T) {
	x32 := tf(sh(3, 2), 1, 2, 3, 4, 5, 6)
	gatherOp := mkOp("gather", Sl("X", "x", "Index", "i"), Sl("Out", "o"))
	scatterOp := mkOp("scatter", Sl("X", "x", "Ids", "i", "Updates", "u"), Sl("Out", "o"))
	apOp := mkOp("assign_pos", Sl("X", "x", "cum_count", "c", "eff_num_len", "n"), Sl("Out", "o"))
	fdiv := mkOp("elementwise_floordiv", Sl("X", "x", "Y", "y"), Sl("Out", "o"))
	lbc := mkOp("limit_by_capacity", Sl("expert_count", "e", "capacity", "c"), Sl("Out", "o"), A("n_worker", ir.Int(2)))
	pg := mkOp("prune_gate_by_capacity", Sl("GateIdx", "g", "ExpertCount", "e"), Sl("NewGateIdx", "o"), A("n_expert", ir.Int(2)), A("n_worker", ir.Int(2)))
	w := Zeros(ir.F32, 2, 2, 2)
	cases := []struct {
		name string
		op   *ir.Op
		in   Args
		sub  string
	}{
		{"top_k_v2/k-too-big", topKOp(A("k", ir.Int(4))), Args{"X": {Zeros(ir.F32, 2, 3)}}, "op 1 top_k_v2: k = 4 out of range [1, 3] for X [2 3]"},
		{"top_k_v2/k-zero", topKOp(A("k", ir.Int(0))), Args{"X": {Zeros(ir.F32, 2, 3)}}, "k = 0 out of range"},
		{"top_k_v2/axis", topKOp(A("axis", ir.Int(2))), Args{"X": {Zeros(ir.F32, 2, 3)}}, "axis 2 out of range for rank 2"},
		{"top_k_v2/no-X", topKOp(), Args{}, "input X: want one tensor, have 0"},
		{"top_k_v2_grad/index", topKGradOp(A("k", ir.Int(1))),
			Args{"X": {Zeros(ir.F32, 2, 3)}, "Indices": {ti(sh(2, 1), 0, 3)}, "Out@GRAD": {Zeros(ir.F32, 2, 1)}}, "Indices[1] = 3 out of range [0, 3)"},
		{"top_k_v2_grad/shape", topKGradOp(A("k", ir.Int(1))),
			Args{"X": {Zeros(ir.F32, 2, 3)}, "Indices": {ti(sh(1, 1), 0)}, "Out@GRAD": {Zeros(ir.F32, 1, 1)}}, "Out@GRAD shape [1 1] does not fit X [2 3]"},
		{"top_k_v2_grad/indices-dtype", topKGradOp(),
			Args{"X": {Zeros(ir.F32, 3)}, "Indices": {tf(sh(1), 0)}, "Out@GRAD": {Zeros(ir.F32, 1)}}, "input Indices: dtype f32, want i64 or i32"},

		{"number_count/too-big", mkOp("number_count", Sl("numbers", "n"), Sl("Out", "o"), A("upper_range", ir.Int(4))),
			Args{"numbers": {ti(sh(3), 0, -1, 4)}}, "numbers[2] = 4, want < upper_range 4"},
		{"number_count/dtype", mkOp("number_count", Sl("numbers", "n"), Sl("Out", "o"), A("upper_range", ir.Int(4))),
			Args{"numbers": {tf(sh(1), 0)}}, "input numbers: dtype f32"},
		{"number_count/no-attr", mkOp("number_count", Sl("numbers", "n"), Sl("Out", "o")),
			Args{"numbers": {ti(sh(1), 0)}}, "no upper_range attr"},

		{"cumsum/axis", mkOp("cumsum", Sl("X", "x"), Sl("Out", "o"), A("axis", ir.Int(2))), Args{"X": {x32}}, "axis 2 out of range for rank 2"},
		{"cumsum/bool", mkOp("cumsum", Sl("X", "x"), Sl("Out", "o")), Args{"X": {Zeros(ir.Boolean, 2)}}, "X dtype bool"},

		{"assign_pos/bad-count", apOp, Args{"X": {ti(sh(3), 0, 1, 1)}, "cum_count": {ti(sh(2), 1, 2)}},
			"expert 1: cum_count gives 1 slots (cum_count[1] = 2), X routes 2 tokens to it"},
		{"assign_pos/bad-first-count", apOp, Args{"X": {ti(sh(3), 0, 1, 1)}, "cum_count": {ti(sh(2), 2, 3)}},
			"expert 0: cum_count gives 2 slots"},
		{"assign_pos/expert-range", apOp, Args{"X": {ti(sh(2), 0, 3)}, "cum_count": {ti(sh(2), 1, 2)}}, "X[1] = 3 out of range for 2 experts"},
		{"assign_pos/eff_num_len", apOp, Args{"X": {ti(sh(3), 0, 1, 1)}, "cum_count": {ti(sh(2), 1, 3)}, "eff_num_len": {ti(sh(1), 4)}},
			"eff_num_len = 4, cum_count total 3"},
		{"assign_pos/cum_count-2d", apOp, Args{"X": {ti(sh(1), 0)}, "cum_count": {ti(sh(1, 1), 1)}}, "input cum_count: shape [1 1], want 1-D"},

		{"gather/range", gatherOp, Args{"X": {x32}, "Index": {ti(sh(2), 0, 3)}}, "Index[1] = 3 out of range [0, 3)"},
		{"gather/negative", gatherOp, Args{"X": {x32}, "Index": {ti(sh(1), -1)}}, "Index[0] = -1 out of range [0, 3)"},
		{"gather/axis-attr", mkOp("gather", Sl("X", "x", "Index", "i"), Sl("Out", "o"), A("axis", ir.Int(1))),
			Args{"X": {x32}, "Index": {ti(sh(1), 0)}}, "axis 1 not supported (only axis 0)"},
		{"gather/axis-input", mkOp("gather", Sl("X", "x", "Index", "i", "Axis", "a"), Sl("Out", "o")),
			Args{"X": {x32}, "Index": {ti(sh(1), 0)}, "Axis": {ti(sh(1), 0)}}, "an Axis input is not supported"},
		{"gather/index-shape", gatherOp, Args{"X": {x32}, "Index": {ti(sh(1, 2), 0, 1)}}, "input Index: shape [1 2], want [M] or [M, 1]"},
		{"gather/two-X", gatherOp, Args{"X": {x32, x32}, "Index": {ti(sh(1), 0)}}, "input X: want one tensor, have 2"},
		{"gather_grad/shape", mkOp("gather_grad", Sl("X", "x", "Index", "i", "Out@GRAD", "g"), Sl("X@GRAD", "dx")),
			Args{"X": {x32}, "Index": {ti(sh(1), 0)}, "Out@GRAD": {Zeros(ir.F32, 2, 2)}}, "Out@GRAD shape [2 2], want [1 2]"},

		{"scatter/range", scatterOp, Args{"X": {x32}, "Ids": {ti(sh(1), 5)}, "Updates": {Zeros(ir.F32, 1, 2)}}, "Ids[0] = 5 out of range [0, 3)"},
		{"scatter/updates-shape", scatterOp, Args{"X": {x32}, "Ids": {ti(sh(2), 0, 1)}, "Updates": {Zeros(ir.F32, 2, 3)}},
			"Updates shape [2 3], want [2 2]"},
		{"scatter/dtype", scatterOp, Args{"X": {x32}, "Ids": {ti(sh(1), 0)}, "Updates": {Zeros(ir.F64, 1, 2)}}, "Updates dtype f64, X dtype f32"},
		{"scatter_grad/range", mkOp("scatter_grad", Sl("Ids", "i", "Updates", "u", "Out@GRAD", "g"), Sl("X@GRAD", "dx")),
			Args{"Ids": {ti(sh(1), 3)}, "Updates": {Zeros(ir.F32, 1, 2)}, "Out@GRAD": {x32}}, "Ids[0] = 3 out of range [0, 3)"},

		{"grouped_matmul/sum", gmmOp(), Args{"X": {x32}, "W": {w}, "ExpertCount": {ti(sh(2), 2, 2)}}, "ExpertCount sums to 4 rows, X has 3"},
		{"grouped_matmul/multiple", gmmOp(), Args{"X": {x32}, "W": {w}, "ExpertCount": {ti(sh(3), 1, 1, 1)}},
			"ExpertCount length 3 is not a positive multiple of the 2 experts"},
		{"grouped_matmul/empty-count", gmmOp(), Args{"X": {Zeros(ir.F32, 0, 2)}, "W": {w}, "ExpertCount": {Zeros(ir.I64, 0)}},
			"ExpertCount length 0 is not a positive multiple"},
		{"grouped_matmul/negative", gmmOp(), Args{"X": {x32}, "W": {w}, "ExpertCount": {ti(sh(2), 4, -1)}}, "ExpertCount[1] = -1 is negative"},
		{"grouped_matmul/K", gmmOp(), Args{"X": {Zeros(ir.F32, 3, 3)}, "W": {w}, "ExpertCount": {ti(sh(2), 1, 2)}}, "K differs (3 and 2)"},
		{"grouped_matmul/dtype", gmmOp(), Args{"X": {x32}, "W": {Zeros(ir.F64, 2, 2, 2)}, "ExpertCount": {ti(sh(2), 1, 2)}}, "X dtype f32, W dtype f64"},
		{"grouped_matmul/rank", gmmOp(), Args{"X": {x32}, "W": {Zeros(ir.F32, 2, 2)}, "ExpertCount": {ti(sh(2), 1, 2)}}, "want X [M, K] and W [n, K, P]"},
		{"grouped_matmul_grad/shape", gmmGradOp(), Args{"X": {x32}, "W": {w}, "ExpertCount": {ti(sh(2), 1, 2)}, "Out@GRAD": {Zeros(ir.F32, 2, 2)}},
			"Out@GRAD shape [2 2], want [3 2]"},

		{"elementwise_floordiv/zero", fdiv, Args{"X": {ti(sh(2), 4, 5)}, "Y": {ti(sh(2), 2, 0)}}, "division by zero: Y[1] is 0 (X[1] = 5)"},
		{"elementwise_floordiv/float", fdiv, Args{"X": {tf(sh(1), 4)}, "Y": {tf(sh(1), 2)}}, "input X: dtype f32, want i64 or i32"},
		{"elementwise_floordiv/mixed", fdiv, Args{"X": {ti(sh(1), 4)}, "Y": {MustFromData(ir.I32, sh(1), []float64{2})}}, "X dtype i64, Y dtype i32"},
		{"elementwise_floordiv/broadcast", fdiv, Args{"X": {Zeros(ir.I64, 2, 3)}, "Y": {ti(sh(2), 1, 1)}}, "shapes [2 3] and [2] do not broadcast"},

		{"limit_by_capacity/length", lbc, Args{"expert_count": {Zeros(ir.I64, 5)}, "capacity": {Zeros(ir.I64, 3)}},
			"expert_count length 5, want n_worker 2 × 3 experts (capacity length) = 6"},
		{"limit_by_capacity/no-attr", mkOp("limit_by_capacity", Sl("expert_count", "e", "capacity", "c"), Sl("Out", "o")),
			Args{"expert_count": {Zeros(ir.I64, 2)}, "capacity": {Zeros(ir.I64, 2)}}, "no n_worker attr"},
		{"limit_by_capacity/negative", lbc, Args{"expert_count": {ti(sh(2), 1, -2)}, "capacity": {ti(sh(1), 3)}}, "expert_count[1] = -2 is negative"},

		{"prune_gate_by_capacity/range", pg, Args{"GateIdx": {ti(sh(2), 0, 4)}, "ExpertCount": {Zeros(ir.I64, 4)}}, "GateIdx[1] = 4 out of range [0, 4)"},
		{"prune_gate_by_capacity/length", pg, Args{"GateIdx": {ti(sh(1), 0)}, "ExpertCount": {Zeros(ir.I64, 3)}},
			"ExpertCount length 3, want n_worker 2 × n_expert 2 = 4"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { wantErr(t, c.op, c.in, c.sub) })
	}
}

// refGrouped is grouped_matmul computed row by row: row r belongs to the
// expert whose block of rows (expert-major, summed over workers) holds it.
func refGrouped(x, w *Tensor, counts []int64) (out func() *Tensor, dx, dw func(g *Tensor) *Tensor, expertOf []int64) {
	n, k, p := w.Shape[0], w.Shape[1], w.Shape[2]
	for e := range n {
		for j := int64(0); j*n+e < int64(len(counts)); j++ {
			for range counts[j*n+e] {
				expertOf = append(expertOf, e)
			}
		}
	}
	wAt := func(e, l, j int64) float64 { return w.Data[(e*k+l)*p+j] }
	out = func() *Tensor {
		o := Zeros(x.DType, int64(len(expertOf)), p)
		for r, e := range expertOf {
			for j := range p {
				s := 0.0
				for l := range k {
					s += x.Data[int64(r)*k+l] * wAt(e, l, j)
				}
				o.Data[int64(r)*p+j] = s
			}
		}
		return o
	}
	dx = func(g *Tensor) *Tensor {
		d := like(x)
		for r, e := range expertOf {
			for l := range k {
				for j := range p {
					d.Data[int64(r)*k+l] += g.Data[int64(r)*p+j] * wAt(e, l, j)
				}
			}
		}
		return d
	}
	dw = func(g *Tensor) *Tensor {
		d := like(w)
		for r, e := range expertOf {
			for l := range k {
				for j := range p {
					d.Data[(e*k+l)*p+j] += x.Data[int64(r)*k+l] * g.Data[int64(r)*p+j]
				}
			}
		}
		return d
	}
	return out, dx, dw, expertOf
}

func TestGroupedMatmulRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(2024, 1))
	idle := 0
	for trial := range 200 {
		n, w := 1+r.Int64N(4), 1+r.Int64N(3)
		k, p := 1+r.Int64N(4), 1+r.Int64N(4)
		counts := make([]int64, w*n)
		m := int64(0)
		for i := range counts {
			counts[i] = r.Int64N(4) // often 0: idle experts and M = 0 occur
			m += counts[i]
		}
		ec := Zeros(ir.I64, w*n)
		for i, c := range counts {
			ec.Data[i] = float64(c)
		}
		x, wt, g := randT(r, -1, 1, m, k), randT(r, -1, 1, n, k, p), randT(r, -1, 1, m, p)
		refOut, refDx, refDw, expertOf := refGrouped(x, wt, counts)
		if int64(len(expertOf)) != m {
			t.Fatalf("trial %d: reference assigns %d rows of %d", trial, len(expertOf), m)
		}
		for e := range n {
			if !slices.Contains(expertOf, e) {
				idle++
			}
		}
		out := run(t, gmmOp(), Args{"X": {x}, "W": {wt}, "ExpertCount": {ec}})["Out"][0]
		grads := run(t, gmmGradOp(), Args{"X": {x}, "W": {wt}, "ExpertCount": {ec}, "Out@GRAD": {g}})
		for _, c := range []struct {
			what      string
			got, want *Tensor
		}{{"Out", out, refOut()}, {"X@GRAD", grads["X@GRAD"][0], refDx(g)}, {"W@GRAD", grads["W@GRAD"][0], refDw(g)}} {
			if d, err := MaxAbsDiff(c.got, c.want); err != nil || d > 1e-12 {
				t.Fatalf("trial %d (n=%d w=%d counts %v): %s differs by %v (%v)\ngot  %v\nwant %v", trial, n, w, counts, c.what, d, err, c.got, c.want)
			}
		}
	}
	if idle == 0 {
		t.Error("no trial had an idle expert")
	}
}

// TestMoERoutingRandom routes random tokens the way an MoE layer does:
// number_count, cumsum, assign_pos, gather, grouped_matmul, scatter, and
// checks every step against a direct computation.
func TestMoERoutingRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(99, 3))
	for trial := range 100 {
		tokens, experts, d := r.Int64N(12), 1+r.Int64N(4), 1+r.Int64N(3)
		gate := Zeros(ir.I64, tokens)
		for i := range gate.Data {
			gate.Data[i] = float64(r.Int64N(experts+1) - 1) // -1: dropped
		}
		x := Zeros(ir.F64, tokens, d)
		for i := range x.Data {
			x.Data[i] = float64(i) // distinct rows
		}
		// reference: slots of expert 0 in token order, then expert 1, ...
		var order []int64
		for e := range experts {
			for i, g := range gate.Data {
				if int64(g) == e {
					order = append(order, int64(i))
				}
			}
		}
		cnt := run(t, mkOp("number_count", Sl("numbers", "n"), Sl("Out", "o"), A("upper_range", ir.Int(experts))), Args{"numbers": {gate}})["Out"][0]
		cum := run(t, mkOp("cumsum", Sl("X", "x"), Sl("Out", "o")), Args{"X": {cnt}})["Out"][0]
		pos := run(t, mkOp("assign_pos", Sl("X", "x", "cum_count", "c", "eff_num_len", "n"), Sl("Out", "o")),
			Args{"X": {gate}, "cum_count": {cum}, "eff_num_len": {ti(sh(1), float64(len(order)))}})["Out"][0]
		wantPos := Zeros(ir.I64, int64(len(order)))
		for i, o := range order {
			wantPos.Data[i] = float64(o)
		}
		wantT(t, "assign_pos", pos, wantPos)
		rows := run(t, mkOp("gather", Sl("X", "x", "Index", "i"), Sl("Out", "o")), Args{"X": {x}, "Index": {pos}})["Out"][0]
		for i, o := range order {
			for j := range d {
				if got, want := rows.Data[int64(i)*d+j], x.Data[o*d+j]; got != want {
					t.Fatalf("trial %d: gathered row %d col %d = %v, want token %d's %v", trial, i, j, got, o, want)
				}
			}
		}
		w := randT(r, -1, 1, experts, d, 2)
		y := run(t, gmmOp(), Args{"X": {rows}, "W": {w}, "ExpertCount": {cnt}})["Out"][0]
		for i, o := range order {
			e := int64(gate.Data[o])
			for j := range int64(2) {
				s := 0.0
				for l := range d {
					s += x.Data[o*d+l] * w.Data[(e*d+l)*2+j]
				}
				if got := y.Data[int64(i)*2+j]; math.Abs(got-s) > 1e-12 {
					t.Fatalf("trial %d: expert output of token %d = %v, want %v", trial, o, got, s)
				}
			}
		}
		// scatter the rows back: every routed token gets its own row, dropped ones stay 0
		back := run(t, mkOp("scatter", Sl("X", "x", "Ids", "i", "Updates", "u"), Sl("Out", "o")),
			Args{"X": {like(x)}, "Ids": {pos}, "Updates": {rows}})["Out"][0]
		for i, g := range gate.Data {
			for j := range d {
				want := x.Data[int64(i)*d+j]
				if g < 0 {
					want = 0
				}
				if got := back.Data[int64(i)*d+j]; got != want {
					t.Fatalf("trial %d: scattered back token %d col %d = %v, want %v", trial, i, j, got, want)
				}
			}
		}
	}
}

// moeGradCases are the finite-difference cases of the MoE grad kernels;
// gradCases includes them.
func moeGradCases() []gradCase {
	r := rand.New(rand.NewPCG(5, 8))
	u := func(shape ...int64) *Tensor { return randT(r, -1, 1, shape...) }
	var cs []gradCase
	tk := func(name string, x *Tensor, at ...ir.Attr) {
		cs = append(cs, gradCase{"top_k_v2/" + name, topKOp(at...), topKGradOp(at...), Args{"X": {x}}, "Out"})
	}
	tk("last", u(3, 5), A("k", ir.Int(2)))
	tk("axis0-smallest", u(4, 3), A("k", ir.Int(3)), A("axis", ir.Int(0)), A("largest", ir.Bool(false)))
	tk("middle-axis", u(2, 4, 3), A("k", ir.Int(2)), A("axis", ir.Int(1)))
	gg := func(name string, x, idx *Tensor) {
		cs = append(cs, gradCase{"gather/" + name, mkOp("gather", Sl("X", "x", "Index", "i"), Sl("Out", "o")),
			mkOp("gather_grad", Sl("X", "x", "Index", "i", "Out@GRAD", "g"), Sl("X@GRAD", "dx")),
			Args{"X": {x}, "Index": {idx}}, "Out"})
	}
	gg("dups", u(5, 3), ti(sh(6), 4, 0, 4, 2, 4, 0))
	gg("M1-3d", u(3, 2, 2), ti(sh(2, 1), 2, 0))
	sc := func(name string, over bool, x, ids, upd *Tensor) {
		at := A("overwrite", ir.Bool(over))
		cs = append(cs, gradCase{"scatter/" + name, mkOp("scatter", Sl("X", "x", "Ids", "i", "Updates", "u"), Sl("Out", "o"), at),
			mkOp("scatter_grad", Sl("Ids", "i", "Updates", "u", "Out@GRAD", "g"), Sl("X@GRAD", "dx", "Updates@GRAD", "du"), at),
			Args{"X": {x}, "Ids": {ids}, "Updates": {upd}}, "Out"})
	}
	// with overwrite, duplicate ids have no exact derivative rule (see scatterGrad)
	sc("overwrite-unique", true, u(5, 3), ti(sh(3), 4, 0, 2), u(3, 3))
	sc("add-dups", false, u(5, 3), ti(sh(4), 4, 0, 4, 4), u(4, 3))
	gm := func(name string, x, w *Tensor, counts ...float64) {
		cs = append(cs, gradCase{"grouped_matmul/" + name, gmmOp(), gmmGradOp(),
			Args{"X": {x}, "W": {w}, "ExpertCount": {ti(sh(int64(len(counts))), counts...)}}, "Out"})
	}
	gm("one-worker", u(5, 3), u(2, 3, 4), 2, 3)
	gm("two-workers-idle", u(6, 2), u(3, 2, 3), 1, 0, 2, 2, 0, 1) // expert 1 has no rows
	gm("no-rows", u(0, 2), u(2, 2, 3), 0, 0)
	return cs
}
