package paddle

import (
	"bytes"
	"math"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/distpass/distpass/ir"
)

const (
	reluFile   = "testdata/p2o_pir_thresholded_relu.json"
	ifelseFile = "testdata/p2o_pir_ifelse.json"
)

func readFile(t testing.TB, file string) []byte {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func importFile(t *testing.T, file string) *ir.Module {
	t.Helper()
	m, err := ImportPIR(file, readFile(t, file))
	if err != nil {
		t.Fatalf("ImportPIR: %v", err)
	}
	if err := ir.Verify(m); err != nil {
		t.Fatalf("Verify: %v", err)
	}
	return m
}

// roundTrip checks that m prints to text that parses back to an equal
// module, and that printing that gives the same bytes.
func roundTrip(t testing.TB, m *ir.Module) {
	t.Helper()
	text := ir.Print(m)
	m2, err := ir.Parse("printed.dpir", text)
	if err != nil {
		t.Fatalf("printed module does not parse: %v\n%s", err, text)
	}
	if !ir.Equal(m, m2) {
		t.Fatalf("re-parsed module differs:\n%s", ir.Diff(m, m2))
	}
	if text2 := ir.Print(m2); !bytes.Equal(text, text2) {
		t.Fatalf("printing is not a fixed point:\n%s\n---\n%s", text, text2)
	}
}

func opTypes(b *ir.Block) []string {
	var ts []string
	for _, op := range b.Ops {
		ts = append(ts, op.Type)
	}
	return ts
}

func varDecls(b *ir.Block) []string {
	var vs []string
	for _, v := range b.Vars() {
		vs = append(vs, ir.PrintVar(v))
	}
	return vs
}

func opLines(b *ir.Block) []string {
	var ls []string
	for _, op := range b.Ops {
		ls = append(ls, ir.PrintOp(op))
	}
	return ls
}

func wantLines(t *testing.T, what string, got, want []string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("%s:\ngot\n\t%s\nwant\n\t%s", what, strings.Join(got, "\n\t"), strings.Join(want, "\n\t"))
	}
}

// TestImportPIRThresholdedRelu pins the import of the file, read by hand:
// data(name "0") %1 -> thresholded_relu %2 -> full %3 (stop_gradient) ->
// scale(%2, %3) %4 -> fetch %5, all f32 scalars but full's f32[1].
func TestImportPIRThresholdedRelu(t *testing.T) {
	m := importFile(t, reluFile)
	if m.Name != "p2o_pir_thresholded_relu" {
		t.Errorf("module name %q", m.Name)
	}
	if len(m.Main.Blocks) != 1 || m.Startup != nil || len(m.Meshes) != 0 {
		t.Fatalf("want one main block only, got %d blocks", len(m.Main.Blocks))
	}
	b := m.Main.Global()
	wantLines(t, "op types", opTypes(b), []string{
		"pd_op.data", "pd_op.thresholded_relu", "pd_op.full", "pd_op.scale", "pd_op.fetch",
	})
	wantLines(t, "ops", opLines(b), []string{
		`op 1 pd_op.data() -> (out0: "0") {dtype = "float32", name = "0", place = ["0", "0", ""], shape = []} role forward`,
		`op 2 pd_op.thresholded_relu(in0: "0") -> (out0: v2) {threshold = 1.0, value = 0.0} role forward`,
		`op 3 pd_op.full() -> (out0: v3) {dtype = "float32", place = ["1", "0", ""], shape = [1], value = 1.0} role forward`,
		`op 4 pd_op.scale(in0: v2, in1: v3) -> (out0: v4) {bias = 0.0, bias_after_scale = true} role forward`,
		`op 5 pd_op.fetch(in0: v4) -> (out0: v5) {col = 0, name = "fetch_name_0"} role forward`,
	})
	wantLines(t, "vars", varDecls(b), []string{
		`var "0" : f32[]`,
		`var v2 : f32[]`,
		`var v3 : f32[1] {stop_gradient}`,
		`var v4 : f32[]`,
		`var v5 : f32[]`,
	})
	roundTrip(t, m)
}

