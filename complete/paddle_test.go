package complete_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/distpass/distpass/complete"
	"github.com/distpass/distpass/interop/paddle"
	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/passes"
)

// TestPaddlePrograms: every Paddle program of the import testdata (the
// shared fixtures are the same files), imported, with only its feed
// vars' batch dim annotated on a 4-rank dp mesh: complete, then
// partition every rank. testdata/paddle.txt is the table: each program's
// report line and how partitioning went (DISTPASS_UPDATE=1 rewrites it;
// review its diff). A program that does not partition must say why.
func TestPaddlePrograms(t *testing.T) {
	files, _ := filepath.Glob("../interop/paddle/testdata/*.pdmodel")
	pir, _ := filepath.Glob("../interop/paddle/testdata/*.json")
	files = append(files, pir...)
	slices.Sort(files)
	if len(files) < 9 {
		t.Fatalf("%d Paddle programs", len(files))
	}
	var sb strings.Builder
	sb.WriteString("| program | ops | complete | partition -all (4 ranks) |\n|---|---|---|---|\n")
	failed := 0
	for _, f := range files {
		name := filepath.Base(f)
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var m *ir.Module
		if paddle.IsPIR(data) {
			m, err = paddle.ImportPIR(name, data)
		} else {
			m, err = paddle.Import(name, data)
		}
		if err != nil {
			t.Fatal(err)
		}
		feeds := annotateFeeds(m)
		row := fmt.Sprintf("| %s | %d | ", name, m.Main.NumOps())
		rep, err := complete.Complete(m, complete.Options{})
		if err != nil {
			sb.WriteString(row + "fails: " + oneLineErr(err) + " | |\n")
			failed++
			continue
		}
		row += rep.Summary() + " (feeds: " + strings.Join(feeds, ", ") + ") | "
		if _, err := passes.PartitionAll(context.Background(), m, nil); err != nil {
			sb.WriteString(row + "fails: " + oneLineErr(err) + " |\n")
			failed++
			continue
		}
		sb.WriteString(row + "ok |\n")
	}
	golden(t, "paddle.txt", sb.String())
	t.Logf("%d of %d programs do not partition (see testdata/paddle.txt)", failed, len(files))
}

// annotateFeeds adds a 4-rank mesh world [dp] and splits dim 0 of every
// var a feed op writes (or, with none, every is_data var) along it, and
// returns their names.
func annotateFeeds(m *ir.Module) []string {
	pm := &ir.ProcessMesh{Name: "world", Shape: []int{4}, DimNames: []string{"dp"}, ProcessIDs: []int{0, 1, 2, 3}}
	m.Meshes = append(m.Meshes, pm)
	g := m.Main.Global()
	var names []string
	mark := func(v *ir.Var) {
		if v == nil || !v.Type.IsTensor() || slices.Contains(names, v.Name()) {
			return
		}
		if len(v.Type.Shape) == 0 {
			names = append(names, v.Name()+" (a scalar: nothing to split)")
			return
		}
		dm := make([]int, len(v.Type.Shape))
		for i := range dm {
			dm[i] = -1
		}
		dm[0] = 0
		v.Dist = &ir.TensorDist{Mesh: pm.Name, DimsMapping: dm}
		names = append(names, v.Name())
	}
	for _, op := range g.Ops {
		if op.Type == "feed" || op.Type == "pd_op.data" {
			for a := range op.OutputNames {
				mark(g.Var(a))
			}
		}
	}
	if len(names) == 0 {
		for _, v := range g.Vars() {
			if v.Has(ir.FlagIsData) {
				mark(v)
			}
		}
	}
	return names
}

func oneLineErr(err error) string {
	lines := strings.Split(err.Error(), "\n")
	s := lines[0]
	if len(lines) > 1 {
		s += fmt.Sprintf(" (and %d more)", len(lines)-1)
	}
	return strings.ReplaceAll(s, "|", "\\|")
}
