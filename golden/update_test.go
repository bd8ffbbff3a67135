package golden

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
)

// tempCase copies testdata/name.txtar into a temp dir, keeping the want
// sections only if keepWant, with edit applied to each section, and
// returns its path and the original archive.
func tempCase(t *testing.T, name string, keepWant bool, edit func(f *txtar.File)) (string, *txtar.Archive) {
	t.Helper()
	orig, err := txtar.ParseFile(filepath.Join("testdata", name+".txtar"))
	if err != nil {
		t.Fatal(err)
	}
	ar := &txtar.Archive{Comment: orig.Comment}
	for _, f := range orig.Files {
		if !keepWant && wantName.MatchString(f.Name) {
			continue
		}
		if edit != nil {
			f.Data = bytes.Clone(f.Data)
			edit(&f)
		}
		ar.Files = append(ar.Files, f)
	}
	path := filepath.Join(t.TempDir(), name+".txtar")
	if err := os.WriteFile(path, txtar.Format(ar), 0o644); err != nil {
		t.Fatal(err)
	}
	return path, orig
}

func sectionsOf(t *testing.T, path string) map[string]string {
	t.Helper()
	ar, err := txtar.ParseFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := map[string]string{}
	for _, f := range ar.Files {
		if wantName.MatchString(f.Name) {
			s[f.Name] = string(f.Data)
		}
	}
	return s
}

func TestUpdateCreatesEveryRank(t *testing.T) {
	path, orig := tempCase(t, "dp_mlp", false, nil)
	if err := runFile(t, path, updatePrograms); err != nil {
		t.Fatal(err)
	}
	got := sectionsOf(t, path)
	want := map[string]string{}
	for _, f := range orig.Files {
		if wantName.MatchString(f.Name) {
			want[f.Name] = string(f.Data)
		}
	}
	if len(got) != 2 || len(want) != 2 {
		t.Fatalf("sections %v, want rank0 and rank1 (the mesh's ranks)", keysOf(got))
	}
	for name, w := range want {
		if got[name] != w {
			t.Errorf("%s recorded as\n%s\nwant\n%s", name, got[name], w)
		}
	}
	// The recorded case now passes without an update.
	if err := runFile(t, path, noUpdate); err != nil {
		t.Fatal(err)
	}
}

func TestUpdateRefusesNewErrors(t *testing.T) {
	// A new case whose every rank fails.
	path, orig := tempCase(t, "err_role", false, nil)
	before, _ := os.ReadFile(path)
	err := runFile(t, path, updatePrograms)
	if err == nil || !strings.Contains(err.Error(), "rank 0 fails where the case expects no error") ||
		!strings.Contains(err.Error(), UpdateEnv+"=errors records errors too") {
		t.Fatalf("update of a failing new case: %v, want a refusal", err)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Errorf("the refused update wrote the file:\n%s", after)
	}
	// Told to, it records the error of every rank.
	if err := runFile(t, path, updateErrors); err != nil {
		t.Fatal(err)
	}
	got := sectionsOf(t, path)
	var want string
	for _, f := range orig.Files {
		if f.Name == "want/rank0.error" {
			want = string(f.Data)
		}
	}
	if len(got) != 2 || got["want/rank0.error"] != want || got["want/rank1.error"] == "" {
		t.Errorf("recorded %q, want rank0.error %q and a rank1.error", got, want)
	}

	// A case that expects programs, broken so that its pipeline fails.
	path, _ = tempCase(t, "dp_mlp", true, func(f *txtar.File) {
		if f.Name == "pipeline" {
			f.Data = []byte("partition{rank=$RANK},no-such-pass\n")
		}
	})
	before, _ = os.ReadFile(path)
	if err := runFile(t, path, updatePrograms); err == nil || !strings.Contains(err.Error(), "rank 0 fails where the case expects no error (") {
		t.Fatalf("update of a case whose programs now fail: %v, want a refusal", err)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Errorf("the refused update wrote the file")
	}
}

func TestUpdateRewritesExpectedErrors(t *testing.T) {
	// A case that expects an error may record another one under =1.
	path, _ := tempCase(t, "err_role", true, func(f *txtar.File) {
		if f.Name == "want/rank0.error" {
			f.Data = []byte("an older wording\n")
		}
	})
	if err := runFile(t, path, updatePrograms); err != nil {
		t.Fatal(err)
	}
	if got := sectionsOf(t, path); len(got) != 1 || got["want/rank0.error"] == "an older wording\n" {
		t.Errorf("recorded %q, want rank0.error alone, rewritten", got)
	}
}

func TestUpdateMode(t *testing.T) {
	for v, want := range map[string]update{"": noUpdate, "1": updatePrograms, "errors": updateErrors} {
		if got, err := updateMode(v); got != want || err != nil {
			t.Errorf("updateMode(%q) = %v, %v; want %v", v, got, err, want)
		}
	}
	_, err := updateMode("error")
	if err == nil || err.Error() != `DISTPASS_UPDATE="error": want 1 (record programs) or errors (also record errors)` {
		t.Errorf("updateMode(\"error\"): %v", err)
	}
}

func keysOf(m map[string]string) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}

func TestUpdateFillsAnEmptySection(t *testing.T) {
	path, orig := tempCase(t, "startup_init", true, nil)
	ar, err := txtar.ParseFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// The case pins ranks 0, 1 and 3; an empty section adds rank 2.
	ar.Files = append(ar.Files, txtar.File{Name: "want/rank2.dpir"})
	if err := os.WriteFile(path, txtar.Format(ar), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := runFile(t, path, updatePrograms); err != nil {
		t.Fatal(err)
	}
	got := sectionsOf(t, path)
	if len(got) != 4 || !strings.HasPrefix(got["want/rank2.dpir"], "mesh world ") {
		t.Errorf("sections %v, want ranks 0 to 3, rank 2 recorded", keysOf(got))
	}
	for _, f := range orig.Files {
		if wantName.MatchString(f.Name) && got[f.Name] != string(f.Data) {
			t.Errorf("%s changed", f.Name)
		}
	}
}
