package analysis_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// An op's arg mappings must be its args' own dists: the lowering computes
// on the data each rank holds, and nothing moves it (issue 22, finding
// 2). Each case is a module and every problem it must give, no more.
func TestAnnotationsArgsAgreeWithVars(t *testing.T) {
	const mesh = "mesh world shape [2, 2] dims [dp, mp] ranks [0, 1, 2, 3]\n"
	for _, c := range []struct {
		name, body string
		want       []string
	}{
		{"input mapping differs", `
    var x : f32[4, 8] @world[0, 1]
    var y : f32[4, 8] @world[0, -1]
    op 1 relu(X: x) -> (Out: y) dist @world impl default:0 [x: [0, -1] -> y: [0, -1]]`,
			[]string{"main block 0: op 1 relu: reads x as [0, -1] but x is @world[0, 1]: the data would have to be resharded (insert-reshards makes it explicit)"}},
		{"output mapping differs", `
    var x : f32[4, 8] @world[0, -1]
    var y : f32[4, 8] @world[0, 1]
    op 1 relu(X: x) -> (Out: y) dist @world impl elementwise:0 [x: [0, -1] -> y: [0, -1]]`,
			[]string{"main block 0: op 1 relu: writes y as [0, -1] but y is @world[0, 1]: the data would have to be resharded (insert-reshards makes it explicit)"}},
		{"in place: one var, both sides agree", `
    param w : f32[8] @world[1] {trainable}
    var g : f32[8] @world[1]
    persist lr : f32[1] @world[-1]
    op 1 sgd(Param: w, Grad: g, LearningRate: lr) -> (ParamOut: w) role optimize
         dist @world impl default:0 [w: [1], g: [1], lr: [-1] -> w: [1]]`, nil},
		{"in place: the output side differs", `
    param w : f32[8] @world[1] {trainable}
    var g : f32[8] @world[1]
    persist lr : f32[1] @world[-1]
    op 1 sgd(Param: w, Grad: g, LearningRate: lr) -> (ParamOut: w) role optimize
         dist @world impl default:0 [w: [1], g: [1], lr: [-1] -> w: [-1]]`,
			[]string{"main block 0: op 1 sgd: writes w as [-1] but w is @world[1]: the data would have to be resharded (insert-reshards makes it explicit)"}},
		{"a grad split otherwise than its parameter", `
    param w : f32[8] @world[1] {trainable}
    var w@GRAD : f32[8] @world[-1]
    persist lr : f32[1] @world[-1]
    op 1 sgd(Param: w, Grad: w@GRAD, LearningRate: lr) -> (ParamOut: w) role optimize
         dist @world impl default:0 [w: [1], w@GRAD: [-1], lr: [-1] -> w: [1]]`,
			[]string{"main block 0: op 1 sgd: updates w, split as [1], with w@GRAD, split as [-1]: a grad is split as its parameter"}},
		{"sub-block op, var of the parent", `
    var x : f32[4, 8] @world[0, 1]
    var y : f32[4, 8] @world[0, 1]
    var c : bool[] @world[]
    op 1 conditional_block(Cond: c, Input: x) -> (Out: y) {sub_block = ^1}
         dist @world impl default:0 [c: [], x: [0, 1] -> y: [0, 1]]
  }
  block 1 parent 0 {
    op 2 relu(X: x) -> (Out: y) dist @world impl default:0 [x: [0, -1] -> y: [0, 1]]`,
			[]string{"main block 1: op 2 relu: reads x as [0, -1] but x is @world[0, 1]: the data would have to be resharded (insert-reshards makes it explicit)"}},
		{"grad op", `
    var x : f32[4, 8] @world[0, -1]
    var y : f32[4, 8] @world[0, -1]
    var y@GRAD : f32[4, 8] @world[0, -1]
    var x@GRAD : f32[4, 8] @world[0, -1]
    op 1 relu(X: x) -> (Out: y) dist @world impl default:0 [x: [0, -1] -> y: [0, -1]]
    op 2 relu_grad(Out: y, Out@GRAD: y@GRAD) -> (X@GRAD: x@GRAD) role backward fwd 1
         dist @world impl default:0 [y: [0, -1], y@GRAD: [-1, -1] -> x@GRAD: [0, -1]]`,
			[]string{"main block 0: op 2 relu_grad: reads y@GRAD as [-1, -1] but y@GRAD is @world[0, -1]: the data would have to be resharded (insert-reshards makes it explicit)"}},
		{"a partial value read as a whole", `
    var s : f32[4, 8] @world[0, -1] partial [1]
    var y : f32[4, 8] @world[0, -1]
    op 1 relu(X: s) -> (Out: y) dist @world impl default:0 [s: [0, -1] -> y: [0, -1]]`,
			[]string{"main block 0: op 1 relu: reads s as a whole value but s is @world[0, -1] partial [1]: the data would have to be resharded (insert-reshards makes it explicit)"}},
		{"a partial value carried into a partial output", `
    var s : i64[4] @world[-1] partial [0]
    var c : i64[4] @world[-1] partial [0]
    op 1 cumsum(X: s) -> (Out: c) {axis = 0} dist @world impl default:0 [s: [-1] -> c: [-1]]`, nil},
		{"a partial output from a block-wise op", `
    var x : f32[4, 8] @world[0, -1]
    var y : f32[4, 8] @world[-1, -1] partial [0]
    op 1 relu(X: x) -> (Out: y) dist @world impl default:0 [x: [0, -1] -> y: [-1, -1]]`,
			[]string{"main block 0: op 1 relu: writes y as a whole value but y is @world[-1, -1] partial [0]: no input is partial or sharded along mesh dim 0: the data would have to be resharded"}},
		{"a mean over the split batch, partial", `
    var x : f32[4, 8] @world[0, -1]
    var loss : f32[] @world[] partial [0:avg]
    op 1 mean(X: x) -> (Out: loss) role forward|loss dist @world impl default:0 [x: [0, -1] -> loss: []]`, nil},
		{"a mean over the split batch, not partial", `
    var x : f32[4, 8] @world[0, -1]
    var loss : f32[] @world[]
    op 1 mean(X: x) -> (Out: loss) role forward|loss dist @world impl default:0 [x: [0, -1] -> loss: []]`,
			[]string{"main block 0: op 1 mean: reduces dim 0 of x, sharded along mesh dim 0 (dp): each rank holds a part of loss, which is @world[]: declare it @world[] partial [0:avg], or the data would have to be resharded"}},
		{"a mean over two split dims, partial over one", `
    var x : f32[4, 8] @world[0, 1]
    var loss : f32[] @world[] partial [0:avg]
    op 1 mean(X: x) -> (Out: loss) role forward|loss dist @world impl default:0 [x: [0, 1] -> loss: []]`,
			[]string{"main block 0: op 1 mean: reduces dim 1 of x, sharded along mesh dim 1 (mp): each rank holds a part of loss, which is @world[] partial [0:avg]: declare it @world[] partial [0:avg, 1:avg], or the data would have to be resharded"}},
		{"a reduce_sum over the split batch, partial avg", `
    var x : f32[4, 8] @world[0, -1]
    var s : f32[8] @world[-1] partial [0:avg]
    op 1 reduce_sum(X: x) -> (Out: s) {dim = [0]} dist @world impl default:0 [x: [0, -1] -> s: [-1]]`,
			[]string{"main block 0: op 1 reduce_sum: reduces dim 0 of x, sharded along mesh dim 0 (dp): each rank holds a part of s, which is @world[-1] partial [0:avg]: declare it @world[-1] partial [0], or the data would have to be resharded"}},
		{"a trained sum loss", `
    var x : f32[4, 8] @world[0, -1]
    var loss : f32[] @world[] partial [0]
    var loss@GRAD : f32[] @world[]
    op 1 reduce_sum(X: x) -> (Out: loss) {reduce_all = true} role forward|loss dist @world impl default:0 [x: [0, -1] -> loss: []]
    op 2 fill_constant() -> (Out: loss@GRAD) {shape = [], value = 1.0} role backward|loss dist @world impl default:0 [-> loss@GRAD: []]`,
			[]string{"main block 0: op 1 reduce_sum: loss is @world[] partial [0]: a sum of the ranks' losses over mesh dim 0 (dp), but the backward's data-parallel sync averages the grads over it: the loss must be their mean (partial [0:avg])"}},
		{"a grad sync over a dim the loss does not average", `
    var x : f32[4, 8] @world[1, -1]
    param w : f32[8, 8] @world[-1, -1] {trainable}
    var h : f32[4, 8] @world[1, -1]
    var z : f32[4, 8] @world[0, -1]
    var loss : f32[] @world[] partial [0:avg]
    var loss@GRAD : f32[] @world[]
    var h@GRAD : f32[4, 8] @world[1, -1]
    var w@GRAD : f32[8, 8] @world[-1, -1]
    op 1 matmul_v2(X: x, Y: w) -> (Out: h) dist @world impl default:0 [x: [1, -1], w: [-1, -1] -> h: [1, -1]]
    op 2 mean(X: z) -> (Out: loss) role forward|loss dist @world impl default:0 [z: [0, -1] -> loss: []]
    op 3 fill_constant() -> (Out: loss@GRAD) {shape = [], value = 1.0} role backward|loss dist @world impl default:0 [-> loss@GRAD: []]
    op 4 matmul_v2_grad(X: x, Y: w, Out@GRAD: h@GRAD) -> (Y@GRAD: w@GRAD) role backward fwd 1
         dist @world impl default:0 [x: [1, -1], w: [-1, -1], h@GRAD: [1, -1] -> w@GRAD: [-1, -1]]`,
			[]string{"main block 0: op 4 matmul_v2_grad: the data-parallel sync would average w@GRAD over mesh dim 1 (mp), along which x's dim 0 is split, but the loss loss is @world[] partial [0:avg], no average over it: dim 0 must be the batch the loss averages"}},
		{"an untrained sum loss", `
    var x : f32[4, 8] @world[0, -1]
    var loss : f32[] @world[] partial [0]
    op 1 reduce_sum(X: x) -> (Out: loss) {reduce_all = true} role forward|loss dist @world impl default:0 [x: [0, -1] -> loss: []]`, nil},
		{"a reduce_sum over an unsplit dim", `
    var x : f32[4, 8] @world[0, -1]
    var s : f32[4] @world[0]
    op 1 reduce_sum(X: x) -> (Out: s) {dim = [1]} dist @world impl default:0 [x: [0, -1] -> s: [0]]`, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := parse(t, mesh+"program main {\n  block 0 {"+c.body+"\n  }\n}\n")
			if diff := cmp.Diff(c.want, problems(t, m)); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}

// Values cross meshes only whole: replicated, into a mesh whose ranks
// all hold them (a partial one only into an MoE op that reads each
// rank's own part).
func TestAnnotationsAcrossMeshes(t *testing.T) {
	const meshes = `mesh world shape [2, 2] dims [dp, mp] ranks [0, 1, 2, 3]
mesh tokens shape [4] dims [t] ranks [0, 1, 2, 3]
mesh half shape [2] dims [dp] ranks [0, 1]
`
	for _, c := range []struct {
		name, body string
		want       []string
	}{
		{"replicated, into a mesh inside", `
    persist lr : f32[1] @world[-1]
    var y : f32[1] @half[-1]
    op 1 scale(X: lr) -> (Out: y) dist @half impl default:0 [lr: [-1] -> y: [-1]]`, nil},
		{"replicated, into a mesh with other ranks", `
    persist lr : f32[1] @half[-1]
    var y : f32[1] @world[-1]
    op 1 scale(X: lr) -> (Out: y) dist @world impl default:0 [lr: [-1] -> y: [-1]]`,
			[]string{"main block 0: op 1 scale: reads lr as @world[-1] but lr is @half[-1], on another mesh: the data would have to be resharded (insert-reshards makes it explicit)"}},
		{"sharded", `
    var x : f32[4, 8] @tokens[0, -1]
    var y : f32[4, 8] @world[0, -1]
    op 1 relu(X: x) -> (Out: y) dist @world impl default:0 [x: [0, -1] -> y: [0, -1]]`,
			[]string{"main block 0: op 1 relu: reads x as @world[0, -1] but x is @tokens[0, -1], on another mesh: the data would have to be resharded (insert-reshards makes it explicit)"}},
		{"partial counts into an exchange", `
    var lc : i64[4] @tokens[-1] partial [0]
    var gc : i64[4] @world[-1]
    op 1 alltoall(X: lc) -> (Out: gc) {expert_axis = "mp"} dist @world impl alltoall:0 [lc: [-1] -> gc: [-1]]`, nil},
		{"partial counts into another op", `
    var lc : i64[4] @tokens[-1] partial [0]
    var c : i64[4] @world[-1] partial [0]
    op 1 cumsum(X: lc) -> (Out: c) {axis = 0} dist @world impl default:0 [lc: [-1] -> c: [-1]]`,
			[]string{
				"main block 0: op 1 cumsum: reads lc as @world[-1] but lc is @tokens[-1] partial [0], on another mesh: the data would have to be resharded (insert-reshards makes it explicit)",
				"main block 0: op 1 cumsum: writes c as a whole value but c is @world[-1] partial [0]: no input is partial or sharded along mesh dim 0: the data would have to be resharded",
			}},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := parse(t, meshes+"program main {\n  block 0 {"+c.body+"\n  }\n}\n")
			if diff := cmp.Diff(c.want, problems(t, m)); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}

// MoE count vectors hold one entry per expert of the layer (issue 22,
// finding 5).
func TestAnnotationsMoECounts(t *testing.T) {
	src := `mesh world shape [2] dims [ep] ranks [0, 1]
program main {
  block 0 {
    var topi : i64[4, 2] @world[0, -1]
    var xs : f32[8, 4] @world[-1, -1]
    var lc : i64[4] @world[-1] partial [0]
    var gc : i64[GC] @world[-1]
    var xr : f32[-1, 4] @world[-1, -1]
    param w1 : f32[4, 4, 8] @world[0, -1, -1] {trainable}
    var h : f32[-1, 8] @world[-1, -1]
    op 1 number_count(numbers: topi) -> (Out: lc) {upper_range = 4} dist @world impl default:0 [topi: [0, -1] -> lc: [-1]]
    op 2 alltoall(X: lc) -> (Out: gc) {expert_axis = "ep"} dist @world impl alltoall:0 [lc: [-1] -> gc: [-1]]
    op 3 global_scatter(X: xs, local_count: lc, global_count: gc) -> (Out: xr) {expert_axis = "ep"}
         dist @world impl global_scatter:0 [xs: [-1, -1], lc: [-1], gc: [-1] -> xr: [-1, -1]]
    op 4 grouped_matmul(X: xr, W: w1, ExpertCount: gc) -> (Out: h) dist @world impl grouped_matmul:0 [xr: [-1, -1], w1: [0, -1, -1], gc: [-1] -> h: [-1, -1]]
  }
}
`
	if got := problems(t, parse(t, strings.Replace(src, "GC", "4", 1))); len(got) != 0 {
		t.Fatalf("counts of 4: %v", got)
	}
	want := []string{
		"main block 0: op 4 grouped_matmul: gc i64[6] has 6 entries, want one per expert: 4 (the dim 0 of op 4 grouped_matmul's W w1)",
		"main block 0: op 2 alltoall: gc i64[6] has 6 entries, want 4 = n_expert 2 × world size 2 (the upper_range of op 1 number_count)",
		"main block 0: op 3 global_scatter: gc i64[6] has 6 entries, want 4 = n_expert 2 × world size 2 (the upper_range of op 1 number_count)",
	}
	if diff := cmp.Diff(want, problems(t, parse(t, strings.Replace(src, "GC", "6", 1)))); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
	// All experts on every rank, while the exchange sends each rank only
	// its own experts' rows.
	rep := strings.NewReplacer("GC", "4", "@world[0, -1, -1] {trainable}", "@world[-1, -1, -1] {trainable}", "w1: [0, -1, -1]", "w1: [-1, -1, -1]")
	want = []string{"main block 0: op 4 grouped_matmul: W w1 is split as [-1, -1, -1], but its rows come from op 2 alltoall over mesh dim 0 (ep) of size 2, grouped by each rank's own experts: its experts must be split along it ([0, -1, -1])"}
	if diff := cmp.Diff(want, problems(t, parse(t, rep.Replace(src)))); diff != "" {
		t.Errorf("replicated experts: problems (-want +got):\n%s", diff)
	}
}

// A reshard op's X and Out differ by design: check-annotations does not
// say that its ends differ (its mapping, mesh and partial state are what
// it converts), while another op still may not read a var otherwise than
// its dist says.
func TestAnnotationsReshardOps(t *testing.T) {
	const meshes = `mesh world shape [2, 2] dims [dp, mp] ranks [0, 1, 2, 3]
mesh other shape [2] dims [dp] ranks [4, 5]
`
	for _, c := range []struct {
		name, body string
		want       []string
	}{
		{"partial to whole, another mapping", `
    var s : f32[4, 8] @world[0, -1] partial [1]
    var r : f32[4, 8] @world[-1, 1]
    op 1 reshard(X: s) -> (Out: r) dist @world impl reshard:0 [s: [0, -1] -> r: [-1, 1]]`, nil},
		{"across meshes", `
    var h : f32[4, 8] @other[0, -1]
    var r : f32[4, 8] @world[0, 1]
    op 1 reshard(X: h) -> (Out: r) dist @world impl reshard:0 [h: [0, -1] -> r: [0, 1]]`, nil},
		{"another op still may not read it so", `
    var s : f32[4, 8] @world[0, -1] partial [1]
    var r : f32[4, 8] @world[0, -1]
    op 1 relu(X: s) -> (Out: r) dist @world impl default:0 [s: [0, -1] -> r: [0, -1]]`,
			[]string{"main block 0: op 1 relu: reads s as a whole value but s is @world[0, -1] partial [1]: the data would have to be resharded (insert-reshards makes it explicit)"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := parse(t, meshes+"program main {\n  block 0 {"+c.body+"\n  }\n}\n")
			if diff := cmp.Diff(c.want, problems(t, m)); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}
