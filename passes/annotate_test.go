package passes_test

import (
	"strings"
	"testing"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/passes"
)

const annotateSrc = `mesh old shape [2] dims [dp] ranks [0, 1]
program main {
  block 0 {
    var x : f32[4, 8] {is_data}
    param w : f32[8, 6] {trainable}
    var y : f32[4, 6] @old[-1, -1]
    op 1 matmul_v2(X: x, Y: w) -> (Out: y) {trans_x = false, trans_y = false}
  }
}
`

// annotate declares a mesh and gives a var a dist in the text format's
// words; a mesh declared alike is kept; each refusal leaves the module
// as it was and says why.
func TestAnnotate(t *testing.T) {
	m := parseModule(t, annotateSrc)
	err := run(t, testRegistry(t), `annotate{mesh="world shape [2, 2] dims [dp, mp] ranks [0, 1, 2, 3]",var="w @world[-1, 1]"},`+
		`annotate{mesh="world shape [2, 2] dims [dp, mp] ranks [0, 1, 2, 3]",var="x @world[0, -1]"}`, m)
	if err != nil {
		t.Fatal(err)
	}
	got := string(ir.Print(m))
	for _, want := range []string{
		"mesh world shape [2, 2] dims [dp, mp] ranks [0, 1, 2, 3]\n",
		"var x : f32[4, 8] @world[0, -1] {is_data}\n",
		"param w : f32[8, 6] @world[-1, 1] {trainable}\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("no %q in\n%s", want, got)
		}
	}
	if len(m.Meshes) != 2 {
		t.Errorf("%d meshes, want 2", len(m.Meshes))
	}

	for _, c := range []struct{ mesh, v, want string }{
		{"", "", `give mesh="NAME shape [..] dims [..] ranks [..]" or var="NAME @MESH[..]", or both`},
		{"old shape [4] dims [dp] ranks [0, 1, 2, 3]", "", "mesh old is declared already, otherwise"},
		{"m2 shape [2] dims [dp]", "", `mesh:1:23: expected "ranks", found end of file`},
		{"", "z @old[0]", `var="z @old[0]": the main program's global block declares no var z`},
		{"", "w", `var="w": want a var name, a space and its dist (@MESH[..])`},
		{"", "y @old[0, -1]", "var y has a dist already (@old[-1, -1])"},
		{"", "w @old[0 1]", `var w:1:8: expected ",", found integer "1"`},
		{"", "w @nowhere[-1, -1]", "main block 0: var w: dist on unknown mesh nowhere"},
		{"", "w @old[0]", "main block 0: var w: dims_mapping [0] has length 1, tensor rank is 2"},
		{"m3 shape [2] dims [dp] ranks [0, 1]", "w @m3[0, 0]", "main block 0: var w: dims_mapping [0, 0] uses mesh dim 0 twice"},
	} {
		m := parseModule(t, annotateSrc)
		before := string(ir.Print(m))
		err := passes.Annotate(m, c.mesh, c.v)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Annotate(%q, %q) = %v, want an error with %q", c.mesh, c.v, err, c.want)
		}
		if string(ir.Print(m)) != before {
			t.Errorf("Annotate(%q, %q) changed the module", c.mesh, c.v)
		}
	}
}
