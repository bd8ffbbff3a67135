package paddle

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/distpass/distpass/ir"
)

const normalisedListing = "testdata/transformers/normalised.txt"

// TestTransformerFixtures: each transformer program of
// testdata/transformers imports and verifies, its normalisations are
// those normalised.txt lists (DISTPASS_UPDATE=1 rewrites it), and it
// round-trips: to its own bytes when nothing was normalised, else to a
// file that imports with no normalisation into an equal module and
// exports to the same bytes again (loadable, and stable).
func TestTransformerFixtures(t *testing.T) {
	files, err := filepath.Glob("testdata/transformers/*.pdmodel")
	if err != nil || len(files) < 3 {
		t.Fatalf("want at least 3 transformer fixtures, got %d (%v)", len(files), err)
	}
	var listing strings.Builder
	for _, f := range files {
		name := filepath.Base(f)
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		m, norms, err := importNormalised(name, data)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := ir.Verify(m); err != nil {
			t.Fatalf("%s: Verify:\n%v", name, err)
		}
		listing.WriteString("# " + name + ": " + plural(len(norms), "normalisation") + "\n")
		for _, n := range norms {
			listing.WriteString(n.Where + ": " + n.What + "\n")
		}
		out, err := Export(m)
		if err != nil {
			t.Fatalf("%s: export: %v", name, err)
		}
		if len(norms) == 0 {
			if !bytes.Equal(out, data) {
				t.Errorf("%s: nothing normalised, yet the export differs at byte %d", name, firstDiff(out, data))
			}
			continue
		}
		m2, norms2, err := importNormalised(name, out)
		if err != nil {
			t.Fatalf("%s: the export does not import: %v", name, err)
		}
		if len(norms2) != 0 {
			t.Errorf("%s: the export is normalised again: %v", name, norms2)
		}
		if d := ir.Diff(m, m2); d != "" {
			t.Errorf("%s: the export imports to another module:\n%s", name, d)
		}
		if out2, err := Export(m2); err != nil || !bytes.Equal(out2, out) {
			t.Errorf("%s: exporting the export's import gives other bytes (%v)", name, err)
		}
	}
	got := listing.String()
	if os.Getenv("DISTPASS_UPDATE") != "" {
		if err := os.WriteFile(normalisedListing, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(normalisedListing)
	if err != nil {
		t.Fatalf("%v (DISTPASS_UPDATE=1 writes it)", err)
	}
	if d := cmp.Diff(strings.Split(string(want), "\n"), strings.Split(got, "\n")); d != "" {
		t.Errorf("%s differs (-want +got):\n%s", normalisedListing, d)
	}
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}