// TestImportPIRIfElse checks the pd_op.if of the file: two data ops, a
// full, an equal feeding the if, whose two regions each compute four
// values and yield them; the if's results feed two scales and fetches.
func TestImportPIRIfElse(t *testing.T) {
	m := importFile(t, ifelseFile)
	p := m.Main
	if len(p.Blocks) != 3 {
		t.Fatalf("%d blocks, want 3", len(p.Blocks))
	}
	b0 := p.Global()
	wantLines(t, "block 0 op types", opTypes(b0), []string{
		"pd_op.data", "pd_op.data", "pd_op.full", "pd_op.equal", "pd_op.if",
		"pd_op.full", "pd_op.scale", "pd_op.full", "pd_op.scale", "pd_op.fetch", "pd_op.fetch",
	})
	ifOp := b0.Ops[4]
	if ifOp.ID != 5 {
		t.Errorf("if op id %d, want 5", ifOp.ID)
	}
	if got := ifOp.Attrs.Get("sub_blocks"); !slices.Equal(got.(ir.BlockRefs), ir.BlockRefs{1, 2}) {
		t.Errorf("sub_blocks = %v, want [1 2]", got)
	}
	wantLines(t, "if op", []string{ir.PrintOp(ifOp)}, []string{
		`op 5 pd_op.if(in0: v4) -> (out0: v5, out1: v6, out2: v7, out3: v8) {sub_blocks = [^1, ^2]} role forward`,
	})
	if eq := b0.Ops[3]; eq.Output("out0")[0] != ifOp.Input("in0")[0] {
		t.Errorf("if condition %v is not equal's result %v", ifOp.Inputs, eq.Outputs)
	}
	if got := p.LookupVar(b0, "v4"); got == nil || got.Type.String() != "bool[]" {
		t.Errorf("condition var %v", got)
	}
	branchOps := []string{
		"pd_op.full", "pd_op.equal", "pd_op.full", "pd_op.full", "pd_op.scale",
		"pd_op.full", "pd_op.scale", "pd_op.full", "cf.yield",
	}
	for i, want := range []struct {
		firstID int64
		yield   string
		scales  [2]float64 // the values of the fulls feeding the two scales
	}{
		{6, `op 14 cf.yield(in0: v11, in1: v16, in2: v13, in3: v15) -> () role forward`, [2]float64{1, 2}},
		{15, `op 23 cf.yield(in0: v24, in1: v19, in2: v21, in3: v23) -> () role forward`, [2]float64{3, 4}},
	} {
		b := p.Blocks[i+1]
		if b.Index != i+1 || b.Parent != 0 || b.Forward != -1 {
			t.Errorf("block %d: index %d parent %d forward %d, want parent 0", i+1, b.Index, b.Parent, b.Forward)
		}
		wantLines(t, "branch op types", opTypes(b), branchOps)
		for k, op := range b.Ops {
			if op.ID != want.firstID+int64(k) {
				t.Errorf("block %d op %d has id %d, want %d", b.Index, k, op.ID, want.firstID+int64(k))
			}
		}
		wantLines(t, "yield", []string{ir.PrintOp(b.Ops[8])}, []string{want.yield})
		// The branch reads the data vars of block 0 through its parent.
		if got := b.Ops[1].Input("in0"); !slices.Equal(got, []string{"0"}) || b.Var("0") != nil {
			t.Errorf("block %d: equal reads %v", b.Index, got)
		}
		for k, pos := range []int{3, 5} {
			if f, _ := b.Ops[pos].Attrs.Float("value"); f != want.scales[k] {
				t.Errorf("block %d: full at %d has value %v, want %v", b.Index, pos, f, want.scales[k])
			}
			if scale := b.Ops[pos+1]; scale.Input("in1")[0] != b.Ops[pos].Output("out0")[0] || scale.Input("in0")[0] != "1" {
				t.Errorf("block %d: %s reads %v", b.Index, scale, scale.Inputs)
			}
		}
		if b.NumVars() != 8 {
			t.Errorf("block %d declares %d vars, want 8", b.Index, b.NumVars())
		}
	}
	roundTrip(t, m)
}

