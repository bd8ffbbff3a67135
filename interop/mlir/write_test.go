package mlir_test

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/distpass/distpass/internal/irgen"
	"github.com/distpass/distpass/interop/mlir"
	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/models"
	"github.com/distpass/distpass/passes"
)

// tiny uses every rule of the twin: SSA renaming, names MLIR does not
// allow, args read before any write (one undeclared, one declared only in
// a sibling block), every attr kind, quoted attr names, escapes, a
// dynamic dim, a scalar, bool and u8, a no-shape type, regions (one op
// owning two, one block owned by the first op that refers to it) and a
// block no op refers to.
const tiny = `module "tiny net"

program main {
  block 0 {
    var x : f32[8, -1] {is_data}
    param w : f32[16, 4] {trainable}
    var y : f32[8, 4]
    var "1st" : bool[]
    var n : u8[3]
    var s : step_scopes
    var x@GRAD : f32[8, 16]
    op 1 matmul_v2(X: x, Y: w) -> (Out: y) {alpha = 1e-05, name = "a\"b\\c\n\x00é", trans_x = false, w@x = 3} role forward
    op 2 relu(X: y) -> (Out: y) role forward
    op 3 while(X: [y, n], Cond: "1st") -> (Out: y, Scopes: s) {bad = nan, big = inf, flags = [true, false], ids = [1, -2], names = ["p", "q"], none = [], sub_block = ^1, vals = [0.5, -0.0, 100000.0, 1e+21]} role forward
    op 4 print(In: [y, x@GRAD, undeclared]) -> () {blocks = [^2, ^1]} role forward
  }
  block 1 parent 0 {
    var t : i64[2]
    op 5 scale(X: y) -> (Out: y) {scale = 2.0} role forward
    op 6 cast(X: y) -> (Out: t) role forward
    op 7 scale(X: t) -> (Out: t) role forward
  }
  block 2 parent 0 {
    op 8 assign(X: t) -> (Out: x) role forward
  }
  block 3 parent 0 {
    op 9 fill_constant() -> (Out: "1st") {value = 1.0} role forward
  }
}
`

const tinyMLIR = `module @"tiny net" {
  func.func @main(%x: tensor<8x?xf32>, %w: tensor<16x4xf32>, %n: tensor<3xui8>, %v1st: tensor<i1>, %x_GRAD: tensor<8x16xf32>, %undeclared: none, %t: none) {
    %y = "dist.matmul_v2"(%x, %w) {alpha = 1.0e-05 : f64, name = "a\"b\\c\0A\00\C3\A9", trans_x = false, "w@x" = 3 : i64} : (tensor<8x?xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
    %y_1 = "dist.relu"(%y) : (tensor<8x4xf32>) -> tensor<8x4xf32>
    %y_2, %s = "dist.while"(%y_1, %n, %v1st) ({
      %y_3 = "dist.scale"(%y_1) {scale = 2.0 : f64} : (tensor<8x4xf32>) -> tensor<8x4xf32>
      %t_1 = "dist.cast"(%y_3) : (tensor<8x4xf32>) -> tensor<2xi64>
      %t_2 = "dist.scale"(%t_1) : (tensor<2xi64>) -> tensor<2xi64>
    }) {bad = 0x7FF8000000000001 : f64, big = 0x7FF0000000000000 : f64, flags = [true, false], ids = [1 : i64, -2 : i64], names = ["p", "q"], none = [], sub_block = 1 : i64, vals = [0.5 : f64, -0.0 : f64, 100000.0 : f64, 1.0e+21 : f64]} : (tensor<8x4xf32>, tensor<3xui8>, tensor<i1>) -> (tensor<8x4xf32>, !dist.step_scopes)
    "dist.print"(%y_2, %x_GRAD, %undeclared) ({
      %x_1 = "dist.assign"(%t) : (none) -> tensor<8x?xf32>
    }) {blocks = [2 : i64, 1 : i64]} : (tensor<8x4xf32>, tensor<8x16xf32>, none) -> ()
    "dist.block"() ({
      %v1st_1 = "dist.fill_constant"() {value = 1.0 : f64} : () -> tensor<i1>
    }) {index = 3 : i64, parent = 0 : i64} : () -> ()
    return
  }
}
`

func twin(t *testing.T, m *ir.Module) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := mlir.Write(&buf, m); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestWriteTiny(t *testing.T) {
	m, err := ir.Parse("tiny.dpir", []byte(tiny))
	if err != nil {
		t.Fatal(err)
	}
	if got := string(twin(t, m)); got != tinyMLIR {
		t.Errorf("got:\n%s\nwant:\n%s", got, tinyMLIR)
	}
	// Writing does not change the module, and writing again gives the
	// same text.
	if got := string(ir.Print(m)); got != tiny {
		t.Errorf("the module changed:\n%s", got)
	}
	if got := string(twin(t, m)); got != tinyMLIR {
		t.Errorf("a second write differs")
	}
}

