package ops_test

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/distpass/distpass/internal/corpus"
	"github.com/distpass/distpass/interop/paddle"
	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/ops"
	"github.com/distpass/distpass/passes"
)

// customOps are the op types of the corpus that are user ops by design:
// Paddle's demo custom op gap, and all_kinds.dpir's demo. They stay
// undefined, so that verify's acceptance of undefined ops stays tested.
var customOps = []string{"demo", "gap"}

// corpusModule is one module of the corpus the table must cover.
type corpusModule struct {
	name string
	m    *ir.Module
}

// opCorpus returns every module the table must define the ops of: the
// golden inputs and their per-rank outputs, the model zoo and its
// per-rank programs, examples/, and every Paddle program of the import
// testdata and the shared fixtures.
func opCorpus(t *testing.T) []corpusModule {
	t.Helper()
	var ms []corpusModule
	for _, c := range corpus.All(t) {
		ms = append(ms, corpusModule{c.Name, c.Module})
		switch {
		case c.Want != nil && !c.WantErr:
			for _, r := range slices.Sorted(func(yield func(int) bool) {
				for r := range c.Want {
					if !yield(r) {
						return
					}
				}
			}) {
				m, err := ir.Parse(c.Name, c.Want[r])
				if err != nil {
					continue // an error want, or a non-module output
				}
				ms = append(ms, corpusModule{c.Name + "/rank" + itoa(r), m})
			}
		case c.Want == nil:
			for _, r := range c.Ranks {
				m := c.Module.Clone()
				if err := passes.Partition(m, nil, r); err != nil {
					t.Fatalf("%s rank %d: %v", c.Name, r, err)
				}
				ms = append(ms, corpusModule{c.Name + "/rank" + itoa(r), m})
			}
		}
	}
	var files []string
	for _, g := range []string{"../examples/*.dpir", "../interop/paddle/testdata/*.dpir",
		"../interop/paddle/testdata/*.pdmodel", "../interop/paddle/testdata/*.json",
		"../../shared/fixtures/paddle/*.pdmodel", "../../shared/fixtures/paddle/*.json"} {
		fs, _ := filepath.Glob(g)
		files = append(files, fs...)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var m *ir.Module
		switch {
		case strings.HasSuffix(f, ".dpir"):
			m, err = ir.Parse(f, data)
		case paddle.IsPIR(data):
			m, err = paddle.ImportPIR(f, data)
		default:
			m, err = paddle.Import(f, data)
		}
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		ms = append(ms, corpusModule{f, m})
	}
	return ms
}

func itoa(i int) string { return strconv.Itoa(i) }

// TestCorpusCoverage walks the corpus and fails on any op type without a
// definition (but the custom ops); it logs the types it found.
func TestCorpusCoverage(t *testing.T) {
	found := map[string]string{} // type -> first module
	for _, cm := range opCorpus(t) {
		for _, p := range cm.m.Programs() {
			for _, b := range p.Blocks {
				for _, op := range b.Ops {
					if _, ok := found[op.Type]; !ok {
						found[op.Type] = cm.name
					}
				}
			}
		}
	}
	types := slices.Sorted(func(yield func(string) bool) {
		for k := range found {
			if !yield(k) {
				return
			}
		}
	})
	t.Logf("%d op types found: %s", len(types), strings.Join(types, " "))
	for _, typ := range types {
		if ops.Lookup(typ) == nil && !slices.Contains(customOps, typ) {
			t.Errorf("op type %s (first in %s) has no definition", typ, found[typ])
		}
	}
	for _, c := range customOps {
		if _, ok := found[c]; !ok {
			t.Errorf("custom op %s is no longer in the corpus", c)
		}
		if ops.Lookup(c) != nil {
			t.Errorf("custom op %s has a definition", c)
		}
	}
}

// TestCorpusVerifies: every module of the corpus that passes ir.Verify
// (the golden inputs of error cases do not, on purpose) passes Verify
// with the table's rules.
func TestCorpusVerifies(t *testing.T) {
	for _, cm := range opCorpus(t) {
		if ir.Verify(cm.m) != nil {
			continue
		}
		if _, err := ops.Verify(cm.m, ops.Options{}); err != nil {
			t.Errorf("%s:\n%v", cm.name, err)
		}
	}
}