// synthetic exercises what the two fixtures do not: parameter ops, a
// while with block arguments and keyword arguments, null values, every
// attr kind, op_role, and the types the IR cannot hold.
const synthetic = `{"base_code":{"magic":"pir","trainable":true,"version":1},"program":{"regions":[{"#":"region_0","blocks":[{"#":"block_0","args":[],"ops":[
{"#":"p","A":[1,1,1,"w"],"O":{"%":1,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[4,8],"NCHW",[],0]}},"DA":[{"N":"op_role","AT":{"#":"0.a_i32","D":0}}],"QA":[],"OA":[1,0,1]},
{"#":"p","A":[0,0,0,"mean"],"O":{"%":2,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[8],"NCHW",[],0]}},"DA":[],"QA":[],"OA":[1,1,0]},
{"#":"0.parameter","A":[{"N":"parameter_name","AT":{"#":"0.a_str","D":"b"}},{"N":"trainable","AT":{"#":"0.a_array","D":[{"#":"0.a_bool","D":true}]}}],"I":[],"O":[{"%":3,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_bf16"},[8],"NCHW",[],0]}}]},
{"#":"1.data","A":[{"N":"name","AT":{"#":"0.a_str","D":"x"}},{"N":"shape","AT":{"#":"1.a_intarray","D":[-1,4]}}],"I":[],"O":[{"%":4,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[-1,4],"NCHW",[],0]}}]},
{"#":"1.data","A":[{"N":"name","AT":{"#":"0.a_str","D":"w"}}],"I":[],"O":[{"%":5,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_i32"},[],"NCHW",[],0]}}]},
{"#":"1.matmul","A":[{"N":"transpose_x","AT":{"#":"0.a_bool","D":false}},{"N":"op_role","AT":{"#":"0.a_i32","D":256}}],"I":[{"%":4},{"%":1}],"O":[{"%":6,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[-1,8],"NCHW",[],0]}}],
 "OA":[{"N":"stop_gradient","AT":{"#":"0.a_array","D":[{"#":"0.a_bool","D":true}]}}]},
{"#":"3.attrs_demo","A":[
 {"N":"nan","AT":{"#":"0.a_f32","VD":"NaN"}},
 {"N":"neg_inf","AT":{"#":"0.a_f64","VD":"-INF"}},
 {"N":"f","AT":{"#":"0.a_f64","D":1.5}},
 {"N":"i","AT":{"#":"0.a_i64","D":9007199254740993}},
 {"N":"ints","AT":{"#":"0.a_array","D":[{"#":"0.a_i32","D":1},{"#":"0.a_i64","D":-2}]}},
 {"N":"floats","AT":{"#":"0.a_array","D":[{"#":"0.a_f32","D":0.5},{"#":"0.a_f64","VD":"INF"}]}},
 {"N":"bools","AT":{"#":"0.a_array","D":[{"#":"0.a_bool","D":true}]}},
 {"N":"strs","AT":{"#":"0.a_array","D":[{"#":"0.a_str","D":"a"},{"#":"1.a_dtype","D":"int8"}]}},
 {"N":"empty","AT":{"#":"0.a_array","D":[]}},
 {"N":"mixed","AT":{"#":"0.a_array","D":[{"#":"0.a_i32","D":1},{"#":"0.a_f32","D":1.0}]}},
 {"N":"place","AT":{"#":"1.a_place","D":[2,1,"gpu"]}},
 {"N":"scalar","AT":{"#":"1.a_scalar","D":["float32",1.0]}},
 {"N":"layout","AT":{"#":"1.a_layout","D":"NHWC"}},
 {"N":"big","AT":{"#":"0.a_i64","D":1e30}},
 {"N":"op_role","AT":{"#":"0.a_i32","D":4096}}],
 "I":[{"%":6},{"%":0}],
 "O":[{"%":7,"TT":{"#":"0.t_vec","D":[{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}]}},
      {"%":0,"TT":{"#":"NULL"}},
      {"%":8,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_c64"},[2],"NCHW",[],0]}},
      {"%":9,"TT":{"#":"1.t_dense_tensor_array","D":[{"#":"0.t_f32"},[-1],"NCHW"]}},
      {"%":10,"TT":{"#":"4.t_dist_dtensor","D":[{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[4,8],"NCHW",[],0]},{"#":"4.a_tensor_dist","D":[{"#":"4.a_process_mesh","D":[[2],[0,1],["x"]]},[0,-1],[]]},[2,8]]}},
      {"%":11,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[-3],"NCHW",[],0]}}]},
{"#":"1.full","A":[],"I":[],"O":[{"%":12,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_bool"},[],"NCHW",[],0]}}]},
{"#":"1.while","A":[],"I":[{"%":12},{"%":6}],"O":[{"%":13,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[-1,8],"NCHW",[],0]}}],
 "regions":[{"#":"region_1","blocks":[{"#":"block_1",
  "args":[{"#":-1,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[-1,8],"NCHW",[],0]}}],
  "kwargs":[{"#":-1,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[-1,8],"NCHW",[],0]}},{"#":-2,"key":"k","TT":{"#":"0.t_i64"}}],
  "ops":[
   {"#":"1.relu","A":[],"I":[{"%":-1}],"O":[{"%":14,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[-1,8],"NCHW",[],0]}}]},
   {"#":"1.less_than","A":[],"I":[{"%":14},{"%":2}],"O":[{"%":15,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_bool"},[],"NCHW",[],0]}}]},
   {"#":"2.yield","A":[],"I":[{"%":15},{"%":14}],"O":[]}]}]}]},
{"#":"1.fetch","A":[{"N":"name","AT":{"#":"0.a_str","D":"out"}}],"I":[{"%":13}],"O":[{"%":16,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[-1,8],"NCHW",[],0]}}],
 "OA":[{"N":"persistable","AT":{"#":"0.a_array","D":[{"#":"0.a_bool","D":true}]}}]}
]}]}]}}`

