package analysis_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/distpass/distpass/analysis"
	"github.com/distpass/distpass/internal/irgen"
	"github.com/distpass/distpass/ir"
)

func problems(t *testing.T, m *ir.Module) []string {
	t.Helper()
	r := get[*analysis.AnnotationReport](t, analysis.NewCache(m), analysis.Annotations)
	var out []string
	for _, p := range r.Problems {
		out = append(out, p.Error())
	}
	if (len(out) == 0) != r.Complete() || (r.Err() == nil) != r.Complete() {
		t.Errorf("Complete() = %v, Err() = %v with %d problems", r.Complete(), r.Err(), len(out))
	}
	if err := r.Err(); err != nil && err.Error() != strings.Join(out, "\n") {
		t.Errorf("Err() = %q, want the problems one a line", err)
	}
	return out
}

func TestAnnotationsComplete(t *testing.T) {
	for name, m := range map[string]*ir.Module{
		"mlp_dp_mp.dpir":  example(t, "mlp_dp_mp.dpir"),
		"synthetic(1000)": irgen.Synthetic(1000),
	} {
		if got := problems(t, m); len(got) != 0 {
			t.Errorf("%s: %d problems:\n%s", name, len(got), strings.Join(got, "\n"))
		}
	}
}

// The while loop has no annotations at all: every dense var and every op
// is reported, the step scopes (no shape) are not.
func TestAnnotationsWhileLoop(t *testing.T) {
	want := []string{
		"main block 0: var x: no dist",
		"main block 0: var i: no dist",
		"main block 0: var n: no dist",
		"main block 0: var cond: no dist",
		"main block 0: op 1 fill_constant: no dist",
		"main block 0: op 2 fill_constant: no dist",
		"main block 0: op 3 less_than: no dist",
		"main block 0: op 4 while: no dist",
		"main block 1: var x_next: no dist",
		"main block 1: op 5 scale: no dist",
		"main block 1: op 6 assign: no dist",
		"main block 1: op 7 increment: no dist",
		"main block 1: op 8 less_than: no dist",
	}
	if diff := cmp.Diff(want, problems(t, example(t, "while_loop.dpir"))); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
}

