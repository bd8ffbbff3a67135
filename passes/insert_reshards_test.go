package passes_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/distpass/distpass/analysis"
	"github.com/distpass/distpass/check"
	"github.com/distpass/distpass/complete"
	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/lower"
	"github.com/distpass/distpass/ops"
	"github.com/distpass/distpass/passes"
	"github.com/google/go-cmp/cmp"
)

// annotationsComplete fails unless check-annotations finds no problem
// with m: every op but the reshards reads and writes its vars as they
// are.
func annotationsComplete(t *testing.T, m *ir.Module) {
	t.Helper()
	rep, err := analysis.Get[*analysis.AnnotationReport](analysis.NewCache(m), analysis.Annotations)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range rep.Problems {
		t.Errorf("check-annotations: %v", p)
	}
}

// runPipeline runs text over m with the built-in passes.
func runPipeline(t *testing.T, text string, m *ir.Module) error {
	t.Helper()
	pl, err := passes.DefaultRegistry().Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	return (&passes.Manager{}).Run(context.Background(), pl, m)
}

// opLines spells each op of every block of main as block: type(ins) ->
// (outs), and each reshard op's X and Out var dists after it.
func opLines(m *ir.Module) []string {
	var out []string
	args := func(ss []ir.Slot) string {
		var parts []string
		for _, s := range ss {
			parts = append(parts, s.Name+": "+strings.Join(s.Args, ", "))
		}
		return strings.Join(parts, ", ")
	}
	for _, b := range m.Main.Blocks {
		for _, op := range b.Ops {
			line := fmt.Sprintf("%d: %s(%s) -> (%s)", b.Index, op.Type, args(op.Inputs), args(op.Outputs))
			if op.Type == ops.ReshardType {
				x := m.Main.LookupVar(b, op.Input("X")[0])
				o := m.Main.LookupVar(b, op.Output("Out")[0])
				origin, _ := op.Attrs.Get("origin").(ir.String)
				line += fmt.Sprintf(" on @%s: %s => %s; %q", op.Dist.Mesh, ir.PrintVar(x), ir.PrintVar(o), string(origin))
				if len(op.Dist.Inputs) == 0 {
					line += fmt.Sprintf("; op dist [-> %s: %s]", op.Dist.Outputs[0].Name, ir.FormatInts(op.Dist.Outputs[0].DimsMapping))
				}
			}
			out = append(out, line)
		}
	}
	return out
}

