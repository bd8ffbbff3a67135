package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Every command: help on stdout with exit 0, a usage error exit 2, bad
// input exit 1, and a good run from stdin exit 0.
func TestEveryCommandHelpAndExitCodes(t *testing.T) {
	mlp, err := os.ReadFile(filepath.Join("..", "..", "examples", "mlp_dp_mp.dpir"))
	if err != nil {
		t.Fatal(err)
	}
	pdmodel, err := os.ReadFile(filepath.Join("..", "..", "interop", "paddle", "testdata", "lite_conv_bn_relu.pdmodel"))
	if err != nil {
		t.Fatal(err)
	}
	bad := []byte("program main {\n  block 0 {\n    op 1 relu(X: nosuch) -> ()\n  }\n}\n")
	garbled := []byte("program main { block 0 { op }")
	tmp := t.TempDir()
	type run struct {
		args  []string
		stdin []byte
	}
	cases := map[string]struct{ ok, usage, fail run }{
		"fmt":       {run{[]string{"-"}, mlp}, run{[]string{"-nosuch"}, nil}, run{[]string{"-"}, garbled}},
		"verify":    {run{[]string{"-"}, mlp}, run{[]string{"-nosuch"}, nil}, run{[]string{"-"}, bad}},
		"passes":    {run{nil, nil}, run{[]string{"extra"}, nil}, run{}},
		"run":       {run{[]string{"-pipeline", "verify,dce", "-"}, mlp}, run{[]string{"-"}, mlp}, run{[]string{"-pipeline", "verify", "-"}, bad}},
		"partition": {run{[]string{"-rank", "1", "-"}, mlp}, run{[]string{"-"}, mlp}, run{[]string{"-rank", "9", "-"}, mlp}},
		"dot":       {run{[]string{"-"}, mlp}, run{[]string{"-nosuch"}, nil}, run{[]string{"-"}, garbled}},
		"check":     {run{[]string{"-"}, mlp}, run{[]string{"-steps", "x"}, nil}, run{[]string{"-"}, bad}},
		"explain":   {run{[]string{"-all", "-"}, mlp}, run{[]string{"-rank", "1", "-all", "-"}, mlp}, run{[]string{"-rank", "9", "-"}, mlp}},
		"example":   {run{[]string{"mlp"}, nil}, run{[]string{"bert"}, nil}, run{}},
		"html":      {run{[]string{"-pipeline", "verify", "-o", filepath.Join(tmp, "p.html"), "-"}, mlp}, run{[]string{"-"}, mlp}, run{[]string{"-pipeline", "verify", "-o", filepath.Join(tmp, "q.html"), "-"}, bad}},
		"version":   {run{nil, nil}, run{[]string{"extra"}, nil}, run{}},
		"ops":       {run{[]string{"matmul_v2", "-json"}, nil}, run{[]string{"matmul_v3"}, nil}, run{}},
		"mlir":      {run{[]string{"-"}, mlp}, run{[]string{"-nosuch"}, nil}, run{[]string{"-"}, garbled}},
		"import":    {run{[]string{"-"}, pdmodel}, run{[]string{"-nosuch"}, nil}, run{[]string{"-"}, mlp}},
		"complete":  {run{[]string{"-report", "-"}, mlp}, run{[]string{"-json", "-"}, mlp}, run{[]string{"-"}, []byte("program main {\n  block 0 {\n    var x : f32[2]\n  }\n}\n")}},
		"export":    {run{[]string{"-drop", "-o", filepath.Join(tmp, "x.pdmodel"), "-"}, mlp}, run{[]string{"-nosuch"}, nil}, run{[]string{"-o", filepath.Join(tmp, "y.pdmodel"), "-"}, mlp}},
	}
	for _, c := range commands() {
		tc, ok := cases[c.name]
		if !ok {
			t.Errorf("command %s has no case here", c.name)
			continue
		}
		do := func(r run, want int, what string) string {
			var stdout, stderr bytes.Buffer
			env := &Env{Stdin: bytes.NewReader(r.stdin), Stdout: &stdout, Stderr: &stderr}
			if got := Main(append([]string{c.name}, r.args...), env); got != want {
				t.Errorf("%s %s (%s): exit %d, want %d; stderr:\n%s", c.name, strings.Join(r.args, " "), what, got, want, stderr.String())
			}
			if want != ExitOK && stderr.Len() == 0 {
				t.Errorf("%s %s (%s): exit %d with nothing on stderr", c.name, strings.Join(r.args, " "), what, want)
			}
			return stdout.String()
		}
		if out := do(run{[]string{"-h"}, nil}, ExitOK, "-h"); !strings.HasPrefix(out, "usage: distpass "+c.name) {
			t.Errorf("%s -h: stdout %.40q, want the usage", c.name, out)
		}
		var stdout bytes.Buffer
		if Main([]string{"help", c.name}, &Env{Stdout: &stdout, Stderr: &stdout}) != ExitOK || !strings.HasPrefix(stdout.String(), "usage: distpass "+c.name) {
			t.Errorf("help %s: %.40q", c.name, stdout.String())
		}
		do(tc.ok, ExitOK, "ok")
		do(tc.usage, ExitUsage, "usage")
		if tc.fail.args != nil || tc.fail.stdin != nil {
			do(tc.fail, ExitFail, "fail")
		}
	}
}
