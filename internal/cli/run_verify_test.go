package cli

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/ops"
	"github.com/distpass/distpass/passes"
)

// breakingPasses is the default registry and two passes that leave a
// module verify refuses, as a pass with a bug would: overflow gives var
// x a shape whose element count overflows int64, and bad-ring points
// the first collective of main at a group the table lacks.
func breakingPasses(t *testing.T) *passes.Registry {
	t.Helper()
	def := passes.DefaultRegistry()
	overflow := &passes.Pass{
		Name: "overflow",
		Doc:  "give var x an element count that overflows (a test's broken pass)",
		Run: func(_ *passes.Context, m *ir.Module) error {
			v := m.Main.Global().Var("x")
			if v == nil {
				return errors.New("no var x")
			}
			v.Type.Shape = []int64{1 << 62, v.Type.Shape[1]}
			return nil
		},
	}
	badRing := &passes.Pass{
		Name: "bad-ring",
		Doc:  "point main's first collective at ring 99 (a test's broken pass)",
		Run: func(_ *passes.Context, m *ir.Module) error {
			for _, op := range m.Main.Global().Ops {
				if ops.IsCollective(op.Type) {
					op.Attrs.Set("ring_id", ir.Int(99))
					return nil
				}
			}
			return errors.New("no collective")
		},
	}
	reg, err := passes.NewRegistry(append(def.Passes(), overflow, badRing), def.OrderRules())
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

// run prints nothing verify refuses (issue 37, finding 8): a pipeline
// whose result breaks a rule exits 1 and says which, and writes nothing,
// to stdout or to -o.
func TestRunVerifiesItsResult(t *testing.T) {
	reg := breakingPasses(t)
	mlp := filepath.Join("..", "..", "examples", "mlp_dp_mp.dpir")
	code, stdout, stderr := runCLI(reg, "run", "-pipeline", "overflow", mlp)
	// Every violation, one a line, each saying the result was not
	// written: the var, and the op that now reads it inconsistently.
	prefix := mlp + ": the result does not verify, so it is not written: "
	want := prefix + "main block 0: var x: shape [4611686018427387904, 16]: element count overflows int64\n"
	if code != ExitFail || stdout != "" || !strings.HasPrefix(stderr, want) {
		t.Errorf("exit %d, stdout %q, stderr %q; want exit 1 and first %q", code, stdout, stderr, want)
	}
	for _, line := range strings.Split(strings.TrimSuffix(stderr, "\n"), "\n") {
		if !strings.HasPrefix(line, prefix) {
			t.Errorf("line %q does not say the result was not written", line)
		}
	}
	out := filepath.Join(t.TempDir(), "out.dpir")
	if code, _, _ := runCLI(reg, "run", "-pipeline", "overflow", "-o", out, mlp); code != ExitFail {
		t.Errorf("run -o: exit %d", code)
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("run -o wrote %s (%v)", out, err)
	}
	// partition -rank shares run's printing.
	code, stdout, stderr = runCLI(reg, "run", "-pipeline", "partition{rank=1},bad-ring", mlp)
	if code != ExitFail || stdout != "" || !strings.HasPrefix(stderr, mlp+": the result does not verify, so it is not written: main block 0: op ") ||
		!strings.HasSuffix(stderr, ": attr ring_id = 99 names no group of the group table (ids 0 to 4)\n") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	// A pipeline that breaks nothing prints as before.
	if code, stdout, stderr := runCLI(reg, "run", "-pipeline", "partition{rank=1}", mlp); code != ExitOK || stdout == "" || stderr != "" {
		t.Errorf("a right pipeline: exit %d, stderr %q", code, stderr)
	}
}

// run of a pipeline with $RANK verifies each rank's result and writes no
// rank's file when one does not verify, naming the rank.
func TestRunPerRankVerifiesItsResults(t *testing.T) {
	reg := breakingPasses(t)
	mlp := filepath.Join("..", "..", "examples", "mlp_dp_mp.dpir")
	dir := filepath.Join(t.TempDir(), "out")
	code, stdout, stderr := runCLI(reg, "run", "-pipeline", "partition{rank=$RANK},bad-ring", "-o", dir, mlp)
	if code != ExitFail || stdout != "" || !strings.HasPrefix(stderr, mlp+": rank 0: the result does not verify, so it is not written: main block 0: op ") ||
		strings.Count(stderr, "\n") != 1 {
		t.Errorf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("run wrote %s (%v)", dir, err)
	}
}

// verifyRank names the rank on every line, as partition -all says it.
func TestVerifyRankNamesTheRank(t *testing.T) {
	m, err := ir.ParseString("r.dpir", `group 0 ranks [0, 1]
program main rank 1 {
  block 0 {
    var x : f32[2] {is_data}
    var y : f32[2]
    var z : f32[2]
    op 1 c_allreduce_sum(X: x) -> (Out: y) {ring_id = 3}
    op 2 c_allreduce_sum(X: y) -> (Out: z)
  }
}
`)
	if err != nil {
		t.Fatal(err)
	}
	got := verifyRank(m)
	want := "rank 1: the result does not verify, so it is not written: main block 0: op 1 c_allreduce_sum: attr ring_id = 3 names no group of the group table (its only group is 0)\n" +
		"rank 1: the result does not verify, so it is not written: main block 0: op 2 c_allreduce_sum: attr ring_id missing: in a per-rank program (rank 1) every collective names the group it runs over, an id of the group table"
	if got == nil || got.Error() != want {
		t.Errorf("got %v\nwant %s", got, want)
	}
}
