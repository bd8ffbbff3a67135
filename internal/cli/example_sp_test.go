package cli

import (
	"bytes"
	"strings"
	"testing"
)

// example gpt -strategy dp,mp,sp takes the mesh of dp,mp (sp is along
// mp), and the pipeline of the issue partitions it: its reshards become
// all-gathers and reduce-scatters, which explain lists.
func TestExampleSeqParallel(t *testing.T) {
	run := func(stdin []byte, args ...string) []byte {
		t.Helper()
		var out, errb bytes.Buffer
		if code := Main(args, &Env{Stdin: bytes.NewReader(stdin), Stdout: &out, Stderr: &errb}); code != ExitOK {
			t.Fatalf("%v: exit %d: %s", args, code, errb.String())
		}
		return out.Bytes()
	}
	src := run(nil, "example", "gpt", "-strategy", "dp,mp,sp")
	if !bytes.Contains(src, []byte("mesh world shape [2, 2] dims [dp, mp]")) {
		t.Fatalf("example gpt -strategy dp,mp,sp: no 2x2 dp×mp mesh:\n%.400s", src)
	}
	done := run(src, "run", "-pipeline", "complete,insert-reshards", "-")
	rank := string(run(done, "partition", "-rank", "1", "-"))
	for _, want := range []string{"c_allgather(", "c_reducescatter("} {
		if !strings.Contains(rank, want) {
			t.Errorf("rank 1 has no %s", want)
		}
	}
	ex := string(run(done, "explain", "-rank", "1", "-"))
	if !strings.Contains(ex, "c_reducescatter") || !strings.Contains(ex, "reshard l0_proj_mm @world[0, -1, -1] partial [1] to l0_proj_mm.reshard_0 @world[0, 1, -1]: reduce-scatter over mp") {
		t.Errorf("explain lists no reduce-scatter of l0_proj_mm:\n%s", ex)
	}
}
