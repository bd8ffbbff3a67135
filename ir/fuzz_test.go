package ir_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/distpass/distpass/internal/irgen"
	"github.com/distpass/distpass/ir"
)

// FuzzParse feeds arbitrary bytes to the parser. It must never panic, and
// whatever it accepts must print to text that re-parses to an equal module
// and prints to the same bytes again.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.dpir")
	for _, file := range files {
		if src, err := os.ReadFile(file); err == nil {
			f.Add(src)
		}
	}
	for seed := range uint64(20) {
		f.Add(ir.Print(irgen.Random(seed)))
	}
	f.Add(ir.Print(irgen.Synthetic(20)))
	f.Fuzz(func(t *testing.T, src []byte) {
		// The speculative parse of large sources, forced on with small
		// pieces, must agree with the sequential parse, error or module.
		if seq, seg := parseBoth(t, src, 40); seq != seg {
			t.Fatalf("speculative parse differs\nsequential:\n%s\nspeculative:\n%s", seq, seg)
		}
		m, err := ir.Parse("fuzz.dpir", src)
		if err != nil {
			if _, ok := err.(*ir.ParseError); !ok {
				t.Fatalf("error of type %T: %v", err, err)
			}
			return
		}
		text := ir.Print(m)
		m2, err := ir.Parse("printed.dpir", text)
		if err != nil {
			t.Fatalf("printed text does not parse: %v\n%s", err, text)
		}
		if d := ir.Diff(m, m2); d != "" {
			t.Fatalf("round trip differs:\n%s", d)
		}
		if text2 := ir.Print(m2); !bytes.Equal(text, text2) {
			t.Fatalf("printing is not a fixed point:\n%s\n---\n%s", text, text2)
		}
		before := ir.Print(m)
		if err := ir.Verify(m); err != nil {
			if _, ok := err.(*ir.VerifyError); !ok {
				t.Fatalf("Verify returned %T: %v", err, err)
			}
		}
		if !bytes.Equal(before, ir.Print(m)) {
			t.Fatal("Verify changed the module")
		}
		if d := ir.Diff(m, m.Clone()); d != "" {
			t.Fatalf("clone differs:\n%s", d)
		}
	})
}
