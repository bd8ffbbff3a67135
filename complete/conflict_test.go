package complete_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/distpass/distpass/complete"
	"github.com/distpass/distpass/ir"
)

// parseModule parses a .dpir text of a test.
func parseModule(t *testing.T, name, text string) *ir.Module {
	t.Helper()
	m, err := ir.Parse(name, []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	if err := ir.Verify(m); err != nil {
		t.Fatal(err)
	}
	return m
}

// reportText is the report as complete -report prints it.
func reportText(t *testing.T, rep *complete.Report) string {
	t.Helper()
	var sb strings.Builder
	if err := rep.WriteText(&sb); err != nil {
		t.Fatal(err)
	}
	return sb.String()
}

func mappingOf(t *testing.T, m *ir.Module, name string) string {
	t.Helper()
	v := m.Main.Global().Var(name)
	if v == nil || v.Dist == nil {
		t.Fatalf("var %s has no dist", name)
	}
	return "@" + v.Dist.Mesh + ir.FormatInts(v.Dist.DimsMapping)
}

// conflictModule: a bias that nobody annotated, read by op 1 with x
// (split along mesh dim 0) and by op 2, which the user annotated to read
// it as op2Bias.
func conflictModule(op2Bias string) string {
	return `module conflict
mesh world shape [2, 2] dims [a, b] ranks [0, 1, 2, 3]
program main {
  block 0 {
    var x : f64[4, 8] @world[0, -1] {is_data, stop_gradient}
    var y : f64[4, 8] @world[1, -1] {is_data, stop_gradient}
    param bias : f64[4, 8] {trainable}
    var s : f64[4, 8]
    var t : f64[4, 8]
    op 1 elementwise_add(X: x, Y: bias) -> (Out: s) {axis = -1} role forward
    op 2 elementwise_add(X: y, Y: bias) -> (Out: t) {axis = -1} role forward
         dist @world impl elementwise:0 [y: [1, -1], bias: ` + op2Bias + ` -> t: [1, -1]]
  }
}
`
}

// TestConflictKeepsFirst: the bias's dim 0 is proposed mesh dim 0 first
// (op 1, from x, in program order) and mesh dim 1 later (op 2's own
// annotation): dim 0 stays on mesh dim 0, and the loser is a Conflict
// naming the op, the var, the dim, both mesh dims and both origins.
func TestConflictKeepsFirst(t *testing.T) {
	m := parseModule(t, "conflict.dpir", conflictModule("[1, -1]"))
	rep, err := complete.Complete(m, complete.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := mappingOf(t, m, "bias"); got != "@world[0, -1]" {
		t.Errorf("bias completed as %s, want @world[0, -1] (the first proposal, op 1's)", got)
	}
	want := []complete.Conflict{{Op: 2, OpType: "elementwise_add", Var: "bias", Dim: 0,
		Kept: 0, KeptFrom: "var x", Lost: 1, LostFrom: "op 2 elementwise_add"}}
	if !slices.Equal(rep.Conflicts, want) {
		t.Errorf("conflicts %+v, want %+v", rep.Conflicts, want)
	}
	line := "conflict: op 2 elementwise_add: bias dim 0 stays split along mesh dim 0 (from var x); mesh dim 1 (from op 2 elementwise_add) lost\n"
	if txt := reportText(t, rep); !strings.Contains(txt, line) {
		t.Errorf("report lacks %q:\n%s", line, txt)
	}
	// The user's op keeps its dist.
	if d := m.Main.Global().Ops[1].Dist; ir.FormatInts(d.Inputs[1].DimsMapping) != "[1, -1]" || rep.Ops.Kept != 1 {
		t.Errorf("op 2 reads bias as %v (kept %d), want its own [1, -1]", d.Inputs[1].DimsMapping, rep.Ops.Kept)
	}
}

// TestConflictMeshDimInUse: op 2 wants the bias's dim 1 on mesh dim 0,
// which its dim 0 uses already (from x, through op 1): dim 1 stays
// replicated, a Conflict with Kept -1.
func TestConflictMeshDimInUse(t *testing.T) {
	m := parseModule(t, "conflict.dpir", conflictModule("[-1, 0]"))
	rep, err := complete.Complete(m, complete.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := mappingOf(t, m, "bias"); got != "@world[0, -1]" {
		t.Errorf("bias completed as %s, want @world[0, -1]", got)
	}
	want := []complete.Conflict{{Op: 2, OpType: "elementwise_add", Var: "bias", Dim: 1,
		Kept: -1, KeptFrom: "var x", Lost: 0, LostFrom: "op 2 elementwise_add"}}
	if !slices.Equal(rep.Conflicts, want) {
		t.Errorf("conflicts %+v, want %+v", rep.Conflicts, want)
	}
	line := "conflict: op 2 elementwise_add: bias dim 1 stays replicated: mesh dim 0 (from op 2 elementwise_add) splits another dim of it (from var x)\n"
	if txt := reportText(t, rep); !strings.Contains(txt, line) {
		t.Errorf("report lacks %q:\n%s", line, txt)
	}
}

// TestConflictProgramOrder pins the package doc's tie-break: a dim takes
// the first mesh dim proposed to it, and the fixpoint's first sweep runs
// forward in program order, so of two consumers of an unannotated bias
// that want it on different mesh dims, the one first in program order
// decides, whatever their ids or the order the vars are declared in.
func TestConflictProgramOrder(t *testing.T) {
	const head = `module order
mesh world shape [2, 2] dims [a, b] ranks [0, 1, 2, 3]
program main {
  block 0 {
`
	vars := []string{
		"    var x : f64[4, 8] @world[0, -1] {is_data, stop_gradient}\n",
		"    var y : f64[4, 8] @world[1, -1] {is_data, stop_gradient}\n",
		"    param bias : f64[4, 8] {trainable}\n",
		"    var s : f64[4, 8]\n",
		"    var t : f64[4, 8]\n",
	}
	opX := "    op 1 elementwise_add(X: x, Y: bias) -> (Out: s) {axis = -1} role forward\n"
	opY := "    op 2 elementwise_add(X: y, Y: bias) -> (Out: t) {axis = -1} role forward\n"
	for _, c := range []struct {
		name     string
		vars     []string
		ops      string
		wantBias string
	}{
		{"x's consumer first", vars, opX + opY, "@world[0, -1]"},
		{"y's consumer first", vars, opY + opX, "@world[1, -1]"},
		{"y's consumer first, vars reversed", reversed(vars), opY + opX, "@world[1, -1]"},
		{"x's consumer first, vars reversed", reversed(vars), opX + opY, "@world[0, -1]"},
	} {
		m := parseModule(t, "order.dpir", head+strings.Join(c.vars, "")+c.ops+"  }\n}\n")
		if _, err := complete.Complete(m, complete.Options{}); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := mappingOf(t, m, "bias"); got != c.wantBias {
			t.Errorf("%s: bias completed as %s, want %s", c.name, got, c.wantBias)
		}
		// The consumer that decided reads it as it is: no reshard there.
		first := m.Main.Global().Ops[0]
		if got := ir.FormatInts(first.Dist.Inputs[1].DimsMapping); "@world"+got != c.wantBias {
			t.Errorf("%s: %s reads bias as %s, want %s", c.name, first, got, c.wantBias)
		}
	}
}

func reversed(s []string) []string {
	r := slices.Clone(s)
	slices.Reverse(r)
	return r
}
