package ir

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strings"
	"testing"
)

// jsonTestModule builds a module that exercises every part of the JSON
// schema: every attr kind (with empty lists and non-finite floats), every
// var kind, flag, dtype and no-shape kind, partials with every reduce, op
// dists, sub-blocks, a startup program, groups and params-grads.
func jsonTestModule(t testing.TB) *Module {
	t.Helper()
	m := NewModule("json all")
	b := NewBuilder(m)
	b.Mesh("m2", []int{2, 2}, []string{"dp", "mp"}, []int{0, 1, 2, 3})
	b.Mesh("empty", []int{}, []string{}, []int{})
	m.Groups = []Group{{ID: 0, Ranks: []int{0, 1}}, {ID: 7, Ranks: []int{}}}

	b.Var("x", Tensor(F32, 8, -1)).WithDist("m2", 0, -1).
		WithFlags(FlagIsData | FlagNeedCheckFeed | FlagStopGradient)
	b.Param("w", Tensor(BF16, 16, 32)).WithDist("m2", -1, 1).
		WithFlags(FlagTrainable | FlagNeedClip)
	b.Persist("step", Tensor(I64)) // a scalar
	b.Var("y", Tensor(F32, 8, 32)).WithDist("m2", 0, -1).
		WithPartial(1, ReduceSum).WithPartial(0, ReduceAvg)
	b.Var("z", Tensor(F64, 0)).WithDist("m2", -1).
		WithPartial(0, ReduceMax).WithPartial(1, ReduceMin)
	for d := Boolean; d < numDTypes; d++ {
		b.Var("t_"+d.String(), Tensor(d, 1, 2, 3))
	}
	for k := Reader; k < numTypeKinds; k++ {
		b.Var("ns_"+k.String(), NoShape(k))
	}
	odd := b.Var("we\"ird {name} [0]\\\n\t<&>", Tensor(U8, 3))
	odd.Attrs.Set("origin", String("paddle"))
	odd.Attrs.Set("lod_level", Int(0))
	b.Var("变量", Tensor(I8))

	sub := b.SubBlock()
	sub.Var("s", Tensor(F16, 4))
	sub.Op("relu", Slots("X", "x"), Slots("Out", "s"))
	nested := sub.SubBlock()
	nested.Op("noop", nil, nil)
	grad := b.SubBlock()
	grad.Block().Forward = sub.Block().Index

	mm := b.Op("matmul_v2", Slots("X", "x", "Y", "w"), Slots("Out", "y"),
		A("trans_x", Bool(false)),
		A("trans_y", Bool(true)),
	)
	b.Annotate(mm, "matmul", 1).Dist.Recompute = true
	all := b.Op("all_attrs", []Slot{S("X", "x", "w"), S("Empty")}, []Slot{S("Out", "z")},
		A("bool", Bool(true)),
		A("int", Int(math.MinInt64)),
		A("int_max", Int(math.MaxInt64)),
		A("float", Float(1.5)),
		A("float_int", Float(3)),
		A("float_nan", Float(math.NaN())),
		A("float_inf", Float(math.Inf(1))),
		A("float_ninf", Float(math.Inf(-1))),
		A("float_negzero", Float(math.Copysign(0, -1))),
		A("float_tiny", Float(5e-324)),
		A("float_big", Float(math.MaxFloat64)),
		A("string", String("quote \" backslash \\ nul \x00 <&> ünï")),
		A("string_empty", String("")),
		A("bools", Bools{true, false}),
		A("ints", Ints{16, -1, 0}),
		A("floats", Floats{math.NaN(), math.Inf(1), math.Inf(-1), math.Copysign(0, -1), 0.1, 1e300}),
		A("strings", Strings{"a", "", "nan", "}]", "\\\""}),
		A("block", BlockRef(1)),
		A("blocks", BlockRefs{1, 2, 3}),
		A("bools_empty", Bools{}),
		A("ints_empty", Ints{}),
		A("floats_empty", Floats{}),
		A("strings_empty", Strings{}),
		A("blocks_empty", BlockRefs{}),
	)
	all.Dist = &OpDist{Mesh: "m2", Inputs: []ArgDist{{Name: "x", DimsMapping: []int{0, -1}}}}
	b.Op("mean", Slots("X", "y"), Slots("Out", "loss")).WithRole(RoleLoss)
	b.Op("fill_constant", nil, Slots("Out", "loss@GRAD")).WithRole(RoleBackward | RoleLoss)
	b.Op("matmul_v2_grad", Slots("X", "x", "Y", "w"), Slots("Y@GRAD", "w@GRAD")).
		WithRole(RoleBackward).WithFwd(mm.ID)
	b.Op("sgd", Slots("Param", "w"), Slots("ParamOut", "w")).WithRole(RoleOptimize)
	b.Op("lr", nil, nil).WithRole(RoleOptimize | RoleLRSched)
	b.Op("send", nil, nil).WithRole(RoleRPC | RoleDist)

	st := b.Startup()
	st.Param("w", Tensor(BF16, 16, 32))
	st.Op("uniform_random", nil, Slots("Out", "w"), A("shape", Ints{16, 32}))
	m.Startup.Rank = 0

	m.ParamGrads = []ParamGrad{{Param: "w", Grad: "w@GRAD"}, {Param: "b"}}
	if err := b.Err(); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestJSONRoundTrip(t *testing.T) {
	m := jsonTestModule(t)
	data, err := EncodeJSON(m)
	if err != nil {
		t.Fatal(err)
	}
	again, err := EncodeJSON(m)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(data, again) {
		t.Fatal("encoding twice gave different bytes")
	}
	if !bytes.HasSuffix(data, []byte("}\n")) || bytes.HasSuffix(data, []byte("\n\n")) {
		t.Errorf("output does not end in exactly one newline")
	}
	if !bytes.Contains(data, []byte("\n  \"version\": 1,\n")) {
		t.Errorf("output is not indented by two spaces:\n%s", data)
	}
	got, err := DecodeJSON(data)
	if err != nil {
		t.Fatalf("decode: %v\n%s", err, data)
	}
	if !Equal(m, got) {
		t.Fatalf("decoded module differs (-want +got):\n%s", Diff(m, got))
	}
	redone, err := EncodeJSON(got)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(data, redone) {
		t.Errorf("re-encoding the decoded module changed the bytes:\n%s\n---\n%s", data, redone)
	}

	// Equal does not tell -0 from +0 or kinds of empty lists apart by
	// itself; check them directly.
	ops := got.Main.Global().Ops
	var all *Op
	for _, op := range ops {
		if op.Type == "all_attrs" {
			all = op
		}
	}
	if f, _ := all.Attrs.Float("float_negzero"); f != 0 || !math.Signbit(f) {
		t.Errorf("float_negzero decoded as %v (signbit %v)", f, math.Signbit(f))
	}
	if fs := all.Attrs.Get("floats").(Floats); !math.Signbit(fs[3]) || !math.IsNaN(fs[0]) {
		t.Errorf("floats decoded as %v", fs)
	}
	for _, name := range []string{"bools_empty", "ints_empty", "floats_empty", "strings_empty", "blocks_empty"} {
		want := jsonTestAttr(m, name)
		v := all.Attrs.Get(name)
		if v == nil || v.Kind() != want.Kind() {
			t.Errorf("%s decoded as %#v, want kind %v", name, v, want.Kind())
		}
	}
}

func jsonTestAttr(m *Module, name string) Value {
	for _, op := range m.Main.Global().Ops {
		if v := op.Attrs.Get(name); v != nil {
			return v
		}
	}
	return nil
}

// TestJSONLayout checks the example in EncodeJSON's doc comment.
func TestJSONLayout(t *testing.T) {
	m := NewModule("tiny")
	b := NewBuilder(m)
	b.Mesh("m", []int{2}, []string{"x"}, []int{0, 1})
	b.Param("w", Tensor(F32, 8, -1)).WithDist("m", 0, -1).WithFlags(FlagTrainable)
	b.Op("scale", Slots("X", "w"), Slots("Out", "w"), A("scale", Float(math.Inf(1)))).
		WithRole(RoleBackward | RoleLoss).WithFwd(7)
	m.ParamGrads = []ParamGrad{{Param: "w", Grad: "w@GRAD"}}
	data, err := EncodeJSON(m)
	if err != nil {
		t.Fatal(err)
	}
	want := `{
  "version": 1,
  "name": "tiny",
  "meshes": [
    {"name": "m", "shape": [2], "dims": ["x"], "ranks": [0, 1]}
  ],
  "groups": [],
  "main": {
    "name": "main",
    "rank": -1,
    "blocks": [
      {
        "index": 0,
        "parent": -1,
        "forward": -1,
        "vars": [
          {
            "name": "w",
            "kind": "param",
            "type": {"kind": "tensor", "dtype": "f32", "shape": [8, -1]},
            "flags": ["trainable"],
            "dist": {"mesh": "m", "dims_mapping": [0, -1]}
          }
        ],
        "ops": [
          {
            "id": 1,
            "type": "scale",
            "inputs": [
              {"name": "X", "args": ["w"]}
            ],
            "outputs": [
              {"name": "Out", "args": ["w"]}
            ],
            "attrs": [
              {"name": "scale", "kind": "float", "value": "inf"}
            ],
            "role": "backward|loss",
            "fwd": 7
          }
        ]
      }
    ]
  },
  "param_grads": [
    {"param": "w", "grad": "w@GRAD"}
  ]
}
`
	if string(data) != want {
		t.Errorf("got:\n%s\nwant:\n%s", data, want)
	}
}

func TestJSONDecodeDefaults(t *testing.T) {
	// Everything but the version may be left out.
	m, err := DecodeJSON([]byte(`{"version": 1, "main": {"blocks": [{"vars": [
		{"name": "x", "type": {"dtype": "f32"}, "dist": {"partial": [{"dim": 1}]}},
		{"name": "r", "type": {"kind": "reader", "shape": []}}
	], "ops": [{"id": 3, "attrs": [{"name": "b", "kind": "ints", "value": []}, {"name": "a", "kind": "float", "value": 1}]}]}, {}]}}`))
	if err != nil {
		t.Fatal(err)
	}
	want := NewModule("")
	b := NewBuilder(want)
	b.Var("x", Tensor(F32)).Dist = &TensorDist{Partial: []Partial{{Dim: 1, Reduce: ReduceSum}}}
	b.Var("r", NoShape(Reader))
	b.Block().Ops = append(b.Block().Ops, &Op{ID: 3, Attrs: Attrs{{"a", Float(1)}, {"b", Ints{}}}})
	want.Main.AddBlock(-1) // named "main", its slot: a program named "" prints to text Parse refuses
	if !Equal(want, m) {
		t.Errorf("(-want +got):\n%s", Diff(want, m))
	}
}

type jsonErrorCase struct{ in, want string }

// jsonDecodeErrorCases returns bad inputs and DecodeJSON's exact errors.
func jsonDecodeErrorCases() []jsonErrorCase {
	mod := func(s string) string { return `{"version": 1, ` + s + `}` }
	block := func(s string) string { return mod(`"main": {"blocks": [{` + s + `}]}`) }
	vars := func(s string) string { return block(`"vars": [` + s + `]`) }
	op := func(s string) string { return block(`"ops": [{"id": 1, ` + s + `}]`) }
	attr := func(kind, value string) string {
		return op(`"attrs": [{"name": "a", "kind": "` + kind + `", "value": ` + value + `}]`)
	}
	return []jsonErrorCase{
		{``, "json: empty input"},
		{`  `, "json: empty input"},
		{`{`, "json: unexpected end of input"},
		{`{"version": 1,}`, "json: offset 15: invalid character '}' looking for beginning of object key string"},
		{`{"version": 1} {}`, "json: data after the module"},
		{`{"version": 1} x`, "json: data after the module"},
		{`[]`, "json: module: want object, got array"},
		{`null`, "missing version"},
		{`{}`, "missing version"},
		{`{"version": 2}`, "unsupported version 2 (want 1)"},
		{`{"version": "1"}`, "json: version: want integer, got string"},
		{`{"version": 1.0}`, "json: version: want integer, got number 1.0"},
		{mod(`"extra": 0`), `json: unknown field "extra"`},
		{mod(`"name": 3`), "json: name: want string, got number"},
		{mod(`"meshes": [null]`), "mesh at position 0 is null"},
		{mod(`"meshes": {}`), "json: meshes: want array, got object"},
		{mod(`"meshes": [{"ranks": [0, null]}]`), "json: meshes.ranks: want integer, got null"},
		{mod(`"groups": [null]`), "group at position 0 is null"},
		{mod(`"groups": [{"id": 1, "ranks": [true]}]`), "json: groups.ranks: want integer, got boolean"},
		{mod(`"param_grads": [null]`), "param_grad at position 0 is null"},
		{mod(`"main": 1`), "json: main: want object, got number"},
		{mod(`"main": {"blocks": [null]}`), "main: block at position 0 is null"},
		{mod(`"main": {"blocks": [{"index": 1}]}`), "main: block at position 0 has index 1"},
		{mod(`"startup": {"blocks": [{}, {"index": 0}]}`), "startup: block at position 1 has index 0"},
		{mod(`"main": {"rank": "x"}`), "json: main.rank: want integer, got string"},
		{vars(`null`), "main block 0: var at position 0 is null"},
		{vars(`{"name": "x", "type": {"dtype": "f32"}}, {"name": "x", "type": {"dtype": "i8"}}`),
			`main block 0 var "x": declared twice`},
		{vars(`{"name": "x", "type": {"kind": "tensor", "dtype": "f33"}}`), `main block 0 var "x": unknown dtype "f33"`},
		{vars(`{"name": "x", "type": {"dtype": "invalid"}}`), `main block 0 var "x": unknown dtype "invalid"`},
		{vars(`{"name": "x"}`), `main block 0 var "x": missing type`},
		{vars(`{"name": "x", "type": {"kind": "tensor", "shape": [1]}}`), `main block 0 var "x": missing dtype`},
		{vars(`{"name": "x", "type": {"kind": "matrix"}}`), `main block 0 var "x": unknown type kind "matrix"`},
		{vars(`{"name": "x", "type": {"kind": ""}}`), `main block 0 var "x": unknown type kind ""`},
		{vars(`{"name": "x", "type": {"kind": "reader", "dtype": "f32"}}`), `main block 0 var "x": type reader has a dtype`},
		{vars(`{"name": "x", "type": {"kind": "raw", "shape": [1]}}`), `main block 0 var "x": type raw has a shape`},
		{vars(`{"name": "x", "type": {"dtype": "f32", "shape": "8"}}`), "json: main.blocks.vars.type.shape: want array, got string"},
		{vars(`{"name": "x", "type": {"dtype": "f32", "shape": [8, 1.5]}}`), "json: main.blocks.vars.type.shape: want integer, got number 1.5"},
		{vars(`{"name": "x", "type": {"dtype": "f32", "shap": [8]}}`), `json: unknown field "shap"`},
		{vars(`{"name": "x", "kind": "const", "type": {"dtype": "f32"}}`), `main block 0 var "x": unknown var kind "const"`},
		{vars(`{"name": "x", "type": {"dtype": "f32"}, "flags": ["frozen"]}`), `main block 0 var "x": unknown flag "frozen"`},
		{vars(`{"name": "x", "type": {"dtype": "f32"}, "flags": [null]}`), "json: main.blocks.vars.flags: want string, got null"},
		{vars(`{"name": "x", "type": {"dtype": "f32"}, "dist": {"partial": [null]}}`), `main block 0 var "x": partial at position 0 is null`},
		{vars(`{"name": "x", "type": {"dtype": "f32"}, "dist": {"partial": [{"dim": 0, "reduce": "prod"}]}}`),
			`main block 0 var "x": unknown reduce "prod"`},
		{vars(`{"name": "x", "type": {"dtype": "f32"}, "attrs": [{"name": "a", "kind": "int64", "value": 1}]}`),
			`main block 0 var "x" attr "a": unknown kind "int64"`},
		{block(`"ops": [null]`), "main block 0: op at position 0 is null"},
		{block(`"ops": [{"id": "1"}]`), "json: main.blocks.ops.id: want integer, got string"},
		{op(`"role": "bakward"`), `main block 0 op 1: unknown role "bakward"`},
		{op(`"role": "backward|"`), `main block 0 op 1: unknown role "backward|"`},
		{op(`"role": ""`), `main block 0 op 1: unknown role ""`},
		{op(`"role": ["backward"]`), "json: main.blocks.ops.role: want string, got array"},
		{op(`"inputs": [null]`), "main block 0 op 1: input slot at position 0 is null"},
		{op(`"outputs": [{"name": "Out", "args": ["a", null]}]`), "json: main.blocks.ops.outputs.args: want string, got null"},
		{op(`"dist": {"outputs": [null]}`), "main block 0 op 1: output dist at position 0 is null"},
		{op(`"dist": {"inputs": [{"name": "x", "dims_mapping": [null]}]}`), "json: main.blocks.ops.dist.inputs.dims_mapping: want integer, got null"},
		{op(`"attrs": [null]`), "main block 0 op 1: attr at position 0 is null"},
		{op(`"attrs": [{"name": "a", "value": 1}]`), `main block 0 op 1 attr "a": missing kind`},
		{op(`"attrs": [{"name": "a", "kind": "int"}]`), `main block 0 op 1 attr "a": missing value`},
		{op(`"attrs": [{"name": "a", "kind": "int", "value": 1}, {"name": "a", "kind": "int", "value": 2}]`),
			`main block 0 op 1 attr "a": given twice`},
		{op(`"attrs": [{"name": "a", "kind": "int", "value": 1, "extra": 2}]`), `json: unknown field "extra"`},
		{attr("int32", "1"), `main block 0 op 1 attr "a": unknown kind "int32"`},
		{attr("int", "null"), `main block 0 op 1 attr "a": missing value`},
		{attr("bool", `"true"`), `main block 0 op 1 attr "a": want boolean, got string "true"`},
		{attr("int", "1.5"), `main block 0 op 1 attr "a": want integer, got number 1.5`},
		{attr("int", "1e3"), `main block 0 op 1 attr "a": want integer, got number 1e3`},
		{attr("int", "9223372036854775808"), `main block 0 op 1 attr "a": integer 9223372036854775808 out of range`},
		{attr("float", `"NaN"`), `main block 0 op 1 attr "a": want number, "nan", "inf" or "-inf", got string "NaN"`},
		{attr("float", `true`), `main block 0 op 1 attr "a": want number, "nan", "inf" or "-inf", got boolean`},
		{attr("float", "1e999"), `main block 0 op 1 attr "a": number 1e999 out of range`},
		{attr("string", "[]"), `main block 0 op 1 attr "a": want string, got array`},
		{attr("block", "1.0"), `main block 0 op 1 attr "a": want integer, got number 1.0`},
		{attr("ints", "1"), `main block 0 op 1 attr "a": want array, got number 1`},
		{attr("ints", `{}`), `main block 0 op 1 attr "a": want array, got object`},
		{attr("bools", "[true, 1]"), `main block 0 op 1 attr "a": element 1: want boolean, got number 1`},
		{attr("ints", "[1, null]"), `main block 0 op 1 attr "a": element 1: want integer, got null`},
		{attr("floats", `["nan", null]`), `main block 0 op 1 attr "a": element 1: want number, "nan", "inf" or "-inf", got null`},
		{attr("strings", `["a", 1]`), `main block 0 op 1 attr "a": element 1: want string, got number 1`},
		{attr("blocks", `[0, -1, "2"]`), `main block 0 op 1 attr "a": element 2: want integer, got string "2"`},
		// What the text format cannot say (each printed to text that
		// Parse refused).
		{mod(`"main": null`), "no main program"},
		{mod(`"startup": {"blocks": [{}]}`), "no main program"},
		{mod(`"main": {"blocks": []}`), "main: no blocks"},
		{mod(`"main": {"name": "train", "blocks": [{}]}`), `main: program is named train`},
		{mod(`"main": {"blocks": [{}]}, "startup": {"name": "main", "blocks": [{}]}`), `startup: program is named main`},
		{mod(`"main": {"rank": -2, "blocks": [{}]}`), "main: rank -2 is not -1 (serial) or a rank"},
		{mod(`"main": {"rank": 4294967296, "blocks": [{}]}`), "main: rank 4294967296 is not -1 (serial) or a rank"},
		{mod(`"meshes": [{"name": "m", "shape": [4294967296], "dims": ["x"], "ranks": [0]}], "main": {"blocks": [{}]}`),
			`mesh m: shape entry 4294967296 out of range (the text format's integers here are 32-bit)`},
		{mod(`"meshes": [{"name": "m", "shape": [1], "dims": ["x"], "ranks": [2147483648]}], "main": {"blocks": [{}]}`),
			`mesh m: ranks entry 2147483648 out of range (the text format's integers here are 32-bit)`},
		{mod(`"groups": [{"id": -2147483649, "ranks": [0]}], "main": {"blocks": [{}]}`),
			`group id -2147483649 out of range (the text format's integers here are 32-bit)`},
		{mod(`"main": {"blocks": [{"parent": 2147483648}]}`),
			`main block 0: parent 2147483648 or forward -1 out of range (the text format's integers here are 32-bit)`},
		{vars(`{"name": "x", "type": {"dtype": "f32", "shape": [1], "lod": -1}}`), `main block 0 var "x": lod level -1 is negative or out of range`},
		{vars(`{"name": "x", "type": {"dtype": "f32", "shape": [1]}, "dist": {"mesh": "m", "dims_mapping": [4294967296]}}`),
			`main block 0 var "x": dims_mapping entry 4294967296 out of range (the text format's integers here are 32-bit)`},
		{vars(`{"name": "x", "type": {"dtype": "f32"}, "dist": {"mesh": "m", "partial": [{"dim": 1}, {"dim": 0}]}}`),
			`main block 0 var "x": partial dims must be ascending and unique`},
		{vars(`{"name": "x", "type": {"dtype": "f32"}, "dist": {"mesh": "m", "partial": [{"dim": 0}, {"dim": 0, "reduce": "max"}]}}`),
			`main block 0 var "x": partial dims must be ascending and unique`},
		{vars(`{"name": "x", "type": {"dtype": "f32"}, "attrs": [{"name": "trainable", "kind": "bool", "value": true}]}`),
			`main block 0 var "x": attr trainable is named as a flag`},
		{op(`"dist": {"mesh": "m", "impl_index": 2147483648}`), `main block 0 op 1: impl index 2147483648 out of range (the text format's integers here are 32-bit)`},
		{op(`"dist": {"mesh": "m", "inputs": [{"name": "x", "dims_mapping": [-2147483649]}]}`),
			`main block 0 op 1: dist of x: dims_mapping entry -2147483649 out of range (the text format's integers here are 32-bit)`},
		{attr("block", "2147483648"), `main block 0 op 1 attr "a": block 2147483648 out of range (the text format's integers here are 32-bit)`},
		{attr("blocks", "[1, -2147483649]"), `main block 0 op 1 attr "a": block entry -2147483649 out of range (the text format's integers here are 32-bit)`},
	}
}

func TestJSONDecodeErrors(t *testing.T) {
	for _, tt := range jsonDecodeErrorCases() {
		m, err := DecodeJSON([]byte(tt.in))
		if err == nil {
			t.Errorf("DecodeJSON(%s) = %v, want error %q", tt.in, m, tt.want)
			continue
		}
		if err.Error() != tt.want {
			t.Errorf("DecodeJSON(%s):\n got error %q\nwant error %q", tt.in, err, tt.want)
		}
	}
}

func TestJSONEncodeErrors(t *testing.T) {
	tests := []struct {
		name string
		edit func(m *Module)
		want string
	}{
		{"nil mesh", func(m *Module) { m.Meshes = append(m.Meshes, nil) }, "mesh at position 1 is nil"},
		{"nil block", func(m *Module) { m.Main.Blocks = append(m.Main.Blocks, nil) }, "main: block at position 1 is nil"},
		{"block index", func(m *Module) { m.Main.Blocks[0].Index = 3 }, "main: block at position 0 has index 3"},
		{"nil var", func(m *Module) { m.Main.Global().addVarUnchecked(nil) }, "main block 0: var at position 1 is nil"},
		{"duplicate var", func(m *Module) { m.Main.Global().addVarUnchecked(&Var{name: "x", Type: Tensor(F32)}) },
			`main block 0 var "x": declared twice`},
		{"nil op", func(m *Module) { m.Main.Global().Ops = append(m.Main.Global().Ops, nil) }, "main block 0: op at position 1 is nil"},
		{"var kind", func(m *Module) { m.Main.Global().Var("x").Kind = 9 }, `main block 0 var "x": unknown var kind 9`},
		{"no dtype", func(m *Module) { m.Main.Global().Var("x").Type = Type{} }, `main block 0 var "x": tensor has dtype invalid`},
		{"bad dtype", func(m *Module) { m.Main.Global().Var("x").Type.DType = 99 }, `main block 0 var "x": tensor has dtype dtype(99)`},
		{"type kind", func(m *Module) { m.Main.Global().Var("x").Type = Type{Kind: 42} }, `main block 0 var "x": unknown type kind 42`},
		{"no-shape dtype", func(m *Module) { m.Main.Global().Var("x").Type = Type{Kind: Reader, DType: F32} },
			`main block 0 var "x": type reader has a dtype`},
		{"no-shape shape", func(m *Module) { m.Main.Global().Var("x").Type = Type{Kind: Raw, Shape: []int64{2}} },
			`main block 0 var "x": type raw has a shape`},
		{"flags", func(m *Module) { m.Main.Global().Var("x").Flags |= 1 << 12 }, `main block 0 var "x": unknown flags 0x1000`},
		{"reduce", func(m *Module) { m.Main.Global().Var("x").WithPartial(0, 7) }, `main block 0 var "x": unknown reduce 7`},
		{"role", func(m *Module) { m.Main.Global().Ops[0].Role = 0x40 }, "main block 0 op 1: role 0x40 has unknown bits"},
		{"nil value", func(m *Module) { m.Main.Global().Ops[0].Attrs.Set("z", nil) }, `main block 0 op 1 attr "z": nil value`},
		{"unsorted attrs", func(m *Module) {
			op := m.Main.Global().Ops[0]
			op.Attrs = append(op.Attrs, Attr{"a", Int(1)})
		}, `main block 0 op 1 attr "a": attrs not sorted by unique name`},
		{"duplicate attrs", func(m *Module) {
			v := m.Main.Global().Var("x")
			v.Attrs = Attrs{{"a", Int(1)}, {"a", Int(2)}}
		}, `main block 0 var "x" attr "a": attrs not sorted by unique name`},
		{"invalid scalar", func(m *Module) { m.Main.Global().Ops[0].Attrs.Set("s", Scalar{Type: 7}) },
			`main block 0 op 1 attr "s": invalid scalar {Type:7 B:false I:0 R:0 Im:0}`},
		{"lod without HasLoD", func(m *Module) { m.Main.Global().Var("x").Type.LoD = 1 }, `main block 0 var "x": lod 1 without HasLoD`},
		{"no-shape lod", func(m *Module) { m.Main.Global().Var("x").Type = Type{Kind: TensorArray, HasLoD: true} },
			`main block 0 var "x": type tensor_array has a lod`},
		{"utf8 name", func(m *Module) { m.Name = "\xff" }, "module name: string is not valid UTF-8"},
		{"utf8 arg", func(m *Module) { m.Main.Global().Ops[0].Inputs = Slots("X", "\xff") }, "main block 0 op 1: string is not valid UTF-8"},
		{"utf8 attr", func(m *Module) { m.Main.Global().Ops[0].Attrs.Set("s", Strings{"ok", "\xfe"}) },
			`main block 0 op 1 attr "s": string is not valid UTF-8`},
	}
	for _, tt := range tests {
		m := NewModule("m")
		b := NewBuilder(m)
		b.Var("x", Tensor(F32, 4))
		b.Op("relu", Slots("X", "x"), Slots("Out", "x"), A("k", Int(1)))
		b.Mesh("mesh", []int{1}, []string{"d"}, []int{0})
		if _, err := EncodeJSON(m); err != nil {
			t.Fatalf("%s: valid module: %v", tt.name, err)
		}
		tt.edit(m)
		_, err := EncodeJSON(m)
		if err == nil || err.Error() != tt.want {
			t.Errorf("%s: got error %v, want %q", tt.name, err, tt.want)
		}
	}
	if _, err := EncodeJSON(nil); err == nil || err.Error() != "nil module" {
		t.Errorf("EncodeJSON(nil): got error %v", err)
	}
}

func FuzzDecodeJSON(f *testing.F) {
	data, err := EncodeJSON(jsonTestModule(f))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
	f.Add([]byte(`{"version": 1}`))
	f.Add([]byte(`{"version": 1, "main": {"blocks": [{"vars": [{"name": "x", "type": {"dtype": "f32", "shape": [2]}}],
		"ops": [{"id": 1, "attrs": [{"name": "f", "kind": "floats", "value": ["nan", -0, 1e-300]}], "role": "forward|loss"}]}]}}`))
	for _, tt := range jsonDecodeErrorCases() {
		f.Add([]byte(tt.in))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := DecodeJSON(data)
		if err != nil {
			if m != nil {
				t.Fatal("DecodeJSON returned a module and an error")
			}
			return
		}
		enc, err := EncodeJSON(m)
		if err != nil {
			t.Fatalf("decoded module does not encode: %v", err)
		}
		m2, err := DecodeJSON(enc)
		if err != nil {
			t.Fatalf("re-encoded module does not decode: %v\n%s", err, enc)
		}
		if !Equal(m, m2) {
			t.Fatalf("round trip differs (-first +second):\n%s", Diff(m, m2))
		}
		enc2, err := EncodeJSON(m2)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(enc, enc2) {
			t.Fatalf("encoding is not stable:\n%s\n---\n%s", enc, enc2)
		}
		if !strings.HasSuffix(string(enc), "\n") {
			t.Fatal("no trailing newline")
		}
		// What JSON accepts, the text format says: it prints to text
		// that parses back to it.
		text := Print(m)
		m3, err := Parse("printed.dpir", text)
		if err != nil {
			t.Fatalf("decoded module prints to text that does not parse: %v\n%s", err, text)
		}
		if !Equal(m, m3) {
			t.Fatalf("text round trip differs (-json +text):\n%s", Diff(m, m3))
		}
	})
}