// insert-reshards on small modules: where each reshard goes, what it
// converts, what reads it; and check-annotations accepts the result.
func TestInsertReshards(t *testing.T) {
	const meshes = "mesh world shape [2, 2] dims [dp, mp] ranks [0, 1, 2, 3]\n" +
		"mesh a shape [2] dims [x] ranks [0, 1]\nmesh b shape [2] dims [x] ranks [2, 3]\n"
	for _, c := range []struct {
		name, body string
		want       []string
	}{
		{"softmax over a split axis", `
    var x : f32[4, 8] @world[0, 1]
    var y : f32[4, 8] @world[0, -1]
    op 1 softmax(X: x) -> (Out: y) {axis = -1} dist @world impl default:0 [x: [0, -1] -> y: [0, -1]]`,
			[]string{
				`0: reshard(X: x) -> (Out: x.reshard_0) on @world: var x : f32[4, 8] @world[0, 1] => var x.reshard_0 : f32[4, 8] @world[0, -1]; "op 1 softmax reads x as [0, -1], which is @world[0, 1]"`,
				"0: softmax(X: x.reshard_0) -> (Out: y)",
			}},
		{"a partial matmul Out read by relu", `
    var a : f32[4, 8] @world[0, 1]
    param w : f32[8, 8] @world[1, -1]
    var s : f32[4, 8] @world[0, -1] partial [1]
    var r : f32[4, 8] @world[0, -1]
    op 1 matmul_v2(X: a, Y: w) -> (Out: s) dist @world impl matmul_v2:1 [a: [0, 1], w: [1, -1] -> s: [0, -1]]
    op 2 relu(X: s) -> (Out: r) dist @world impl default:0 [s: [0, -1] -> r: [0, -1]]`,
			[]string{
				"0: matmul_v2(X: a, Y: w) -> (Out: s)",
				`0: reshard(X: s) -> (Out: s.reshard_0) on @world: var s : f32[4, 8] @world[0, -1] partial [1] => var s.reshard_0 : f32[4, 8] @world[0, -1]; "op 2 relu reads s as [0, -1], which is @world[0, -1] partial [1]"`,
				"0: relu(X: s.reshard_0) -> (Out: r)",
			}},
		{"a partial value carried through", `
    var s : f32[4, 8] @world[0, -1] partial [1]
    var t : f32[4, 8] @world[0, -1] partial [1]
    op 1 scale(X: s) -> (Out: t) {scale = 2.0} dist @world impl default:0 [s: [0, -1] -> t: [0, -1]]`,
			[]string{"0: scale(X: s) -> (Out: t)"}},
		{"a read from another mesh", `
    var h : f32[4, 8] @a[0, -1]
    var y : f32[4, 8] @b[0, -1]
    op 1 relu(X: h) -> (Out: y) dist @b impl default:0 [h: [0, -1] -> y: [0, -1]]`,
			[]string{
				`0: reshard(X: h) -> (Out: h.reshard_0) on @b: var h : f32[4, 8] @a[0, -1] => var h.reshard_0 : f32[4, 8] @b[0, -1]; "op 1 relu reads h as @b[0, -1], which is @a[0, -1]"`,
				"0: relu(X: h.reshard_0) -> (Out: y)",
			}},
		{"a read on a mesh of fewer dims", `
    var h : f32[4, 8] @world[0, 1]
    var y : f32[4, 8] @a[0, -1]
    op 1 relu(X: h) -> (Out: y) dist @a impl default:0 [h: [0, -1] -> y: [0, -1]]`,
			[]string{
				`0: reshard(X: h) -> (Out: h.reshard_0) on @a: var h : f32[4, 8] @world[0, 1] => var h.reshard_0 : f32[4, 8] @a[0, -1]; "op 1 relu reads h as @a[0, -1], which is @world[0, 1]"; op dist [-> h.reshard_0: [0, -1]]`,
				"0: relu(X: h.reshard_0) -> (Out: y)",
			}},
		{"a replicated value read on a mesh inside its own", `
    var lr : f32[1] @world[-1]
    var y : f32[1] @a[-1]
    op 1 scale(X: lr) -> (Out: y) {scale = 2.0} dist @a impl default:0 [lr: [-1] -> y: [-1]]`,
			[]string{"0: scale(X: lr) -> (Out: y)"}},
		{"two readers of one var, and a third in another dist", `
    var x : f32[4, 8] @world[0, 1]
    var y1 : f32[4, 8] @world[0, -1]
    var y2 : f32[4, 8] @world[0, -1]
    var y3 : f32[4, 8] @world[-1, -1]
    op 1 relu(X: x) -> (Out: y1) dist @world impl default:0 [x: [0, -1] -> y1: [0, -1]]
    op 2 tanh(X: x) -> (Out: y2) dist @world impl default:0 [x: [0, -1] -> y2: [0, -1]]
    op 3 relu(X: x) -> (Out: y3) dist @world impl default:0 [x: [-1, -1] -> y3: [-1, -1]]`,
			[]string{
				`0: reshard(X: x) -> (Out: x.reshard_0) on @world: var x : f32[4, 8] @world[0, 1] => var x.reshard_0 : f32[4, 8] @world[0, -1]; "op 1 relu reads x as [0, -1], which is @world[0, 1]"`,
				"0: relu(X: x.reshard_0) -> (Out: y1)",
				"0: tanh(X: x.reshard_0) -> (Out: y2)",
				`0: reshard(X: x) -> (Out: x.reshard_1) on @world: var x : f32[4, 8] @world[0, 1] => var x.reshard_1 : f32[4, 8] @world[-1, -1]; "op 3 relu reads x as [-1, -1], which is @world[0, 1]"`,
				"0: relu(X: x.reshard_1) -> (Out: y3)",
			}},
		{"a folded reshard's origin is its reader of least id, whatever their order", `
    var x : f32[4, 8] @world[0, 1]
    var y1 : f32[4, 8] @world[0, -1]
    var y2 : f32[4, 8] @world[0, -1]
    op 5 relu(X: x) -> (Out: y1) dist @world impl default:0 [x: [0, -1] -> y1: [0, -1]]
    op 3 tanh(X: x) -> (Out: y2) dist @world impl default:0 [x: [0, -1] -> y2: [0, -1]]`,
			[]string{
				`0: reshard(X: x) -> (Out: x.reshard_0) on @world: var x : f32[4, 8] @world[0, 1] => var x.reshard_0 : f32[4, 8] @world[0, -1]; "op 3 tanh reads x as [0, -1], which is @world[0, 1]"`,
				"0: relu(X: x.reshard_0) -> (Out: y1)",
				"0: tanh(X: x.reshard_0) -> (Out: y2)",
			}},
		{"a var written between two readers is resharded again", `
    var x : f32[4, 8] @world[0, 1]
    var y1 : f32[4, 8] @world[0, -1]
    var y2 : f32[4, 8] @world[0, -1]
    op 1 relu(X: x) -> (Out: y1) dist @world impl default:0 [x: [0, -1] -> y1: [0, -1]]
    op 2 scale(X: x) -> (Out: x) {scale = 2.0} dist @world impl default:0 [x: [0, 1] -> x: [0, 1]]
    op 3 relu(X: x) -> (Out: y2) dist @world impl default:0 [x: [0, -1] -> y2: [0, -1]]`,
			[]string{
				`0: reshard(X: x) -> (Out: x.reshard_0) on @world: var x : f32[4, 8] @world[0, 1] => var x.reshard_0 : f32[4, 8] @world[0, -1]; "op 1 relu reads x as [0, -1], which is @world[0, 1]"`,
				"0: relu(X: x.reshard_0) -> (Out: y1)",
				"0: scale(X: x) -> (Out: x)",
				`0: reshard(X: x) -> (Out: x.reshard_1) on @world: var x : f32[4, 8] @world[0, 1] => var x.reshard_1 : f32[4, 8] @world[0, -1]; "op 3 relu reads x as [0, -1], which is @world[0, 1]"`,
				"0: relu(X: x.reshard_1) -> (Out: y2)",
			}},
		{"a var a sub-block writes is resharded again after it", `
    var x : f32[4, 8] @world[0, 1]
    var y1 : f32[4, 8] @world[0, -1]
    var y2 : f32[4, 8] @world[0, -1]
    var c : bool[] @world[]
    var sc : step_scopes
    op 1 relu(X: x) -> (Out: y1) dist @world impl default:0 [x: [0, -1] -> y1: [0, -1]]
    op 2 conditional_block(Cond: c, Input: x) -> (Scope: sc) {is_scalar_condition = true, sub_block = ^1}
         dist @world impl default:0 [c: [], x: [0, 1] ->]
    op 4 relu(X: x) -> (Out: y2) dist @world impl default:0 [x: [0, -1] -> y2: [0, -1]]
  }
  block 1 parent 0 {
    op 3 scale(X: x) -> (Out: x) {scale = 2.0} dist @world impl default:0 [x: [0, 1] -> x: [0, 1]]`,
			[]string{
				`0: reshard(X: x) -> (Out: x.reshard_0) on @world: var x : f32[4, 8] @world[0, 1] => var x.reshard_0 : f32[4, 8] @world[0, -1]; "op 1 relu reads x as [0, -1], which is @world[0, 1]"`,
				"0: relu(X: x.reshard_0) -> (Out: y1)",
				"0: conditional_block(Cond: c, Input: x) -> (Scope: sc)",
				`0: reshard(X: x) -> (Out: x.reshard_1) on @world: var x : f32[4, 8] @world[0, 1] => var x.reshard_1 : f32[4, 8] @world[0, -1]; "op 4 relu reads x as [0, -1], which is @world[0, 1]"`,
				"0: relu(X: x.reshard_1) -> (Out: y2)",
				"1: scale(X: x) -> (Out: x)",
			}},
		{"a reshard of a reshard starts from the original", `
    var x : f32[4, 8] @world[0, 1]
    var x2 : f32[4, 8] @world[0, -1]
    var y : f32[4, 8] @world[-1, 1]
    var z : f32[4, 8] @world[0, 1]
    op 1 reshard(X: x) -> (Out: x2) dist @world impl default:0 [x: [0, 1] -> x2: [0, -1]]
    op 2 relu(X: x2) -> (Out: y) dist @world impl default:0 [x2: [-1, 1] -> y: [-1, 1]]
    op 3 relu(X: x2) -> (Out: z) dist @world impl default:0 [x2: [0, 1] -> z: [0, 1]]`,
			[]string{
				`0: reshard(X: x) -> (Out: x2) on @world: var x : f32[4, 8] @world[0, 1] => var x2 : f32[4, 8] @world[0, -1]; ""`,
				`0: reshard(X: x) -> (Out: x.reshard_0) on @world: var x : f32[4, 8] @world[0, 1] => var x.reshard_0 : f32[4, 8] @world[-1, 1]; "op 2 relu reads x2 as [-1, 1], which is @world[0, -1]"`,
				"0: relu(X: x.reshard_0) -> (Out: y)",
				"0: relu(X: x) -> (Out: z)",
			}},
		{"an output annotated otherwise than the op writes it", `
    var x : f32[4, 8] @world[0, -1]
    var y : f32[4, 8] @world[0, 1]
    var z : f32[4, 8] @world[0, 1]
    op 1 relu(X: x) -> (Out: y) dist @world impl default:0 [x: [0, -1] -> y: [0, -1]]
    op 2 relu(X: y) -> (Out: z) dist @world impl default:0 [y: [0, 1] -> z: [0, 1]]`,
			[]string{
				"0: relu(X: x) -> (Out: y.reshard_0)",
				`0: reshard(X: y.reshard_0) -> (Out: y) on @world: var y.reshard_0 : f32[4, 8] @world[0, -1] => var y : f32[4, 8] @world[0, 1]; "op 1 relu writes y as [0, -1], which is @world[0, 1]"`,
				"0: relu(X: y) -> (Out: z)",
			}},
		{"a sub-block op gets its reshard in its block", `
    var x : f32[4, 8] @world[0, 1]
    var y : f32[4, 8] @world[0, -1]
    var c : bool[] @world[]
    var sc : step_scopes
    op 1 conditional_block(Cond: c, Input: x) -> (Out: y, Scope: sc) {is_scalar_condition = true, sub_block = ^1}
         dist @world impl default:0 [c: [], x: [0, 1] -> y: [0, -1]]
  }
  block 1 parent 0 {
    op 2 relu(X: x) -> (Out: y) dist @world impl default:0 [x: [0, -1] -> y: [0, -1]]`,
			[]string{
				"0: conditional_block(Cond: c, Input: x) -> (Out: y, Scope: sc)",
				`1: reshard(X: x) -> (Out: x.reshard_0) on @world: var x : f32[4, 8] @world[0, 1] => var x.reshard_0 : f32[4, 8] @world[0, -1]; "op 2 relu reads x as [0, -1], which is @world[0, 1]"`,
				"1: relu(X: x.reshard_0) -> (Out: y)",
			}},
		{"an optimizer op", `
    param w : f32[8] @world[1] {trainable}
    var g : f32[8] @world[-1]
    persist lr : f32[1] @world[-1]
    op 1 sgd(Param: w, Grad: g, LearningRate: lr) -> (ParamOut: w) role optimize
         dist @world impl default:0 [w: [1], g: [1], lr: [-1] -> w: [1]]`,
			[]string{
				`0: reshard(X: g) -> (Out: g.reshard_0) on @world: var g : f32[8] @world[-1] => var g.reshard_0 : f32[8] @world[1]; "op 1 sgd reads g as [1], which is @world[-1]"`,
				"0: sgd(Param: w, Grad: g.reshard_0, LearningRate: lr) -> (ParamOut: w)",
			}},
		{"a control-flow op's args are its sub-block's, left by name", `
    var x : f32[4, 8] @world[0, 1]
    var y : f32[4, 8] @world[0, -1]
    var c : bool[] @world[]
    var sc : step_scopes
    op 1 conditional_block(Cond: c, Input: x) -> (Out: y, Scope: sc) {is_scalar_condition = true, sub_block = ^1}
         dist @world impl default:0 [c: [], x: [0, -1] -> y: [0, -1]]
  }
  block 1 parent 0 {
    op 2 relu(X: x) -> (Out: y) dist @world impl default:0 [x: [0, 1] -> y: [0, -1]]`,
			[]string{
				"0: conditional_block(Cond: c, Input: x) -> (Out: y, Scope: sc)",
				"1: relu(X: x) -> (Out: y)",
			}},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := parseModule(t, meshes+"program main {\n  block 0 {"+c.body+"\n  }\n}\n")
			if err := runPipeline(t, "insert-reshards,verify", m); err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(c.name, "a control-flow op") { // its own mapping stays for check-annotations to refuse
				annotationsComplete(t, m)
			}
			if diff := cmp.Diff(c.want, opLines(m)); diff != "" {
				t.Errorf("ops (-want +got):\n%s", diff)
			}
			// The module prints and parses back as it is.
			if _, err := ir.Parse("out.dpir", ir.Print(m)); err != nil {
				t.Errorf("the result does not parse: %v", err)
			}
		})
	}
}

