package ir_test

import (
	"bytes"
	"os"
	"path/filepath"
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
