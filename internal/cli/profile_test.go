package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// -cpuprofile and -memprofile before the command write gzipped pprof
// profiles of the run; a profile that cannot be written is a usage error.
func TestProfileFlags(t *testing.T) {
	dir := t.TempDir()
	cpu, mem := filepath.Join(dir, "cpu.prof"), filepath.Join(dir, "mem.prof")
	var stdout, stderr bytes.Buffer
	env := &Env{Stdout: &stdout, Stderr: &stderr}
	args := []string{"-cpuprofile", cpu, "-memprofile", mem, "verify", filepath.Join("..", "..", "examples", "mlp_dp_mp.dpir")}
	if code := Main(args, env); code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	for _, p := range []string{cpu, mem} {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if len(data) < 2 || data[0] != 0x1f || data[1] != 0x8b {
			t.Errorf("%s is not a gzipped profile (%d bytes)", p, len(data))
		}
	}
	stderr.Reset()
	if code := Main([]string{"-cpuprofile", filepath.Join(dir, "no", "such", "dir", "x"), "version"}, env); code != ExitUsage ||
		!strings.Contains(stderr.String(), "distpass: -cpuprofile: ") {
		t.Errorf("bad -cpuprofile: exit %d, stderr %q", code, stderr.String())
	}
}