const syntheticText = `module synthetic

program main {
  block 0 {
    param w : f32[4, 8] {need_clip, trainable, is_distributed = true}
    persist mean : f32[8] {stop_gradient}
    param b : bf16[8] {trainable}
    var x : f32[-1, 4]
    var w_1 : i32[]
    var v6 : f32[-1, 8] {stop_gradient}
    var v7 : raw {pir_type = "{\"#\":\"0.t_vec\",\"D\":[{\"#\":\"0.t_dtensor\",\"D\":[{\"#\":\"0.t_f32\"},[2],\"NCHW\",[],0]}]}"}
    var v8 : raw {pir_type = "{\"#\":\"0.t_dtensor\",\"D\":[{\"#\":\"0.t_c64\"},[2],\"NCHW\",[],0]}"}
    var v9 : tensor_array {pir_type = "{\"#\":\"1.t_dense_tensor_array\",\"D\":[{\"#\":\"0.t_f32\"},[-1],\"NCHW\"]}"}
    var v10 : f32[4, 8] {pir_type = "{\"#\":\"4.t_dist_dtensor\",\"D\":[{\"#\":\"0.t_dtensor\",\"D\":[{\"#\":\"0.t_f32\"},[4,8],\"NCHW\",[],0]},{\"#\":\"4.a_tensor_dist\",\"D\":[{\"#\":\"4.a_process_mesh\",\"D\":[[2],[0,1],[\"x\"]]},[0,-1],[]]},[2,8]]}"}
    var v11 : raw {pir_type = "{\"#\":\"0.t_dtensor\",\"D\":[{\"#\":\"0.t_f32\"},[-3],\"NCHW\",[],0]}"}
    var v12 : bool[]
    var v13 : f32[-1, 8]
    var v16 : f32[-1, 8]
    op 1 builtin.parameter() -> () {parameter_name = "w"} role forward
    op 2 builtin.parameter() -> () {parameter_name = "mean"} role forward
    op 3 builtin.parameter() -> () {parameter_name = "b", trainable = [true]} role forward
    op 4 pd_op.data() -> (out0: x) {name = "x", shape = [-1, 4]} role forward
    op 5 pd_op.data() -> (out0: w_1) {name = "w"} role forward
    op 6 pd_op.matmul(in0: x, in1: w) -> (out0: v6) {transpose_x = false} role forward|loss
    op 7 custom_op.attrs_demo(in0: v6, in1: []) -> (out0: v7, out1: [], out2: v8, out3: v9, out4: v10, out5: v11)
         {big = "{\"#\":\"0.a_i64\",\"D\":1e30}", bools = [true], empty = [], f = 1.5, floats = [0.5, inf], i = 9007199254740993,
         ints = [1, -2], layout = "NHWC", mixed = "{\"#\":\"0.a_array\",\"D\":[{\"#\":\"0.a_i32\",\"D\":1},{\"#\":\"0.a_f32\",\"D\":1.0}]}",
         nan = nan, neg_inf = -inf, op_role = 4096, place = ["2", "1", "gpu"],
         scalar = "{\"#\":\"1.a_scalar\",\"D\":[\"float32\",1.0]}", strs = ["a", "int8"]} role forward
    op 8 pd_op.full() -> (out0: v12) role forward
    op 9 pd_op.while(in0: v12, in1: v6) -> (out0: v13) {sub_block = ^1} role forward
    op 13 pd_op.fetch(in0: v13) -> (out0: v16) {name = "out"} role forward
  }
  block 1 parent 0 {
    var arg1 : f32[-1, 8]
    var k : raw {pir_type = "{\"#\":\"0.t_i64\"}"}
    var v14 : f32[-1, 8]
    var v15 : bool[]
    op 10 pd_op.relu(in0: arg1) -> (out0: v14) role forward
    op 11 pd_op.less_than(in0: v14, in1: mean) -> (out0: v15) role forward
    op 12 cf.yield(in0: v15, in1: v14) -> () role forward
  }
}
`

