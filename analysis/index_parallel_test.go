package analysis

import (
	"runtime"
	"testing"

	"github.com/distpass/distpass/internal/irgen"
)

// A module large enough for the parallel index resolves every op arg,
// in both programs, exactly as resolving them one by one does.
func TestIndexParallelEqualsSequential(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	m := irgen.MegatronMLP(20000, 2, 4)
	x := buildIndex(m)
	if len(x.progs) != 2 {
		t.Fatalf("%d programs indexed, want main and startup", len(x.progs))
	}
	if n := len(x.progs[0].args); n < parallelResolveArgs {
		t.Fatalf("main has %d args, fewer than the %d that resolve in parallel", n, parallelResolveArgs)
	}
	for _, pi := range x.progs {
		a := int32(0)
		for bi, b := range pi.p.Blocks {
			for pos, op := range b.Ops {
				k := pi.blocks[bi].opOff + int32(pos)
				if pi.argStart[k] != a {
					t.Fatalf("%s op %d: args start at %d, want %d", pi.label, op.ID, pi.argStart[k], a)
				}
				for name := range op.InputNames {
					if got, want := pi.args[a], pi.resolve(bi, name); got != want {
						t.Fatalf("%s op %d input %s: gid %d, want %d", pi.label, op.ID, name, got, want)
					}
					a++
				}
				if pi.outStart[k] != a {
					t.Fatalf("%s op %d: outputs start at %d, want %d", pi.label, op.ID, pi.outStart[k], a)
				}
				for name := range op.OutputNames {
					if got, want := pi.args[a], pi.resolve(bi, name); got != want || got < 0 {
						t.Fatalf("%s op %d output %s: gid %d, want %d", pi.label, op.ID, name, got, want)
					}
					a++
				}
			}
		}
		if int(a) != len(pi.args) {
			t.Errorf("%s: %d args walked, %d indexed", pi.label, a, len(pi.args))
		}
	}
}
