package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/distpass/distpass/interop/paddle"
	"github.com/distpass/distpass/ir"
)

// TestImportNormalisesMultipleDims: a dim Paddle's shape inference wrote
// as a multiple of the unknown batch (layer_norm's Mean [-1 × 50] as
// [-50]) is read as -1, and import -v lists it and counts it; without
// -v stderr stays empty; a file with nothing to normalise counts 0.
func TestImportNormalisesMultipleDims(t *testing.T) {
	m, err := ir.ParseString("ln.dpir", `program main {
  block 0 {
    var x : f32[-1, 50]
    var y : f32[-1, 50]
    var mean : f32[-1]
    var variance : f32[-1]
    op 1 layer_norm(X: x) -> (Y: y, Mean: mean, Variance: variance) {begin_norm_axis = 1}
  }
}
`)
	if err != nil {
		t.Fatal(err)
	}
	clean, err := paddle.Export(m)
	if err != nil {
		t.Fatal(err)
	}
	// As Paddle writes it: Mean and Variance of [-50].
	b := m.Main.Global()
	b.Var("mean").Type.Shape[0] = -50
	b.Var("variance").Type.Shape[0] = -50
	wild, err := paddle.Export(m)
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	for name, data := range map[string][]byte{"clean.pdmodel": clean, "wild.pdmodel": wild} {
		if err := os.WriteFile(filepath.Join(tmp, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run := func(args ...string) (int, string, string) {
		var stdout, stderr bytes.Buffer
		env := &Env{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr}
		return Main(args, env), stdout.String(), stderr.String()
	}
	wildPath := filepath.Join(tmp, "wild.pdmodel")
	code, out, errs := run("import", "-v", wildPath)
	if code != ExitOK {
		t.Fatalf("import -v: exit %d\n%s", code, errs)
	}
	for _, want := range []string{
		`distpass import: normalised ` + wildPath + `: BlockDesc 0 > VarDesc "mean": dims [-50] read as [-1]: a dim below -1 is a multiple of an unknown one`,
		`distpass import: normalised ` + wildPath + `: BlockDesc 0 > VarDesc "variance": dims [-50] read as [-1]`,
		"distpass import: 2 normalisation(s)",
	} {
		if !strings.Contains(errs, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errs)
		}
	}
	if !strings.Contains(out, "var mean : f32[-1]") {
		t.Errorf("the module does not declare mean as f32[-1]:\n%s", out)
	}
	if code, _, errs := run("import", wildPath); code != ExitOK || errs != "" {
		t.Errorf("import without -v: exit %d, stderr %q", code, errs)
	}
	if code, _, errs := run("import", "-v", filepath.Join(tmp, "clean.pdmodel")); code != ExitOK || errs != "distpass import: 0 normalisation(s)\n" {
		t.Errorf("import -v of a clean file: exit %d, stderr %q", code, errs)
	}
	// Exported back, the normalised program is the clean one's bytes: what
	// Paddle writes for an unknown dim.
	back, err := paddle.Import("wild.pdmodel", wild)
	if err != nil {
		t.Fatal(err)
	}
	again, err := paddle.Export(back)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again, clean) {
		t.Error("the normalised program does not export as the clean one")
	}
}

// TestImportDropsUnknownEmptySlots: an empty slot that an op's
// definition lacks (scale's BiasTensor, which another Paddle version
// declares) is dropped and listed; a dropout without its dispensable
// Mask imports as it is.
func TestImportDropsUnknownEmptySlots(t *testing.T) {
	m, err := ir.ParseString("s.dpir", `program main {
  block 0 {
    var x : f32[2, 4]
    var o : f32[2, 4]
    var d : f32[2, 4]
    op 1 scale(X: x, BiasTensor: []) -> (Out: o) {scale = 2.0}
    op 2 dropout(X: o) -> (Out: d) {dropout_prob = 0.5, is_test = true}
  }
}
`)
	if err != nil {
		t.Fatal(err)
	}
	path, stdout, stderr := importV(t, m, "s.pdmodel")
	want := "distpass import: normalised " + path + `: BlockDesc 0 > OpDesc 0 "scale": empty input slot BiasTensor dropped: scale has no such slot` + "\ndistpass import: 1 normalisation(s)\n"
	if stderr != want {
		t.Errorf("stderr:\n%s\nwant:\n%s", stderr, want)
	}
	if !strings.Contains(stdout, "op 1 scale(X: x) -> (Out: o)") || !strings.Contains(stdout, "op 2 dropout(X: o) -> (Out: d)") {
		t.Errorf("imported:\n%s", stdout)
	}
}

// TestImportDimsUndimmedOutputs: outputs an inference program declares
// with no dims (batch_norm's SavedMean and SavedVariance, dropout's
// Mask) take the shapes their ops infer, each listed.
func TestImportDimsUndimmedOutputs(t *testing.T) {
	m, err := ir.ParseString("bn.dpir", `program main {
  block 0 {
    var x : f32[2, 16, 4, 4]
    persist s : f32[16]
    persist b : f32[16]
    persist m : f32[16]
    persist v : f32[16]
    var y : f32[2, 16, 4, 4]
    var sm : f32[]
    var sv : f32[]
    var o : f32[2, 16, 4, 4]
    var mask : u8[]
    op 1 batch_norm(X: x, Scale: s, Bias: b, Mean: m, Variance: v) -> (Y: y, MeanOut: m, VarianceOut: v, SavedMean: sm, SavedVariance: sv) {is_test = true}
    op 2 dropout(X: y) -> (Out: o, Mask: mask) {dropout_prob = 0.5, is_test = true}
  }
}
`)
	if err != nil {
		t.Fatal(err)
	}
	_, stdout, stderr := importV(t, m, "bn.pdmodel")
	for _, want := range []string{
		`BlockDesc 0 > OpDesc 0 "batch_norm": output SavedMean sm declared with no dims, read as [16], as the op infers it`,
		`BlockDesc 0 > OpDesc 0 "batch_norm": output SavedVariance sv declared with no dims, read as [16], as the op infers it`,
		`BlockDesc 0 > OpDesc 1 "dropout": output Mask mask declared with no dims, read as [2, 16, 4, 4], as the op infers it`,
		"distpass import: 3 normalisation(s)",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	for _, want := range []string{"var sm : f32[16]", "var mask : u8[2, 16, 4, 4]"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("imported module lacks %q:\n%s", want, stdout)
		}
	}
}

// importV exports m as a ProgramDesc named file and reads it back with
// import -v: the file's path, stdout and stderr; the test fails when
// the import does.
func importV(t *testing.T, m *ir.Module, file string) (path, stdout, stderr string) {
	t.Helper()
	data, err := paddle.Export(m)
	if err != nil {
		t.Fatal(err)
	}
	path = filepath.Join(t.TempDir(), file)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errs bytes.Buffer
	env := &Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errs}
	if code := Main([]string{"import", "-v", path}, env); code != ExitOK {
		t.Fatalf("import -v: exit %d\n%s", code, errs.String())
	}
	return path, out.String(), errs.String()
}
