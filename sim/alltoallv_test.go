package sim

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/distpass/distpass/ir"
)

// moeProgram is a program of rank (or serial when rank < 0) whose main
// block runs body over x [rows, 2], lc and gc [counts], on group 0 of
// ranks.
func moeProgram(t *testing.T, rank int, ranks []int, rows, counts int, body string) *ir.Module {
	t.Helper()
	var sb strings.Builder
	fmt.Fprintf(&sb, "group 0 ranks %s\n", ir.FormatInts(ranks))
	if rank >= 0 {
		fmt.Fprintf(&sb, "program main rank %d { block 0 {\n", rank)
	} else {
		sb.WriteString("program main { block 0 {\n")
	}
	fmt.Fprintf(&sb, "var x : f64[%d, 2]\nvar lc : i64[%d]\nvar gc : i64[%d]\n", rows, counts, counts)
	for _, v := range []string{"a", "c", "dc", "ga1", "ga2", "ga", "gx", "back"} {
		fmt.Fprintf(&sb, "var %s : f64[-1, 2]\n", v)
	}
	sb.WriteString(body)
	sb.WriteString("}}\n")
	m, err := ir.ParseString("moe", sb.String())
	noErr(t, err)
	noErr(t, ir.Verify(m))
	return m
}

func i64(xs ...float64) *Tensor { return MustFromData(ir.I64, []int64{int64(len(xs))}, xs) }

// exampleX is the reference's x on both ranks.
func exampleX() *Tensor {
	return td(sh(5, 2), 1, 2, 3, 4, 5, 6, 7, 8, 9, 10)
}

func runMoE(t *testing.T, body string, xs []*Tensor, lcs, gcs [][]float64) ([]Scope, error) {
	t.Helper()
	world := len(xs)
	ranks := make([]int, world)
	for i := range ranks {
		ranks[i] = i
	}
	mods := make([]*ir.Module, world)
	scopes := make([]Scope, world)
	for r := range world {
		mods[r] = moeProgram(t, r, ranks, int(xs[r].Shape[0]), len(lcs[r]), body)
		scopes[r] = Scope{"x": xs[r], "lc": i64(lcs[r]...), "gc": i64(gcs[r]...)}
	}
	return (&SPMD{Deadline: 5 * time.Second}).RunProgram("main", ranks, mods, scopes)
}

const (
	scatterOp = "op 1 global_scatter(X: x, local_count: lc, global_count: gc) -> (Out: a) {ring_id = 0, use_calc_stream = true}\n"
	gatherOp  = "op 1 global_gather(X: x, local_count: lc, global_count: gc) -> (Out: a) {ring_id = 0, use_calc_stream = true}\n"
	// squareBack is c = a*a and its backward by hand, as append-backward
	// writes it: the grad of a then the other exchange with the same
	// counts.
	squareBack = `op 2 elementwise_mul(X: a, Y: a) -> (Out: c) {axis = -1}
op 3 fill_any_like(X: c) -> (Out: dc) {value = 1.0}
op 4 elementwise_mul_grad(X: a, Y: a, Out@GRAD: dc) -> (X@GRAD: ga1, Y@GRAD: ga2) {axis = -1}
op 5 sum(X: [ga1, ga2]) -> (Out: ga)
op 6 %s(X: ga, local_count: lc, global_count: gc) -> (Out: gx) {ring_id = 0, use_calc_stream = true}
`
)

// The two worked examples of the reference (world 2, 2 experts each).
func TestGlobalScatterGatherWorkedExamples(t *testing.T) {
	lcs := [][]float64{{2, 1, 1, 1}, {1, 1, 2, 1}}
	xs := []*Tensor{exampleX(), exampleX()}
	cases := []struct {
		name, op string
		want     [2][]float64
	}{
		{"global_scatter", scatterOp, [2][]float64{{1, 2, 3, 4, 1, 2, 5, 6, 3, 4}, {7, 8, 5, 6, 7, 8, 9, 10, 9, 10}}},
		{"global_gather", gatherOp, [2][]float64{{1, 2, 3, 4, 7, 8, 1, 2, 7, 8}, {5, 6, 9, 10, 3, 4, 5, 6, 9, 10}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			other := "global_gather"
			if c.name == "global_gather" {
				other = "global_scatter"
			}
			out, err := runMoE(t, c.op+fmt.Sprintf(squareBack, other), xs, lcs, lcs)
			noErr(t, err)
			for r := range 2 {
				wantT(t, fmt.Sprintf("rank %d Out", r), out[r]["a"], td(sh(5, 2), c.want[r]...))
				// The backward of c = a*a is 2x on both ranks.
				wantT(t, fmt.Sprintf("rank %d x@GRAD", r), out[r]["gx"],
					td(sh(5, 2), 2, 4, 6, 8, 10, 12, 14, 16, 18, 20))
			}
		})
	}
}

// transpose is the count exchange: on rank r, global_count[j*n+e] is
// rank j's local_count[r*n+e].
func transpose(lcs [][]float64, n int) [][]float64 {
	gcs := make([][]float64, len(lcs))
	for r := range lcs {
		gcs[r] = make([]float64, len(lcs[r]))
		for j := range lcs {
			for e := range n {
				gcs[r][j*n+e] = lcs[j][r*n+e]
			}
		}
	}
	return gcs
}

