package sim

import "github.com/distpass/distpass/ir"

// Cases for the elementwise family: each binary op and compare op on
// operands that broadcast, with Y aligned at axis, and each grad op.
func init() {
	bin := func(typ, name, x, y, attrs string) inferCase {
		return inferCase{Name: typ + name, Src: `program main { block 0 {
 var x : ` + x + `
 var y : ` + y + `
 var o : f32[-1, -1, -1]
 op 1 ` + typ + `(X: x, Y: y) -> (Out: o) ` + attrs + `
}}`}
	}
	grad := func(typ string) inferCase {
		return inferCase{Name: typ, Src: `program main { block 0 {
 var x : f64[2, 3, 4]
 var y : f64[3, 1]
 var g : f64[2, 3, 4]
 var dx : f64[-1, -1, -1]
 var dy : f64[-1, -1]
 op 1 ` + typ + `(X: x, Y: y, Out@GRAD: g) -> (X@GRAD: dx, Y@GRAD: dy) {axis = 1}
}}`}
	}
	for _, typ := range []string{"elementwise_add", "elementwise_sub", "elementwise_mul", "elementwise_div",
		"elementwise_max", "elementwise_min", "less_than", "less_equal", "greater_than", "greater_equal", "equal", "not_equal"} {
		inferCases = append(inferCases,
			bin(typ, "", "f32[2, 3, 4]", "f32[4]", ""),
			bin(typ, "/axis", "f32[2, 3, 4]", "f32[3, 1]", "{axis = 1}"),
			bin(typ, "/both", "f32[2, 1, 4]", "f32[3, 1]", ""),
			bin(typ, "/y_longer", "f32[3, 1]", "f32[2, 3, 5]", ""),
		)
	}
	for _, typ := range []string{"elementwise_add_grad", "elementwise_sub_grad", "elementwise_mul_grad", "elementwise_div_grad"} {
		inferCases = append(inferCases, grad(typ))
	}
	inferCases = append(inferCases,
		inferCase{Name: "elementwise_floordiv", IntHigh: 7, Values: map[string]*Tensor{"y": Full(ir.I64, 2, 2)}, Src: `program main { block 0 {
 var x : i64[3, 2]
 var y : i64[2]
 var o : i64[-1, -1]
 op 1 elementwise_floordiv(X: x, Y: y) -> (Out: o) {axis = -1}
}}`},
	)
}