func TestAnnotationsBroken(t *testing.T) {
	m := parse(t, `
mesh world shape [2, 2] dims [dp, mp] ranks [0, 1, 2, 3]
mesh bad shape [2, 2] dims [a, b] ranks [0, 1, 2]

program main {
  block 0 {
    var ok : f32[8, 6] @world[0, 1]
    var a : f32[8, 5] @world[0, 0]
    var b : f32[7, 4] @world[0, 1]
    var c : f32[8] @world[0, -1]
    var d : f32[8, 8] @world[2, -3]
    var e : f32[8, 8]
    var f : f32[-1, 6] @world[0, 1]
    var g : f32[4] @nowhere[0]
    var h : f32[4] @world[0] partial [0, 2]
    var r : reader
    var s : f32[] @world[]
    op 1 relu(X: ok) -> (Out: ok)
    op 2 relu(X: f) -> (Out: e) dist @world impl elementwise:0 [f: [0, 1] -> ]
    op 3 relu(X: f, Y: f, Z: undeclared) -> (Out: b)
         dist @world impl elementwise:0 [f: [0, 1], q: [0] -> b: [1, 0]]
    op 4 relu(X: f) -> (Out: c) dist @elsewhere impl elementwise:0 [f: [0, 1] -> c: [0, 5]]
    op 5 relu(X: f, R: r) -> (Out: c) dist @world impl elementwise:0 [f: [0, 1], f: [0, 1] -> c: [0, 0]]
    op 6 fill_constant() -> (Out: s) dist @world impl default:0 [-> s: []]
  }
  block 1 parent 0 {
    var t : f32[3, 3] @world[-1, 1]
    op 7 relu(X: ok) -> (Out: t) dist @world impl elementwise:0 [ok: [1, 0] -> t: [-1, 1]]
  }
}

program startup {
  block 0 {
    var ignored : f32[3] @world[0]
    op 1 relu() -> (Out: ignored)
  }
}
`)
	want := []string{
		"mesh bad: shape [2, 2] holds 4 processes but 3 ranks are given",
		"main block 0: var a: dims_mapping [0, 0] uses mesh dim 0 twice",
		"main block 0: var a: dims_mapping [0, 0]: dim 1 of size 5 does not split evenly over mesh dim 0 (dp) of size 2",
		"main block 0: var b: dims_mapping [0, 1]: dim 0 of size 7 does not split evenly over mesh dim 0 (dp) of size 2",
		"main block 0: var c: dims_mapping [0, -1] has length 2, tensor rank is 1",
		"main block 0: var d: dims_mapping [2, -3] has entry 2 outside [-1, 2) of mesh world",
		"main block 0: var d: dims_mapping [2, -3] has entry -3 outside [-1, 2) of mesh world",
		"main block 0: var e: no dist",
		"main block 0: var g: dist on unknown mesh nowhere",
		"main block 0: var h: partial dim 0 is also in dims_mapping [0]",
		"main block 0: var h: partial dim 2 outside [0, 2) of mesh world",
		"main block 0: op 1 relu: no dist",
		"main block 0: op 2 relu: dist: no dims_mapping for output e",
		"main block 0: op 3 relu: input Z names undeclared var undeclared",
		"main block 0: op 3 relu: dist input q: not an input of the op",
		"main block 0: op 3 relu: dist output b: dims_mapping [1, 0]: dim 0 of size 7 does not split evenly over mesh dim 1 (mp) of size 2",
		"main block 0: op 4 relu: dist on unknown mesh elsewhere",
		"main block 0: op 4 relu: dist output c: dims_mapping [0, 5] has length 2, tensor rank is 1",
		"main block 0: op 5 relu: dist input f: dims_mapping given twice",
		"main block 0: op 5 relu: dist output c: dims_mapping [0, 0] has length 2, tensor rank is 1",
		"main block 0: op 5 relu: dist output c: dims_mapping [0, 0] uses mesh dim 0 twice",
		"main block 1: var t: dims_mapping [-1, 1]: dim 1 of size 3 does not split evenly over mesh dim 1 (mp) of size 2",
		"main block 1: op 7 relu: reads ok as [1, 0] but ok is @world[0, 1]: the data would have to be resharded (insert-reshards makes it explicit)",
		"main block 1: op 7 relu: dist output t: dims_mapping [-1, 1]: dim 1 of size 3 does not split evenly over mesh dim 1 (mp) of size 2",
	}
	if diff := cmp.Diff(want, problems(t, m)); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
}

// The pp example's stage meshes lie inside the stages of its cluster
// mesh; a mesh across two stages, or one whose first rank is in none,
// is reported at the first op on it. Its one other problem is the
// activation that crosses from stage to stage sharded: nothing sends it
// (the partitioner does not split stages), so it is refused as any
// sharded arg on another mesh is.
func TestAnnotationsPipelineStages(t *testing.T) {
	m := example(t, "pp_mlp.dpir")
	const cross = "main block 0: op 3 matmul_v2: reads a1 as @stage1[0, -1] but a1 is @stage0[0, -1], on another mesh: the data would have to be resharded (insert-reshards makes it explicit)"
	if err := get[*analysis.AnnotationReport](t, analysis.NewCache(m), analysis.Annotations).Err(); err == nil || err.Error() != cross {
		t.Fatalf("pp_mlp: got %v\nwant %s", err, cross)
	}
	for _, c := range []struct{ mesh, want string }{
		{"mesh stage1 shape [2] dims [dp] ranks [1, 2]",
			"main block 0: op 3 matmul_v2: pipeline: mesh stage1 spans stages: its ranks [2] are outside the stage of its first rank, [0, 1]"},
		{"mesh stage1 shape [2] dims [dp] ranks [5, 2]",
			`main block 0: op 3 matmul_v2: pipeline: mesh stage1: no pp stage of mesh cluster contains its first rank 5`},
	} {
		m := example(t, "pp_mlp.dpir")
		bad := parse(t, strings.Replace(string(ir.Print(m)), "mesh stage1 shape [2] dims [dp] ranks [2, 3]", c.mesh, 1))
		err := get[*analysis.AnnotationReport](t, analysis.NewCache(bad), analysis.Annotations).Err()
		if err == nil || err.Error() != c.want+"\n"+cross {
			t.Errorf("%s:\n got %v\nwant %s", c.mesh, err, c.want)
		}
	}
}
