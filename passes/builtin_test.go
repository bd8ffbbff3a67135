package passes_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/distpass/distpass/ir"
)

func parseModule(t *testing.T, src string) *ir.Module {
	t.Helper()
	m, err := ir.Parse("test.dpir", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if err := ir.Verify(m); err != nil {
		t.Fatalf("test input does not verify: %v", err)
	}
	return m
}

// A forward op whose outputs nobody reads stays while a grad op names it
// as its fwd (the partitioned col_1d case, where dce used to leave
// "fwd 1 names no op"); once the grad op goes too, so does it.
func TestDCEKeepsForwardOpsOfLiveGrads(t *testing.T) {
	const src = `program main {
  block 0 {
    var x : f32[4, 4] {is_data}
    persist w : f32[4, 4]
    var y : f32[4, 4]
    var y@GRAD : f32[4, 4]
    var w@GRAD : f32[4, 4]
    var z : f32[4, 4]
    var z2 : f32[4, 4]
    op 1 matmul_v2(X: x, Y: w) -> (Out: y)
    op 2 matmul_v2_grad(X: x, Y: w, Out@GRAD: y@GRAD) -> (Y@GRAD: w@GRAD) role backward fwd 1
    op 3 relu(X: x) -> (Out: z)
    op 4 relu_grad(Out: z, Out@GRAD: z) -> (X@GRAD: z2) role backward fwd 3
  }
}
grads w -> w@GRAD`
	m := parseModule(t, src)
	if err := run(t, testRegistry(t), "dce,verify", m); err != nil {
		t.Fatal(err)
	}
	var kept []int64
	for _, op := range m.Main.Global().Ops {
		kept = append(kept, op.ID)
	}
	if want := []int64{1, 2}; !slices.Equal(kept, want) {
		t.Errorf("kept ops %v, want %v", kept, want)
	}
}

func TestDCE(t *testing.T) {
	const src = `mesh w shape [2] dims [dp] ranks [0, 1]
program main {
  block 0 {
    var x : f32[4] {is_data}
    var a : f32[4]
    var b : f32[4]
    var c : f32[4]
    var s : f32[4]
    var r : f32[4]
    var k : f32[4]
    var unused : f32[4]
    persist p : f32[4]
    var i : i64[1]
    var loss : f32[]
    var cond : bool[1]
    var sc : step_scopes
    op 1 relu(X: x) -> (Out: a)
    op 2 relu(X: a) -> (Out: b)
    op 3 relu(X: b) -> (Out: c)
    op 4 c_allreduce_sum(X: x) -> (Out: s) {ring_id = 0}
    op 5 scale(X: x) -> (Out: p) role optimize
    op 6 relu(X: x) -> (Out: r)
    op 7 relu(X: x) -> (Out: k)
    op 8 fill_constant() -> (Out: i) {dtype = 3, shape = [1], value = 0.0}
    op 9 increment(X: i) -> (Out: i)
    op 10 mean(X: x) -> (Out: loss) role forward|loss
    op 11 fill_constant() -> (Out: cond) {dtype = 0, shape = [1], value = 1.0}
    op 12 while(X: x, Condition: cond) -> (StepScopes: sc) {sub_block = ^1}
  }
  block 1 parent 0 {
    var t : f32[4]
    op 13 relu(X: r) -> (Out: t)
    op 14 print(X: t) -> ()
  }
}`
	m := parseModule(t, src)
	// a, b, c: a dead chain; s: a collective; p: a persistable; r: read in
	// the sub-block; k: kept by name; i: only read by its own in-place
	// update, so both go; loss: the loss op; cond: read by while.
	if err := run(t, testRegistry(t), "dce{keep=k},verify", m); err != nil {
		t.Fatal(err)
	}
	var kept []int64
	for _, b := range m.Main.Blocks {
		for _, op := range b.Ops {
			kept = append(kept, op.ID)
		}
	}
	if got, want := kept, []int64{4, 5, 6, 7, 10, 11, 12, 13, 14}; !slices.Equal(got, want) {
		t.Errorf("kept ops %v, want %v", got, want)
	}
	var vars []string
	for _, v := range m.Main.Global().Vars() {
		vars = append(vars, v.Name())
	}
	if got, want := strings.Join(vars, " "), "x s r k p loss cond sc"; got != want {
		t.Errorf("vars %q, want %q", got, want)
	}
	// The examples have no dead code.
	for _, f := range []string{"mlp_dp_mp.dpir", "while_loop.dpir"} {
		m := loadExample(t, f)
		before := ir.Print(m)
		if err := run(t, testRegistry(t), "dce", m); err != nil {
			t.Fatal(err)
		}
		if string(before) != string(ir.Print(m)) {
			t.Errorf("dce changed %s", f)
		}
	}
}

func TestCanonicalizeNames(t *testing.T) {
	m := parseModule(t, `program main {
  block 0 {
    var x : f32[4]
    var fc.tmp_7 : f32[4]
    var fc.tmp_3 : f32[4]
    var fc.tmp_3@GRAD : f32[4]
    var c_identity.tmp_2 : f32[4]
    var not.tmp_x : f32[4]
    op 1 relu(X: x) -> (Out: fc.tmp_7)
    op 2 relu(X: fc.tmp_7) -> (Out: fc.tmp_3)
    op 3 relu(X: fc.tmp_3) -> (Out: c_identity.tmp_2)
    op 4 relu_grad(Out: fc.tmp_3, Out@GRAD: fc.tmp_3) -> (X@GRAD: fc.tmp_3@GRAD) role backward fwd 2
    op 5 relu(X: x) -> (Out: not.tmp_x)
  }
}`)
	if err := run(t, testRegistry(t), "canonicalize-names,verify", m); err != nil {
		t.Fatal(err)
	}
	want := `program main {
  block 0 {
    var x : f32[4]
    var fc.tmp_0 : f32[4]
    var fc.tmp_1 : f32[4]
    var fc.tmp_1@GRAD : f32[4]
    var c_identity.tmp_0 : f32[4]
    var not.tmp_x : f32[4]
    op 1 relu(X: x) -> (Out: fc.tmp_0) role forward
    op 2 relu(X: fc.tmp_0) -> (Out: fc.tmp_1) role forward
    op 3 relu(X: fc.tmp_1) -> (Out: c_identity.tmp_0) role forward
    op 4 relu_grad(Out: fc.tmp_1, Out@GRAD: fc.tmp_1) -> (X@GRAD: fc.tmp_1@GRAD) role backward fwd 2
    op 5 relu(X: x) -> (Out: not.tmp_x) role forward
  }
}
`
	if got := string(ir.Print(m)); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	// Canonical names are a fixed point.
	if err := run(t, testRegistry(t), "canonicalize-names", m); err != nil {
		t.Fatal(err)
	}
	if got := string(ir.Print(m)); got != want {
		t.Errorf("second run changed names:\n%s", got)
	}
}

// TestDCEKeepUndeclared: a keep name that no block declares is an error,
// not a silent no-op that lets dce remove the var meant.
func TestDCEKeepUndeclared(t *testing.T) {
	m := parseModule(t, `program main {
  block 0 {
    var x : f32[4] {is_data}
    var y : f32[4]
    op 1 relu(X: x) -> (Out: y)
  }
}`)
	err := run(t, testRegistry(t), "dce{keep=y;yy}", m)
	want := `pass dce{keep=y;yy} (execution 1 of "dce{keep=y;yy}"): keep names yy, which no block of main or startup declares`
	if err == nil || err.Error() != want {
		t.Errorf("err = %v\nwant %s", err, want)
	}
	if m.Main.Global().Var("y") == nil || len(m.Main.Global().Ops) != 1 {
		t.Error("dce changed the module before failing")
	}
}
