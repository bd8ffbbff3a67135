package ir_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/distpass/distpass/internal/irgen"
	"github.com/distpass/distpass/ir"
)

// TestRoundTripRandom is the property test of the text format: random
// modules that use every kind of content re-parse to equal modules, and
// printing is a fixed point.
func TestRoundTripRandom(t *testing.T) {
	for seed := range uint64(500) {
		m := irgen.Random(seed)
		text := ir.Print(m)
		m2, err := ir.Parse("random.dpir", text)
		if err != nil {
			t.Fatalf("seed %d: %v\n%s", seed, err, text)
		}
		if d := ir.Diff(m, m2); d != "" {
			t.Fatalf("seed %d: Parse(Print(m)) differs from m (-m +parsed):\n%s\n%s", seed, d, text)
		}
		if text2 := ir.Print(m2); !bytes.Equal(text, text2) {
			t.Fatalf("seed %d: printing the parsed module gives other bytes:\n%s\n---\n%s", seed, text, text2)
		}
	}
}

// TestJSONRoundTripRandom is the same property for JSON, over random
// modules whose strings are UTF-8 (JSON cannot carry other bytes).
func TestJSONRoundTripRandom(t *testing.T) {
	for seed := range uint64(500) {
		m := irgen.RandomUTF8(seed)
		data, err := ir.EncodeJSON(m)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		m2, err := ir.DecodeJSON(data)
		if err != nil {
			t.Fatalf("seed %d: %v\n%s", seed, err, data)
		}
		if d := ir.Diff(m, m2); d != "" {
			t.Fatalf("seed %d: DecodeJSON(EncodeJSON(m)) differs from m:\n%s", seed, d)
		}
		data2, err := ir.EncodeJSON(m2)
		if err != nil || !bytes.Equal(data, data2) {
			t.Fatalf("seed %d: re-encoding gives other bytes (err %v)", seed, err)
		}
		// What JSON reads, the text format says.
		m3, err := ir.Parse("printed.dpir", ir.Print(m2))
		if err != nil {
			t.Fatalf("seed %d: the decoded module prints to text that does not parse: %v", seed, err)
		}
		if d := ir.Diff(m2, m3); d != "" {
			t.Fatalf("seed %d: JSON -> text -> module differs:\n%s", seed, d)
		}
	}
}

// TestRoundTripCoversEveryKind guards the property test against a generator
// that silently stops producing some kind of content.
func TestRoundTripCoversEveryKind(t *testing.T) {
	var all strings.Builder
	for seed := range uint64(500) {
		all.Write(ir.Print(irgen.Random(seed)))
	}
	text := all.String()
	for _, want := range []string{
		"= true", "= false", "= nan", "= inf", "= -inf", "= -0.0", "= 1e+21", `= ""`, `= "with \"quotes\""`,
		"bools[]", "floats[]", "strings[]", "blocks[]", "= []", "= ^", "= [^", "= [true", "= [\"",
		" partial [", ":avg", ":max", ":min", "recompute", " impl ", "dist @mesh", " parent ", " forward ",
		"program main rank ", "program startup", "group ", "grads ", " -> []\n", "persist ", "param ",
		": reader", ": step_scopes", ": tensor_array", ": feed_list", ": fetch_list", ": raw",
		"bf16[", "f16[", "{is_data", "need_check_feed", "need_clip", "stop_gradient", "trainable",
		"role backward|loss", "role forward|loss", "role optimize|lrsched", "role rpc|dist", " fwd ",
		`var "with space`, `"\xff\xfe`, `"new\nline`, `"" :`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("no random module contains %q", want)
		}
	}
}

func TestExamplesAreCanonical(t *testing.T) {
	files, err := filepath.Glob("testdata/*.dpir")
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata: %v", err)
	}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		m, err := ir.Parse(f, src)
		if err != nil {
			t.Fatal(err)
		}
		m2, err := ir.Parse(f, ir.Print(m))
		if err != nil {
			t.Fatalf("%s: printed text does not parse: %v", f, err)
		}
		if d := ir.Diff(m, m2); d != "" {
			t.Errorf("%s: round trip differs:\n%s", f, d)
		}
	}
}

