package paddle

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/distpass/distpass/ir"
)

// fixtures returns the Paddle program files of testdata, by base name.
func fixtures(t testing.TB) map[string][]byte {
	t.Helper()
	files, err := filepath.Glob("testdata/*.pdmodel")
	if err != nil || len(files) < 8 {
		t.Fatalf("want the 8 fixtures, got %d (%v)", len(files), err)
	}
	out := make(map[string][]byte, len(files))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out[filepath.Base(f)] = data
	}
	return out
}

// The acceptance bar: every fixture imports, verifies, exports to its own
// bytes, and so does its .dpir text; importing the export gives an equal
// module.
func TestFixturesRoundTrip(t *testing.T) {
	for name, data := range fixtures(t) {
		t.Run(name, func(t *testing.T) {
			m, err := Import(name, data)
			if err != nil {
				t.Fatal(err)
			}
			if err := ir.Verify(m); err != nil {
				t.Errorf("Verify:\n%v", err)
			}
			out, err := Export(m)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(out, data) {
				t.Fatalf("Export(Import(f)) differs from f: %d bytes, want %d; first difference at byte %d", len(out), len(data), firstDiff(out, data))
			}
			text := ir.Print(m)
			m2, err := ir.Parse(name+".dpir", text)
			if err != nil {
				t.Fatalf("the printed text does not parse: %v", err)
			}
			if d := ir.Diff(m, m2); d != "" {
				t.Fatalf("text round trip:\n%s", d)
			}
			out2, err := Export(m2)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(out2, data) {
				t.Fatalf("Export(Parse(Print(Import(f)))) differs from f at byte %d", firstDiff(out2, data))
			}
			m3, err := Import(name, out)
			if err != nil {
				t.Fatal(err)
			}
			if d := ir.Diff(m, m3); d != "" {
				t.Fatalf("Import(Export(m)) differs:\n%s", d)
			}
			js, err := ir.EncodeJSON(m)
			if err != nil {
				t.Fatal(err)
			}
			m4, err := ir.DecodeJSON(js)
			if err != nil {
				t.Fatal(err)
			}
			if out4, err := Export(m4); err != nil || !bytes.Equal(out4, data) {
				t.Fatalf("Export of the JSON round trip differs (err %v)", err)
			}
		})
	}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}