// The attr types kept from Paddle programs.
func TestWritePaddleAttrs(t *testing.T) {
	src := `program main {
  block 0 {
    var x : f32[2]
    op 1 demo(X: x) -> () {c = scalar(complex(1.0, -2.0)), f = float64(0.1), fs = float64s[0.5, nan], l = long(-3), ls = longs[1, 2], s = scalars[false, 7, 0.25], v = var(x@GRAD), vs = vars[x, y]}
  }
}
`
	m, err := ir.Parse("paddle.dpir", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	want := `module {
  func.func @main(%x: tensor<2xf32>) {
    "dist.demo"(%x) {c = #complex.number<:f64 1.0, -2.0>, f = 0.1 : f64, fs = [0.5 : f64, 0x7FF8000000000001 : f64], l = -3 : i64, ls = [1 : i64, 2 : i64], s = [false, 7 : i64, 0.25 : f64], v = #dist.var<"x@GRAD">, vs = [#dist.var<"x">, #dist.var<"y">]} : (tensor<2xf32>) -> ()
    return
  }
}
`
	if got := string(twin(t, m)); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

func TestWriteNameless(t *testing.T) {
	m := ir.NewModule("")
	b := ir.NewBuilder(m)
	b.Var("y", ir.Tensor(ir.F64))
	b.Op("fill_constant", nil, ir.Slots("Out", "y"))
	want := "module {\n  func.func @main() {\n    %y = \"dist.fill_constant\"() : () -> tensor<f64>\n    return\n  }\n}\n"
	if got := string(twin(t, m)); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

func TestWriteErrors(t *testing.T) {
	if err := mlir.Write(&bytes.Buffer{}, &ir.Module{}); err == nil {
		t.Errorf("a module without main: no error")
	}
	m := ir.NewModule("m")
	ir.NewBuilder(m).Op("relu", nil, nil, ir.A("", ir.Int(1)))
	var buf bytes.Buffer
	err := mlir.Write(&buf, m)
	if err == nil || !strings.Contains(err.Error(), "empty name") {
		t.Errorf("an attr with an empty name: %v", err)
	}
	if buf.Len() != 0 {
		t.Errorf("an error after writing %d bytes", buf.Len())
	}
	big, err := models.SyntheticGPT(1000, 1)
	if err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	if err := mlir.Write(failWriter{boom}, big); !errors.Is(err, boom) {
		t.Errorf("a failing writer: %v", err)
	}
}

type failWriter struct{ err error }

func (w failWriter) Write([]byte) (int, error) { return 0, w.err }

// mlirOpt returns the path of mlir-opt-16 or mlir-opt, or skips (fails
// when DISTPASS_REQUIRE_MLIR_OPT is set, as CI does).
func mlirOpt(t *testing.T) string {
	for _, name := range []string{"mlir-opt-16", "mlir-opt"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("DISTPASS_REQUIRE_MLIR_OPT") != "" {
		t.Fatal("no mlir-opt-16 or mlir-opt on PATH, and DISTPASS_REQUIRE_MLIR_OPT is set")
	}
	t.Skip("no mlir-opt-16 or mlir-opt on PATH (Debian: apt-get install mlir-16-tools)")
	return ""
}

// opLine matches the first line of an op in generic form.
var opLine = regexp.MustCompile(`(?m)^\s*(%[^"=]*= )?"dist\.`)

// TestMLIROpt round-trips twins through mlir-opt --allow-unregistered-dialect:
// it must parse and verify them (exit 0), and print back as many dist ops.
func TestMLIROpt(t *testing.T) {
	opt := mlirOpt(t)
	type tc struct {
		name string
		m    *ir.Module
		ops  int // the dist ops the twin must have; -1: do not check
	}
	var cases []tc
	for _, f := range []string{"mlp_dp_mp", "while_loop", "pp_mlp"} {
		src, err := os.ReadFile(filepath.Join("..", "..", "examples", f+".dpir"))
		if err != nil {
			t.Fatal(err)
		}
		m, err := ir.Parse(f+".dpir", src)
		if err != nil {
			t.Fatal(err)
		}
		cases = append(cases, tc{f, m, m.Main.NumOps()})
		if f == "mlp_dp_mp" {
			r := m.Clone()
			if err := passes.Partition(r, nil, 3); err != nil {
				t.Fatal(err)
			}
			cases = append(cases, tc{f + "_rank3", r, r.Main.NumOps()})
		}
	}
	// Every var type and attr type kept from Paddle programs.
	src, err := os.ReadFile(filepath.Join("..", "..", "ir", "testdata", "paddle_values.dpir"))
	if err != nil {
		t.Fatal(err)
	}
	pv, err := ir.Parse("paddle_values.dpir", src)
	if err != nil {
		t.Fatal(err)
	}
	cases = append(cases, tc{"paddle_values", pv, pv.Main.NumOps()})
	gpt, err := models.SyntheticGPT(2000, 1)
	if err != nil {
		t.Fatal(err)
	}
	cases = append(cases, tc{"synthetic_gpt_2000", gpt, gpt.Main.NumOps()})
	for seed := range uint64(6) {
		m := irgen.Random(seed)
		// MLIR has no empty attr name; the writer refuses those.
		for _, p := range m.Programs() {
			for _, b := range p.Blocks {
				for _, op := range b.Ops {
					op.Attrs.Delete("")
				}
			}
		}
		cases = append(cases, tc{"random_" + strconv.FormatUint(seed, 10), m, -1})
	}
	dir := t.TempDir()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			text := twin(t, c.m)
			path := filepath.Join(dir, c.name+".mlir")
			if err := os.WriteFile(path, text, 0o644); err != nil {
				t.Fatal(err)
			}
			var stdout, stderr bytes.Buffer
			cmd := exec.Command(opt, "--allow-unregistered-dialect", "-mlir-print-op-generic", path)
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("%s: %v\n%s", opt, err, stderr.String())
			}
			ours, theirs := len(opLine.FindAll(text, -1)), len(opLine.FindAll(stdout.Bytes(), -1))
			if ours != theirs {
				t.Errorf("the twin has %d dist ops, mlir-opt printed %d", ours, theirs)
			}
			if c.ops >= 0 && ours != c.ops {
				t.Errorf("the twin has %d dist ops, the program %d", ours, c.ops)
			}
		})
	}
}
