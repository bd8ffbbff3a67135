package ir_test

import (
	"strings"
	"testing"

	"github.com/distpass/distpass/ir"
)

// TestVerifyRejectsFinding1 holds ir.Verify to each kind of module that
// issue 22 found commands lowering although verify rejects it (the CLI now
// verifies first, so Verify is the one gate): one small module per kind,
// each parsing fine and failing Verify with one line naming its block, op
// or var.
func TestVerifyRejectsFinding1(t *testing.T) {
	const mesh = "mesh m shape [2] dims [x] ranks [0, 1]\n"
	for _, tc := range []struct{ name, src, want string }{
		{"global block with a parent", `program main {
  block 0 parent 1 {
    var x : f32[4]
  }
  block 1 parent 0 {
  }
}`, "main block 0: global block has parent 1, want -1"},
		{"var defined by two ops", `program main {
  block 0 {
    var x : f32[4] {is_data}
    var y : f32[4]
    op 1 relu(X: x) -> (Out: y)
    op 2 tanh(X: x) -> (Out: y)
  }
}`, `main block 0: var y: defined by op 2 tanh and op 1 relu`},
		{"negative dim", `program main {
  block 0 {
    var x : f32[4, -2]
  }
}`, "main block 0: var x: shape [4, -2]: dim 1 is -2, below -1"},
		{"op id 0", `program main {
  block 0 {
    var x : f32[4] {is_data}
    var y : f32[4]
    op 0 relu(X: x) -> (Out: y)
  }
}`, "main block 0: op 0 relu: id 0 is not positive (position 0 in block)"},
		{"negative op id", `program main {
  block 0 {
    var x : f32[4] {is_data}
    var y : f32[4]
    op -3 relu(X: x) -> (Out: y)
  }
}`, "main block 0: op -3 relu: id -3 is not positive (position 0 in block)"},
		{"fwd on a forward op", `program main {
  block 0 {
    var x : f32[4] {is_data}
    var y : f32[4]
    var z : f32[4]
    op 1 relu(X: x) -> (Out: y)
    op 2 relu(X: y) -> (Out: z) fwd 1
  }
}`, "main block 0: op 2 relu: forward op has fwd 1"},
		{"param listed twice", `program main {
  block 0 {
    param w : f32[4] {trainable}
    var w@GRAD : f32[4]
  }
}
grads w -> w@GRAD
grads w -> w@GRAD`, `grads: param w listed twice`},
		{"two params sharing one grad", `program main {
  block 0 {
    param w : f32[4] {trainable}
    param v : f32[4] {trainable}
    var g : f32[4]
  }
}
grads w -> g
grads v -> g`, `grads: grad g of v is also the grad of w`},
		{"a param and its grad twice, and a second param", `program main {
  block 0 {
    param w : f32[4] {trainable}
    param v : f32[4] {trainable}
    var g : f32[4]
  }
}
grads w -> g
grads v -> g
grads w -> g`, "grads: grad g of v is also the grad of w\ngrads: param w listed twice"},
		{"a param its own grad", `program main {
  block 0 {
    param w : f32[4] {trainable}
  }
}
grads w -> w`, `grads: grad w of w is a param of the list`},
		{"a param the grad of another", `program main {
  block 0 {
    param w : f32[4] {trainable}
    param v : f32[4] {trainable}
    var v@GRAD : f32[4]
  }
}
grads w -> v
grads v -> v@GRAD`, `grads: grad v of w is a param of the list`},
		{"non-persistable param", `program main {
  block 0 {
    var w : f32[4]
    var w@GRAD : f32[4]
  }
}
grads w -> w@GRAD`, `grads: param w is not persistable`},
		{"duplicate group id", mesh + `group 1 ranks [0, 1]
group 1 ranks [0]
program main {
  block 0 {
  }
}`, "group 1: declared twice"},
		{"duplicate rank in a group", mesh + `group 1 ranks [0, 0]
program main {
  block 0 {
  }
}`, "group 1: rank 0 listed twice"},
		{"dist on step_scopes", mesh + `program main {
  block 0 {
    var s : step_scopes @m[]
  }
}`, "main block 0: var s: step_scopes has a dist"},
		{"dangling var ref in an attr", `program main {
  block 0 {
    var x : f32[4] {is_data}
    var y : f32[4]
    op 1 relu(X: x) -> (Out: y) {ref = var(nosuch)}
  }
}`, "main block 0: op 1 relu: attr ref names undeclared var nosuch"},
		{"read before definition", `program main {
  block 0 {
    var x : f32[4] {is_data}
    var a : f32[4]
    var b : f32[4]
    op 1 relu(X: a) -> (Out: b)
    op 2 relu(X: x) -> (Out: a)
  }
}`, "main block 0: var a: read by op 1 relu before op 2 relu defines it"},
		{"read in a sub-block before definition", `program main {
  block 0 {
    var x : f32[4] {is_data}
    var a : f32[4]
    var cond : bool[1]
    op 1 fill_constant() -> (Out: cond) {shape = [1], value = 1.0}
    op 2 conditional_block(Cond: cond) -> () {sub_block = ^1}
    op 3 relu(X: x) -> (Out: a)
  }
  block 1 parent 0 {
    var t : f32[4]
    op 4 relu(X: a) -> (Out: t)
  }
}`, "main block 0: var a: read by op 4 relu in block 1 (through op 2 conditional_block) before op 3 relu defines it"},
		{"read in a nested sub-block before definition", `program main {
  block 0 {
    var x : f32[4] {is_data}
    var a : f32[4]
    var cond : bool[1]
    op 1 fill_constant() -> (Out: cond) {shape = [1], value = 1.0}
    op 2 conditional_block(Cond: cond) -> () {sub_block = ^1}
    op 3 relu(X: x) -> (Out: a)
  }
  block 1 parent 0 {
    op 4 conditional_block(Cond: cond) -> () {sub_block = ^2}
  }
  block 2 parent 1 {
    var t : f32[4]
    op 5 relu(X: a) -> (Out: t)
  }
}`, "main block 0: var a: read by op 5 relu in block 2 (through op 2 conditional_block) before op 3 relu defines it"},
		{"forward op writing a parameter", `program main {
  block 0 {
    var x : f32[4] {is_data}
    param w : f32[4] {trainable}
    op 1 relu(X: x) -> (Out: w)
  }
}`, `main block 0: op 1 relu: writes persistable w but has role forward, not optimize or lrsched`},
		{"forward op updating a parameter in place", `program main {
  block 0 {
    param w : f32[4] {trainable}
    op 1 scale(X: w) -> (Out: w) {scale = 2.0}
  }
}`, `main block 0: op 1 scale: updates trainable parameter w in place but has role forward: only optimize or lrsched ops update what is trained`},
	} {
		m, err := ir.ParseString(tc.name, tc.src)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		err = ir.Verify(m)
		if err == nil {
			t.Errorf("%s: Verify accepts it", tc.name)
			continue
		}
		if got := err.Error(); got != tc.want {
			t.Errorf("%s: Verify says\n%s\nwant\n%s", tc.name, strings.TrimSpace(got), tc.want)
		}
	}
}

