package ir

import (
	"bytes"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
)

// The value kinds, types, module attrs and role bits that
// programs imported from Paddle need: text, JSON, clone, hash and equality
// keep them all.
func TestPaddleValuesRoundTrip(t *testing.T) {
	src, err := os.ReadFile("testdata/paddle_values.dpir")
	if err != nil {
		t.Fatal(err)
	}
	m, err := Parse("paddle_values.dpir", src)
	if err != nil {
		t.Fatal(err)
	}
	op := m.Main.Global().Ops[1]
	checks := []struct {
		name string
		want Value
	}{
		{"zeta", Long(math.MinInt64)},
		{"alpha", Longs{1, -1}},
		{"beta", Longs{}},
		{"f", Float64(0.1)},
		{"v", VarRef("x")},
		{"vs", VarRefs{"x", "y"}},
		{"sb", BoolScalar(true)},
		{"sl", LongScalar(-3)},
		{"sf", Float64Scalar(2.5)},
		{"sx", ComplexScalar(1, -2)},
		{"ss", Scalars{BoolScalar(false), LongScalar(7), Float64Scalar(0.25), ComplexScalar(0, 1)}},
		{"f32", Float(0.1)},
		{"hex", Int(16)},
	}
	for _, c := range checks {
		got := op.Attrs.Get(c.name)
		if got == nil || got.Kind() != c.want.Kind() || !Equal(withAttr(c.want), withAttr(got)) {
			t.Errorf("attr %s = %#v, want %#v", c.name, got, c.want)
		}
	}
	if op.Role != RoleBackward|0x1000 || m.Main.Global().Ops[2].Role != 0x20 {
		t.Errorf("roles = %v, %v", op.Role, m.Main.Global().Ops[2].Role)
	}
	if v, _ := m.Attrs.Get("paddle.version").(Long); v != 2002002 {
		t.Errorf("module attr = %v", m.Attrs.Get("paddle.version"))
	}
	if tp := m.Main.Global().Var("x").Type; !tp.HasLoD || tp.LoD != 0 {
		t.Errorf("x: %+v, want lod 0 declared", tp)
	}
	if tp := m.Main.Global().Var("arr").Type; len(tp.Elems) != 1 || tp.Elems[0].LoD != 1 || tp.Elems[0].Shape[1] != 16 {
		t.Errorf("arr: %+v", tp)
	}
	if tp := m.Main.Global().Var("tup").Type; len(tp.Elems) != 4 || tp.Elems[0].DType != F32 || tp.Elems[1].Kind != DenseTensor || tp.Elems[1].DType != DTypeInvalid || tp.Elems[2].Kind != TensorArray {
		t.Errorf("tup: %+v", tp)
	}
	if tp := m.Main.Global().Var("arr0").Type; tp.Elems != nil {
		t.Errorf("arr0 has elements %v", tp.Elems)
	}
	if tp := m.Main.Global().Var("voc").Type; tp.Elems == nil || len(tp.Elems) != 0 {
		t.Errorf("voc: %+v, want an empty element list", tp)
	}

	text := Print(m)
	if !bytes.Equal(text, src) {
		t.Errorf("printed text differs from the canonical source:\n%s", text)
	}
	m2, err := Parse("printed", text)
	if err != nil {
		t.Fatal(err)
	}
	if d := Diff(m, m2); d != "" {
		t.Errorf("text round trip:\n%s", d)
	}
	if Hash(m) != Hash(m2) {
		t.Error("hash differs after a text round trip")
	}
	// JSON spells roles by name only: take the unnamed bits off.
	mj := m.Clone()
	mj.Main.Global().Ops[1].Role = RoleBackward
	mj.Main.Global().Ops[2].Role = RoleForward
	js, err := EncodeJSON(mj)
	if err != nil {
		t.Fatal(err)
	}
	m3, err := DecodeJSON(js)
	if err != nil {
		t.Fatalf("%v\n%s", err, js)
	}
	if d := Diff(mj, m3); d != "" {
		t.Errorf("JSON round trip:\n%s", d)
	}
	if !bytes.Equal(Print(m3), Print(mj)) {
		t.Errorf("JSON round trip prints differently:\n%s", Print(m3))
	}
	c := m.Clone()
	if d := Diff(m, c); d != "" {
		t.Errorf("clone differs:\n%s", d)
	}
	c.Main.Global().Var("arr").Type.Elems[0].Shape[0] = 5
	c.Main.Global().Ops[1].Attrs.Get("ss").(Scalars)[0] = LongScalar(1)
	c.Attrs[0].Value = Long(1)
	if !bytes.Equal(Print(m), src) {
		t.Error("changing the clone changed the original")
	}
	// The only violations are the unnamed role bits.
	err = Verify(m)
	want := "main block 0: op 2 demo: invalid role backward|0x1000\nmain block 0: op 3 fetch: invalid role 0x20"
	if err == nil || err.Error() != want {
		t.Errorf("Verify: %v\nwant %s", err, want)
	}
	if err := Verify(mj); err != nil {
		t.Errorf("Verify: %v", err)
	}
	hex, err := Parse("hex", []byte("program main { block 0 { op 1 o() -> () {a = 0x1F} role loss|0x1000|backward } }"))
	if err != nil {
		t.Fatal(err)
	}
	if op := hex.Main.Global().Ops[0]; op.Attrs.Get("a") != Int(31) || op.Role != RoleLoss|RoleBackward|0x1000 || op.Role.String() != "backward|loss|0x1000" {
		t.Errorf("hex: %v role %v", op.Attrs, op.Role)
	}
}

