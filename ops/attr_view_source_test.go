package ops_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/distpass/distpass/ops"
)

// TestAttrsReadThroughTheTable: outside packages ir and ops, no code
// reads an attr the op table declares with ir.Attrs' typed getters
// (Int, Ints, Bool, Float) or a type assertion on Attrs.Get, which take
// one width and no default: such a
// read goes through the table's view (ops.AttrValue with ir.AsInt and
// the like, ops.AttrInt, AttrBool, AttrOn, ...), so that a long ring_id
// or an absent reduce_type means there what verify accepted it as. The
// attrs distpass writes for itself (origin_op, op_role) no def declares.
func TestAttrsReadThroughTheTable(t *testing.T) {
	declared := map[string]bool{}
	for _, d := range ops.All() {
		for _, a := range d.Attrs {
			declared[a.Name] = true
		}
	}
	getters := map[string]bool{"Int": true, "Ints": true, "Bool": true, "Float": true}
	widths := map[string]bool{"Int": true, "Long": true, "Ints": true, "Longs": true, "Bool": true, "Float": true, "Float64": true}
	fset := token.NewFileSet()
	n := 0
	err := filepath.WalkDir("..", func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.IsDir() {
			switch e.Name() {
			case "ir", "ops", "testdata", ".git":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		n++
		ast.Inspect(f, func(x ast.Node) bool {
			// op.Attrs.Get("axis").(ir.Int) is the same one-width read.
			if ta, ok := x.(*ast.TypeAssertExpr); ok {
				if sel, ok := ta.Type.(*ast.SelectorExpr); ok && widths[sel.Sel.Name] {
					if call, ok := ta.X.(*ast.CallExpr); ok {
						if name, ok := attrsCall(call, "Get"); ok && declared[name] {
							t.Errorf("%s: reads attr %s as ir.%s: read it through the op table (ops.AttrValue, AttrInt, ...)", fset.Position(ta.Pos()), name, sel.Sel.Name)
						}
					}
				}
				return true
			}
			call, ok := x.(*ast.CallExpr)
			if !ok || len(call.Args) != 1 {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok || !getters[sel.Sel.Name] {
				return true
			}
			if recv, ok := sel.X.(*ast.SelectorExpr); !ok || recv.Sel.Name != "Attrs" {
				return true
			}
			lit, ok := call.Args[0].(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			if name, _ := strconv.Unquote(lit.Value); declared[name] {
				t.Errorf("%s: reads attr %s with Attrs.%s: read it through the op table (ops.AttrValue, AttrInt, ...)", fset.Position(call.Pos()), name, sel.Sel.Name)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 100 {
		t.Fatalf("read %d Go files: want the repository's", n)
	}
}

// attrsCall reports the string literal argument of a call X.Attrs.method(lit).
func attrsCall(call *ast.CallExpr, method string) (string, bool) {
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != method || len(call.Args) != 1 {
		return "", false
	}
	if recv, ok := sel.X.(*ast.SelectorExpr); !ok || recv.Sel.Name != "Attrs" {
		return "", false
	}
	lit, ok := call.Args[0].(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return "", false
	}
	name, err := strconv.Unquote(lit.Value)
	return name, err == nil
}
