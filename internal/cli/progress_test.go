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
	for _, term := range []bool{true, false} {
		for _, args := range [][]string{{"partition", "-all", "-o", t.TempDir(), "-"}, {"check", "-steps", "2", "-"}} {
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
			want := map[string]*regexp.Regexp{
				// One class of 4 ranks: its first rank lowered (no impl
				// reads the rank: no check lowering), then 4 files written.
				"partition": regexp.MustCompile(`^\r\x1b\[Kpartition: lowered 1/1` +
					`\r\x1b\[Kpartition: wrote 1/4 files\r\x1b\[Kpartition: wrote 2/4 files\r\x1b\[Kpartition: wrote 3/4 files\r\x1b\[Kpartition: wrote 4/4 files\r\x1b\[K$`),
				"check": regexp.MustCompile(`^\r\x1b\[Kcheck: partition 1/4\r\x1b\[Kcheck: partition 2/4\r\x1b\[Kcheck: partition 3/4\r\x1b\[Kcheck: partition 4/4` +
					`\r\x1b\[Kcheck: serial 1/2\r\x1b\[Kcheck: serial 2/2\r\x1b\[Kcheck: spmd 1/2\r\x1b\[Kcheck: spmd 2/2\r\x1b\[K$`),
			}[args[0]]
			if !want.MatchString(got) {
				t.Errorf("%v on a terminal: stderr %q, want %s", args, got, want)
			}
		}
	}
}
