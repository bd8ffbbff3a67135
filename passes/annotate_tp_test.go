package passes_test

import (
	"strings"
	"testing"

	"github.com/distpass/distpass/passes"
)

// mlpSrc is a transformer's MLP block: fc1 with a bias, gelu, dropout,
// fc2, with a residual around it; W1COLS is fc1's width.
const mlpSrc = `module mlp
mesh world shape [2, 2] dims [dp, mp] ranks RANKS

program main {
  block 0 {
    var x : f64[4, 6] {is_data, stop_gradient}
    param w1 : f64[6, W1COLS] {trainable}
    param b1 : f64[W1COLS] {trainable}
    param w2 : f64[W1COLS, 6] {trainable}
    var h : f64[4, W1COLS]
    var hb : f64[4, W1COLS]
    var a : f64[4, W1COLS]
    var d : f64[4, W1COLS]
    var dm : u8[4, W1COLS]
    var o : f64[4, 6]
    var r : f64[4, 6]
    var loss : f64[]
    op 1 matmul_v2(X: x, Y: w1) -> (Out: h) {trans_x = false, trans_y = false} role forward
    op 2 elementwise_add(X: h, Y: b1) -> (Out: hb) {axis = -1} role forward
    op 3 gelu(X: hb) -> (Out: a) role forward
    op 4 dropout(X: a) -> (Out: d, Mask: dm) {dropout_prob = 0.0, is_test = false} role forward
    op 5 matmul_v2(X: d, Y: w2) -> (Out: o) {trans_x = false, trans_y = false} role forward
    op 6 elementwise_add(X: x, Y: o) -> (Out: r) {axis = -1} role forward
    op 7 mean(X: r) -> (Out: loss) role forward|loss
  }
}

program startup {
  block 0 {
    param w1 : f64[6, W1COLS] {trainable}
    param b1 : f64[W1COLS] {trainable}
    param w2 : f64[W1COLS, 6] {trainable}
    op 1 uniform_random() -> (Out: w1) {dtype = 6, max = 1.0, min = -1.0, seed = 3, shape = [6, W1COLS]} role forward
    op 2 uniform_random() -> (Out: b1) {dtype = 6, max = 1.0, min = -1.0, seed = 4, shape = [W1COLS]} role forward
    op 3 uniform_random() -> (Out: w2) {dtype = 6, max = 1.0, min = -1.0, seed = 5, shape = [W1COLS, 6]} role forward
  }
}
`

// TestAnnotateTensorParallelMLP: the pattern finds the MLP, splits fc1
// by columns (and its bias) and fc2 by rows; with the data split along
// dp and the rest completed, the activation between the matmuls stays
// split (no reshard), and the step is proven by check, in two rank
// orders and in f64 and f32.
func TestAnnotateTensorParallelMLP(t *testing.T) {
	for _, ranks := range []string{"[0, 1, 2, 3]", "[3, 0, 2, 1]"} {
		for _, f32 := range []bool{false, true} {
			src := strings.NewReplacer("W1COLS", "8", "RANKS", ranks).Replace(mlpSrc)
			if f32 {
				src = strings.NewReplacer("f64[", "f32[", "dtype = 6", "dtype = 5").Replace(src)
			}
			m := parseModule(t, src)
			n, err := passes.AnnotateTensorParallel(m, "world", "mp")
			if err != nil || n != 1 {
				t.Fatalf("AnnotateTensorParallel = %d, %v; want 1 MLP", n, err)
			}
			g := m.Main.Global()
			for name, want := range map[string]string{"w1": "@world[-1, 1]", "b1": "@world[1]", "w2": "@world[1, -1]"} {
				if d := g.Var(name).Dist; d == nil || d.String() != want {
					t.Errorf("%s: dist %v, want %s", name, d, want)
				}
			}
			if err := run(t, testRegistry(t), "append-backward{loss=loss},annotate-data-parallel{mesh=world,axis=dp,data-only=true},append-optimizer{type=sgd},complete,insert-reshards", m); err != nil {
				t.Fatal(err)
			}
			for _, name := range []string{"a", "d"} {
				if d := g.Var(name).Dist; d == nil || d.String() != "@world[0, 1]" {
					t.Errorf("%s: dist %v, want @world[0, 1]: the activation split by batch and by fc1's columns", name, d)
				}
			}
			for _, op := range g.Ops {
				if op.Type == "reshard" {
					t.Errorf("%s: the MLP moves no activation", op)
				}
			}
			checkSteps(t, m, 2)
		}
	}
}

// Refusals: no MLP (a single matmul), and an fc1 width that does not
// split over mp; the module is left as it was.
func TestAnnotateTensorParallelRefuses(t *testing.T) {
	m := parseModule(t, strings.NewReplacer("W1COLS", "7", "RANKS", "[0, 1, 2, 3]").Replace(mlpSrc))
	if _, err := passes.AnnotateTensorParallel(m, "world", "mp"); err == nil || !strings.Contains(err.Error(), "param w1 f64[6, 7]: its dim 1 does not split over mesh dim mp of size 2") {
		t.Errorf("err = %v", err)
	}
	if m.Main.Global().Var("w1").Dist != nil || m.Main.Global().Var("w2").Dist != nil {
		t.Error("a refusal annotated a param")
	}
	single := strings.NewReplacer("op 5 matmul_v2(X: d, Y: w2) -> (Out: o) {trans_x = false, trans_y = false}", "op 5 scale(X: d) -> (Out: o)").Replace(strings.NewReplacer("W1COLS", "6", "RANKS", "[0, 1, 2, 3]").Replace(mlpSrc))
	m = parseModule(t, single)
	if _, err := passes.AnnotateTensorParallel(m, "world", "mp"); err == nil || !strings.Contains(err.Error(), "no MLP or attention output projection found") {
		t.Errorf("err = %v", err)
	}
	if _, err := passes.AnnotateTensorParallel(m, "world", "tp"); err == nil || !strings.Contains(err.Error(), "axis=tp") {
		t.Errorf("err = %v", err)
	}
}
