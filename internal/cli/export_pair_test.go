package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The usage errors and refusals of the program-pair flags: their exit
// codes and the flag or the file they name.
func TestProgramPairFlags(t *testing.T) {
	tmp := t.TempDir()
	conv := filepath.Join("..", "..", "interop", "paddle", "testdata", "lite_conv_bn_relu.pdmodel")
	pir := filepath.Join("..", "..", "interop", "paddle", "testdata", "p2o_pir_ifelse.json")
	mlp := filepath.Join("..", "..", "examples", "mlp_dp_mp.dpir")
	out := filepath.Join(tmp, "x.pdmodel")
	tests := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"partition", "-all", "-format", "onnx", "-o", tmp, mlp}, ExitUsage, `invalid value "onnx" for flag -format: want dpir or pdmodel`},
		{[]string{"partition", "-rank", "1", "-format", "pdmodel", mlp}, ExitUsage, "-format pdmodel goes with -all and without -shared"},
		{[]string{"partition", "-all", "-shared", "-format", "pdmodel", "-o", tmp, mlp}, ExitUsage, "-format pdmodel goes with -all and without -shared"},
		{[]string{"export", conv, "-o", out, "-startup", filepath.Join(tmp, "s.pdmodel")}, ExitFail, "lite_conv_bn_relu.pdmodel: the module has no startup program to write to -startup "},
		{[]string{"export", mlp, "-o", out, "-startup", "-", "-sidecar", filepath.Join(tmp, "j")}, ExitUsage, "-startup and -sidecar write files: give a FILE, not -"},
		{[]string{"import", conv, "-startup", filepath.Join(tmp, "nosuch.pdmodel")}, ExitFail, "nosuch.pdmodel: no such file"},
		{[]string{"import", pir, "-startup", conv}, ExitUsage, "-sidecar and -startup are for ProgramDesc files"},
	}
	for _, tt := range tests {
		var stdout, stderr bytes.Buffer
		env := &Env{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr}
		if got := Main(tt.args, env); got != tt.code || !strings.Contains(stderr.String(), tt.want) {
			t.Errorf("%s: exit %d, stderr:\n%s\nwant exit %d and %q", strings.Join(tt.args, " "), got, stderr.String(), tt.code, tt.want)
		}
	}
	if _, err := os.Stat(filepath.Join(tmp, "s.pdmodel")); err == nil {
		t.Error("a refused -startup wrote its file")
	}
}