func withAttr(v Value) *Module {
	m := NewModule("")
	m.Attrs = Attrs{{Name: "a", Value: v}}
	return m
}

// Each change to a new value kind or type field changes the hash and the
// equality.
func TestPaddleValuesHashAndEqual(t *testing.T) {
	base, err := Parse("p", mustRead(t, "testdata/paddle_values.dpir"))
	if err != nil {
		t.Fatal(err)
	}
	edits := map[string]func(m *Module){
		"long vs int":      func(m *Module) { m.Main.Global().Ops[1].Attrs.Set("hex", Long(16)) },
		"float64 vs float": func(m *Module) { m.Main.Global().Ops[1].Attrs.Set("f32", Float64(float64(Float(0.1)))) },
		"var vs string":    func(m *Module) { m.Main.Global().Ops[1].Attrs.Set("v", String("x")) },
		"scalar kind":      func(m *Module) { m.Main.Global().Ops[1].Attrs.Set("sl", Float64Scalar(-3)) },
		"scalar imag":      func(m *Module) { m.Main.Global().Ops[1].Attrs.Set("sx", ComplexScalar(1, 2)) },
		"lod level":        func(m *Module) { m.Main.Global().Var("x").Type.LoD = 1 },
		"lod declared":     func(m *Module) { m.Main.Global().Var("x").Type.HasLoD = false },
		"elem shape":       func(m *Module) { m.Main.Global().Var("arr").Type.Elems[0].Shape[1] = 8 },
		"tuple elem":       func(m *Module) { m.Main.Global().Var("tup").Type.Elems[1] = Type{Kind: Raw} },
		"module attr":      func(m *Module) { m.Attrs.Set("paddle.version", Long(0)) },
		"role bits":        func(m *Module) { m.Main.Global().Ops[2].Role = 0x40 },
	}
	h := Hash(base)
	for name, edit := range edits {
		m := base.Clone()
		edit(m)
		if Hash(m) == h {
			t.Errorf("%s: hash unchanged", name)
		}
		if Equal(base, m) {
			t.Errorf("%s: still Equal", name)
		}
		if bytes.Equal(Print(base), Print(m)) {
			t.Errorf("%s: prints the same", name)
		}
	}
}

func mustRead(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A float that came from a float32 prints to text that parses back to the
// same float32 bits, whatever its magnitude.
func TestFloat32TextRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	vals := []float32{0, float32(math.Copysign(0, -1)), 0.1, 1e-45, math.SmallestNonzeroFloat32, math.MaxFloat32, -math.MaxFloat32, 1e-4, 9.999999e-5, 1e21, 1e20, 3.4028235e38, 16777217}
	for range 20000 {
		vals = append(vals, math.Float32frombits(r.Uint32()))
	}
	for _, f := range vals {
		if f != f {
			continue
		}
		text := appendFloat(nil, float64(f))
		m, err := Parse("f", []byte("program main { block 0 { op 1 x() -> () {f = "+string(text)+"} } }"))
		if err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		got := float64(m.Main.Global().Ops[0].Attrs.Get("f").(Float))
		if math.Float32bits(float32(got)) != math.Float32bits(f) || math.Float64bits(got) != math.Float64bits(float64(f)) {
			t.Fatalf("%v printed as %s parses to %v", f, text, got)
		}
	}
}

