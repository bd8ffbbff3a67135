package passes_test

import (
	"strings"
	"testing"

	"github.com/distpass/distpass/ir"
)

// to-f64 makes every float var and every float dtype attr f64, in main
// and startup, leaves ints alone, and changes nothing the second time.
func TestToF64(t *testing.T) {
	src := `module m
program main {
  block 0 {
    var x : f32[2, 3] {is_data, stop_gradient}
    var n : i64[2] {is_data, stop_gradient}
    param w : f32[3] {trainable}
    var c : f32[3]
    var h : f32[2, 3]
    var k : f32[2]
    op 1 fill_constant() -> (Out: c) {dtype = 5, shape = [3], value = 1.0}
    op 2 elementwise_add(X: x, Y: w) -> (Out: h) {axis = -1}
    op 3 cast(X: n) -> (Out: k) {in_dtype = 3, out_dtype = 5}
  }
}
program startup {
  block 0 {
    param w : f32[3] {trainable}
    op 4 uniform_random() -> (Out: w) {dtype = 5, max = 1.0, min = -1.0, seed = 1, shape = [3]}
  }
}
`
	m := parseModule(t, src)
	if err := run(t, testRegistry(t), "to-f64,verify", m); err != nil {
		t.Fatal(err)
	}
	got := string(ir.Print(m))
	for _, want := range []string{
		"var x : f64[2, 3]", "var n : i64[2]", "param w : f64[3]", "var k : f64[2]",
		"fill_constant() -> (Out: c) {dtype = 6,", "{in_dtype = 3, out_dtype = 6}",
		"uniform_random() -> (Out: w) {dtype = 6,",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("no %q in\n%s", want, got)
		}
	}
	if strings.Contains(got, "f32") || strings.Contains(got, "dtype = 5") {
		t.Errorf("an f32 is left:\n%s", got)
	}
	if err := run(t, testRegistry(t), "to-f64", m); err != nil {
		t.Fatal(err)
	}
	if again := string(ir.Print(m)); again != got {
		t.Errorf("a second run changed the module:\n%s", again)
	}
}

// An op the op table does not define, on a float var, is refused by name,
// and the module is unchanged.
func TestToF64RefusesUnknownOps(t *testing.T) {
	src := `module m
program main {
  block 0 {
    var x : f32[2] {is_data, stop_gradient}
    var y : f32[2]
    op 1 gap(X: x) -> (Out: y)
  }
}
`
	m := parseModule(t, src)
	before := string(ir.Print(m))
	err := run(t, testRegistry(t), "to-f64", m)
	if err == nil || !strings.Contains(err.Error(), "op 1 gap") {
		t.Fatalf("err = %v, want a refusal naming op 1 gap", err)
	}
	if string(ir.Print(m)) != before {
		t.Fatal("a refusal changed the module")
	}
}