// The completed GPT with lazy partials: the reshards completion lists
// become reshard ops, one per var (the forward op's and its grad op's
// reads of it fold), and check-annotations refuses only them; partition
// refuses the module, naming the first, until reshards are lowered.
func TestInsertReshardsLazyGPT(t *testing.T) {
	listed := loadExample(t, "gpt_bare.dpir")
	rep, err := complete.Complete(listed, complete.Options{Registry: lower.DefaultRegistry(), Lazy: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Reshards) != 8 {
		t.Fatalf("completion lists %d reshards, want the 8 this test is about", len(rep.Reshards))
	}
	m := loadExample(t, "gpt_bare.dpir")
	if err := runPipeline(t, "complete{lazy=true},insert-reshards,verify", m); err != nil {
		t.Fatal(err)
	}
	annotationsComplete(t, m)
	b := m.Main.Global()
	made := map[string]string{} // reshard output -> its X
	var reshards []string
	for _, op := range b.Ops {
		if op.Type == ops.ReshardType {
			made[op.Output("Out")[0]] = op.Input("X")[0]
			reshards = append(reshards, op.Input("X")[0]+" -> "+op.Output("Out")[0])
		}
	}
	want := []string{
		"l0_proj_mm -> l0_proj_mm.reshard_0", "l0_fc2_mm -> l0_fc2_mm.reshard_0",
		"l1_proj_mm -> l1_proj_mm.reshard_0", "l1_fc2_mm -> l1_fc2_mm.reshard_0",
	}
	if diff := cmp.Diff(want, reshards); diff != "" {
		t.Errorf("reshard ops (-want +got):\n%s", diff)
	}
	for _, r := range rep.Reshards {
		var op *ir.Op
		for _, o := range b.Ops {
			if o.ID == r.Op {
				op = o
			}
		}
		if op == nil {
			t.Errorf("op %d %s is gone", r.Op, r.OpType)
			continue
		}
		found := false
		for name := range op.InputNames {
			if made[name] == r.Var {
				found = true
			}
			if name == r.Var {
				t.Errorf("%s still reads %s", op, r.Var)
			}
		}
		if !found {
			t.Errorf("%s reads no reshard of %s", op, r.Var)
		}
	}
	// Lowered, every rank's program computes what the serial one does.
	crep, err := check.Run(context.Background(), m, check.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := crep.Err(); err != nil || crep.Count("activation") == 0 {
		t.Errorf("check after insert-reshards: %v (%d activations compared)", err, crep.Count("activation"))
	}
}

// The same module gives the same bytes twice.
func TestInsertReshardsDeterministic(t *testing.T) {
	var outs [][]byte
	for range 2 {
		m := loadExample(t, "gpt_bare.dpir")
		if err := runPipeline(t, "complete{lazy=true},insert-reshards", m); err != nil {
			t.Fatal(err)
		}
		outs = append(outs, ir.Print(m))
	}
	if !bytes.Equal(outs[0], outs[1]) {
		t.Error("two runs print different modules")
	}
	if !bytes.Contains(outs[0], []byte("reshard(")) {
		t.Error("no reshard inserted: the test compares nothing")
	}
}

// A second run finds every op reading and writing its vars as they are:
// it inserts nothing.
func TestInsertReshardsIdempotent(t *testing.T) {
	m := loadExample(t, "gpt_bare.dpir")
	if err := runPipeline(t, "complete{lazy=true},insert-reshards", m); err != nil {
		t.Fatal(err)
	}
	before := ir.Print(m)
	if n := passes.InsertReshards(m); n != 0 {
		t.Errorf("the second run inserted %d reshards", n)
	}
	if !bytes.Equal(before, ir.Print(m)) {
		t.Error("the second run changed the module")
	}
}

// TestInsertReshardsNotLinear: an add of a partial value and a whole one
// does not carry the partial (each rank would add the whole one to its
// part), even with its output annotated partial: the partial input is
// resharded whole first, as check-annotations wants it.
func TestInsertReshardsNotLinear(t *testing.T) {
	data, err := os.ReadFile("../testdata/bad/partial_add_whole.dpir")
	if err != nil {
		t.Fatal(err)
	}
	m, err := ir.Parse("partial_add_whole.dpir", data)
	if err != nil {
		t.Fatal(err)
	}
	if n := passes.InsertReshards(m); n != 1 {
		t.Fatalf("%d reshards, want 1", n)
	}
	add := m.Main.Global().Ops[2]
	if add.Type != "elementwise_add" || add.Input("X")[0] != "y.reshard_0" {
		t.Errorf("the add reads %v, want y.reshard_0: %s", add.Input("X"), ir.PrintOp(add))
	}
}
