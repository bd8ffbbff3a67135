package ir_test

import (
	"testing"

	"github.com/distpass/distpass/ir"
)

// TestVerifyStartupAgainstMain: a startup var that main's block 0 also
// declares agrees with it on type, persistability and (when both have
// one) dist; before, partition-vars silently gave it main's.
func TestVerifyStartupAgainstMain(t *testing.T) {
	const head = `mesh m shape [2] dims [x] ranks [0, 1]
program main {
  block 0 {
    param w : f32[8, 4] @m[0, -1] {trainable}
    persist lr : f32[1]
    var h : f32[8]
  }
}
program startup {
  block 0 {
`
	for _, tc := range []struct{ vars, want string }{
		{"    param w : f32[8, 4]\n    persist lr : f32[1]\n    var h : f32[8]\n", ""},
		{"    persist w : f32[8, 4] @m[0, -1]\n    var other : f32[3]\n", ""},
		{"    param w : f32[8, 16]\n", "startup block 0: var w: type f32[8, 16] differs from f32[8, 4] in main block 0: main reads what startup initialises, and partition-vars would give it main's shape"},
		{"    param w : f64[8, 4]\n", "startup block 0: var w: type f64[8, 4] differs from f32[8, 4] in main block 0: main reads what startup initialises, and partition-vars would give it main's shape"},
		{"    param w : f32[8, 4, 1]\n", "startup block 0: var w: type f32[8, 4, 1] differs from f32[8, 4] in main block 0: main reads what startup initialises, and partition-vars would give it main's shape"},
		{"    var w : reader\n", "startup block 0: var w: type reader differs from f32[8, 4] in main block 0: main reads what startup initialises, and partition-vars would give it main's shape"},
		{"    var lr : f32[1]\n", "startup block 0: var lr: a var here but a persist in main block 0: startup and main share only persistables, so main's would not hold what startup computes"},
		{"    persist h : f32[8]\n", "startup block 0: var h: a persist here but a var in main block 0: startup and main share only persistables, so main's would not hold what startup computes"},
		{"    param w : f32[8, 4] @m[-1, 0]\n", "startup block 0: var w: dist @m[-1, 0] differs from @m[0, -1] in main block 0: partition-vars would give it main's"},
	} {
		m, err := ir.ParseString("s.dpir", head+tc.vars+"  }\n}\n")
		if err != nil {
			t.Fatal(err)
		}
		err = ir.Verify(m)
		if tc.want == "" {
			if err != nil {
				t.Errorf("%s: %v", tc.vars, err)
			}
			continue
		}
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s: Verify: %v\nwant %s", tc.vars, err, tc.want)
		}
	}
}
