package paddle

import (
	"bytes"
	"math"
	"os"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/distpass/distpass/ir"
)

func parseFile(t *testing.T, path string) *ir.Module {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m, err := ir.Parse(path, src)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// Every var kind, attr type, reserved attr and block link survives
// Export then Import, and the second export gives the same bytes.
func TestAllKindsRoundTrip(t *testing.T) {
	m := parseFile(t, "testdata/all_kinds.dpir")
	pb, err := Export(m)
	if err != nil {
		t.Fatal(err)
	}
	m2, err := Import("all_kinds.pdmodel", pb)
	if err != nil {
		t.Fatal(err)
	}
	if d := ir.Diff(m, m2); d != "" {
		t.Fatalf("Import(Export(m)) differs:\n%s", d)
	}
	pb2, err := Export(m2)
	if err != nil || !bytes.Equal(pb, pb2) {
		t.Fatalf("second export differs (err %v)", err)
	}
	// The role attr is written at its recorded place; the op without one
	// has none.
	op := m2.Main.Global().Ops[1]
	if op.Role != ir.RoleBackward|ir.RoleOptimize|0x1000 {
		t.Errorf("role = %v", op.Role)
	}
	if !bytes.Contains(pb, []byte("\x0a\x07op_role")) {
		t.Error("no op_role attr written")
	}
	if n := bytes.Count(pb, []byte("\x0a\x07op_role\x10")); n != 7 {
		t.Errorf("%d op_role attrs written, want 7 (the while has none)", n)
	}
}

// A module built by distpass (sorted attrs, no reserved attrs) exports
// op_role in sorted position and every var's persistable field.
func TestExportNativeModule(t *testing.T) {
	m, err := ir.Parse("n", []byte(`program main {
  block 0 {
    var x : f32[2]
    var y : f32[2]
    op 1 scale(X: x) -> (Out: y) {bias = 0.0, scale = 2.0} role backward
  }
}`))
	if err != nil {
		t.Fatal(err)
	}
	pb, err := Export(m)
	if err != nil {
		t.Fatal(err)
	}
	i, j, k := bytes.Index(pb, []byte("bias")), bytes.Index(pb, []byte("op_role")), bytes.Index(pb, []byte("scale\x10"))
	if !(i >= 0 && i < j && j < k) {
		t.Errorf("attrs not in sorted order: bias at %d, op_role at %d, scale at %d", i, j, k)
	}
	m2, err := Import("n", pb)
	if err != nil {
		t.Fatal(err)
	}
	m.Name = "n"
	if d := ir.Diff(m, m2); d != "" {
		t.Fatalf("round trip:\n%s", d)
	}
	if bytes.Count(pb, []byte{varPersistable << 3, 0}) != 2 {
		t.Error("persistable = false not written for both vars")
	}
}

// msg builds wire bytes from fields: each item is a func appending one
// field.
type fieldFn func([]byte) []byte

func msg(fs ...fieldFn) []byte {
	var b []byte
	for _, f := range fs {
		b = f(b)
	}
	return b
}

func vint(num int, v uint64) fieldFn {
	return func(b []byte) []byte {
		return protowire.AppendVarint(protowire.AppendTag(b, protowire.Number(num), protowire.VarintType), v)
	}
}

func byts(num int, v []byte) fieldFn {
	return func(b []byte) []byte {
		return protowire.AppendBytes(protowire.AppendTag(b, protowire.Number(num), protowire.BytesType), v)
	}
}

func str(num int, s string) fieldFn { return byts(num, []byte(s)) }

func fix32(num int, v uint32) fieldFn {
	return func(b []byte) []byte {
		return protowire.AppendFixed32(protowire.AppendTag(b, protowire.Number(num), protowire.Fixed32Type), v)
	}
}

// tinyProgram is a one-block program with var x and one op built from
// opFields.
func tinyProgram(varFields []byte, opFields []byte) []byte {
	block := msg(vint(blockIdx, 0), vint(blockParent, math.MaxUint64), byts(blockVars, varFields), byts(blockOps, opFields))
	return msg(byts(progBlocks, block))
}

func f32var(name string, dims ...int64) []byte {
	td := msg(vint(tdDataType, 5))
	for _, d := range dims {
		td = append(td, msg(vint(tdDims, uint64(d)))...)
	}
	return msg(str(varName, name), byts(varType, msg(vint(vtType, vtDENSE_TENSOR), byts(vtDense, msg(byts(dtdTensor, td))))), vint(varPersistable, 0))
}

// What Paddle never writes but a protobuf reader must take: packed
// repeated fields, and missing required fields.
func TestImportLenient(t *testing.T) {
	// dims packed: [-1, 3]; ints packed; floats packed; a slot with no
	// arguments; no block idx; no attr type (INT).
	packedDims := protowire.AppendVarint(protowire.AppendVarint(nil, math.MaxUint64), 3)
	td := msg(vint(tdDataType, 5), byts(tdDims, packedDims))
	v := msg(str(varName, "x"), byts(varType, msg(vint(vtType, vtDENSE_TENSOR), byts(vtDense, msg(byts(dtdTensor, td))))))
	packedInts := protowire.AppendVarint(protowire.AppendVarint(nil, 7), uint64(math.MaxUint64-1)) // 7, -2
	var packedFloats []byte
	packedFloats = protowire.AppendFixed32(packedFloats, math.Float32bits(0.5))
	packedFloats = protowire.AppendFixed32(packedFloats, 0x7f800001) // a signalling NaN
	op := msg(
		byts(opInputs, msg(str(slotName, "X"), str(slotArgs, "x"))),
		byts(opOutputs, msg(str(slotName, "Out"))),
		str(opType, "relu"),
		byts(opAttrs, msg(str(attrName, "ints"), vint(attrType, atINTS), byts(attrInts, packedInts))),
		byts(opAttrs, msg(str(attrName, "floats"), vint(attrType, atFLOATS), byts(attrFloats, packedFloats))),
		byts(opAttrs, msg(str(attrName, "untyped"), vint(attrI, 4))),
	)
	block := msg(vint(blockParent, math.MaxUint64), byts(blockVars, v), byts(blockOps, op))
	m, err := Import("lenient.pdmodel", msg(byts(progBlocks, block)))
	if err != nil {
		t.Fatal(err)
	}
	x := m.Main.Global().Var("x")
	if x == nil || len(x.Type.Shape) != 2 || x.Type.Shape[0] != -1 || x.Type.Shape[1] != 3 || x.Kind != ir.KindVar {
		t.Fatalf("x = %+v", x)
	}
	o := m.Main.Global().Ops[0]
	if ints, _ := o.Attrs.Ints("ints"); len(ints) != 2 || ints[0] != 7 || ints[1] != -2 {
		t.Errorf("ints = %v", o.Attrs.Get("ints"))
	}
	fs, _ := o.Attrs.Get("floats").(ir.Floats)
	if len(fs) != 2 || fs[0] != 0.5 || f64to32(fs[1]) != 0x7f800001 {
		t.Errorf("floats = %v", fs)
	}
	if v, _ := o.Attrs.Int("untyped"); v != 4 {
		t.Errorf("untyped = %v", o.Attrs.Get("untyped"))
	}
	if len(o.Outputs) != 1 || o.Outputs[0].Name != "Out" || len(o.Outputs[0].Args) != 0 {
		t.Errorf("outputs = %v", o.Outputs)
	}
	// Exported, it is written unpacked, and reads back equal; the NaN's
	// payload survives.
	pb, err := Export(m)
	if err != nil {
		t.Fatal(err)
	}
	m2, err := Import("lenient.pdmodel", pb)
	if err != nil {
		t.Fatal(err)
	}
	if d := ir.Diff(m, m2); d != "" {
		t.Errorf("round trip:\n%s", d)
	}
	if !bytes.Contains(pb, protowire.AppendFixed32(nil, 0x7f800001)) {
		t.Error("the NaN's bits changed")
	}
}

func TestImportErrors(t *testing.T) {
	x := f32var("x", 2)
	relu := func(extra ...fieldFn) []byte {
		return msg(append([]fieldFn{byts(opInputs, msg(str(slotName, "X"), str(slotArgs, "x"))), str(opType, "relu")}, extra...)...)
	}
	tests := []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "f.pdmodel: ProgramDesc has no blocks"},
		{"unknown program field", msg(byts(progBlocks, nil), vint(2, 1)), "f.pdmodel: ProgramDesc: unknown field 2 (varint) at byte offset 2"},
		{"truncated", []byte{0x0a, 0x05, 0x08}, "f.pdmodel: BlockDesc 0: field 1 (idx) truncated: the file ends before its value at byte offset 2"},
		{"bad tag", []byte{0x0a, 0x00, 0x00}, "f.pdmodel: ProgramDesc: malformed field tag (invalid field number) at byte offset 2"},
		{"group", []byte{0x0b}, "f.pdmodel: ProgramDesc: field 1 has wire type 3 (groups are not used by Paddle) at byte offset 0"},
		{"wrong wire type", msg(vint(progBlocks, 1)), "f.pdmodel: ProgramDesc: field 1 (blocks) has wire type varint, want bytes at byte offset 0"},
		{"unknown var field", tinyProgram(append(x, msg(vint(9, 1))...), relu()), `f.pdmodel: BlockDesc 0 > VarDesc "x": unknown field 9 (varint) at byte offset 34`},
		{"unknown var kind", tinyProgram(msg(str(varName, "x"), byts(varType, msg(vint(vtType, 99)))), relu()),
			`f.pdmodel: BlockDesc 0 > VarDesc "x" > VarType: type 99 is not a var kind the IR knows at byte offset 20`},
		{"unknown dtype", tinyProgram(msg(str(varName, "x"), byts(varType, msg(vint(vtType, vtDENSE_TENSOR), byts(vtDense, msg(byts(dtdTensor, msg(vint(tdDataType, 23)))))))), relu()),
			`f.pdmodel: BlockDesc 0 > VarDesc "x" > VarType > dense_tensor > TensorDesc: data_type COMPLEX64 is not a dtype the IR knows at byte offset 28`},
		{"unknown attr type", tinyProgram(x, relu(byts(opAttrs, msg(str(attrName, "a"), vint(attrType, 18))))),
			`f.pdmodel: BlockDesc 0 > OpDesc 0 "relu" > Attr "a": unknown AttrType 18 at byte offset 50`},
		{"attr field mismatch", tinyProgram(x, relu(byts(opAttrs, msg(str(attrName, "a"), vint(attrType, atINT), fix32(attrF, 0))))),
			`f.pdmodel: BlockDesc 0 > OpDesc 0 "relu" > Attr "a": field 4 (f) set on an INT attr at byte offset 50`},
		{"unknown scalar type", tinyProgram(x, relu(byts(opAttrs, msg(str(attrName, "a"), vint(attrType, atSCALAR), byts(attrScalar, msg(vint(scalarType, 9))))))),
			`f.pdmodel: BlockDesc 0 > OpDesc 0 "relu" > Attr "a" > scalar: unknown Scalar.Type 9 at byte offset 60`},
		{"reserved attr", tinyProgram(x, relu(byts(opAttrs, msg(str(attrName, "paddle.x"), vint(attrType, atINT))))),
			`f.pdmodel: BlockDesc 0 > OpDesc 0 "relu" > Attr "paddle.x": the name prefix "paddle." is reserved at byte offset 50`},
		{"attr twice", tinyProgram(x, relu(byts(opAttrs, msg(str(attrName, "a"))), byts(opAttrs, msg(str(attrName, "a"))))),
			`f.pdmodel: BlockDesc 0 > OpDesc 0 "relu": attr "a" given twice at byte offset 55`},
		{"op_role not int", tinyProgram(x, relu(byts(opAttrs, msg(str(attrName, "op_role"), vint(attrType, atSTRING))))),
			`f.pdmodel: BlockDesc 0 > OpDesc 0 "relu": attr op_role is a string, want INT at byte offset 50`},
		{"var twice", tinyProgram(append(x, msg(byts(blockVars, x))[0:0]...), relu())[0:0], "f.pdmodel: ProgramDesc has no blocks"},
		{"block idx", msg(byts(progBlocks, msg(vint(blockIdx, 3)))), "f.pdmodel: BlockDesc 0: idx 3 is not the block's position 0 at byte offset 2"},
		{"int32 range", msg(byts(progBlocks, msg(vint(blockParent, 1<<40)))), "f.pdmodel: BlockDesc 0: field 2 (parent_idx): value 1099511627776 out of int32 range at byte offset 2"},
		{"param not persistable", tinyProgram(append(f32var("w", 2), msg(vint(varIsParameter, 1))...), relu()),
			`f.pdmodel: BlockDesc 0 > VarDesc "w": is_parameter is set but persistable is not (the IR has no such var) at byte offset 15`},
		{"desc of another kind", tinyProgram(msg(str(varName, "x"), byts(varType, msg(vint(vtType, vtFETCH_LIST), byts(vtDense, nil)))), relu()),
			`f.pdmodel: BlockDesc 0 > VarDesc "x" > VarType: field dense_tensor set on a FETCH_LIST var at byte offset 24`},
		{"var attr type", tinyProgram(append(f32var("w", 2), msg(byts(varAttrs, msg(str(varAttrName, "a"), vint(varAttrType, atFLOAT))))...), relu()),
			`f.pdmodel: BlockDesc 0 > VarDesc "w" > Attr "a": type FLOAT is not one a var attr holds (INT, STRING, INTS) at byte offset 34`},
		{"legacy twice", msg(byts(progBlocks, nil), byts(progLegacyCompat, nil), byts(progLegacyCompat, nil)),
			"f.pdmodel: ProgramDesc: field 3 (legacy op_compatible_map) given twice at byte offset 4"},
		{"unknown op version field", msg(byts(progBlocks, nil), byts(progOpVersionMap, msg(byts(opVersionMapPair, msg(vint(3, 1)))))),
			"f.pdmodel: OpVersionPair: unknown field 3 (varint) at byte offset 6"},
	}
	for _, tt := range tests {
		if tt.name == "var twice" {
			continue
		}
		_, err := Import("f.pdmodel", tt.data)
		if err == nil || err.Error() != tt.want {
			t.Errorf("%s:\n got %v\nwant %s", tt.name, err, tt.want)
		}
	}
	// A var declared twice.
	_, err := Import("f.pdmodel", tinyProgram(x, relu())[:0])
	if err == nil {
		t.Error("empty file imported")
	}
	two := msg(byts(progBlocks, msg(vint(blockParent, math.MaxUint64), byts(blockVars, x), byts(blockVars, x))))
	if _, err := Import("f.pdmodel", two); err == nil || !strings.Contains(err.Error(), `var "x" declared twice`) {
		t.Errorf("var twice: %v", err)
	}
	// Blocks nested deeper than the IR allows, 100k levels: refused, quickly.
	deep := []fieldFn{byts(progBlocks, msg(vint(blockIdx, 0), vint(blockParent, math.MaxUint64)))}
	for i := 1; i <= 100000; i++ {
		deep = append(deep, byts(progBlocks, msg(vint(blockIdx, uint64(i)), vint(blockParent, uint64(i-1)))))
	}
	want := "f.pdmodel: main block 1001: nested 1001 blocks deep through its parents; the limit is 1000"
	if _, err := Import("f.pdmodel", msg(deep...)); err == nil || err.Error() != want {
		t.Errorf("deep nesting:\n got %v\nwant %s", err, want)
	}
}