// TestExamplesVerify parses and verifies the programs in examples/.
func TestExamplesVerify(t *testing.T) {
	files, err := filepath.Glob("../examples/*.dpir")
	if err != nil || len(files) < 2 {
		t.Fatalf("want at least 2 examples, got %d (%v)", len(files), err)
	}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		m, err := ir.Parse(f, src)
		if err != nil {
			t.Fatal(err)
		}
		if err := ir.Verify(m); err != nil {
			t.Errorf("%s:\n%v", f, err)
		}
	}
}

func TestPrintFloats(t *testing.T) {
	for _, tc := range []struct {
		f    float64
		want string
	}{
		{1, "1.0"}, {0.1, "0.1"}, {-0.1, "-0.1"}, {1e-05, "1e-05"}, {1e21, "1e+21"}, {100, "100.0"},
		{123456789.125, "123456789.125"}, {2.5e-300, "2.5e-300"},
	} {
		m := ir.NewModule("")
		b := ir.NewBuilder(m)
		b.Op("f", nil, nil, ir.A("v", ir.Float(tc.f)))
		text := string(ir.Print(m))
		if !strings.Contains(text, "{v = "+tc.want+"}") {
			t.Errorf("Float(%v) prints as %q, want %s", tc.f, text, tc.want)
		}
		m2, err := ir.Parse("f.dpir", []byte(text))
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := m2.Main.Global().Ops[0].Attrs.Float("v"); got != tc.f {
			t.Errorf("Float(%v) re-parses as %v", tc.f, got)
		}
	}
}

// TestParseAcceptsWrapping checks that newlines are white space: an op may
// be split anywhere, and comments are ignored.
func TestParseAcceptsWrapping(t *testing.T) {
	oneLine := "program main { block 0 { var x : f32[2] op 1 relu(X: x) -> (Out: x) {a = [1, 2]} role backward|loss } }"
	wrapped := `# a comment
program main {
  block 0 {
    var x : f32[
      2]       # trailing comment
    op 1 relu(
      X: x) ->
      (Out: x)
      {a = [1,
            2]}
      role backward
        | loss
  }
}
`
	m1, err := ir.Parse("a", []byte(oneLine))
	if err != nil {
		t.Fatal(err)
	}
	m2, err := ir.Parse("b", []byte(wrapped))
	if err != nil {
		t.Fatal(err)
	}
	if d := ir.Diff(m1, m2); d != "" {
		t.Fatal(d)
	}
	if got := m2.Main.Global().Ops[0].Role; got != ir.RoleBackward|ir.RoleLoss {
		t.Fatalf("role = %v", got)
	}
}