// referenceScatter is global_scatter written the plain way: cut each
// rank's rows into its destination blocks, then deal them out.
func referenceScatter(xs []*Tensor, lcs [][]float64, n int) []*Tensor {
	world := len(xs)
	blocks := make([][][]float64, world) // [rank][block] rows, flattened
	for r, x := range xs {
		row := 0
		for _, c := range lcs[r] {
			blocks[r] = append(blocks[r], x.Data[row*2:(row+int(c))*2])
			row += int(c)
		}
	}
	out := make([]*Tensor, world)
	for r := range world {
		var data []float64
		for e := range n {
			for j := range world {
				data = append(data, blocks[j][r*n+e]...)
			}
		}
		out[r] = td(sh(int64(len(data)/2), 2), data...)
	}
	return out
}

// Random counts (zeros included) against the plain reference, and
// gather after scatter with the same counts is the identity on every
// rank.
func TestGlobalScatterRandomCounts(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	body := scatterOp + "op 2 global_gather(X: a, local_count: lc, global_count: gc) -> (Out: back) {ring_id = 0}\n"
	for trial := range 24 {
		world, n := 1+trial%4, 1+rng.IntN(3)
		lcs := make([][]float64, world)
		xs := make([]*Tensor, world)
		for r := range world {
			rows := 0
			for range world * n {
				c := rng.IntN(4) // 0..3
				lcs[r] = append(lcs[r], float64(c))
				rows += c
			}
			xs[r] = randT(rng, -1, 1, int64(rows), 2)
		}
		gcs := transpose(lcs, n)
		want := referenceScatter(xs, lcs, n)
		out, err := runMoE(t, body, xs, lcs, gcs)
		if err != nil {
			t.Fatalf("trial %d: world %d, %d experts, counts %v: %v", trial, world, n, lcs, err)
		}
		for r := range world {
			wantT(t, fmt.Sprintf("trial %d rank %d scatter", trial, r), out[r]["a"], want[r])
			wantT(t, fmt.Sprintf("trial %d rank %d gather∘scatter", trial, r), out[r]["back"], xs[r])
		}
	}
}

// A rank whose tokens all go elsewhere, one that has no tokens at all,
// and an expert that receives nothing: every rank still completes the
// exchange forward and backward.
func TestGlobalScatterEmptyRanksAndExperts(t *testing.T) {
	// World 3, 2 experts each. Rank 0 sends everything to rank 2's
	// experts; rank 1 has no rows; expert 1 of rank 0 and all of rank 1's
	// experts receive nothing.
	lcs := [][]float64{{0, 0, 0, 0, 2, 1}, {0, 0, 0, 0, 0, 0}, {1, 0, 0, 0, 0, 2}}
	xs := []*Tensor{td(sh(3, 2), 1, 2, 3, 4, 5, 6), Zeros(ir.F64, 0, 2), td(sh(3, 2), 7, 8, 9, 10, 11, 12)}
	gcs := transpose(lcs, 2)
	out, err := runMoE(t, scatterOp+fmt.Sprintf(squareBack, "global_gather"), xs, lcs, gcs)
	noErr(t, err)
	wantT(t, "rank 0 Out", out[0]["a"], td(sh(1, 2), 7, 8))
	wantT(t, "rank 1 Out", out[1]["a"], Zeros(ir.F64, 0, 2))
	wantT(t, "rank 2 Out", out[2]["a"], td(sh(5, 2), 1, 2, 3, 4, 5, 6, 9, 10, 11, 12))
	for r, x := range xs {
		want := x.Clone()
		for i := range want.Data {
			want.Data[i] *= 2
		}
		wantT(t, fmt.Sprintf("rank %d x@GRAD", r), out[r]["gx"], want)
	}
}

func TestGlobalScatterErrors(t *testing.T) {
	lcs := [][]float64{{2, 1, 1, 1}, {1, 1, 2, 1}}
	xs := []*Tensor{exampleX(), exampleX()}
	// Rank 1 expects 2 rows from rank 0 for its expert 0; rank 0 sends 1.
	bad := [][]float64{{2, 1, 1, 1}, {2, 1, 1, 1}}
	_, err := runMoE(t, scatterOp, xs, lcs, bad)
	errContains(t, err, "rank 1 expects 2 rows for its expert 0 from rank 0 (global_count[0]), which sends 1 (its local_count[2])")

	// X's rows must be what the counts say.
	_, err = runMoE(t, scatterOp, []*Tensor{exampleX(), td(sh(1, 2), 1, 2)}, lcs, lcs)
	errContains(t, err, "X has 1 rows, its local_count sums to 5")

	// Counts that do not split over the group.
	_, err = runMoE(t, scatterOp, xs, [][]float64{{5}, {5}}, [][]float64{{5}, {5}})
	errContains(t, err, "local_count has 1 entries, not n_expert × 2 ranks of the group")
}

// A serial program is a world of one: both exchanges are the identity,
// and an allreduce returns its input.
func TestSerialCollectivesAreWorldOfOne(t *testing.T) {
	m := moeProgram(t, -1, []int{0}, 5, 3, scatterOp+
		"op 2 global_gather(X: a, local_count: lc, global_count: gc) -> (Out: back) {ring_id = 0}\n"+
		"op 3 c_allreduce_sum(X: back) -> (Out: c) {ring_id = 0}\n")
	out, err := Run(m, Scope{"x": exampleX(), "lc": i64(2, 0, 3), "gc": i64(2, 0, 3)}, nil)
	noErr(t, err)
	for _, v := range []string{"a", "back", "c"} {
		wantT(t, v, out[v], exampleX())
	}
}

func noErr(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func errContains(t *testing.T, err error, sub string) {
	t.Helper()
	if err == nil || !strings.Contains(err.Error(), sub) {
		t.Errorf("err = %v, want it to contain %q", err, sub)
	}
}
