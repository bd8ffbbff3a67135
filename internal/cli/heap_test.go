package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// Commands tell Env.PrepareHeap the heap they expect before they build
// it: heapPerInputByte per byte of the files they read, and bench
// benchHeapPerOp per op of each module it generates.
func TestPrepareHeapIsToldTheExpectedHeap(t *testing.T) {
	path := filepath.Join("..", "..", "examples", "mlp_dp_mp.dpir")
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want []uint64
	}{
		{[]string{"verify", path}, []uint64{heapPerInputByte * uint64(st.Size())}},
		{[]string{"verify", path, path}, []uint64{2 * heapPerInputByte * uint64(st.Size())}},
		{[]string{"bench", "-ops", "300,600", "-stages", "verify"}, []uint64{300 * benchHeapPerOp, 600 * benchHeapPerOp}},
	} {
		var told []uint64
		var stdout, stderr bytes.Buffer
		env := &Env{Stdout: &stdout, Stderr: &stderr, PrepareHeap: func(n uint64) { told = append(told, n) }}
		Main(c.args, env)
		if !slices.Equal(told, c.want) {
			t.Errorf("%v: PrepareHeap told %v, want %v (stderr %q)", c.args, told, c.want, stderr.String())
		}
	}
}
