package golden

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/diff"
	"github.com/rogpeppe/go-internal/txtar"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/passes"
	"github.com/distpass/distpass/viz"
)

// UpdateEnv names the environment variable that rewrites expectations:
// "1" records programs, "errors" also records errors (see the package doc).
const UpdateEnv = "DISTPASS_UPDATE"

// update says what DISTPASS_UPDATE allows.
type update int

const (
	noUpdate       update = iota
	updatePrograms        // DISTPASS_UPDATE=1
	updateErrors          // DISTPASS_UPDATE=errors
)

func updateMode(v string) (update, error) {
	switch v {
	case "":
		return noUpdate, nil
	case "1":
		return updatePrograms, nil
	case "errors":
		return updateErrors, nil
	}
	return noUpdate, fmt.Errorf("%s=%q: want 1 (record programs) or errors (also record errors)", UpdateEnv, v)
}

var wantName = regexp.MustCompile(`^want/rank(\d+)\.(dpir|error|dot)$`)

// RunDir runs every *.txtar case in dir as a subtest.
func RunDir(t *testing.T, dir string) {
	files, err := filepath.Glob(filepath.Join(dir, "*.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("no cases in %s", dir)
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".txtar"), func(t *testing.T) { RunFile(t, f) })
	}
}

// RunFile runs one case.
func RunFile(t *testing.T, path string) {
	mode, err := updateMode(os.Getenv(UpdateEnv))
	if err != nil {
		t.Fatal(err)
	}
	if err := runFile(t, path, mode); err != nil {
		t.Error(err)
	}
}

// runFile runs the case at path and, under an update mode, rewrites its
// want sections; the error is an update it refused, the file untouched.
func runFile(t *testing.T, path string, mode update) error {
	ar, err := txtar.ParseFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(bytes.TrimSpace(ar.Comment)) == 0 {
		t.Errorf("%s: the comment must say which reference behaviour the case pins", path)
	}
	sections := map[string][]byte{}
	for _, f := range ar.Files {
		sections[f.Name] = f.Data
	}
	input, ok := sections["input.dpir"]
	if !ok {
		t.Fatalf("%s: no input.dpir section", path)
	}
	pipeText := strings.TrimSpace(string(sections["pipeline"]))
	if pipeText == "" {
		t.Fatalf("%s: no pipeline section", path)
	}
	m, err := ir.Parse(path+":input.dpir", input)
	if err != nil {
		t.Fatal(err)
	}
	var ranks []int
	for name := range sections {
		if sm := wantName.FindStringSubmatch(name); sm != nil && sm[2] != "dot" {
			r, _ := strconv.Atoi(sm[1])
			ranks = append(ranks, r)
		}
	}
	slices.Sort(ranks)
	if len(ranks) == 0 {
		// A case pins the ranks it has sections for (an error case often
		// pins one); a new case gets every rank the pipeline runs.
		if mode == noUpdate {
			t.Fatalf("%s: no want/rankN.dpir or want/rankN.error section (%s=1 go test ./golden records them)", path, UpdateEnv)
		}
		if ranks = pipelineRanks(m, pipeText); len(ranks) == 0 {
			t.Fatalf("%s: no want section, and no mesh in input.dpir to take the ranks from", path)
		}
	}
	before := ir.Print(m)
	got := map[string][]byte{}
	for _, r := range ranks {
		text := strings.ReplaceAll(pipeText, "$RANK", strconv.Itoa(r))
		out, dot, runErr := runOnce(m, text)
		out2, _, runErr2 := runOnce(m, text)
		if !bytes.Equal(out, out2) || fmt.Sprint(runErr) != fmt.Sprint(runErr2) {
			t.Errorf("rank %d: a second run gives other output", r)
		}
		if runErr != nil {
			got[fmt.Sprintf("want/rank%d.error", r)] = []byte(runErr.Error() + "\n")
			continue
		}
		got[fmt.Sprintf("want/rank%d.dpir", r)] = out
		if _, ok := sections[fmt.Sprintf("want/rank%d.dot", r)]; ok {
			got[fmt.Sprintf("want/rank%d.dot", r)] = dot
		}
		checkReparse(t, r, out)
		render(t, r, dot)
	}
	if !bytes.Equal(before, ir.Print(m)) {
		t.Errorf("the pipeline changed the serial input module")
	}
	if mode != noUpdate {
		return write(path, ar, sections, got, mode)
	}
	for name, want := range sections {
		if !wantName.MatchString(name) {
			continue
		}
		g, ok := got[name]
		if !ok {
			t.Errorf("%s: the run produced no %s (it produced %s)", path, name, keys(got))
			continue
		}
		if !bytes.Equal(g, want) {
			t.Errorf("%s: %s differs (%s=1 go test ./golden to accept):\n%s", path, name, UpdateEnv, diff.Diff("want", want, "got", g))
		}
	}
	for name := range got {
		if _, ok := sections[name]; !ok {
			t.Errorf("%s: the run produced %s, which the case does not expect", path, name)
		}
	}
	return nil
}

