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

// parseBoth parses src sequentially and by speculative pieces of size
// bytes and returns both outcomes as text: the printed module or the error.
func parseBoth(t *testing.T, src []byte, size int) (seq, seg string) {
	t.Helper()
	outcome := func() string {
		m, err := ir.Parse("in.dpir", src)
		if err != nil {
			return "error: " + err.Error()
		}
		return string(ir.Print(m))
	}
	restore := ir.SetSegmentsForTest(-1, 0)
	seq = outcome()
	restore()
	restore = ir.SetSegmentsForTest(0, size)
	seg = outcome()
	restore()
	return seq, seg
}

// The speculative parse gives the sequential parse's module, whatever the
// cuts: on every test file, random modules and a synthetic program, with
// pieces from a few statements to a few hundred.
func TestParseSegmentsEqualsSequential(t *testing.T) {
	var inputs [][]byte
	files, _ := filepath.Glob("testdata/*.dpir")
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, src)
	}
	for seed := range uint64(20) {
		inputs = append(inputs, ir.Print(irgen.Random(seed)))
	}
	inputs = append(inputs, ir.Print(irgen.Synthetic(300)))
	if len(inputs) < 22 {
		t.Fatalf("only %d inputs", len(inputs))
	}
	for i, src := range inputs {
		for _, size := range []int{1, 400, 5000} {
			seq, seg := parseBoth(t, src, size)
			if seq != seg {
				t.Fatalf("input %d, pieces of %d bytes: speculative parse differs\nsequential:\n%s\nspeculative:\n%s", i, size, seq, seg)
			}
		}
	}
}

// Damage anywhere in a large program gives the sequential parse's error,
// at the same position: a wrong byte, a brace, a duplicate declaration
// in another piece, a line break inside a statement.
func TestParseSegmentsErrorsEqualSequential(t *testing.T) {
	src := ir.Print(irgen.Synthetic(120))
	lines := bytes.SplitAfter(src, []byte("\n"))
	var cases [][]byte
	for i := 3; i < len(lines); i += 13 {
		for _, edit := range []func(line []byte) []byte{
			func(l []byte) []byte { return bytes.Replace(l, []byte("("), []byte("?"), 1) },
			func(l []byte) []byte { return append([]byte("  }\n"), l...) },
			func(l []byte) []byte { return bytes.Replace(l, []byte(" -> "), []byte("\n -> "), 1) },
			func(l []byte) []byte { return bytes.Replace(l, []byte("f32"), []byte("f33"), 1) },
			func(l []byte) []byte { return append(append([]byte{}, l...), lines[5]...) },
		} {
			var b bytes.Buffer
			for j, l := range lines {
				if j == i {
					l = edit(l)
				}
				b.Write(l)
			}
			cases = append(cases, b.Bytes())
		}
	}
	errs := 0
	for i, c := range cases {
		seq, seg := parseBoth(t, c, 1500)
		if seq != seg {
			t.Fatalf("case %d: speculative parse differs\nsequential: %.300s\nspeculative: %.300s", i, seq, seg)
		}
		if len(seq) > 6 && seq[:6] == "error:" {
			errs++
		}
	}
	if errs < len(cases)/2 {
		t.Fatalf("only %d of %d damaged inputs fail to parse", errs, len(cases))
	}
}

// An op that owns a sub-block, read ahead in a piece, still gets its true
// position when the nesting check fails at it: the pieces that hold such
// ops are left to the main parse.
func TestParseSegmentsNestingError(t *testing.T) {
	var sb strings.Builder
	sb.WriteString("program main {\n  block 0 {\n    var x : f32[1]\n")
	for i := range 300 {
		fmt.Fprintf(&sb, "    op %d relu(X: x) -> (Out: x)\n", 10000+i)
	}
	const depth = ir.MaxBlockDepth + 1
	sb.WriteString("    op 1 while(X: x) -> (Out: x) {sub_block = ^1}\n")
	for i := range 300 {
		fmt.Fprintf(&sb, "    op %d relu(X: x) -> (Out: x)\n", 20000+i)
	}
	sb.WriteString("  }\n")
	for i := 1; i <= depth; i++ {
		if i < depth {
			fmt.Fprintf(&sb, "  block %d parent 0 {\n    op %d while(X: x) -> (Out: x) {sub_block = ^%d}\n  }\n", i, i+1, i+1)
		} else {
			fmt.Fprintf(&sb, "  block %d parent 0 { }\n", i)
		}
	}
	sb.WriteString("}\n")
	seq, seg := parseBoth(t, []byte(sb.String()), 200)
	want := "error: in.dpir:304:5: op 1 while: attr sub_block"
	if !strings.HasPrefix(seq, want) {
		t.Fatalf("sequential parse: %.200s, want %s…", seq, want)
	}
	if seg != seq {
		t.Fatalf("speculative parse: %.200s\nsequential: %.200s", seg, seq)
	}
}