func TestImportPIRSynthetic(t *testing.T) {
	m, err := ImportPIR("dir/synthetic.json", []byte(synthetic))
	if err != nil {
		t.Fatal(err)
	}
	want, err := ir.ParseString("want", syntheticText)
	if err != nil {
		t.Fatal(err)
	}
	if d := ir.Diff(want, m); d != "" {
		t.Errorf("import differs from the text (-want +got):\n%s\ngot:\n%s", d, ir.Print(m))
	}
	// A few facts the text hides.
	op := m.Main.Global().Ops[6]
	if f, _ := op.Attrs.Float("nan"); !math.IsNaN(f) {
		t.Errorf("nan = %v", f)
	}
	if i, _ := op.Attrs.Int("i"); i != 9007199254740993 {
		t.Errorf("i = %d: int64 precision lost", i)
	}
	if in := op.Inputs[1]; in.Name != "in1" || len(in.Args) != 0 {
		t.Errorf("null operand slot %v", in)
	}
	if r := m.Main.Global().Ops[5].Role; r != ir.RoleLoss {
		t.Errorf("matmul role %v, want loss", r)
	}
	roundTrip(t, m)
}

func TestIsPIR(t *testing.T) {
	for _, c := range []struct {
		data string
		want bool
	}{
		{string(readFile(t, reluFile)), true},
		{string(readFile(t, ifelseFile)), true},
		{`{"base_code":{"magic":"pir"}}`, true},
		{` {"program":{}, "base_code":{"version":1,"magic":"pir"}} `, true},
		{`{"base_code":{"magic":"PIR"}}`, false},
		{`{"base_code":{"magic":1}}`, false},
		{`{"base_code":"pir"}`, false},
		{`{"BASE_CODE":{"magic":"pir"}}`, false},
		{`[{"base_code":{"magic":"pir"}}]`, false},
		{`{"base_code":{"magic":"pir"}`, false},
		{"\x0a\x05block", false}, // a ProgramDesc starts with field 1
		{"", false},
	} {
		if got := IsPIR([]byte(c.data)); got != c.want {
			t.Errorf("IsPIR(%.40q) = %v, want %v", c.data, got, c.want)
		}
	}
}

// prog wraps ops (JSON, comma-separated) in a PIR program.
func prog(ops string) string {
	return `{"base_code":{"magic":"pir","version":1},"program":{"regions":[{"#":"region_0","blocks":[{"#":"block_0","args":[],"ops":[` + ops + `]}]}]}}`
}

const (
	f32 = `{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}`
	b0  = "program.regions[0].blocks[0]"
)

// errorCase is a bad input and a part of the error it must give.
type errorCase struct{ name, data, want string }

