package ops_test

import (
	"strings"
	"testing"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/ops"
)

// defVerify parses src (one main program) and returns what Verify says
// of it: "" when it passes.
func defVerify(t *testing.T, src string) string {
	t.Helper()
	m, err := ir.Parse("t.dpir", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ops.Verify(m, ops.Options{}); err != nil {
		return err.Error()
	}
	return ""
}

// defCase is a program whose only fault is want ("" when none).
type defCase struct {
	name, src, want string
}

func runDefCases(t *testing.T, cases []defCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := defVerify(t, "program main { block 0 {\n"+c.src+"\n}}")
			switch {
			case c.want == "" && got != "":
				t.Errorf("want no error, got:\n%s", got)
			case c.want != "" && !strings.Contains(got, c.want):
				t.Errorf("want an error containing\n\t%s\ngot\n\t%s", c.want, got)
			}
		})
	}
}

func TestActivationInferErrors(t *testing.T) {
	runDefCases(t, []defCase{
		{"relu6 ok", ` var x : f32[2, 3]
 var o : f32[2, 3]
 op 1 relu6(X: x) -> (Out: o) {threshold = 6.0}`, ""},
		{"relu6 shape", ` var x : f32[2, 3]
 var o : f32[3, 2]
 op 1 relu6(X: x) -> (Out: o)`, "op 1 relu6: output Out o: declared f32[3, 2], inferred [2, 3] from X f32[2, 3]"},
		{"hard_swish attr kind", ` var x : f32[2]
 var o : f32[2]
 op 1 hard_swish(X: x) -> (Out: o) {offset = "3"}`, "op 1 hard_swish: attr offset is string, want float"},
		{"softmax axis", ` var x : f32[2, 3]
 var o : f32[2, 3]
 op 1 softmax(X: x) -> (Out: o) {axis = 2}`, "op 1 softmax: inconsistent inputs: axis 2 out of range for X x [2, 3]"},
		{"softmax 0-D", ` var x : f32[]
 var o : f32[]
 op 1 softmax(X: x) -> (Out: o) {axis = -1}`, ""},
		{"softmax_grad dtype", ` var o : f32[2, 3]
 var g : f32[2, 3]
 var dx : f16[2, 3]
 op 1 softmax_grad(Out: o, Out@GRAD: g) -> (X@GRAD: dx) {axis = -1}`, "op 1 softmax_grad: output X@GRAD dx: declared f16[2, 3], inferred dtype f32 from Out f32[2, 3], Out@GRAD f32[2, 3]"},
		{"gelu misspelled slot", ` var x : f32[2]
 var o : f32[2]
 op 1 gelu(Input: x) -> (Out: o)`, "op 1 gelu: input slot Input (x) is not a slot of gelu (slots: X); missing X"},
		{"scale_grad shape", ` var g : f32[4]
 var dx : f32[5]
 op 1 scale_grad(Out@GRAD: g) -> (X@GRAD: dx) {scale = 2.0}`, "op 1 scale_grad: output X@GRAD dx: declared f32[5], inferred [4] from Out@GRAD f32[4]"},
	})
}
