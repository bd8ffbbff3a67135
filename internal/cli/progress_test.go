package cli

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// Long runs show progress on stderr when it is a terminal, and nothing
// when it is not.
func TestProgressOnlyOnATerminal(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "..", "examples", "mlp_dp_mp.dpir"))
	if err != nil {
		t.Fatal(err)
	}
	// -all: one class of 4 ranks, its first rank lowered (no impl reads
	// the rank: no check lowering), then 4 files written.
	// check -pipeline: the pipeline's 4 runs end in any order, counted.
	steps := `\r\x1b\[Kcheck: serial 1/2\r\x1b\[Kcheck: serial 2/2\r\x1b\[Kcheck: spmd 1/2\r\x1b\[Kcheck: spmd 2/2\r\x1b\[K$`
	cases := []struct {
		args []string
		want *regexp.Regexp
	}{
		{[]string{"partition", "-all", "-o", t.TempDir(), "-"}, regexp.MustCompile(`^\r\x1b\[Kpartition: lowered 1/1` +
			`\r\x1b\[Kpartition: wrote 1/4 files\r\x1b\[Kpartition: wrote 2/4 files\r\x1b\[Kpartition: wrote 3/4 files\r\x1b\[Kpartition: wrote 4/4 files\r\x1b\[K$`)},
		{[]string{"check", "-steps", "2", "-"}, regexp.MustCompile(`^\r\x1b\[Kcheck: partition 1/4\r\x1b\[Kcheck: partition 2/4\r\x1b\[Kcheck: partition 3/4\r\x1b\[Kcheck: partition 4/4` + steps)},
		{[]string{"check", "-steps", "2", "-pipeline", "partition{rank=$RANK}", "-"}, regexp.MustCompile(`^\r\x1b\[Kcheck: pipeline 1/4\r\x1b\[Kcheck: pipeline 2/4\r\x1b\[Kcheck: pipeline 3/4\r\x1b\[Kcheck: pipeline 4/4` + steps)},
	}
	for _, term := range []bool{true, false} {
		for _, c := range cases {
			args := c.args
			var stdout, stderr bytes.Buffer
			env := &Env{Stdin: bytes.NewReader(src), Stdout: &stdout, Stderr: &stderr,
				Terminal: func(io.Writer) bool { return term }}
			if code := Main(args, env); code != ExitOK {
				t.Fatalf("%v: exit %d: %s", args, code, stderr.String())
			}
			got := stderr.String()
			if !term {
				if got != "" {
					t.Errorf("%v, not a terminal: stderr %q, want nothing", args, got)
				}
				continue
			}
			if !c.want.MatchString(got) {
				t.Errorf("%v on a terminal: stderr %q, want %s", args, got, c.want)
			}
		}
	}
}
