package ops_test

import "testing"

func TestElementwiseInferErrors(t *testing.T) {
	bin := func(typ, x, y, o, attrs string) string {
		return " var x : " + x + "\n var y : " + y + "\n var o : " + o + "\n op 1 " + typ + "(X: x, Y: y) -> (Out: o) " + attrs
	}
	runDefCases(t, []defCase{
		{"axis", bin("elementwise_add", "f32[2, 3, 4]", "f32[3]", "f32[2, 3, 4]", "{axis = 1}"), ""},
		{"trailing", bin("elementwise_max", "f32[2, 3, 4]", "f32[3, 1]", "f32[2, 3, 4]", ""), ""},
		{"no broadcast", bin("elementwise_mul", "f32[2, 3]", "f32[4]", "f32[2, 3]", ""),
			"op 1 elementwise_mul: inconsistent inputs: X x [2, 3] and Y y [4]: dim 1: 3 and 4 do not broadcast"},
		{"axis too far", bin("elementwise_sub", "f32[2, 3]", "f32[3]", "f32[2, 3]", "{axis = 2}"),
			"X x [2, 3] and Y y [3]: axis 2 leaves no room for 1 dims in 2"},
		{"compare dtype", bin("less_than", "f32[2]", "f32[2]", "f32[2]", ""),
			"op 1 less_than: output Out o: declared f32[2], inferred dtype bool from X f32[2], Y f32[2]"},
		{"grad shapes", " var x : f32[2, 3]\n var y : f32[3]\n var g : f32[2, 3]\n var dx : f32[2, 3]\n var dy : f32[2, 3]\n" +
			" op 1 elementwise_add_grad(X: x, Y: y, Out@GRAD: g) -> (X@GRAD: dx, Y@GRAD: dy) {axis = -1}",
			"op 1 elementwise_add_grad: output Y@GRAD dy: declared f32[2, 3], inferred [3] from X f32[2, 3], Y f32[3], Out@GRAD f32[2, 3]"},
	})
}
