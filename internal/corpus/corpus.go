// Package corpus gathers the modules that the repository's invariant
// tests (immutability, determinism, shuffle equivalence) run over: the
// input of every golden case, and the annotated training modules that
// `distpass example` prints for MLP, GPT and MoE. It also holds the
// helpers those tests share: a snapshot that tells whether a module
// changed; Scribble, which overwrites a module's memory in place to
// reveal memory it shares with another; ShuffleOps, which reorders
// independent ops; and Canon, a form of a module that does not depend
// on that order.
//
// It is test support: every function takes a testing.TB and fails it on
// a broken corpus.
package corpus

import (
	"bytes"
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/diff"
	"github.com/rogpeppe/go-internal/txtar"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/models"
)

// Case is one module of the corpus.
type Case struct {
	// Name is "golden/NAME" or "model/WHAT".
	Name string
	// Module is the serial, annotated module: a fresh one per call of
	// Golden, Models or All, the caller's to change.
	Module *ir.Module
	// Pipeline is a golden case's pipeline, with $RANK for the rank;
	// "partition{rank=$RANK}" for a model.
	Pipeline string
	// Ranks are the ranks the case expects output for: a golden case's
	// want/rankN files, every rank of a model's mesh.
	Ranks []int
	// Want holds a golden case's expected text per rank: the program, or
	// the error followed by a newline. Nil for a model.
	Want map[int][]byte
	// WantErr is set when every expected output is an error.
	WantErr bool
	// Runnable is set when `distpass check` can run the case: the
	// simulator has kernels for all of its ops and the partition works
	// (every golden case that expects programs its pipeline partitioned,
	// and every model; a case of the passes before partition, such as
	// complete,insert-reshards, has an input check cannot partition).
	Runnable bool
}

// PipelineFor returns the case's pipeline text for rank.
func (c *Case) PipelineFor(rank int) string {
	return strings.ReplaceAll(c.Pipeline, "$RANK", strconv.Itoa(rank))
}

// Dir is the directory of the golden cases.
func Dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "golden", "testdata")
}

// Golden returns the input of every golden case, in file name order.
func Golden(t testing.TB) []Case {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(Dir(), "*.txtar"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden cases in %s: %v", Dir(), err)
	}
	var cs []Case
	for _, f := range files {
		ar, err := txtar.ParseFile(f)
		if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimSuffix(filepath.Base(f), ".txtar")
		c := Case{Name: "golden/" + name, Want: map[int][]byte{}, WantErr: true}
		for _, sec := range ar.Files {
			switch {
			case sec.Name == "input.dpir":
				if c.Module, err = ir.Parse(f+":input.dpir", sec.Data); err != nil {
					t.Fatal(err)
				}
			case sec.Name == "pipeline":
				c.Pipeline = strings.TrimSpace(string(sec.Data))
			case strings.HasPrefix(sec.Name, "want/rank"):
				rest := strings.TrimPrefix(sec.Name, "want/rank")
				num, ext, _ := strings.Cut(rest, ".")
				r, err := strconv.Atoi(num)
				if err != nil || ext == "dot" {
					continue
				}
				c.Ranks = append(c.Ranks, r)
				c.Want[r] = sec.Data
				if ext == "dpir" {
					c.WantErr = false
				}
			}
		}
		if c.Module == nil || c.Pipeline == "" || len(c.Ranks) == 0 {
			t.Fatalf("%s: no input, pipeline or expected output", f)
		}
		slices.Sort(c.Ranks)
		c.Runnable = !c.WantErr && strings.Contains(c.Pipeline, "partition")
		cs = append(cs, c)
	}
	return cs
}

// Models returns annotated training modules of the example models, as
// `distpass example` builds them, small enough for the simulator: an MLP
// under dp,mp and dp (adam), a 2-layer GPT under dp,mp and, with MoE
// MLPs, under ep, and the MoE layer under ep and dp,ep (momentum).
func Models(t testing.TB) []Case {
	t.Helper()
	var cs []Case
	add := func(name string, m *ir.Module, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("model %s: %v", name, err)
		}
		var ranks []int
		for _, pm := range m.Meshes {
			ranks = append(ranks, pm.ProcessIDs...)
		}
		slices.Sort(ranks)
		cs = append(cs, Case{Name: "model/" + name, Module: m, Pipeline: "partition{rank=$RANK}",
			Ranks: slices.Compact(ranks), Runnable: true})
	}
	mesh := func(shape []int, dims string) *ir.ProcessMesh {
		return models.Mesh(shape, strings.Split(dims, ","))
	}
	mlp := models.MLPConfig{Layers: 2, Hidden: 16, Batch: 8, DType: ir.F64}
	m, err := models.MLPTraining(mlp, "dp,mp", mesh([]int{2, 2}, "dp,mp"), "sgd")
	add("mlp-dp,mp", m, err)
	m, err = models.MLPTraining(mlp, "dp", mesh([]int{2}, "dp"), "adam")
	add("mlp-dp-adam", m, err)

	gpt := models.TinyGPT()
	gpt.Layers, gpt.DType = 2, ir.F64
	m, err = models.GPTTraining(gpt, "dp,mp", mesh([]int{2, 2}, "dp,mp"), "sgd")
	add("gpt-dp,mp", m, err)
	gpt.MoEEvery, gpt.Experts, gpt.TopK = 2, 4, 2
	m, err = models.GPTTraining(gpt, "ep", mesh([]int{2}, "ep"), "sgd")
	add("gpt-moe-ep", m, err)

	moe := models.MoEConfig{Tokens: 8, Model: 4, Hidden: 8, Experts: 4, TopK: 2, DType: ir.F64}
	m, err = models.MoETraining(moe, "ep", mesh([]int{2}, "ep"), "sgd")
	add("moe-ep", m, err)
	m, err = models.MoETraining(moe, "dp,ep", mesh([]int{2, 2}, "dp,ep"), "momentum")
	add("moe-dp,ep-momentum", m, err)
	return cs
}

