package complete_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/distpass/distpass/analysis"
	"github.com/distpass/distpass/check"
	"github.com/distpass/distpass/complete"
	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/models"
	"github.com/google/go-cmp/cmp"
)

// zooCase is one model × strategy of `distpass example`.
type zooCase struct {
	name  string
	build func() (*ir.Module, error)
	// keepOps lists op types whose hand-written dists stay, as a user
	// annotates an op; with keepOuts, their output vars' too.
	keepOps  []string
	keepOuts bool
}

func zoo() []zooCase {
	mesh1 := func(dim string) *ir.ProcessMesh { return models.Mesh([]int{2}, []string{dim}) }
	mesh2 := func(a, b string) *ir.ProcessMesh { return models.Mesh([]int{2, 2}, []string{a, b}) }
	mlp := func(s string, pm *ir.ProcessMesh) func() (*ir.Module, error) {
		return func() (*ir.Module, error) {
			return models.MLPTraining(models.MLPConfig{Layers: 2, Hidden: 8, Batch: 4, DType: ir.F64}, s, pm, "sgd")
		}
	}
	gpt := func(s string, pm *ir.ProcessMesh) func() (*ir.Module, error) {
		return func() (*ir.Module, error) {
			cfg := models.TinyGPT()
			cfg.Hidden, cfg.Vocab, cfg.Seq, cfg.DType = 16, 32, 4, ir.F64
			return models.GPTTraining(cfg, s, pm, "sgd")
		}
	}
	moe := func(s string, pm *ir.ProcessMesh) func() (*ir.Module, error) {
		return func() (*ir.Module, error) {
			return models.MoETraining(models.MoEConfig{Tokens: 8, Model: 4, Hidden: 8, Experts: 4, TopK: 2, DType: ir.F64}, s, pm, "sgd")
		}
	}
	return []zooCase{
		{"mlp dp", mlp("dp", mesh1("dp")), nil, false},
		{"mlp mp", mlp("mp", mesh1("mp")), nil, false},
		{"mlp dp,mp", mlp("dp,mp", mesh2("dp", "mp")), nil, false},
		{"gpt dp", gpt("dp", mesh1("dp")), nil, false},
		{"gpt mp (vocab-parallel embedding)", gpt("mp", mesh1("mp")), nil, false},
		{"gpt dp,mp", gpt("dp,mp", mesh2("dp", "mp")), nil, false},
		{"moe ep", moe("ep", mesh1("ep")), nil, false},
		{"moe dp,ep", moe("dp,ep", mesh2("dp", "ep")), nil, false},
		// The dispatch's gather and scatter index each rank's own rows
		// (their indices come from its own counts): annotated, they are
		// kept, and the rest completes.
		{"moe ep, dispatch ops annotated", moe("ep", mesh1("ep")), []string{"gather", "scatter", "gather_grad", "scatter_grad"}, false},
		// With two meshes, the exchanges also move the rows between them:
		// what mesh their outputs live on is annotated too.
		{"moe dp,ep, dispatch and exchange ops annotated", moe("dp,ep", mesh2("dp", "ep")),
			[]string{"gather", "scatter", "gather_grad", "scatter_grad", "alltoall", "global_scatter", "global_gather"}, true},
	}
}

// TestZoo holds every strategy of `distpass example` (and a few more
// shapes: handwrittenCases), which are now seeds that complete finishes,
// to the hand-written strategies they replaced: testdata/handwritten.txt
// is what those gave, recorded by their last version (every var's dist,
// every op's mesh and arg mappings, a digest of each rank's program up to
// impl names). It is the record of code that is gone: DISTPASS_UPDATE
// does not rewrite it. Every module must pass check as well.
func TestZoo(t *testing.T) {
	var sb strings.Builder
	for _, c := range handwrittenCases() {
		m, err := c.build()
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		fmt.Fprintf(&sb, "## %s\n\n%s\n", c.name, record(m))
		if err := annotationsErr(m); err != nil {
			t.Errorf("%s: check-annotations: %v", c.name, err)
			continue
		}
		if cr, err := check.Run(context.Background(), m, check.Options{}); err != nil {
			t.Errorf("%s: check: %v", c.name, err)
		} else if err := cr.Err(); err != nil {
			t.Errorf("%s: check: %v", c.name, err)
		}
	}
	want, err := os.ReadFile(filepath.Join("testdata", "handwritten.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(strings.Split(string(want), "\n"), strings.Split(sb.String(), "\n")); d != "" {
		t.Errorf("the strategies differ from the hand-written ones (-hand-written +now):\n%s", d)
	}
}

// TestZooExchangesSeeded: "moe dp,ep" completed from its data and
// params alone puts its combine on the experts' mesh, which
// check-annotations refuses; which is why the strategy seeds its
// exchanges and dispatch ops (models.moeSeeds).
func TestZooExchangesSeeded(t *testing.T) {
	m, err := models.MoETraining(models.MoEConfig{Tokens: 8, Model: 4, Hidden: 8, Experts: 4, TopK: 2, DType: ir.F64}, "dp,ep",
		models.Mesh([]int{2, 2}, []string{"dp", "ep"}), "sgd")
	if err != nil {
		t.Fatal(err)
	}
	strip(m, nil)
	if _, err := complete.Complete(m, complete.Options{}); err != nil {
		t.Fatal(err)
	}
	const want = "op 22 scatter: Ids pos holds positions into each rank's own rows"
	if err := annotationsErr(m); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("check-annotations: %v\nwant %s", err, want)
	}
}

