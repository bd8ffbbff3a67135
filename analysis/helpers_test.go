package analysis_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/distpass/distpass/analysis"
	"github.com/distpass/distpass/ir"
)

// example parses examples/name.
func example(t testing.TB, name string) *ir.Module {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("..", "examples", name))
	if err != nil {
		t.Fatal(err)
	}
	m, err := ir.Parse(name, src)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// parse parses a module written in a test.
func parse(t testing.TB, src string) *ir.Module {
	t.Helper()
	m, err := ir.ParseString(t.Name(), src)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// get is analysis.Get that fails the test on an error.
func get[T any](t testing.TB, c *analysis.Cache, a *analysis.Analyzer) T {
	t.Helper()
	r, err := analysis.Get[T](c, a)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// ids writes refs as the ids of their ops in p: "4 6".
func ids(p *ir.Program, refs []analysis.OpRef) string {
	var sb strings.Builder
	for i, r := range refs {
		if i > 0 {
			sb.WriteByte(' ')
		}
		if op := r.Op(p); op != nil {
			sb.WriteString(strconv.FormatInt(op.ID, 10))
		} else {
			sb.WriteString("?")
		}
	}
	return sb.String()
}

// varID writes a VarID as "b0:x".
func varID(id analysis.VarID) string {
	if id.Prog == nil {
		return "-"
	}
	return "b" + strconv.Itoa(id.Block) + ":" + id.Name
}