func TestJSONEmptyModule(t *testing.T) {
	// A module without main prints to text that Parse refuses ("no main
	// program"), so JSON refuses it both ways.
	if _, err := EncodeJSON(&Module{}); err == nil || err.Error() != "no main program" {
		t.Errorf("EncodeJSON of a module without main: err = %v", err)
	}
	if _, err := DecodeJSON([]byte(`{"version": 1, "main": null}`)); err == nil || err.Error() != "no main program" {
		t.Errorf(`DecodeJSON of "main": null: err = %v`, err)
	}
	for _, m := range []*Module{NewModule("")} {
		data, err := EncodeJSON(m)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(data, []byte("{\n  \"version\": 1,\n")) {
			t.Errorf("top level not indented:\n%s", data)
		}
		got, err := DecodeJSON(data)
		if err != nil {
			t.Fatal(err)
		}
		if !Equal(m, got) {
			t.Errorf("(-want +got):\n%s", Diff(m, got))
		}
	}
}

// TestParseJSONErrors: ParseJSON names the file, and the line and column
// where the JSON itself is broken.
func TestParseJSONErrors(t *testing.T) {
	deep := `{"version": 1, "main": {"blocks": [{}`
	for i := 1; i <= MaxBlockDepth+1; i++ {
		deep += fmt.Sprintf(`, {"parent": %d}`, i-1)
	}
	deep += "]}}"
	for _, tt := range []struct{ in, want string }{
		{"{\n  \"version\": 1,\n}", "m.json:3:1: invalid character '}' looking for beginning of object key string"},
		{"{\"version\": 1,\n  \"name\": \"a\"", "m.json:2:14: unexpected end of input"},
		{"{\"version\": 1}\n\n  []", "m.json:3:3: data after the module"},
		{`{"version": 1, "nme": "a"}`, `m.json: unknown field "nme"`},
		{`{"version": "1"}`, "m.json: version: want integer, got string"},
		{`{"version": 1, "main": {"blocks": [{"vars": [{"name": "x", "type": {"dtype": "f33"}}]}]}}`,
			`m.json: main block 0 var "x": unknown dtype "f33"`},
		{deep, "m.json: main block 1001: nested 1001 blocks deep through its parents; the limit is 1000"},
	} {
		_, err := ParseJSON("m.json", []byte(tt.in))
		var je *JSONError
		if !errors.As(err, &je) || err.Error() != tt.want {
			t.Errorf("ParseJSON(%.40q):\n got %v (%T)\nwant %s", tt.in, err, err, tt.want)
		}
	}
	for _, tt := range []struct{ in, want string }{
		{"{\"a\": [1,\n 2", "p.json:2:3: unexpected end of input"},
		{"{\"a\": 1}\n x", "p.json:2:2: data after the JSON value"},
		{"{\"a\" 1}", "p.json:1:6: invalid character '1' after object key"},
		{"  ", "p.json: empty input"},
	} {
		err := CheckJSONSyntax("p.json", []byte(tt.in))
		var je *JSONError
		if !errors.As(err, &je) || err.Error() != tt.want {
			t.Errorf("CheckJSONSyntax(%q):\n got %v\nwant %s", tt.in, err, tt.want)
		}
	}
	if err := CheckJSONSyntax("p.json", []byte(` {"a": [1, {}]} `)); err != nil {
		t.Errorf("CheckJSONSyntax of valid JSON: %v", err)
	}
	m, err := ParseJSON("m.json", []byte(`{"version": 1, "main": {"blocks": [{}]}}`))
	if err != nil || m.Main == nil {
		t.Errorf("ParseJSON of a valid module: %v", err)
	}
}