// pipelineRanks returns the ranks a pipeline runs on m: every rank of its
// meshes when the pipeline names $RANK, else the one run, as rank 0.
func pipelineRanks(m *ir.Module, pipeText string) []int {
	if !strings.Contains(pipeText, "$RANK") {
		return []int{0}
	}
	var ranks []int
	for _, mesh := range m.Meshes {
		ranks = append(ranks, mesh.ProcessIDs...)
	}
	slices.Sort(ranks)
	return slices.Compact(ranks)
}

// runOnce runs the pipeline on a clone of m and returns its text and the
// DOT of its main program.
func runOnce(m *ir.Module, text string) ([]byte, []byte, error) {
	pl, err := passes.DefaultRegistry().Parse(text)
	if err != nil {
		return nil, nil, err
	}
	c := m.Clone()
	if err := (&passes.Manager{}).Run(context.Background(), pl, c); err != nil {
		return nil, nil, err
	}
	// Drawings are capped: Graphviz takes tens of seconds on the few
	// hundred ops of a GPT rank, and the check is that the DOT renders.
	return ir.Print(c), viz.DOT(c.Main, viz.Options{MaxNodes: 60}), nil
}

func checkReparse(t *testing.T, rank int, out []byte) {
	t.Helper()
	m, err := ir.Parse("output.dpir", out)
	if err != nil {
		t.Errorf("rank %d: output does not parse: %v", rank, err)
		return
	}
	if !bytes.Equal(ir.Print(m), out) {
		t.Errorf("rank %d: output does not print back to itself", rank)
	}
}

func render(t *testing.T, rank int, dot []byte) {
	t.Helper()
	// A subtest of its own, so that without Graphviz it is reported as
	// skipped (go test -v lists it) while the case's other checks run.
	t.Run(fmt.Sprintf("dot-rank%d", rank), func(t *testing.T) {
		path, err := exec.LookPath("dot")
		if err != nil {
			if os.Getenv("DISTPASS_REQUIRE_DOT") != "" {
				t.Fatal("Graphviz dot not found, and DISTPASS_REQUIRE_DOT is set")
			}
			t.Skip("Graphviz dot not found: the drawing is not rendered")
		}
		var stderr bytes.Buffer
		cmd := exec.Command(path, "-Tsvg", "-o", os.DevNull)
		cmd.Stdin = bytes.NewReader(dot)
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil || stderr.Len() > 0 {
			t.Errorf("rank %d: dot -Tsvg: %v %s", rank, err, stderr.String())
		}
	})
}

// write replaces the want sections of the case at path with got. Under
// updatePrograms it refuses, writing nothing, when a rank gives an error
// and its expectation was a program or there was none: a broken pass
// must not turn a case into the record of its failure.
func write(path string, ar *txtar.Archive, sections, got map[string][]byte, mode update) error {
	if mode != updateErrors {
		for _, name := range keys(got) {
			if _, had := sections[name]; had || !strings.HasSuffix(name, ".error") {
				continue
			}
			return fmt.Errorf("%s: rank %d fails where the case expects no error (%s); not recorded: %s=1 records programs, %s=errors records errors too",
				path, rankOf(name), bytes.TrimSuffix(got[name], []byte("\n")), UpdateEnv, UpdateEnv)
		}
	}
	var files []txtar.File
	for _, f := range ar.Files {
		if !wantName.MatchString(f.Name) {
			files = append(files, f)
		}
	}
	for _, name := range keys(got) {
		files = append(files, txtar.File{Name: name, Data: got[name]})
	}
	ar.Files = files
	return os.WriteFile(path, txtar.Format(ar), 0o644)
}

// keys returns the names sorted by rank, then kind.
func keys(m map[string][]byte) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.SortFunc(ks, func(a, b string) int {
		ra, rb := rankOf(a), rankOf(b)
		if ra != rb {
			return ra - rb
		}
		return strings.Compare(a, b)
	})
	return ks
}

func rankOf(name string) int {
	if sm := wantName.FindStringSubmatch(name); sm != nil {
		r, _ := strconv.Atoi(sm[1])
		return r
	}
	return -1
}
