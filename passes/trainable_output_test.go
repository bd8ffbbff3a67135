package passes_test

import (
	"strings"
	"testing"

	"github.com/distpass/distpass/ir"
)

// twoOutputs is smallInference fetching two vars, p and h, as MnasNet's
// export fetches two.
var twoOutputs = strings.Replace(smallInference, `op 6 fetch(X: p) -> (Out: fetch) {col = 0}`,
	`op 6 fetch(X: p) -> (Out: fetch) {col = 0}
    op 7 fetch(X: h) -> (Out: fetch) {col = 1}`, 1)

// make-trainable{output=NAME} trains a program that fetches several vars
// on the one named: the loss reads it, the other stays computed, and the
// step checks data-parallel. Without output= the refusal names the
// fetched vars and the option; an output= that names no fetched var is
// refused, naming them.
func TestMakeTrainableOutputOption(t *testing.T) {
	for _, out := range []string{"p", "h"} {
		m := parseModule(t, twoOutputs)
		pipeline := "make-trainable{shape=4x4,output=" + out + "},append-backward{loss=loss},annotate-data-parallel{shape=2},append-optimizer{type=sgd,lr=0.1},verify"
		if err := run(t, testRegistry(t), pipeline, m); err != nil {
			t.Fatalf("output=%s: %v", out, err)
		}
		var xent *ir.Op
		for _, op := range m.Main.Global().Ops {
			if op.Type == "fetch" || op.Type == "feed" {
				t.Errorf("output=%s: %s left", out, op)
			}
			if op.Type == "softmax_with_cross_entropy" {
				xent = op
			}
		}
		if xent == nil || len(xent.Input("Logits")) != 1 || xent.Input("Logits")[0] != out {
			t.Fatalf("output=%s: the loss reads %v, want %s", out, xent, out)
		}
		rep := checkSteps(t, m, 2)
		if rep.Count("loss") != 1 {
			t.Fatalf("output=%s: compared %d losses", out, rep.Count("loss"))
		}
	}
	for _, c := range []struct{ opts, want string }{
		{"", "2 fetch ops (of p, h): choose with output=NAME (p or h), or several with output=NAME:W;NAME:W (the loss their weighted sum)"},
		{"output=a", "output=a: a is not a fetched var (the program fetches p, h)"},
	} {
		m := parseModule(t, twoOutputs)
		before := string(ir.Print(m))
		err := run(t, testRegistry(t), "make-trainable{"+c.opts+"}", m)
		if err == nil || !strings.HasSuffix(err.Error(), c.want) {
			t.Errorf("make-trainable{%s}: err = %v\nwant it to end with %s", c.opts, err, c.want)
		}
		if string(ir.Print(m)) != before {
			t.Errorf("make-trainable{%s}: a refusal changed the module", c.opts)
		}
	}
	// A program with one fetched var takes output= naming it, and
	// refuses another name.
	m := parseModule(t, smallInference)
	if err := run(t, testRegistry(t), "make-trainable{output=p}", m); err != nil {
		t.Errorf("one output, output=p: %v", err)
	}
	m = parseModule(t, smallInference)
	if err := run(t, testRegistry(t), "make-trainable{output=h}", m); err == nil || !strings.HasSuffix(err.Error(), "output=h: h is not a fetched var (the program fetches p)") {
		t.Errorf("one output, output=h: err = %v", err)
	}
}

// Paddle's seed attr is a 32-bit int: seed= beyond 2147483647 is refused
// when the option is parsed, naming the range, and a seed whose later
// initialisers (seed+1, ...) would pass it is refused naming the var.
func TestMakeTrainableSeedRange(t *testing.T) {
	for _, c := range []struct{ opts, want string }{
		{"seed=2147483648", `pass make-trainable: option seed wants an integer from 1 to 2147483647, not "2147483648"`},
		{"seed=0", `pass make-trainable: option seed wants an integer from 1 to 2147483647, not "0"`},
	} {
		_, err := testRegistry(t).Parse("make-trainable{" + c.opts + "}")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("make-trainable{%s}: err = %v, want it to contain %s", c.opts, err, c.want)
		}
	}
	// The largest seed takes one random initialiser (w; the bias is a
	// fill_constant).
	m := parseModule(t, smallInference)
	if err := run(t, testRegistry(t), "make-trainable{seed=2147483647},verify", m); err != nil {
		t.Fatal(err)
	}
	if got := m.Startup.Global().Ops[0].Attrs.Get("seed"); got != ir.Int(2147483647) {
		t.Errorf("seed %v, want 2147483647", got)
	}
	// Two random initialisers from the largest seed: the second passes it.
	two := strings.Replace(smallInference, "persist fc.b_0 : f64[5]", "persist fc.b_0 : f64[5]\n    persist w2 : f64[5, 5]\n    var h2 : f64[-1, 5]", 1)
	two = strings.Replace(two, "op 5 relu(X: r) -> (Out: p)", "op 9 mul(X: r, Y: w2) -> (Out: h2) {x_num_col_dims = 1, y_num_col_dims = 1}\n    op 5 relu(X: h2) -> (Out: p)", 1)
	m = parseModule(t, two)
	err := run(t, testRegistry(t), "make-trainable{seed=2147483647}", m)
	want := "seed=2147483647: the random initialiser of w2 would take seed 2147483648, past 2147483647 (Paddle's seed attr is a 32-bit int): give a smaller seed"
	if err == nil || !strings.HasSuffix(err.Error(), want) {
		t.Errorf("err = %v\nwant it to end with %s", err, want)
	}
}