// TestJSONIntegersTheTextCanSay replaces each integer of a module's JSON,
// one at a time, by values past 32 bits and below -1: whatever DecodeJSON
// then accepts must print to text that parses back to it (the text reads
// most integers as 32-bit, and some as -1 or more).
func TestJSONIntegersTheTextCanSay(t *testing.T) {
	data, err := EncodeJSON(jsonTestModule(t))
	if err != nil {
		t.Fatal(err)
	}
	num := regexp.MustCompile(`-?\b[0-9]+\b`)
	locs := num.FindAllIndex(data, -1)
	if len(locs) < 20 {
		t.Fatalf("only %d integers in the test module's JSON", len(locs))
	}
	accepted := 0
	seen := map[string]bool{}
	for _, loc := range locs {
		if loc[0] > 0 && (data[loc[0]-1] == '.' || data[loc[0]-1] == '"') || loc[1] < len(data) && (data[loc[1]] == '.' || data[loc[1]] == 'e' || data[loc[1]] == '"') {
			continue // part of a float or a string
		}
		if r := jsonRole(data, loc); seen[r] {
			continue
		} else {
			seen[r] = true
		}
		for _, v := range []string{"2147483648", "-2147483649", "4294967296", "-2", "-1"} {
			if decodesToText(t, data, loc, v, "integer") {
				accepted++
			}
		}
	}
	if accepted == 0 {
		t.Error("no change was accepted: the test tests nothing")
	}
}

