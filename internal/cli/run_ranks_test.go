package cli

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// run of a pipeline with $RANK that fails on some ranks names the first
// of them, and writes no rank's file.
func TestRunPerRankNamesTheRankThatFailed(t *testing.T) {
	reg := testPasses(t)
	mlp := filepath.Join("..", "..", "examples", "mlp_dp_mp.dpir")
	dir := filepath.Join(t.TempDir(), "out")
	code, stdout, stderr := runCLI(reg, "run", "-pipeline", "partition{rank=$RANK},refuse{rank=$RANK,from=1}", "-o", dir, mlp)
	if code != ExitFail || stdout != "" || !strings.HasPrefix(stderr, mlp+": rank 1: pass refuse{rank=1,from=1} ") || strings.Count(stderr, "\n") != 1 {
		t.Errorf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("run of a failing pipeline wrote %s (%v)", dir, err)
	}
}
