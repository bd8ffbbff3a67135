package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// Commands tell Env.PrepareHeap the heap they expect before they build
// it, once: heapPerInputByte per byte of the files they read, stdin
// included, whatever the command.
func TestPrepareHeapIsToldTheExpectedHeap(t *testing.T) {
	path := filepath.Join("..", "..", "examples", "mlp_dp_mp.dpir")
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	size := uint64(len(src))
	for _, c := range []struct {
		args  []string
		stdin []byte
		want  []uint64
	}{
		{[]string{"verify", path}, nil, []uint64{heapPerInputByte * size}},
		{[]string{"verify", path, path}, nil, []uint64{2 * heapPerInputByte * size}},
		{[]string{"verify", path, "-"}, src, []uint64{2 * heapPerInputByte * size}},
		{[]string{"partition", "-rank", "1", path}, nil, []uint64{heapPerInputByte * size}},
		{[]string{"partition", "-rank", "1", "-"}, src, []uint64{heapPerInputByte * size}},
		{[]string{"check", "-steps", "1", path}, nil, []uint64{heapPerInputByte * size}},
	} {
		var told []uint64
		var stdout, stderr bytes.Buffer
		env := &Env{Stdin: bytes.NewReader(c.stdin), Stdout: &stdout, Stderr: &stderr, PrepareHeap: func(n uint64) bool { told = append(told, n); return false }}
		if code := Main(c.args, env); code != ExitOK {
			t.Fatalf("%v: exit %d: %s", c.args, code, stderr.String())
		}
		if !slices.Equal(told, c.want) {
			t.Errorf("%v: PrepareHeap told %v, want %v", c.args, told, c.want)
		}
	}
}
