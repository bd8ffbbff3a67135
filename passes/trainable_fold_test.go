package passes_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/passes"
)

// runtimeShapeInference reshapes the way PP-OCR's SVTR neck does: the
// shape is a ShapeTensor list of fill_constants and one dim of the input
// read at run time (shape, then slice), the static attr a fallback that
// leaves that dim open; a dropout without its Mask, as inference programs
// write it.
const runtimeShapeInference = `module runtime
program main {
  block 0 {
    persist feed : feed_list
    persist fetch : fetch_list
    var x : f64[-1, 2, 3] lod 0
    persist w : f64[3, 4]
    var h : f64[-1, 2, 4]
    var s : i32[3]
    var s2 : i32[1]
    var c0 : i32[1]
    var c8 : i32[1]
    var r : f64[-1, -1]
    var rx : f64[0, -1, 2, 4]
    var d : f64[-1, -1]
    op 1 feed(X: feed) -> (Out: x) {col = 0}
    op 2 matmul_v2(X: x, Y: w) -> (Out: h) {trans_x = false, trans_y = false}
    op 3 shape(Input: h) -> (Out: s)
    op 4 slice(Input: s) -> (Out: s2) {axes = [0], starts = [0], ends = [1], decrease_axis = []}
    op 5 fill_constant() -> (Out: c8) {dtype = 2, shape = [1], value = 8.0, str_value = "8"}
    op 6 reshape2(X: h, ShapeTensor: [s2, c8]) -> (Out: r, XShape: rx) {shape = [-1, 8]}
    op 7 dropout(X: r) -> (Out: d) {dropout_prob = 0.5, is_test = true}
    op 8 fetch(X: d) -> (Out: fetch) {col = 0}
  }
}
`

// TestMakeTrainableFoldsRuntimeShapes: shape= proves the ShapeTensor's
// values at the new shape (the batch read by shape and slice, 8 by
// fill_constant), writes them into the attr, drops the shape arithmetic
// that no one reads any more, gives the dropout its Mask, and the step
// trains data-parallel, proven by check.
func TestMakeTrainableFoldsRuntimeShapes(t *testing.T) {
	m := parseModule(t, runtimeShapeInference)
	st, err := passes.MakeTrainable(m, passes.TrainableOptions{Loss: "softmax_with_cross_entropy", Label: "label", Shape: []int64{4, 2, 3}, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	g := m.Main.Global()
	want := "op 6 reshape2(X: h, ShapeTensor: []) -> (Out: r, XShape: rx) {shape = [4, 8]} role forward"
	if !slices.ContainsFunc(g.Ops, func(op *ir.Op) bool { return ir.PrintOp(op) == want }) {
		t.Fatalf("no op %s in\n%s", want, ir.Print(m))
	}
	for _, op := range g.Ops {
		if op.Type == "shape" || op.Type == "slice" || op.Type == "fill_constant" {
			t.Errorf("%s is left, though nothing reads it", op)
		}
	}
	if st.Folded != 1 || st.Pruned != 3 || st.Masks != 1 {
		t.Errorf("folded %d, pruned %d, masks %d: want 1, 3, 1", st.Folded, st.Pruned, st.Masks)
	}
	if v := g.Var("r"); v.Type.String() != "f64[4, 8]" {
		t.Errorf("r = %s, want f64[4, 8]", v.Type)
	}
	if v := g.Var("d.mask"); v == nil || v.Type.String() != "u8[4, 8]" {
		t.Errorf("the dropout's mask is %v, want d.mask u8[4, 8]", v)
	}
	if err := run(t, testRegistry(t), "verify,append-backward{loss=loss},annotate-data-parallel{shape=2},append-optimizer{type=sgd},verify", m); err != nil {
		t.Fatal(err)
	}
	checkSteps(t, m, 2)
}

// A ShapeTensor make-trainable cannot prove (it reads a data value, not a
// shape) is refused, naming the op, the arg and the op that writes it,
// and the module is left as it was.
func TestMakeTrainableRefusesUnprovableShape(t *testing.T) {
	src := strings.NewReplacer(
		"op 3 shape(Input: h) -> (Out: s)", "op 3 cast(X: h) -> (Out: s) {in_dtype = 6, out_dtype = 2}",
		"var s : i32[3]", "var s : i32[-1, 2, 4]",
	).Replace(runtimeShapeInference)
	m := parseModule(t, src)
	before := string(ir.Print(m))
	err := run(t, testRegistry(t), "make-trainable{shape=4x2x3}", m)
	for _, want := range []string{"op 6 reshape2", "ShapeTensor", "s2", "op 4 slice", "cannot prove"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("err = %v, want it to name %s", err, want)
		}
	}
	if string(ir.Print(m)) != before {
		t.Fatal("a refusal changed the module")
	}
}
