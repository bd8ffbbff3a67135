package analysis_test

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/distpass/distpass/analysis"
	"github.com/distpass/distpass/internal/irgen"
	"github.com/distpass/distpass/ir"
)

// localShapes lists the local shape of every var of p: "b0:x [4, 16] in".
func localShapes(t *testing.T, ls *analysis.LocalShapeInfo, p *ir.Program) []string {
	t.Helper()
	var out []string
	for bi, b := range p.Blocks {
		for j, v := range b.Vars() {
			s, ok := ls.Of(p, bi, v.Name())
			if !ok {
				t.Fatalf("no local shape for b%d:%s", bi, v.Name())
			}
			if s2, _ := ls.OfVar(analysis.VarID{Prog: p, Block: bi, Name: v.Name()}); !cmp.Equal(s, s2) {
				t.Errorf("OfVar(b%d:%s) = %v, Of = %v", bi, v.Name(), s2, s)
			}
			if s2, ok := ls.OfPos(p, bi, j); !ok || !cmp.Equal(s, s2) {
				t.Errorf("OfPos(b%d, %d) = %v, %v; Of(%s) = %v", bi, j, s2, ok, v.Name(), s)
			}
			out = append(out, fmt.Sprintf("b%d:%s %s", bi, v.Name(), fmtShape(s)))
		}
	}
	return out
}

func fmtShape(s analysis.LocalShape) string {
	str := "-"
	if s.Shape != nil {
		str = fmt.Sprint(s.Shape)
	}
	if s.InMesh {
		str += " in"
	}
	return str
}

func TestLocalShapesMLPRank3(t *testing.T) {
	m := example(t, "mlp_dp_mp.dpir")
	ls := get[*analysis.LocalShapeInfo](t, analysis.NewCache(m), analysis.LocalShapes(3))
	if ls.Rank != 3 {
		t.Errorf("Rank = %d", ls.Rank)
	}
	// Rank 3 is at (1, 1) of the 2x2 mesh; both mesh dims have size 2.
	wantMain := []string{
		"b0:x [4 16] in",        // [8, 16] @[0, -1]
		"b0:w1 [16 16] in",      // [16, 32] @[-1, 1]
		"b0:w2 [16 16] in",      // [32, 16] @[1, -1]
		"b0:lr [1] in",          // [1] @[-1]
		"b0:h1 [4 16] in",       // [8, 32] @[0, 1]
		"b0:a1 [4 16] in",       // [8, 32] @[0, 1]
		"b0:h2 [4 16] in",       // [8, 16] @[0, -1]
		"b0:loss [] in",         // [] @[] partial
		"b0:loss@GRAD [] in",    // [] @[]
		"b0:h2@GRAD [4 16] in",  // [8, 16] @[0, -1]
		"b0:a1@GRAD [4 16] in",  // [8, 32] @[0, 1]
		"b0:h1@GRAD [4 16] in",  // [8, 32] @[0, 1]
		"b0:w1@GRAD [16 16] in", // [16, 32] @[-1, 1]
		"b0:w2@GRAD [16 16] in", // [32, 16] @[1, -1]
	}
	if diff := cmp.Diff(wantMain, localShapes(t, ls, m.Main)); diff != "" {
		t.Errorf("main (-want +got):\n%s", diff)
	}
	wantStartup := []string{"b0:w1 [16 16] in", "b0:w2 [16 16] in", "b0:lr [1] in"}
	if diff := cmp.Diff(wantStartup, localShapes(t, ls, m.Startup)); diff != "" {
		t.Errorf("startup (-want +got):\n%s", diff)
	}
	if _, ok := ls.Of(m.Main, 0, "nothing"); ok {
		t.Error("a local shape for an undeclared var")
	}
	for _, c := range [][2]int{{0, -1}, {0, m.Main.Global().NumVars()}, {-1, 0}, {len(m.Main.Blocks), 0}} {
		if _, ok := ls.OfPos(m.Main, c[0], c[1]); ok {
			t.Errorf("OfPos(block %d, %d) found a var past the table", c[0], c[1])
		}
	}
}

func TestLocalShapesWhileLoop(t *testing.T) {
	m := example(t, "while_loop.dpir")
	ls := get[*analysis.LocalShapeInfo](t, analysis.NewCache(m), analysis.LocalShapes(0))
	// No dists: every shape is global, and no var is on a mesh.
	want := []string{"b0:x [4 8]", "b0:i [1]", "b0:n [1]", "b0:cond [1]", "b0:scopes -", "b1:x_next [4 8]"}
	if diff := cmp.Diff(want, localShapes(t, ls, m.Main)); diff != "" {
		t.Errorf("main (-want +got):\n%s", diff)
	}
}