func TestPaddleValueParseErrors(t *testing.T) {
	head := "program main {\n  block 0 {\n    var x : f32[2]\n"
	tests := []struct{ name, src, want string }{
		{"long float", head + "op 1 o() -> () {a = long(1.5)} } }", `t.dpir:4:26: expected integer, found float "1.5"`},
		{"float64 inexact int", head + "op 1 o() -> () {a = float64(9007199254740993)} } }", "t.dpir:4:29: integer 9007199254740993 is not exact as a float; write a float"},
		{"var no paren", head + "op 1 o() -> () {a = var x} } }", `t.dpir:4:25: expected "(", found name "x"`},
		{"scalar string", head + `op 1 o() -> () {a = scalar("x")} } }`, `t.dpir:4:28: expected scalar (true, false, a number or complex(re, im)), found string`},
		{"scalars bad", head + "op 1 o() -> () {a = scalars[1, x]} } }", `t.dpir:4:32: expected scalar (true, false, a number or complex(re, im)), found name "x"`},
		{"complex one", head + "op 1 o() -> () {a = scalar(complex(1.0))} } }", `t.dpir:4:39: expected ",", found ")"`},
		{"lod negative", "program main { block 0 { var x : f32[2] lod -1 } }", "t.dpir:1:45: lod level -1 is negative"},
		{"array of array", "program main { block 0 { var x : tensor_array(tensor_array) } }", "t.dpir:1:47: element of tensor_array must be a tensor type"},
		{"tuple bad", "program main { block 0 { var x : tuple(f33) } }", `t.dpir:1:40: unknown dtype or type kind "f33"`},
		{"role hex big", head + "op 1 o() -> () role 0x1ffffffff } }", "t.dpir:4:21: role bits 0x1ffffffff out of range"},
		{"attr line", "attr x = \nprogram main { block 0 { } }", `t.dpir:2:1: expected attribute value, found name "program"`},
		{"attr twice", "attr x = 1\nattr x = 2\nprogram main { block 0 { } }", "t.dpir:2:6: attribute x given twice"},
	}
	for _, tt := range tests {
		_, err := Parse("t.dpir", []byte(tt.src))
		if err == nil || err.Error() != tt.want {
			t.Errorf("%s: got %v\nwant %s", tt.name, err, tt.want)
		}
	}
}

// Attrs stay sorted by name however they are given: Set inserts in order,
// and text and JSON in another order read back sorted, so that a module
// built or written in any order prints, hashes and compares the same.
func TestAttrsSorted(t *testing.T) {
	var as Attrs
	for _, n := range []string{"op_role", "col", "b", "a"} {
		as.Set(n, Int(1))
	}
	if got := attrNames(as); got != "a b col op_role" {
		t.Errorf("Set: %s", got)
	}
	sorted, err := Parse("s", []byte(`attr z = 1
attr m = long(2)
program main { block 0 { var x : f32[2] {zz = 1, aa = var(x)}
op 1 o() -> () {op_role = 0, col = 1, b = scalar(true), a = float64(0.5)} } }`))
	if err != nil {
		t.Fatal(err)
	}
	op := sorted.Main.Global().Ops[0]
	if got := attrNames(op.Attrs); got != "a b col op_role" {
		t.Errorf("parsed op attrs: %s", got)
	}
	if got := attrNames(sorted.Main.Global().Var("x").Attrs) + " / " + attrNames(sorted.Attrs); got != "aa zz / m z" {
		t.Errorf("parsed var and module attrs: %s", got)
	}
	js := []byte(`{"version": 1, "name": "", "meshes": [], "groups": [],
"attrs": [{"name": "z", "kind": "int", "value": 1}, {"name": "m", "kind": "long", "value": 2}],
"main": {"name": "main", "blocks": [{"vars": [{"name": "x", "type": {"dtype": "f32", "shape": [2]},
  "attrs": [{"name": "zz", "kind": "int", "value": 1}, {"name": "aa", "kind": "var", "value": "x"}]}],
 "ops": [{"id": 1, "type": "o", "attrs": [{"name": "op_role", "kind": "int", "value": 0}, {"name": "col", "kind": "int", "value": 1},
  {"name": "b", "kind": "scalar", "value": {"bool": true}}, {"name": "a", "kind": "float64", "value": 0.5}]}]}]}}`)
	fromJSON, err := DecodeJSON(js)
	if err != nil {
		t.Fatal(err)
	}
	if d := Diff(sorted, fromJSON); d != "" {
		t.Errorf("JSON in another order:\n%s", d)
	}
	if Hash(sorted) != Hash(fromJSON) || !bytes.Equal(Print(sorted), Print(fromJSON)) {
		t.Error("hash or text differs")
	}
	if err := Verify(sorted); err != nil {
		t.Error(err)
	}
}

func attrNames(as Attrs) string {
	var ns []string
	for _, a := range as {
		ns = append(ns, a.Name)
	}
	return strings.Join(ns, " ")
}
