// Package mlir writes the MLIR twin of a distpass module: its main
// program as MLIR text in generic form, for tools and for comparing
// distpass's text pipeline with MLIR's (mlir-opt
// --allow-unregistered-dialect parses and prints it).
//
// The twin is one builtin module (named @<module name> when the module has
// a name) holding one func.func @main, whose body is block 0 of the main
// program, one op a line:
//
//	module @mlp_dp_mp {
//	  func.func @main(%x: tensor<8x16xf32>, %w1: tensor<16x32xf32>, %w2: tensor<32x16xf32>, %lr: tensor<1xf32>) {
//	    %h1 = "dist.matmul_v2"(%x, %w1) {trans_x = false, trans_y = false} : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
//	    …
//	    %loss_GRAD = "dist.fill_constant"() {dtype = 5 : i64, shape = [], value = 1.0 : f64} : () -> tensor<f32>
//	    …
//	    %w1_1 = "dist.sgd"(%w1, %w1_GRAD, %lr) : (tensor<16x32xf32>, tensor<16x32xf32>, tensor<1xf32>) -> tensor<16x32xf32>
//	    %w2_1 = "dist.sgd"(%w2, %w2_GRAD, %lr) : (tensor<32x16xf32>, tensor<32x16xf32>, tensor<1xf32>) -> tensor<32x16xf32>
//	    return
//	  }
//	}
//
// The rules:
//
//   - An op of type T is the unregistered op "dist.T". Its operands are
//     its input args and its results its output args, in slot order; slot
//     names, op ids, roles, fwd ids and dists are not written.
//   - Its attributes are the op's attrs, in the same (sorted) order: ints
//     as `N : i64`, floats as `F : f64` (the shortest decimal that reads
//     back as the same float64, always with a "."; NaN and infinities as
//     their IEEE bits, 0x7FF0000000000000 : f64), strings quoted with
//     MLIR's escapes (\" \\ and \XX hex for every byte outside printable
//     ASCII), bools true and false, lists as [a, b] of those (an empty list
//     of any kind is []), a block ref as its index, `N : i64`. A name that
//     is not an MLIR bare identifier is quoted. The attr types kept from
//     Paddle programs: long and float64 (and their lists) as ints and
//     floats are; a var ref as the opaque attr #dist.var<"name">; a
//     scalar as the bool, i64 or f64 it holds, a complex one as
//     #complex.number<:f64 re, im>.
//   - Types: a dense tensor is tensor<8x64xf32> (a scalar tensor<f32>, a
//     -1 dim ?; bool is i1, u8 ui8, and the rest keep their width:
//     i8..i64, f16, bf16, f32, f64); a no-shape var is the opaque type
//     !dist.<kind> (!dist.step_scopes, !dist.reader, …); a var that no
//     block in scope declares is none.
//   - Values are in SSA form, named after their var: the first write of x
//     defines %x, the next %x_1, then %x_2, and a read uses the latest
//     write in scope. Characters MLIR does not allow in a value name
//     become _ (x@GRAD is %x_GRAD), a name starting with a digit gets a v
//     in front, and a name already taken gets the next free _N suffix, so
//     names never clash.
//   - A var read before any write in scope is an argument of @main, in
//     order of first read, typed as declared where it is first read.
//   - A sub-block is a region of the first op (in program order) whose
//     attrs refer to it, one region per referred block, in attr order;
//     the op's block-ref attrs stay, as ints. Writes inside a region are
//     not visible after it: the op's outputs are what redefines a var
//     outside. Blocks no op refers to follow block 0, each the region of a
//     "dist.block"() op with attrs index and parent.
//   - The body ends with return.
//
// Values are tracked by var name: a sub-block var that shadows an outer
// var of the same name shares its SSA chain.
package mlir