// TestVerifySubBlockReadsAllowed: what the sub-block read rule lets
// through: a var defined before the op, one the sub-block writes before
// reading, one fed (no op of its block defines it), a loop-carried var
// the loop op itself defines, and data.
func TestVerifySubBlockReadsAllowed(t *testing.T) {
	const src = `program main {
  block 0 {
    var x : f32[4] {is_data}
    var before : f32[4]
    var inner : f32[4]
    var fed : f32[4]
    var carried : f32[4]
    var cond : bool[1]
    op 1 relu(X: x) -> (Out: before)
    op 2 fill_constant() -> (Out: cond) {shape = [1], value = 1.0}
    op 3 while(X: [x, carried], Condition: cond) -> (Out: [carried, inner]) {sub_block = ^1}
    op 4 relu(X: x) -> (Out: inner)
  }
  block 1 parent 0 {
    var t1 : f32[4]
    var t2 : f32[4]
    var t3 : f32[4]
    op 5 relu(X: before) -> (Out: t1)
    op 6 relu(X: fed) -> (Out: t2)
    op 7 relu(X: x) -> (Out: inner)
    op 8 relu(X: inner) -> (Out: t3)
    op 9 relu(X: t3) -> (Out: carried)
  }
}`
	m, err := ir.ParseString("ok.dpir", src)
	if err != nil {
		t.Fatal(err)
	}
	if err := ir.Verify(m); err != nil {
		t.Errorf("Verify: %v", err)
	}
}