func TestParseErrors(t *testing.T) {
	const head = "program main {\n  block 0 {\n"
	for _, tc := range []struct {
		name, src, want string
	}{
		{"empty", "", "t.dpir:1:1: no main program"},
		{"junk top", "foo", `t.dpir:1:1: expected "attr", "mesh", "group", "program" or "grads", found name "foo"`},
		{"bad byte", "program main {\x01", "t.dpir:1:15: unexpected byte 0x01"},
		{"bad char", "program main ! {", `t.dpir:1:14: unexpected '!'`},
		{"lone minus", "group - 1", `t.dpir:1:7: unexpected "-"`},
		{"unknown program", "program train { block 0 { } }", "t.dpir:1:1: unknown program train (want main or startup)"},
		{"two mains", "program main { block 0 {} }\nprogram main { block 0 {} }", "t.dpir:2:1: program main declared twice"},
		{"no blocks", "program main { }", "t.dpir:1:1: program main has no blocks"},
		{"block order", "program main { block 1 { } }", "t.dpir:1:22: block 1 out of order: expected block 0"},
		{"block twice", "program main { block 0 { } block 0 { } }", "t.dpir:1:34: block 0 declared twice"},
		{"unclosed program", "program main { block 0 { }", `t.dpir:1:27: expected "block" or "}", found end of file`},
		{"unclosed block", head, `t.dpir:3:1: expected "var", "persist", "param", "op" or "}", found end of file`},
		{"negative rank", "program main rank -2 { block 0 {} }", "t.dpir:1:19: rank -2 is negative"},
		{"dtype", head + "    var x : f33[2]\n  }\n}", `t.dpir:3:13: unknown type "f33"`},
		{"missing colon", head + "    var x f32[2]\n  }\n}", `t.dpir:3:11: expected ":", found name "f32"`},
		{"dup var", head + "    var x : f32[2]\n    var x : f32[3]\n  }\n}", "t.dpir:4:9: var x declared twice in block 0"},
		{"dim not int", head + "    var x : f32[2.5]\n  }\n}", `t.dpir:3:17: expected dim, found float "2.5"`},
		{"dim overflow", head + "    var x : f32[99999999999999999999]\n  }\n}", "t.dpir:3:17: integer 99999999999999999999 out of range"},
		{"unknown flag", head + "    var x : f32[2] {is_dat}\n  }\n}", "t.dpir:3:21: unknown var flag is_dat"},
		{"flag with value", head + "    var x : f32[2] {stop_gradient = true}\n  }\n}", "t.dpir:3:21: stop_gradient is a flag: write it bare, without a value"},
		{"flag twice", head + "    var x : f32[2] {is_data, is_data}\n  }\n}", "t.dpir:3:30: flag is_data given twice"},
		{"partial reduce", head + "    var x : f32[2] @w[-1] partial [0:prod]\n  }\n}", `t.dpir:3:38: unknown reduction "prod" (want sum, avg, max or min)`},
		{"partial order", head + "    var x : f32[2] @w[-1] partial [1, 0]\n  }\n}", "t.dpir:3:39: partial dims must be ascending and unique"},
		{"local order", head + "    var x : i64[2] @w[-1] local [1, 0]\n  }\n}", "t.dpir:3:37: local dims must be ascending and unique"},
		{"local twice", head + "    var x : i64[2] @w[-1] partial [1] local [0, 0]\n  }\n}", "t.dpir:3:49: local dims must be ascending and unique"},
		{"local no list", head + "    var x : i64[2] @w[-1] local 0\n  }\n}", `t.dpir:3:33: expected "[", found integer "0"`},
		{"local not int", head + "    var x : i64[2] @w[-1] local [d]\n  }\n}", `t.dpir:3:34: expected mesh dim, found name "d"`},
		{"local unclosed", head + "    var x : i64[2] @w[-1] local [0\n  }\n}", `t.dpir:4:3: expected ",", found "}"`},
		{"unterminated string", head + "    var \"x : f32[2]\n  }\n}", "t.dpir:3:9: unterminated string"},
		{"bad escape", head + `    var "\q" : f32[2]` + "\n  }\n}", `t.dpir:3:9: invalid string literal "\q"`},
		{"op no arrow", head + "    op 1 relu(X: x) (Out: y)\n  }\n}", `t.dpir:3:21: expected "->", found "("`},
		{"op id", head + "    op x relu() -> ()\n  }\n}", `t.dpir:3:8: expected op id, found name "x"`},
		{"slot no colon", head + "    op 1 relu(X x) -> ()\n  }\n}", `t.dpir:3:17: expected ":", found name "x"`},
		{"slot comma", head + "    op 1 relu(X: [a b]) -> ()\n  }\n}", `t.dpir:3:21: expected ",", found name "b"`},
		{"attr no value", head + "    op 1 relu() -> () {a = }\n  }\n}", `t.dpir:3:28: expected attribute value, found "}"`},
		{"attr twice", head + "    op 1 relu() -> () {a = 1, a = 2}\n  }\n}", "t.dpir:3:31: attribute a given twice"},
		{"mixed list", head + "    op 1 relu() -> () {a = [1, 2.0]}\n  }\n}", "t.dpir:3:32: list element of kind float in a list of ints"},
		{"list of longs", head + "    op 1 relu() -> () {a = [long(1)]}\n  }\n}", "t.dpir:3:29: unexpected list element"},
		{"later nested list", head + "    op 1 relu() -> () {a = [1, [2]]}\n  }\n}", "t.dpir:3:32: lists of lists are not attribute values"},
		{"nested list", head + "    op 1 relu() -> () {a = [[1]]}\n  }\n}", "t.dpir:3:29: lists of lists are not attribute values"},
		{"typed empty", head + "    op 1 relu() -> () {a = floats[1]}\n  }\n}", `t.dpir:3:35: expected "]", found integer "1"`},
		{"float range", head + "    op 1 relu() -> () {a = 1e999}\n  }\n}", "t.dpir:3:28: float 1e999 out of range"},
		{"int range", head + "    op 1 relu() -> () {a = 9223372036854775808}\n  }\n}", "t.dpir:3:28: integer 9223372036854775808 out of range"},
		{"role", head + "    op 1 relu() -> () role backwards\n  }\n}", `t.dpir:3:28: unknown role "backwards"`},
		{"role pipe", head + "    op 1 relu() -> () role backward|\n  }\n}", `t.dpir:4:3: expected role, found "}"`},
		{"fwd", head + "    op 1 relu() -> () fwd x\n  }\n}", `t.dpir:3:27: expected forward op id, found name "x"`},
		{"dist no mesh", head + "    op 1 relu() -> () dist [-> ]\n  }\n}", `t.dpir:3:28: expected "@", found "["`},
		{"dist impl", head + "    op 1 relu() -> () dist @w impl relu [-> ]\n  }\n}", `t.dpir:3:41: expected ":", found "["`},
		{"dist arrow", head + "    op 1 relu() -> () dist @w [x: [0]]\n  }\n}", `t.dpir:3:38: expected "," or "->", found "]"`},
		{"mesh", "mesh w shape [2] dims [a] rank [0, 1]", `t.dpir:1:27: expected "ranks", found name "rank"`},
		{"mesh twice", "mesh w shape [1] dims [a] ranks [0]\nmesh w shape [1] dims [a] ranks [0]", "t.dpir:2:1: mesh w declared twice"},
		{"mesh dim overflow", "mesh w shape [4294967296] dims [a] ranks [0]", "t.dpir:1:15: integer 4294967296 out of range"},
		{"grads", "grads w -> ", "t.dpir:1:12: expected grad name or \"[]\", found end of file"},
		{"module name", "module 3", `t.dpir:1:8: expected module name, found integer "3"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ir.Parse("t.dpir", []byte(tc.src))
			if err == nil {
				t.Fatalf("no error; want %s", tc.want)
			}
			if err.Error() != tc.want {
				t.Errorf("got  %s\nwant %s", err, tc.want)
			}
			var pe *ir.ParseError
			if !errorsAs(err, &pe) {
				t.Errorf("error is %T, want *ir.ParseError", err)
			}
		})
	}
}

func TestParseIntegerBounds(t *testing.T) {
	for _, tc := range []struct {
		lit  string
		want int64
		ok   bool
	}{
		{"0", 0, true}, {"-0", 0, true}, {"007", 7, true},
		{"9223372036854775807", 1<<63 - 1, true}, {"-9223372036854775808", -1 << 63, true},
		{"9223372036854775808", 0, false}, {"-9223372036854775809", 0, false},
		{"9999999999999999999", 0, false}, {"12345678901234567890", 0, false},
	} {
		m, err := ir.Parse("i.dpir", []byte("program main { block 0 { op 1 f() -> () {v = "+tc.lit+"} } }"))
		if !tc.ok {
			if err == nil || !strings.Contains(err.Error(), "out of range") {
				t.Errorf("%s: err = %v, want out of range", tc.lit, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.lit, err)
			continue
		}
		if got, _ := m.Main.Global().Ops[0].Attrs.Int("v"); got != tc.want {
			t.Errorf("%s parses as %d, want %d", tc.lit, got, tc.want)
		}
	}
}

// TestFprintStreamsTheSameBytes: the streaming printer writes what Print
// returns, in pieces no larger than a few flushes.
func TestFprintStreamsTheSameBytes(t *testing.T) {
	for _, m := range []*ir.Module{irgen.Synthetic(3000), irgen.Random(7), ir.NewModule("")} {
		var w chunkWriter
		if err := ir.Fprint(&w, m); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(w.buf.Bytes(), ir.Print(m)) {
			t.Fatal("Fprint and Print differ")
		}
		if len(ir.Print(m)) > 200<<10 && w.writes < 3 {
			t.Errorf("%d writes for %d bytes: not streaming", w.writes, w.buf.Len())
		}
		if w.max > 200<<10 {
			t.Errorf("a write of %d bytes", w.max)
		}
	}
	if err := ir.Fprint(failWriter{}, irgen.Synthetic(10)); err == nil || err.Error() != "disk full" {
		t.Errorf("write error: %v", err)
	}
}

type chunkWriter struct {
	buf         bytes.Buffer
	writes, max int
}

func (w *chunkWriter) Write(p []byte) (int, error) {
	w.writes++
	w.max = max(w.max, len(p))
	return w.buf.Write(p)
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errorString("disk full") }

type errorString string

func (e errorString) Error() string { return string(e) }

// TestParseNumbers: every number is read as written, or is an error at
// its first byte; none is read as a number and a name (as "0x" was), or
// with letters taken for digits (as "-0x10" was, as -7210).
func TestParseNumbers(t *testing.T) {
	const pre = "program main { block 0 { op 1 f() -> () {v = "
	col := len(pre) + 1
	for _, tc := range []struct {
		lit  string
		want ir.Value // nil: an error
		msg  string
	}{
		{"-0x10", ir.Int(-16), ""},
		{"0x10", ir.Int(16), ""},
		{"0X1f", ir.Int(31), ""},
		{"-0x8000000000000000", ir.Int(-1 << 63), ""},
		{"0x7fffffffffffffff", ir.Int(1<<63 - 1), ""},
		{"1.e5", ir.Float(1e5), ""},
		{"-0.5e-3", ir.Float(-0.5e-3), ""},
		{"-0x8000000000000001", nil, "integer -0x8000000000000001 out of range"},
		{"0x8000000000000000", nil, "integer 0x8000000000000000 out of range"},
		{"0x10000000000000000", nil, "integer 0x10000000000000000 out of range"},
		{"0x", nil, `malformed number "0x": no hex digits after 0x`},
		{"-0x", nil, `malformed number "-0x": no hex digits after 0x`},
		{"0x-1", nil, `malformed number "0x": no hex digits after 0x`},
		{"0xg1", nil, `malformed number "0xg1": no hex digits after 0x`},
		{"0x1g", nil, `malformed number "0x1g"`},
		{"1x2", nil, `malformed number "1x2"`},
		{"0b101", nil, `malformed number "0b101"`},
		{"1_000", nil, `malformed number "1_000"`},
		{"1e", nil, `malformed number "1e"`},
		{"1e+", nil, `malformed number "1e+"`},
		{"2.5E-x", nil, `malformed number "2.5E-x"`},
		{"1.5.3", nil, `malformed number "1.5.3"`},
		{"7abc", nil, `malformed number "7abc"`},
		{"--1", nil, `unexpected "-"`},
		{"-", nil, `unexpected "-"`},
		{"1e400", nil, "float 1e400 out of range"},
	} {
		m, err := ir.Parse("n.dpir", []byte(pre+tc.lit+"} } }"))
		if tc.want == nil {
			want := fmt.Sprintf("n.dpir:1:%d: %s", col, tc.msg)
			if err == nil || err.Error() != want {
				t.Errorf("%s: err = %v\nwant %s", tc.lit, err, want)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.lit, err)
			continue
		}
		if got := m.Main.Global().Ops[0].Attrs.Get("v"); got != tc.want {
			t.Errorf("%s parses as %v, want %v", tc.lit, got, tc.want)
		}
	}
	// In a shape, a mapping and an op id too.
	for _, tc := range []struct{ src, want string }{
		{"program main { block 0 { var x : f32[-0x1] } }", ""},
		{"program main { block 0 { var x : f32[4x] } }", `n.dpir:1:38: malformed number "4x"`},
		{"program main { block 0 { op 0x1 f() -> () } }", ""},
		{"program main { block 0 { op 1e f() -> () } }", `n.dpir:1:29: malformed number "1e"`},
	} {
		_, err := ir.Parse("n.dpir", []byte(tc.src))
		if got := fmt.Sprint(err); tc.want == "" && err != nil || tc.want != "" && got != tc.want {
			t.Errorf("%s: err = %v, want %q", tc.src, err, tc.want)
		}
	}
}
