package paddle

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/distpass/distpass/ir"
)

// FuzzImport feeds arbitrary bytes to Import. It must never panic; an
// error must be an *Error; whatever imports must export, and the export
// must import to an equal module (the same text and hash) and export to
// the same bytes again.
func FuzzImport(f *testing.F) {
	// Minimizing an input as large as these takes long: run with
	// -fuzzminimizetime 3x to keep the fuzzer fuzzing.
	files, _ := filepath.Glob("testdata/*.pdmodel")
	for _, file := range files {
		if data, err := os.ReadFile(file); err == nil {
			f.Add(data)
		}
	}
	if m, err := ir.Parse("all_kinds.dpir", mustReadFile(f, "testdata/all_kinds.dpir")); err == nil {
		if pb, err := Export(m); err == nil {
			f.Add(pb)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Import("fuzz.pdmodel", data)
		if err != nil {
			var pe *Error
			if !errors.As(err, &pe) {
				t.Fatalf("error of type %T: %v", err, err)
			}
			return
		}
		pb, err := Export(m)
		if err != nil {
			t.Fatalf("an imported module does not export: %v", err)
		}
		m2, err := Import("fuzz.pdmodel", pb)
		if err != nil {
			t.Fatalf("the export does not import: %v", err)
		}
		// The printed text and the hash show every difference ir.Equal
		// would, at a fraction of go-cmp's cost on large programs.
		if ir.Hash(m) != ir.Hash(m2) || !bytes.Equal(ir.Print(m), ir.Print(m2)) {
			t.Fatalf("Import(Export(m)) differs:\n%s", ir.Diff(m, m2))
		}
		pb2, err := Export(m2)
		if err != nil || !bytes.Equal(pb, pb2) {
			t.Fatalf("exporting again differs (err %v)", err)
		}
		_ = ir.Verify(m) // must not panic
	})
}

func mustReadFile(f *testing.F, name string) []byte {
	b, err := os.ReadFile(name)
	if err != nil {
		f.Fatal(err)
	}
	return b
}