func errorCases() []errorCase {
	full := func(id string) string { return `{"#":"1.full","I":[],"O":[{"%":` + id + `,"TT":` + f32 + `}]}` }
	return []errorCase{
		{"empty", ``, "x.json: bad JSON"},
		{"truncated", `{"base_code":`, "x.json: bad JSON"},
		{"trailing", prog(``) + `{}`, "x.json: bad JSON: data after the top-level value"},
		{"array", `[]`, "x.json: not a PIR program: not a JSON object"},
		{"no base_code", `{"program":{}}`, "not a PIR program: no base_code object"},
		{"magic", `{"base_code":{"magic":"pdmodel"}}`, `x.json: base_code.magic: not a PIR program: magic is "pdmodel"`},
		{"no program", `{"base_code":{"magic":"pir"}}`, "x.json: program: not an object"},
		{"regions", `{"base_code":{"magic":"pir"},"program":{"regions":{}}}`, "program.regions: not an array"},
		{"two regions", `{"base_code":{"magic":"pir"},"program":{"regions":[{"blocks":[]},{"blocks":[]}]}}`, "program.regions: 2 regions"},
		{"two blocks", `{"base_code":{"magic":"pir"},"program":{"regions":[{"blocks":[{},{}]}]}}`, "program.regions[0].blocks: 2 blocks"},
		{"block", `{"base_code":{"magic":"pir"},"program":{"regions":[{"blocks":[7]}]}}`, b0 + ": block is not an object"},
		{"ops", `{"base_code":{"magic":"pir"},"program":{"regions":[{"blocks":[{"ops":{}}]}]}}`, b0 + ".ops: not an array"},
		{"op not object", prog(`[]`), b0 + ".ops[0]: op is not an object"},
		{"op no name", prog(`{"I":[]}`), b0 + `.ops[0]: op has no "#" name`},
		{"op no dialect", prog(`{"#":"relu"}`), b0 + `.ops[0]: op id "relu" is not <dialect id>.<name>`},
		{"unknown dialect", prog(full("1") + `,{"#":"9.relu","I":[{"%":1}]}`), b0 + `.ops[1]: op id "9.relu": unknown dialect id "9"`},
		{"test dialect", prog(`{"#":"-1.op"}`), `unknown dialect id "-1"`},
		{"op empty name", prog(`{"#":"1."}`), `op id "1." has no name`},
		{"I not array", prog(`{"#":"1.relu","I":{}}`), b0 + ".ops[0].I: not an array"},
		{"operand", prog(`{"#":"1.relu","I":[3]}`), b0 + ".ops[0].I[0]: operand is not an object"},
		{"operand id", prog(`{"#":"1.relu","I":[{"%":"1"}]}`), b0 + `.ops[0].I[0]: operand has no integer "%" id`},
		{"undefined", prog(full("1") + `,{"#":"1.relu","I":[{"%":1},{"%":2}]}`), b0 + ".ops[1].I[1]: value 2 is not defined before its use"},
		{"use before def", prog(`{"#":"1.relu","I":[{"%":1}]},` + full("1")), b0 + ".ops[0].I[0]: value 1 is not defined"},
		{"defined twice", prog(full("1") + "," + full("1")), b0 + ".ops[1].O[0]: value 1 defined twice"},
		{"O not array", prog(`{"#":"1.full","O":{}}`), b0 + ".ops[0].O: not an array"},
		{"result", prog(`{"#":"1.full","O":[1]}`), b0 + ".ops[0].O[0]: result is not an object"},
		{"result id", prog(`{"#":"1.full","O":[{"%":1.5}]}`), b0 + `.ops[0].O[0]: result has no integer "%" id`},
		{"negative result", prog(`{"#":"1.full","O":[{"%":-1,"TT":` + f32 + `}]}`), b0 + ".ops[0].O[0]: result id -1 is negative"},
		{"no type", prog(`{"#":"1.full","O":[{"%":1}]}`), b0 + ".ops[0].O[0].TT: type is not an object"},
		{"type id", prog(`{"#":"1.full","O":[{"%":1,"TT":{}}]}`), b0 + `.ops[0].O[0].TT: type has no "#" id`},
		{"type dialect", prog(`{"#":"1.full","O":[{"%":1,"TT":{"#":"5.t_f32"}}]}`), b0 + `.ops[0].O[0].TT: type id "5.t_f32": unknown dialect id "5"`},
		{"dtensor data", prog(`{"#":"1.full","O":[{"%":1,"TT":{"#":"0.t_dtensor","D":[]}}]}`), b0 + ".ops[0].O[0].TT.D: dense tensor type data is not [dtype, dims, ...]"},
		{"dtensor dims", prog(`{"#":"1.full","O":[{"%":1,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[1.5]]}}]}`), b0 + ".ops[0].O[0].TT.D[1][0]: dim is not an integer"},
		{"dtensor dtype", prog(`{"#":"1.full","O":[{"%":1,"TT":{"#":"0.t_dtensor","D":[{"#":"7.t_f32"},[1]]}}]}`), b0 + `.ops[0].O[0].TT.D[0]: element type id "7.t_f32": unknown dialect id "7"`},
		{"A not array", prog(`{"#":"1.full","A":{}}`), b0 + ".ops[0].A: not an array"},
		{"attr", prog(`{"#":"1.full","A":[1]}`), b0 + ".ops[0].A[0]: attr is not an object"},
		{"attr name", prog(`{"#":"1.full","A":[{"N":"","AT":{"#":"0.a_bool","D":true}}]}`), b0 + ".ops[0].A[0]: attr has no name"},
		{"attr twice", prog(`{"#":"1.full","A":[{"N":"a","AT":{"#":"0.a_bool","D":true}},{"N":"a","AT":{"#":"0.a_bool","D":true}}]}`), b0 + `.ops[0].A[1]: attr "a" given twice`},
		{"attr value", prog(`{"#":"1.full","A":[{"N":"a","AT":5}]}`), b0 + ".ops[0].A[0].AT: attr value is not an object"},
		{"attr id", prog(`{"#":"1.full","A":[{"N":"a","AT":{"D":5}}]}`), b0 + `.ops[0].A[0].AT: attr value has no "#" id`},
		{"attr dialect", prog(`{"#":"1.full","A":[{"N":"a","AT":{"#":"8.a_bool","D":true}}]}`), b0 + `.ops[0].A[0].AT: attr id "8.a_bool": unknown dialect id "8"`},
		{"array elem dialect", prog(`{"#":"1.full","A":[{"N":"a","AT":{"#":"0.a_array","D":[{"#":"0.a_i32","D":1},{"#":"8.a_i32","D":1}]}}]}`), b0 + `.ops[0].A[0].AT.D[1]: attr id "8.a_i32": unknown dialect id "8"`},
		{"OA", prog(`{"#":"1.full","OA":5}`), b0 + ".ops[0].OA: not an array"},
		{"param A", prog(`{"#":"p","A":[0,1,0],"O":{"%":1,"TT":` + f32 + `}}`), b0 + ".ops[0].A: parameter op attrs are not [is_distributed, is_parameter, need_clip, name]"},
		{"param flag", prog(`{"#":"p","A":[0,2,0,"w"],"O":{"%":1,"TT":` + f32 + `}}`), b0 + ".ops[0].A: parameter op attrs"},
		{"param O", prog(`{"#":"p","A":[0,1,0,"w"],"O":[{"%":1,"TT":` + f32 + `}]}`), b0 + ".ops[0].O: parameter op result is not an object"},
		{"param id", prog(`{"#":"p","A":[0,1,0,"w"],"O":{"%":0,"TT":` + f32 + `}}`), b0 + `.ops[0].O: parameter op result has no positive "%" id`},
		{"param OA", prog(`{"#":"p","A":[0,1,0,"w"],"O":{"%":1,"TT":` + f32 + `},"OA":[1,1]}`), b0 + ".ops[0].OA: parameter op result attrs are not [persistable, stop_gradient, trainable]"},
		{"param type", prog(`{"#":"p","A":[0,1,0,"w"],"O":{"%":1,"TT":7}}`), b0 + ".ops[0].O.TT: type is not an object"},
		{"regions", prog(`{"#":"1.if","regions":{}}`), b0 + ".ops[0].regions: not an array"},
		{"region", prog(`{"#":"1.if","regions":[5]}`), b0 + ".ops[0].regions[0]: region is not an object"},
		{"region blocks", prog(`{"#":"1.if","regions":[{"#":"region_1"}]}`), b0 + ".ops[0].regions[0].blocks: not an array"},
		{"nested op", prog(`{"#":"1.if","regions":[{"blocks":[{"ops":[{"#":"1.relu","I":[{"%":4}]}]}]}]}`),
			b0 + ".ops[0].regions[0].blocks[0].ops[0].I[0]: value 4 is not defined"},
		{"sibling scope", prog(full("1") + `,{"#":"1.if","I":[{"%":1}],"regions":[{"blocks":[{"ops":[` + full("2") + `]}]},{"blocks":[{"ops":[{"#":"2.yield","I":[{"%":2}]}]}]}]}`),
			b0 + ".ops[1].regions[1].blocks[0].ops[0].I[0]: value 2 is defined in block 1, which does not enclose this one"},
		{"own result in region", prog(`{"#":"1.if","O":[{"%":1,"TT":` + f32 + `}],"regions":[{"blocks":[{"ops":[{"#":"2.yield","I":[{"%":1}]}]}]}]}`),
			b0 + ".ops[0].regions[0].blocks[0].ops[0].I[0]: value 1 is not defined before its use"},
		{"arg", prog(`{"#":"1.while","regions":[{"blocks":[{"args":[5]}]}]}`), b0 + ".ops[0].regions[0].blocks[0].args[0]: block argument is not an object"},
		{"arg id", prog(`{"#":"1.while","regions":[{"blocks":[{"args":[{"#":1,"TT":` + f32 + `}]}]}]}`), b0 + ".ops[0].regions[0].blocks[0].args[0]: block argument id 1 is not negative"},
		{"arg twice", prog(`{"#":"1.while","regions":[{"blocks":[{"args":[{"#":-1,"TT":` + f32 + `}]},{"args":[{"#":-1,"TT":` + f32 + `}]}]}]}`),
			b0 + ".ops[0].regions[0].blocks[1].args[0]: value -1 defined twice"},
		{"kwargs", prog(`{"#":"1.while","regions":[{"blocks":[{"kwargs":[{"TT":` + f32 + `}]}]}]}`), b0 + `.ops[0].regions[0].blocks[0].kwargs[0]: block argument has no integer "#" id`},
	}
}