// All returns Golden, then Models.
func All(t testing.TB) []Case {
	t.Helper()
	return append(Golden(t), Models(t)...)
}

// Snapshot is a module's text and structural hash at one moment.
type Snapshot struct {
	Text []byte
	Hash uint64
}

// Take snapshots m.
func Take(m *ir.Module) Snapshot { return Snapshot{Text: ir.Print(m), Hash: ir.Hash(m)} }

// Unchanged fails t, with a diff, when m no longer prints and hashes as
// it did when s was taken; what names the operation that ran in between.
func (s Snapshot) Unchanged(t testing.TB, m *ir.Module, what string) bool {
	t.Helper()
	now := Take(m)
	if !bytes.Equal(now.Text, s.Text) {
		t.Errorf("%s changed its input module:\n%s", what, diff.Diff("before", s.Text, "after", now.Text))
		return false
	}
	if now.Hash != s.Hash {
		t.Errorf("%s changed its input module's hash (%016x to %016x) but not its text", what, s.Hash, now.Hash)
		return false
	}
	return true
}

// Scribble overwrites, in place, every piece of m's memory that a pass
// could change in place without reallocating: each element of every
// slice (shapes, mappings, mesh and group lists, attr values, slot
// args), and each field of every var, op and mesh reached through a
// pointer. A module that shares any of that memory with another changes
// the other too; run it on an operation's result, and compare the input
// with a snapshot, to prove the two share nothing.
func Scribble(m *ir.Module) {
	const mark = "~"
	if m.Name != "" { // an empty name prints no line
		m.Name += mark
	}
	for i := range m.Attrs {
		scribbleAttr(&m.Attrs[i])
	}
	for _, pm := range m.Meshes {
		pm.Name += mark
		incr(pm.Shape)
		incr(pm.ProcessIDs)
		for i := range pm.DimNames {
			pm.DimNames[i] += mark
		}
	}
	for i := range m.Groups {
		m.Groups[i].ID++
		incr(m.Groups[i].Ranks)
	}
	for i := range m.ParamGrads {
		m.ParamGrads[i].Param += mark
		m.ParamGrads[i].Grad += mark
	}
	for _, p := range m.Programs() {
		p.Name += mark
		p.Rank += 7
		for _, b := range p.Blocks {
			b.Parent += 7
			b.Forward += 7
			for _, v := range b.Vars() {
				// Not the name: the block indexes its vars by name.
				v.Kind ^= 1
				v.Flags ^= 0x15
				scribbleType(&v.Type)
				for i := range v.Attrs {
					scribbleAttr(&v.Attrs[i])
				}
				if d := v.Dist; d != nil {
					d.Mesh += mark
					incr(d.DimsMapping)
					for i := range d.Partial {
						d.Partial[i].Dim++
					}
				}
			}
			for _, op := range b.Ops {
				op.ID += 1000
				op.Type += mark
				op.Role ^= 0x40
				op.Fwd += 1000
				for _, ss := range [2][]ir.Slot{op.Inputs, op.Outputs} {
					for i := range ss {
						ss[i].Name += mark
						for j := range ss[i].Args {
							ss[i].Args[j] += mark
						}
					}
				}
				for i := range op.Attrs {
					scribbleAttr(&op.Attrs[i])
				}
				if d := op.Dist; d != nil {
					d.Mesh += mark
					d.ImplType += mark
					d.ImplIndex++
					d.Recompute = !d.Recompute
					for _, as := range [2][]ir.ArgDist{d.Inputs, d.Outputs} {
						for i := range as {
							as[i].Name += mark
							incr(as[i].DimsMapping)
						}
					}
				}
			}
		}
	}
}

func scribbleType(t *ir.Type) {
	t.LoD++
	incr(t.Shape)
	for i := range t.Elems {
		scribbleType(&t.Elems[i])
	}
}

type integer interface{ ~int | ~int64 }

func incr[T integer](xs []T) {
	for i := range xs {
		xs[i] += 3
	}
}

func scribbleAttr(a *ir.Attr) {
	a.Name += "~"
	switch v := a.Value.(type) {
	case ir.Bools:
		for i := range v {
			v[i] = !v[i]
		}
	case ir.Ints:
		incr(v)
	case ir.Longs:
		incr(v)
	case ir.BlockRefs:
		incr(v)
	case ir.Floats:
		for i := range v {
			v[i] += 0.5
		}
	case ir.Float64s:
		for i := range v {
			v[i] += 0.5
		}
	case ir.Strings:
		for i := range v {
			v[i] += "~"
		}
	case ir.VarRefs:
		for i := range v {
			v[i] += "~"
		}
	case ir.Scalars:
		for i := range v {
			v[i].I++
		}
	default:
		// A scalar value is copied with the Attr: replacing it shows
		// only if the Attr itself is shared.
		a.Value = ir.String(fmt.Sprint(v) + "~")
	}
}

// Repeats reports whether a case is one that, under the race detector,
// a test running the simulator over the corpus may leave out: the
// one-layer GPTs of the golden cases, which model/gpt-dp,mp and
// model/gpt-moe-ep cover with the same ops and more.
func (c *Case) Repeats() bool {
	return RaceDetector && strings.HasPrefix(c.Name, "golden/gpt1_")
}
