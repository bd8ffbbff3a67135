package analysis

import (
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/distpass/distpass/internal/irgen"
	"github.com/distpass/distpass/ir"
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
	checkArgsResolved(t, x)
}

// checkArgsResolved checks that x resolved every op arg of every block
// as resolving it alone does.
func checkArgsResolved(t *testing.T, x *IndexInfo) {
	t.Helper()
	for _, pi := range x.progs {
		a := int32(0)
		for bi, b := range pi.p.Blocks {
			for pos, op := range b.Ops {
				k := pi.blocks[bi].opOff + int32(pos)
				if pi.argStart[k] != a {
					t.Fatalf("%s block %d op at %d: args start at %d, want %d", pi.label, bi, pos, pi.argStart[k], a)
				}
				if op == nil {
					continue
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

// The index resolves every arg as one lookup does: names a block
// declares, names only an ancestor declares, names no block declares,
// blocks of every size, nil ops among them.
func TestIndexResolvesEveryArg(t *testing.T) {
	var src strings.Builder
	src.WriteString("program main {\n  block 0 {\n")
	for i := range 300 {
		fmt.Fprintf(&src, "    var v%d : f32[4]\n", i)
	}
	for i := range 299 {
		fmt.Fprintf(&src, "    op %d elementwise_add(X: v%d, Y: v%d) -> (Out: v%d)\n", i+1, i, (i*7)%300, i+1)
	}
	src.WriteString("    op 400 relu(X: nowhere) -> (Out: v0)\n  }\n  block 1 parent 0 {\n")
	for i := range 20 {
		fmt.Fprintf(&src, "    var w%d : f32[4]\n", i)
	}
	for i := range 19 {
		fmt.Fprintf(&src, "    op %d elementwise_add(X: w%d, Y: v%d) -> (Out: w%d)\n", 500+i, i, i*11, i+1)
	}
	src.WriteString("    op 600 relu(X: missing) -> (Out: w0)\n  }\n}\n")
	m, err := ir.ParseString("batch.dpir", src.String())
	if err != nil {
		t.Fatal(err)
	}
	m.Main.Blocks[0].Ops = slices.Insert(m.Main.Blocks[0].Ops, 40, nil)
	big := irgen.MegatronMLP(2000, 2, 4)
	for _, mod := range []*ir.Module{m, big} {
		checkArgsResolved(t, buildIndex(mod))
	}
}