func TestImportPIRErrors(t *testing.T) {
	for _, c := range errorCases() {
		t.Run(c.name, func(t *testing.T) {
			m, err := ImportPIR("x.json", []byte(c.data))
			if err == nil {
				t.Fatalf("no error; module:\n%s", ir.Print(m))
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q\ndoes not contain %q", err, c.want)
			}
		})
	}
}

// namesProgram has vars whose wanted names clash: data named v2, the
// relu result %2 (v2), data named v2 again, data with an empty name.
var namesProgram = prog(`{"#":"1.data","A":[{"N":"name","AT":{"#":"0.a_str","D":"v2"}}],"O":[{"%":1,"TT":` + f32 + `}]},` +
	`{"#":"1.relu","I":[{"%":1}],"O":[{"%":2,"TT":` + f32 + `}]},` +
	`{"#":"1.data","A":[{"N":"name","AT":{"#":"0.a_str","D":"v2"}}],"O":[{"%":3,"TT":` + f32 + `}]},` +
	`{"#":"1.data","A":[{"N":"name","AT":{"#":"0.a_str","D":""}}],"O":[{"%":4,"TT":` + f32 + `}]}`)

// TestImportPIRNames checks the naming of vars whose wanted names clash.
func TestImportPIRNames(t *testing.T) {
	m, err := ImportPIR("names.json", []byte(namesProgram))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, v := range m.Main.Global().Vars() {
		names = append(names, v.Name())
	}
	if want := []string{"v2", "v2_1", "v2_2", "v4"}; !slices.Equal(names, want) {
		t.Errorf("names %v, want %v", names, want)
	}
	roundTrip(t, m)
}

// FuzzImportPIR feeds arbitrary bytes to ImportPIR. It must never panic;
// what it accepts must verify (ImportPIR checks) and print to text that
// re-parses to an equal module.
func FuzzImportPIR(f *testing.F) {
	f.Add(readFile(f, reluFile))
	f.Add(readFile(f, ifelseFile))
	f.Add([]byte(synthetic))
	f.Add([]byte(namesProgram))
	for _, c := range errorCases() {
		f.Add([]byte(c.data))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		IsPIR(data)
		m, err := ImportPIR("fuzz.json", data)
		if err != nil {
			if strings.Contains(err.Error(), "does not verify") {
				t.Fatal(err)
			}
			return
		}
		roundTrip(t, m)
	})
}
