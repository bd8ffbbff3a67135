package cli

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/passes"
)

// testPasses is the default registry and two passes of the tests' own:
// drop-grad-allreduces, which partitions wrongly on purpose (every rank
// keeps its own grads instead of summing them over dp), and refuse,
// which fails on the ranks from its option from on.
func testPasses(t *testing.T) *passes.Registry {
	t.Helper()
	def := passes.DefaultRegistry()
	drop := &passes.Pass{
		Name: "drop-grad-allreduces",
		Doc:  "delete the in-place allreduces of the backward ops (a test's broken partitioner)",
		Run: func(ctx *passes.Context, m *ir.Module) error {
			b := m.Main.Global()
			n := len(b.Ops)
			b.Ops = slices.DeleteFunc(b.Ops, func(op *ir.Op) bool {
				return op.Type == "c_allreduce_sum" && op.Role.IsBackward() && slices.Equal(op.Input("X"), op.Output("Out"))
			})
			if len(b.Ops) == n {
				return errors.New("no grad allreduce to drop")
			}
			return nil
		},
	}
	refuse := &passes.Pass{
		Name: "refuse",
		Doc:  "fail on the ranks from from on (a test's failing pass)",
		Options: []passes.Option{
			{Name: "rank", Kind: passes.OptInt, Default: "0", Doc: "the rank run for"},
			{Name: "from", Kind: passes.OptInt, Default: "0", Doc: "the first rank refused"},
		},
		Run: func(ctx *passes.Context, m *ir.Module) error {
			if r := ctx.Int("rank"); r >= ctx.Int("from") {
				return fmt.Errorf("rank %d refused", r)
			}
			return nil
		},
	}
	reg, err := passes.NewRegistry(append(def.Passes(), drop, refuse), def.OrderRules())
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

// runCLI runs distpass with args and the registry reg, and returns its
// exit code, stdout and stderr.
func runCLI(reg *passes.Registry, args ...string) (int, string, string) {
	var stdout, stderr bytes.Buffer
	code := Main(args, &Env{Stdout: &stdout, Stderr: &stderr, Passes: reg})
	return code, stdout.String(), stderr.String()
}

// check -pipeline compares what the pipeline made with the serial input:
// the right partition passes, one that leaves the grads unsummed fails
// on them, statically and when run, though each rank's program verifies
// and the ranks' collectives still meet.
func TestCheckPipelineComparesThePipelinesPrograms(t *testing.T) {
	reg := testPasses(t)
	mlp := filepath.Join("..", "..", "examples", "mlp_dp_mp.dpir")

	code, good, stderr := runCLI(reg, "check", "-pipeline", "partition{rank=$RANK}", mlp)
	if code != ExitOK || stderr != "" {
		t.Fatalf("the right partition: exit %d, stderr %q", code, stderr)
	}
	if !strings.Contains(good, "compared: 1 loss, 3 activations, 2 params, 2 grads, 1 state, 3 startup values;") || strings.Contains(good, "MISMATCH") {
		t.Errorf("the right partition:\n%s", good)
	}

	code, bad, stderr := runCLI(reg, "check", "-pipeline", "partition{rank=$RANK},drop-grad-allreduces", mlp)
	if code != ExitFail {
		t.Fatalf("grads not summed: exit %d, want %d; stdout:\n%s", code, ExitFail, bad)
	}
	// What the dropped allreduces summed diverges, the grads over dp,
	// and the params they update; the forward does not.
	for _, v := range []string{"w1@GRAD", "w2@GRAD"} {
		if !regexp.MustCompile(`(?m)^grad +` + regexp.QuoteMeta(v) + ` .* MISMATCH on rank \d$`).MatchString(bad) {
			t.Errorf("grads not summed: %s does not diverge:\n%s", v, bad)
		}
	}
	for _, v := range []string{"loss", "h1", "a1", "h2"} {
		if !regexp.MustCompile(`(?m)^(loss|activation) +` + regexp.QuoteMeta(v) + ` .*  ok$`).MatchString(bad) {
			t.Errorf("grads not summed: %s diverges:\n%s", v, bad)
		}
	}
	for _, v := range []string{"w1", "w2"} {
		if !regexp.MustCompile(`(?m)^param +` + regexp.QuoteMeta(v) + ` .* MISMATCH on rank \d$`).MatchString(bad) {
			t.Errorf("grads not summed: param %s does not diverge:\n%s", v, bad)
		}
	}
	// The static proof refutes it first, naming the first op that reads
	// a grad still owing its sum; the simulator's evidence follows.
	if !regexp.MustCompile(`(?m)^static proof: refuted \(4 ranks\)$`).MatchString(bad) {
		t.Errorf("grads not summed: no static refutation:\n%s", bad)
	}
	if !regexp.MustCompile(`^` + regexp.QuoteMeta(mlp) + `: rank 0: op 10 sgd: refuted: sgd reads w1@GRAD, partial \[0\]: .*\n` +
		regexp.QuoteMeta(mlp) + `: param w1 diverged on rank 0 after step 1: `).MatchString(stderr) {
		t.Errorf("grads not summed: stderr %q", stderr)
	}
}

// A pass that fails on some ranks is reported for the first of them, in
// rank order, however the runs were scheduled: exit 1, nothing checked.
func TestCheckPipelineNamesTheRankThatFailed(t *testing.T) {
	reg := testPasses(t)
	mlp := filepath.Join("..", "..", "examples", "mlp_dp_mp.dpir")
	for range 5 {
		code, stdout, stderr := runCLI(reg, "check", "-pipeline", "partition{rank=$RANK},refuse{rank=$RANK,from=2}", mlp)
		want := mlp + `: rank 2: pass refuse{rank=2,from=2} (execution 9 of "partition{rank=2},refuse{rank=2,from=2}"): rank 2 refused` + "\n"
		if code != ExitFail || stdout != "" || stderr != want {
			t.Fatalf("exit %d, stdout %q, stderr %q; want exit %d and stderr %q", code, stdout, stderr, ExitFail, want)
		}
	}
}

// A pipeline whose result is not the rank's program is refused before
// anything runs: compared with the serial module as if it were, it
// would check nothing or the wrong rank.
func TestCheckPipelineRefusesWhatIsNotTheRanksProgram(t *testing.T) {
	reg := testPasses(t)
	mlp := filepath.Join("..", "..", "examples", "mlp_dp_mp.dpir")
	for _, c := range []struct{ pipeline, want string }{
		{"refuse{rank=$RANK,from=9}", mlp + ": rank 0: the pipeline leaves main unpartitioned: end it with partition{rank=$RANK}\n"},
		{"partition{rank=0},refuse{rank=$RANK,from=9}", mlp + ": rank 1: the pipeline makes rank 0's main program: end it with partition{rank=$RANK}\n"},
	} {
		code, stdout, stderr := runCLI(reg, "check", "-pipeline", c.pipeline, mlp)
		if code != ExitFail || stdout != "" || stderr != c.want {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit %d, stderr %q", c.pipeline, code, stdout, stderr, ExitFail, c.want)
		}
	}
}
