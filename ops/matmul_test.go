package ops_test

import "testing"

func mm(typ, x, y, o, attrs string) string {
	return prog(" var x : f32" + x + "\n var y : f32" + y + "\n var o : f32" + o +
		"\n op 1 " + typ + "(X: x, Y: y) -> (Out: o) {" + attrs + "}")
}

// Paddle 1.x matmul is not matmul_v2: its batches do not broadcast, Out
// takes X's batch dims (else Y's), a 1-D operand is transposed like a
// row or column and its dim dropped only when 1. mul flattens at
// x_num_col_dims and y_num_col_dims.
func TestMatmulV1AndMulInfer(t *testing.T) {
	checkCases(t, []visionCase{
		{"matmul/2d", mm("matmul", "[4, 5]", "[5, 6]", "[4, 6]", ``), ""},
		{"matmul/batch-x", mm("matmul", "[2, 3, 4, 5]", "[5, 6]", "[2, 3, 4, 6]", ``), ""},
		{"matmul/batch-y", mm("matmul", "[4, 5]", "[3, 5, 6]", "[3, 4, 6]", ``), ""},
		{"matmul/unknown-batch", mm("matmul", "[-1, 4, 5]", "[-1, 5, 6]", "[-1, 4, 6]", ``), ""},
		// Six matrices against six: Out keeps X's batch dims.
		{"matmul/batch-products", mm("matmul", "[6, 4, 5]", "[2, 3, 5, 6]", "[6, 4, 6]", ``), ""},
		{"matmul/transposes", mm("matmul", "[5, 4]", "[6, 5]", "[4, 6]", `transpose_X = true, transpose_Y = true`), ""},
		{"matmul/vec-mat", mm("matmul", "[5]", "[5, 6]", "[6]", ``), ""},
		{"matmul/mat-vec", mm("matmul", "[4, 5]", "[5]", "[4]", ``), ""},
		{"matmul/vec-vec", mm("matmul", "[5]", "[5]", "[1]", ``), ""},
		{"matmul/vec-vec-0d", mm("matmul", "[5]", "[5]", "[]", ``), ""},
		// A transposed 1-D X is a column: [4] as [4, 1] times [1, 6].
		{"matmul/transposed-vec", mm("matmul", "[4]", "[1, 6]", "[4, 6]", `transpose_X = true`), ""},
		{"matmul/alpha", mm("matmul", "[-1, 1024]", "[1024, 1000]", "[-1, 1000]", `alpha = 0.5`), ""},
		{"mul/4d", mm("mul", "[-1, 2048, 1, 1]", "[2048, 1000]", "[-1, 1000]", `x_num_col_dims = 1, y_num_col_dims = 1`), ""},
		{"mul/x-cols", mm("mul", "[2, 3, 4, 5]", "[20, 7]", "[2, 3, 7]", `x_num_col_dims = 2`), ""},
		{"mul/y-cols", mm("mul", "[6, 4]", "[2, 2, 5]", "[6, 5]", `y_num_col_dims = 2`), ""},

		{"matmul/no-broadcast", mm("matmul", "[1, 4, 5]", "[3, 5, 6]", "[3, 4, 6]", ``),
			"X x [1, 4, 5] and Y y [3, 5, 6]: batches of 1 and 3 matrices (matmul does not broadcast; matmul_v2 does)"},
		{"matmul/contracted", mm("matmul", "[4, 5]", "[4, 6]", "[4, 6]", ``),
			"X x [4, 5] and Y y [4, 6]: contracted dims 5 and 4 differ"},
		{"matmul/fused-reshape", mm("matmul", "[4, 5]", "[5, 6]", "[4, 6]", `fused_reshape_X = [2, 10], fused_transpose_X = [1, 0]`),
			"attr fused_reshape_X [2, 10]: matmul with a oneDNN reshape or transpose fused in is not supported"},
		{"matmul/head-number", mm("matmul", "[4, 5]", "[5, 6]", "[4, 6]", `head_number = 2`),
			"attr head_number 2: a multi-head matmul (an MKLML kernel's) is not supported"},
		{"matmul/declared", mm("matmul", "[2, 4, 5]", "[5, 6]", "[4, 6]", ``),
			"output Out o: declared f32[4, 6], inferred [2, 4, 6] from X f32[2, 4, 5], Y f32[5, 6]"},
		{"mul/contracted", mm("mul", "[-1, 2048, 2, 1]", "[2048, 1000]", "[-1, 1000]", ``),
			"X x [-1, 2048, 2, 1] and Y y [2048, 1000]: contracted sizes 4096 and 2048 differ"},
	})
}
