package complete_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/distpass/distpass/complete"
	"github.com/distpass/distpass/ir"
)

// requiredModule: x split on both of its dims; h keeps it (relu passes
// every dim through); softmax over the last axis and layer_norm over dim
// 1 need that dim whole.
const requiredModule = `module required
mesh world shape [2, 2] dims [a, b] ranks [0, 1, 2, 3]
program main {
  block 0 {
    var x : f64[4, 8] @world[0, 1] {is_data, stop_gradient}
    var h : f64[4, 8]
    var y : f64[4, 8]
    param g : f64[8] {trainable}
    param be : f64[8] {trainable}
    var z : f64[4, 8]
    var mu : f64[4]
    var va : f64[4]
    op 1 relu(X: x) -> (Out: h) role forward
    op 2 softmax(X: h) -> (Out: y) {axis = -1} role forward
    op 3 layer_norm(X: x, Scale: g, Bias: be) -> (Y: z, Mean: mu, Variance: va) {begin_norm_axis = 1, epsilon = 0.00001} role forward
  }
}
`

// TestRequirementOnOp: what softmax and layer_norm require of their
// input (the normalised dim whole) is their op dist; the vars keep their
// own dists (h its producer's, x its annotation), the report lists each
// reshard, and check-annotations refuses the module naming the op and
// the var until the reshard pass inserts them.
func TestRequirementOnOp(t *testing.T) {
	m := parseModule(t, "required.dpir", requiredModule)
	rep, err := complete.Complete(m, complete.Options{})
	if err != nil {
		t.Fatal(err)
	}
	g := m.Main.Global()
	for name, want := range map[string]string{"x": "@world[0, 1]", "h": "@world[0, 1]", "y": "@world[0, -1]",
		"z": "@world[0, -1]", "mu": "@world[0]", "va": "@world[0]", "g": "@world[-1]", "be": "@world[-1]"} {
		if got := mappingOf(t, m, name); got != want {
			t.Errorf("%s completed as %s, want %s", name, got, want)
		}
	}
	for i, arg := range map[int]string{1: "h", 2: "x"} {
		op := g.Ops[i]
		got, ok := op.Dist.InputMapping(arg)
		if !ok || ir.FormatInts(got) != "[0, -1]" {
			t.Errorf("%s reads %s as %v, want [0, -1]", op, arg, got)
		}
	}
	want := []complete.Reshard{
		{Op: 2, OpType: "softmax", Var: "h", Mesh: "world", Have: []int{0, 1}, WantMesh: "world", Want: []int{0, -1}},
		{Op: 3, OpType: "layer_norm", Var: "x", Mesh: "world", Have: []int{0, 1}, WantMesh: "world", Want: []int{0, -1}},
	}
	if !slices.EqualFunc(rep.Reshards, want, func(a, b complete.Reshard) bool {
		return a.Op == b.Op && a.OpType == b.OpType && a.Var == b.Var && a.Output == b.Output && a.Mesh == b.Mesh &&
			slices.Equal(a.Have, b.Have) && len(a.Partial) == 0 && a.WantMesh == b.WantMesh && slices.Equal(a.Want, b.Want)
	}) {
		t.Errorf("reshards %+v, want %+v", rep.Reshards, want)
	}
	txt := reportText(t, rep)
	for _, line := range []string{
		"reshard: op 2 softmax reads h as [0, -1], which is [0, 1]\n",
		"reshard: op 3 layer_norm reads x as [0, -1], which is [0, 1]\n",
	} {
		if !containsLine(txt, line) {
			t.Errorf("report lacks %q:\n%s", line, txt)
		}
	}
	err = annotationsErr(m)
	if err == nil {
		t.Fatal("check-annotations accepts a module that needs two reshards")
	}
	for _, s := range []string{
		"op 2 softmax: reads h as [0, -1] but h is @world[0, 1]: the data would have to be resharded (insert-reshards makes it explicit)",
		"op 3 layer_norm: reads x as [0, -1] but x is @world[0, 1]: the data would have to be resharded (insert-reshards makes it explicit)",
	} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("check-annotations: %v\nwant it to say %q", err, s)
		}
	}
}

// TestMaxVisits: a fixpoint that needs more op visits than the cap
// stops at the cap, naming the op it would visit next.
func TestMaxVisits(t *testing.T) {
	m := parseModule(t, "required.dpir", requiredModule)
	_, err := complete.Complete(m, complete.Options{MaxVisits: 1})
	const want = "complete: no fixpoint after 1 op visits (the cap); still changing at op 2 softmax"
	if err == nil || err.Error() != want {
		t.Fatalf("got %v, want %q", err, want)
	}
	// Without a cap the same module needs more than one visit, and the
	// default bound is not reached.
	m = parseModule(t, "required.dpir", requiredModule)
	rep, err := complete.Complete(m, complete.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Visits <= 1 {
		t.Errorf("%d visits: the cap test proves nothing", rep.Visits)
	}
	m = parseModule(t, "required.dpir", requiredModule)
	if _, err := complete.Complete(m, complete.Options{MaxVisits: rep.Visits}); err != nil {
		t.Errorf("a cap of the visits the fixpoint needs (%d): %v", rep.Visits, err)
	}
}

// TestBarrier: an op type without a sharding rule (c_identity) is a
// barrier: it reads and gives its args replicated, the split of x does
// not cross it, and the report lists it and the reshard of x it needs.
func TestBarrier(t *testing.T) {
	m := parseModule(t, "barrier.dpir", `module barrier
mesh world shape [2] dims [dp] ranks [0, 1]
program main {
  block 0 {
    var x : f64[4, 8] @world[0, -1] {is_data, stop_gradient}
    var y : f64[4, 8]
    var z : f64[4, 8]
    op 1 c_identity(X: x) -> (Out: y) {ring_id = 0, use_calc_stream = true, use_model_parallel = true} role forward
    op 2 relu(X: y) -> (Out: z) role forward
  }
}
`)
	rep, err := complete.Complete(m, complete.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"y", "z"} {
		if got := mappingOf(t, m, v); got != "@world[-1, -1]" {
			t.Errorf("%s completed as %s, want @world[-1, -1] (past the barrier)", v, got)
		}
	}
	if want := []complete.Barrier{{Op: 1, OpType: "c_identity", Why: "no sharding rule"}}; !slices.Equal(rep.Barriers, want) {
		t.Errorf("barriers %+v, want %+v", rep.Barriers, want)
	}
	txt := reportText(t, rep)
	for _, line := range []string{
		"barrier: op 1 c_identity: no sharding rule: its args replicated\n",
		"reshard: op 1 c_identity reads x as [-1, -1], which is [0, -1]\n",
	} {
		if !containsLine(txt, line) {
			t.Errorf("report lacks %q:\n%s", line, txt)
		}
	}
	if !strings.Contains(rep.Summary(), "1 barriers (c_identity)") {
		t.Errorf("summary %q does not name the barrier", rep.Summary())
	}
}