// TestJSONStringsTheTextCanSay is TestJSONIntegersTheTextCanSay for
// strings: each string of the JSON, one at a time, set to "", to a flag's
// name, to a keyword and to a name that needs quotes.
func TestJSONStringsTheTextCanSay(t *testing.T) {
	data, err := EncodeJSON(jsonTestModule(t))
	if err != nil {
		t.Fatal(err)
	}
	str := regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)
	accepted := 0
	seen := map[string]bool{}
	for _, loc := range str.FindAllIndex(data, -1) {
		if r := jsonRole(data, loc); seen[r] {
			continue
		} else {
			seen[r] = true
		}
		for _, v := range []string{`""`, `"trainable"`, `"main"`, `"startup"`, `"op"`, `"a b"`, `"0x1"`} {
			if decodesToText(t, data, loc, v, "string") {
				accepted++
			}
		}
	}
	if accepted == 0 {
		t.Error("no change was accepted: the test tests nothing")
	}
}

// decodesToText decodes data with the bytes at loc replaced by v and
// reports whether DecodeJSON accepted it; what it accepts must print to
// text that parses back to an equal module.
func decodesToText(t *testing.T, data []byte, loc []int, v, what string) bool {
	t.Helper()
	in := string(data[:loc[0]]) + v + string(data[loc[1]:])
	m, err := DecodeJSON([]byte(in))
	if err != nil {
		return false
	}
	m2, err := Parse("printed.dpir", Print(m))
	if err != nil {
		t.Errorf("%s at %d set to %s: decoded, but the text does not parse: %v", what, loc[0], v, err)
		return true
	}
	if !Equal(m, m2) {
		t.Errorf("%s at %d set to %s: the text round trip differs:\n%s", what, loc[0], v, Diff(m, m2))
	}
	return true
}

// jsonRole names what the JSON token at loc is, roughly: a key (by its
// text), or the value of (or an element under) the nearest key before it.
// The tests above change one token of each role, not every occurrence: a
// module's JSON repeats its keys hundreds of times.
func jsonRole(data []byte, loc []int) string {
	if rest := bytes.TrimLeft(data[loc[1]:], " \t\n"); len(rest) > 0 && rest[0] == ':' {
		return "key " + string(data[loc[0]:loc[1]])
	}
	end := bytes.LastIndex(data[:loc[0]], []byte(`":`))
	if end < 0 {
		return "top"
	}
	start := bytes.LastIndexByte(data[:end], '"')
	return "value of " + string(data[start+1:end])
}
