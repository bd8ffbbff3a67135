package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Commands tell Env.PrepareHeap the heap they expect before they build
// it: heapPerInputByte per byte of the files they read, and bench
// benchHeapPerOp per op of each module it generates, and again before
// each run of a stage on it, so that every run starts with the
// collector paced alike. bench builds every module first, then runs
// each stage on every module in turn, all the runs of one before the
// next.
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
		{[]string{"bench", "-ops", "300,600", "-stages", "verify"},
			[]uint64{300 * benchHeapPerOp, 600 * benchHeapPerOp, 300 * benchHeapPerOp, 600 * benchHeapPerOp}},
		{[]string{"bench", "-ops", "300", "-stages", "walk,verify", "-repeat", "2"}, slices.Repeat([]uint64{300 * benchHeapPerOp}, 5)},
		{[]string{"bench", "-ops", "300,600", "-stages", "walk,verify", "-repeat", "2"},
			[]uint64{300 * benchHeapPerOp, 600 * benchHeapPerOp, // the modules
				300 * benchHeapPerOp, 300 * benchHeapPerOp, 600 * benchHeapPerOp, 600 * benchHeapPerOp, // walk
				300 * benchHeapPerOp, 300 * benchHeapPerOp, 600 * benchHeapPerOp, 600 * benchHeapPerOp}}, // verify
	} {
		var told []uint64
		var stdout, stderr bytes.Buffer
		env := &Env{Stdout: &stdout, Stderr: &stderr, PrepareHeap: func(n uint64) bool { told = append(told, n); return false }}
		Main(c.args, env)
		if !slices.Equal(told, c.want) {
			t.Errorf("%v: PrepareHeap told %v, want %v (stderr %q)", c.args, told, c.want, stderr.String())
		}
	}
}

// bench says whether the heap was readied for huge pages: its figures
// depend on it.
func TestBenchReportsHugePages(t *testing.T) {
	for _, prepared := range []bool{false, true} {
		var stdout, stderr bytes.Buffer
		env := &Env{Stdout: &stdout, Stderr: &stderr, PrepareHeap: func(uint64) bool { return prepared }}
		if code := Main([]string{"bench", "-ops", "300", "-stages", "walk"}, env); code != ExitOK {
			t.Fatalf("exit %d: %s", code, stderr.String())
		}
		want := map[bool]string{false: "heap on base pages", true: "heap on huge pages"}[prepared]
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("PrepareHeap returning %v: no %q in\n%s", prepared, want, stdout.String())
		}
		stdout.Reset()
		if code := Main([]string{"bench", "-ops", "300", "-stages", "walk", "-json"}, env); code != ExitOK {
			t.Fatalf("exit %d: %s", code, stderr.String())
		}
		if want := fmt.Sprintf(`"huge_pages": %v`, prepared); !strings.Contains(stdout.String(), want) {
			t.Errorf("PrepareHeap returning %v: no %s in the JSON", prepared, want)
		}
	}
}