func TestLocalShapesMeshesAndStartup(t *testing.T) {
	m := parse(t, `
mesh world shape [2, 4] dims [dp, mp] ranks [0, 1, 2, 3, 4, 5, 6, 7]
mesh half shape [2] dims [pp] ranks [4, 6]

program main {
  block 0 {
    var x : f32[-1, 16, 8] @world[0, 1, -1]
    var y : f32[6, 8] @half[-1, 0]
    param w : f32[16, 8] @world[1, 0]
    var nodist : f32[3]
  }
  block 1 parent 0 {
    var z : f32[4] @world[1]
  }
}

program startup {
  block 0 {
    param w : f32[16, 8]
    persist own : f32[8] @half[0]
  }
}
`)
	c := analysis.NewCache(m)
	for rank, want := range map[int][]string{
		// The -1 dim stays; x is on world, y on half.
		3: {"b0:x [-1 4 8] in", "b0:y [6 4]", "b0:w [4 4] in", "b0:nodist [3]", "b1:z [1] in"},
		6: {"b0:x [-1 4 8] in", "b0:y [6 4] in", "b0:w [4 4] in", "b0:nodist [3]", "b1:z [1] in"},
		9: {"b0:x [-1 4 8]", "b0:y [6 4]", "b0:w [4 4]", "b0:nodist [3]", "b1:z [1]"},
	} {
		ls := get[*analysis.LocalShapeInfo](t, c, analysis.LocalShapes(rank))
		if diff := cmp.Diff(want, localShapes(t, ls, m.Main)); diff != "" {
			t.Errorf("rank %d main (-want +got):\n%s", rank, diff)
		}
	}
	// The startup w has no dist of its own and follows main's w.
	ls := get[*analysis.LocalShapeInfo](t, c, analysis.LocalShapes(4))
	if diff := cmp.Diff([]string{"b0:w [4 4] in", "b0:own [4] in"}, localShapes(t, ls, m.Startup)); diff != "" {
		t.Errorf("startup (-want +got):\n%s", diff)
	}
}

func TestLocalShapesErrors(t *testing.T) {
	m := parse(t, `
mesh world shape [2, 2] dims [dp, mp] ranks [0, 1, 2, 3]
program main {
  block 0 {
    var fine : f32[8, 8] @world[0, 1]
    var a : f32[7, 8] @world[0, 1]
    var b : f32[8, 6] @world[-1, 3]
  }
  block 1 parent 0 {
    var c : f32[2, 5] @world[-1, 1]
    var d : f32[4] @gone[0]
  }
}
`)
	c := analysis.NewCache(m)
	_, err := analysis.Get[*analysis.LocalShapeInfo](c, analysis.LocalShapes(1))
	want := `local-shapes{rank=1}: main block 0: var a: dims_mapping [0, 1]: dim 0 of size 7 does not split evenly over mesh dim 0 (dp) of size 2
main block 0: var b: dims_mapping [-1, 3] has entry 3 outside [-1, 2) of mesh world
main block 1: var c: dims_mapping [-1, 1]: dim 1 of size 5 does not split evenly over mesh dim 1 (mp) of size 2
main block 1: var d: dist on unknown mesh gone`
	if err == nil || err.Error() != want {
		t.Errorf("error:\ngot  %v\nwant %s", err, want)
	}

	_, err = analysis.Get[*analysis.LocalShapeInfo](c, analysis.LocalShapes(-1))
	if want := "local-shapes{rank=-1}: rank -1 is negative"; err == nil || err.Error() != want {
		t.Errorf("error = %v, want %s", err, want)
	}
}

func TestLocalShapesSynthetic(t *testing.T) {
	m := irgen.Synthetic(200)
	c := analysis.NewCache(m)
	for rank := range 4 {
		ls := get[*analysis.LocalShapeInfo](t, c, analysis.LocalShapes(rank))
		s, _ := ls.Of(m.Main, 0, "l0.w")
		if want := "[64 32] in"; fmtShape(s) != want {
			t.Errorf("rank %d: l0.w %s, want %s", rank, fmtShape(s), want)
		}
	}
}