// implName matches an impl's name in printed IR: in op dists and in the
// origin attrs of the ops an impl emitted.
var implName = regexp.MustCompile(`(impl |origin = ")[a-z0-9_]+:[0-9]+`)

func annotationsErr(m *ir.Module) error {
	ar, err := analysis.Get[*analysis.AnnotationReport](analysis.NewCache(m), analysis.Annotations)
	if err != nil {
		return err
	}
	return ar.Err()
}

// compareDists lists where got's dists differ from want's.
func compareDists(want, got *ir.Module) []string {
	var out []string
	for bi, wb := range want.Main.Blocks {
		gb := got.Main.Blocks[bi]
		for _, wv := range wb.Vars() {
			gv := gb.Var(wv.Name())
			if gv == nil || !wv.Type.IsTensor() {
				continue
			}
			if w, g := spellTensor(wv.Dist), spellTensor(gv.Dist); w != g {
				out = append(out, fmt.Sprintf("var %s: hand-written %s, completed %s", wv.Name(), w, g))
			}
		}
		for i, wop := range wb.Ops {
			gop := gb.Ops[i]
			w, g := wop.Dist, gop.Dist
			if w == nil || g == nil {
				if (w == nil) != (g == nil) {
					out = append(out, fmt.Sprintf("%s: hand-written dist %v, completed %v", wop, w != nil, g != nil))
				}
				continue
			}
			if w.ImplType != g.ImplType || w.ImplIndex != g.ImplIndex {
				out = append(out, fmt.Sprintf("%s: hand-written impl %s:%d, completed %s:%d", wop, w.ImplType, w.ImplIndex, g.ImplType, g.ImplIndex))
			}
			if d := argDiff(w.Inputs, g.Inputs); d != "" {
				out = append(out, fmt.Sprintf("%s: reads %s", wop, d))
			}
			if d := argDiff(w.Outputs, g.Outputs); d != "" {
				out = append(out, fmt.Sprintf("%s: gives %s", wop, d))
			}
		}
	}
	return out
}

// argDiff spells the args whose mappings differ: "x as [0, -1]
// (hand-written [-1, -1])", in want's order, then got's extra args.
func argDiff(want, got []ir.ArgDist) string {
	var parts []string
	find := func(as []ir.ArgDist, name string) (string, bool) {
		for _, a := range as {
			if a.Name == name {
				return ir.FormatInts(a.DimsMapping), true
			}
		}
		return "none", false
	}
	for _, w := range want {
		g, _ := find(got, w.Name)
		if wm := ir.FormatInts(w.DimsMapping); g != wm {
			parts = append(parts, fmt.Sprintf("%s as %s (hand-written %s)", w.Name, g, wm))
		}
	}
	for _, g := range got {
		if _, ok := find(want, g.Name); !ok {
			parts = append(parts, fmt.Sprintf("%s as %s (hand-written none)", g.Name, ir.FormatInts(g.DimsMapping)))
		}
	}
	return strings.Join(parts, ", ")
}

func spellTensor(d *ir.TensorDist) string {
	if d == nil {
		return "none"
	}
	s := "@" + d.Mesh + ir.FormatInts(d.DimsMapping)
	if len(d.Partial) > 0 {
		var ps []string
		for _, p := range d.Partial {
			ps = append(ps, fmt.Sprintf("%d:%s", p.Dim, p.Reduce))
		}
		s += " partial [" + strings.Join(ps, ", ") + "]"
	}
	if len(d.Local) > 0 {
		s += " local " + ir.FormatInts(d.Local)
	}
	return s
}

// golden compares got with testdata/name, or rewrites it when
// DISTPASS_UPDATE is set.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if os.Getenv("DISTPASS_UPDATE") != "" {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (DISTPASS_UPDATE=1 writes it)", err)
	}
	if d := cmp.Diff(strings.Split(string(want), "\n"), strings.Split(got, "\n")); d != "" {
		t.Errorf("%s differs (-want +got):\n%s", path, d)
	}
}
