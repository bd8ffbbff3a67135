package check_test

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/distpass/distpass/analysis"
	"github.com/distpass/distpass/check"
	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/passes"
	"github.com/distpass/distpass/proof"
)

// pairDist is one dist of the exhaustive reshard pairs: a mapping and
// the reduction of each mesh dim it leaves free ("" whole, "sum", "avg").
type pairDist struct {
	mapping []int
	partial []string // by mesh dim
}

// extremum reports whether d is partial by a max or a min.
func (d pairDist) extremum() bool {
	return slices.ContainsFunc(d.partial, func(s string) bool { return s == "max" || s == "min" })
}

func (d pairDist) isPartial() bool {
	return slices.ContainsFunc(d.partial, func(s string) bool { return s != "" })
}

// text spells the dist as a var's: @m[mapping] partial [...].
func (d pairDist) text() string {
	s := "@m" + ir.FormatInts(d.mapping)
	var ps []string
	for k, r := range d.partial {
		if r != "" {
			ps = append(ps, strconv.Itoa(k)+":"+r)
		}
	}
	if len(ps) > 0 {
		s += " partial [" + strings.Join(ps, ", ") + "]"
	}
	return s
}

// kind spells what each mesh dim holds: R, S (split) or P.
func (d pairDist) kind() string {
	ks := make([]byte, len(d.partial))
	for k := range ks {
		switch {
		case slices.Contains(d.mapping, k):
			ks[k] = 'S'
		case d.partial[k] != "":
			ks[k] = 'P'
		default:
			ks[k] = 'R'
		}
	}
	return string(ks)
}

// pairDists lists every valid dist of a rank-dims tensor on a mesh of
// ndim dims: every mapping with no mesh dim twice, and on each mesh dim
// it leaves free no partial, a sum or an average (on a 1-D mesh, a max
// and a min too).
func pairDists(dims, ndim int) []pairDist {
	var out []pairDist
	var mappings [][]int
	var rec func(m []int)
	rec = func(m []int) {
		if len(m) == dims {
			mappings = append(mappings, slices.Clone(m))
			return
		}
		for k := -1; k < ndim; k++ {
			if k >= 0 && slices.Contains(m, k) {
				continue
			}
			rec(append(m, k))
		}
	}
	rec(nil)
	for _, m := range mappings {
		parts := [][]string{{}}
		for k := range ndim {
			var next [][]string
			for _, p := range parts {
				choices := []string{""}
				if !slices.Contains(m, k) {
					choices = append(choices, "sum", "avg")
					if ndim == 1 {
						choices = append(choices, "max", "min")
					}
				}
				for _, c := range choices {
					next = append(next, append(slices.Clone(p), c))
				}
			}
			parts = next
		}
		for _, p := range parts {
			out = append(out, pairDist{mapping: m, partial: p})
		}
	}
	return out
}

// pairModule is the module of one pair: a data var x in src and one
// consumer. A whole dst is what an assign reads x as, and insert-reshards
// makes the reshard; a partial dst, which no op dist can ask for, is an
// explicit reshard into y, which the assign carries on.
func pairModule(meshShape []int, shape []int64, src, dst pairDist) string {
	names := []string{"a", "b"}[:len(meshShape)]
	n := 1
	for _, s := range meshShape {
		n *= s
	}
	ranks := make([]int, n)
	for i := range ranks {
		ranks[i] = i
	}
	typ := "f64" + strings.ReplaceAll(fmt.Sprint(shape), " ", ", ")
	var sb strings.Builder
	fmt.Fprintf(&sb, "module pair\nmesh m shape %s dims [%s] ranks %s\nprogram main {\n  block 0 {\n",
		ir.FormatInts(meshShape), strings.Join(names, ", "), ir.FormatInts(ranks))
	fmt.Fprintf(&sb, "    var x : %s %s {is_data, stop_gradient}\n", typ, src.text())
	fmt.Fprintf(&sb, "    var y : %s %s\n", typ, dst.text())
	if !dst.isPartial() {
		fmt.Fprintf(&sb, "    op 1 assign(X: x) -> (Out: y) role forward\n         dist @m impl elementwise:0 [x: %s -> y: %s]\n",
			ir.FormatInts(dst.mapping), ir.FormatInts(dst.mapping))
	} else {
		fmt.Fprintf(&sb, "    var z : %s %s\n", typ, dst.text())
		fmt.Fprintf(&sb, "    op 1 reshard(X: x) -> (Out: y) role forward\n         dist @m impl reshard:0 [x: %s -> y: %s]\n",
			ir.FormatInts(src.mapping), ir.FormatInts(dst.mapping))
		fmt.Fprintf(&sb, "    op 2 assign(X: y) -> (Out: z) role forward\n         dist @m impl elementwise:0 [y: %s -> z: %s]\n",
			ir.FormatInts(dst.mapping), ir.FormatInts(dst.mapping))
	}
	sb.WriteString("  }\n}\n")
	return sb.String()
}

// viaReplicated is the pair's module moving x through a whole, replicated
// value: the path the bytes of the direct reshard are held to.
func viaReplicated(meshShape []int, shape []int64, src, dst pairDist) string {
	text := pairModule(meshShape, shape, src, pairDist{mapping: slices.Repeat([]int{-1}, len(shape)), partial: make([]string, len(meshShape))})
	r := pairDist{mapping: slices.Repeat([]int{-1}, len(shape)), partial: make([]string, len(meshShape))}
	typ := "f64" + strings.ReplaceAll(fmt.Sprint(shape), " ", ", ")
	tail := fmt.Sprintf("    var w : %s %s\n    op 3 reshard(X: y) -> (Out: w) role forward\n         dist @m impl reshard:0 [y: %s -> w: %s]\n  }\n}\n",
		typ, dst.text(), ir.FormatInts(r.mapping), ir.FormatInts(dst.mapping))
	return strings.TrimSuffix(text, "  }\n}\n") + tail
}

// provenPair holds a pair's per-rank programs to the static proof:
// proven, in both collective dialects.
func provenPair(m *ir.Module, mods []*ir.Module) error {
	res, err := proof.Check(m, passes.Ranks(m), mods)
	if err != nil {
		return err
	}
	if !res.Proven() {
		return fmt.Errorf("the static proof: %s", res.Findings[0])
	}
	return nil
}

// pairResult is what one pair's per-rank programs hold and move.
type pairResult struct {
	types []string // the collective op types, sorted, once each
	bytes []int64  // by rank
}

func runPair(t *testing.T, text string) (pairResult, error) {
	t.Helper()
	m, err := ir.Parse("pair.dpir", []byte(text))
	if err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	passes.InsertReshards(m)
	ctx := context.Background()
	mods, err := passes.PartitionAll(ctx, m, nil)
	if err != nil {
		return pairResult{}, err
	}
	if err := provenPair(m, mods); err != nil {
		return pairResult{}, err
	}
	rep, err := check.RunParts(ctx, m, passes.Ranks(m), mods, check.Options{})
	if err != nil {
		return pairResult{}, err
	}
	if err := rep.Err(); err != nil {
		return pairResult{}, err
	}
	if rep.Count("activation") == 0 {
		return pairResult{}, fmt.Errorf("nothing compared")
	}
	// The same programs in Paddle's newer collective names run alike.
	pir, err := passes.DefaultRegistry().Parse("collective-dialect{style=pir}")
	if err != nil {
		t.Fatal(err)
	}
	renamed := make([]*ir.Module, len(mods))
	for i, rm := range mods {
		renamed[i] = rm.Clone()
		if err := (&passes.Manager{}).Run(ctx, pir, renamed[i]); err != nil {
			return pairResult{}, err
		}
	}
	if err := provenPair(m, renamed); err != nil {
		return pairResult{}, fmt.Errorf("in the pir dialect: %w", err)
	}
	if rep, err = check.RunParts(ctx, m, passes.Ranks(m), renamed, check.Options{}); err == nil {
		err = rep.Err()
	}
	if err != nil {
		return pairResult{}, fmt.Errorf("in the pir dialect: %w", err)
	}
	var res pairResult
	types := map[string]bool{}
	for _, rm := range mods {
		c, err := analysis.Get[*analysis.CommReport](analysis.NewCache(rm), analysis.Comm)
		if err != nil {
			return pairResult{}, err
		}
		res.bytes = append(res.bytes, c.Main.Bytes)
		for _, op := range c.Ops {
			types[op.Type] = true
		}
	}
	res.types = slices.Sorted(maps.Keys(types))
	return res, nil
}

// minBytes1D is the least a rank can move for a reshard on a 1-D mesh of
// n ranks, of a tensor whose local part in src is local bytes: nothing
// to slice, to make a partial or to rescale one; a gather receives the
// other n-1 parts; an all-reduce is a reduce-scatter and an all-gather;
// a reduce-scatter and an all-to-all keep one n-th. A max or a min is
// all-reduced (G1 reduce-scatters sums only), which is the least for
// its whole destinations and not for a split one.
func minBytes1D(src, dst pairDist, n int, local int64) int64 {
	s, d := src.kind(), dst.kind()
	if src.extremum() {
		// G1 has no max or min reduce-scatter: the value is all-reduced
		// first, unless it stays the same partial.
		if d == "P" && src.partial[0] == dst.partial[0] {
			return 0
		}
		return (2*int64(n-1)*local + int64(n)/2) / int64(n)
	}
	if d == "P" && dst.extremum() && s == "P" {
		// A sum or mean is made whole before it is made a max or min.
		return (2*int64(n-1)*local + int64(n)/2) / int64(n)
	}
	ring := func(k int64) int64 { return (k*int64(n-1)*local + int64(n)/2) / int64(n) }
	switch {
	case s == "R", s == "P" && d == "P", s == "S" && d == "P", s == d && slices.Equal(src.mapping, dst.mapping):
		return 0
	case s == "S" && d == "R":
		return int64(n-1) * local
	case s == "S" && d == "S", s == "P" && d == "S":
		return ring(1)
	case s == "P" && d == "R":
		return ring(2)
	}
	panic("unreachable: " + s + d)
}

// TestReshardPairs: every (source, destination) pair of valid dists of a
// [8, 12] and a [4, 8, 12] tensor on the meshes [4], [2, 2] and [2, 4]
// (mappings, and partial sums and averages), as a module of one data var
// and one consumer: insert-reshards and partition for every rank, then
// check, pass. Each pair moves no more bytes on any rank than the path
// through a replicated value, and on the 1-D mesh exactly the least a
// rank can move. The table (testdata/reshard_pairs.txt; DISTPASS_UPDATE=1
// rewrites it) sums the pairs by kind: what each mesh dim holds before and
// after, the collectives used and the bytes per rank. Every pair's
// programs check in Paddle's newer collective names too. Under -race or
// -short every seventh pair runs and no table is compared.
func TestReshardPairs(t *testing.T) {
	sample := raceEnabled || testing.Short()
	var table strings.Builder
	for _, meshShape := range [][]int{{4}, {2, 2}, {2, 4}} {
		for _, shape := range [][]int64{{8, 12}, {4, 8, 12}} {
			dists := pairDists(len(shape), len(meshShape))
			type row struct {
				pairs, passed   int
				types           map[string]bool
				minB, maxB      int64
				sumRepl, sumOur int64
			}
			rows := map[string]*row{}
			tried, passed := 0, 0
			for i, src := range dists {
				for j, dst := range dists {
					if sample && (i*len(dists)+j)%7 != 0 {
						continue
					}
					tried++
					name := src.text() + " → " + dst.text()
					got, err := runPair(t, pairModule(meshShape, shape, src, dst))
					if err != nil {
						t.Errorf("mesh %v %v: %s: %v", meshShape, shape, name, err)
						continue
					}
					repl, err := runPair(t, viaReplicated(meshShape, shape, src, dst))
					if err != nil {
						t.Errorf("mesh %v %v: %s through replicated: %v", meshShape, shape, name, err)
						continue
					}
					ok := true
					for r := range got.bytes {
						if got.bytes[r] > repl.bytes[r] {
							t.Errorf("mesh %v %v: %s: rank %d moves %d bytes, through replicated %d", meshShape, shape, name, r, got.bytes[r], repl.bytes[r])
							ok = false
						}
					}
					if len(meshShape) == 1 {
						local := int64(8)
						for _, s := range shape {
							local *= s
						}
						if slices.Contains(src.mapping, 0) {
							local /= int64(meshShape[0])
						}
						if want := minBytes1D(src, dst, meshShape[0], local); slices.Max(got.bytes) != want {
							t.Errorf("mesh %v %v: %s: moves %v bytes per rank, the least is %d", meshShape, shape, name, got.bytes, want)
							ok = false
						}
					}
					if !ok {
						continue
					}
					passed++
					k := src.kind() + "→" + dst.kind()
					rw := rows[k]
					if rw == nil {
						rw = &row{types: map[string]bool{}, minB: -1}
						rows[k] = rw
					}
					rw.pairs++
					for _, typ := range got.types {
						rw.types[typ] = true
					}
					b := slices.Max(got.bytes)
					if rw.minB < 0 || b < rw.minB {
						rw.minB = b
					}
					rw.maxB = max(rw.maxB, b)
					rw.sumOur += b
					rw.sumRepl += slices.Max(repl.bytes)
				}
			}
			fmt.Fprintf(&table, "mesh %s, f64%s: %d pairs tried, %d passed\n", ir.FormatInts(meshShape), fmt.Sprint(shape), tried, passed)
			fmt.Fprintf(&table, "  %-10s %5s  %-50s %15s %9s %9s\n", "kind", "pairs", "collectives", "bytes/rank", "total", "via R")
			for _, k := range slices.Sorted(maps.Keys(rows)) {
				rw := rows[k]
				types := strings.Join(slices.Sorted(maps.Keys(rw.types)), " ")
				if types == "" {
					types = "(none)"
				}
				fmt.Fprintf(&table, "  %-10s %5d  %-50s %15s %9d %9d\n", k, rw.pairs, types,
					fmt.Sprintf("%d-%d", rw.minB, rw.maxB), rw.sumOur, rw.sumRepl)
			}
		}
	}
	if sample {
		return
	}
	pairsGolden(t, "reshard_pairs.txt", table.String())
}

// pairsGolden compares got with testdata/name, or rewrites it when
// DISTPASS_UPDATE is set.
func pairsGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if os.Getenv("DISTPASS_UPDATE") != "" {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (DISTPASS_UPDATE=1 writes it)", err)
	}
	if d := cmp.Diff(strings.Split(string(want), "\n"), strings.Split(got, "\n")); d != "" {
		t.Errorf("%s differs (-want +got):\n%s", path, d)
	}
}

// TestReshardPairsCrossMesh: every pair of dists of a [8, 12] tensor on
// two 2-rank meshes, from one to the other: check passes, and for the
// move the sender ranks hold only send_v2 and what shrinks what they send
// (slices, reduce-scatters), the receivers recv_v2 and the steps on
// their own mesh from what was sent, and each rank sends at most its
// part of the source. When the meshes share a rank at one coordinate,
// that rank moves nothing over the wire.
func TestReshardPairsCrossMesh(t *testing.T) {
	dists := pairDists(2, 1)
	for _, layout := range []struct{ src, dst []int }{{[]int{0, 1}, []int{2, 3}}, {[]int{0, 1}, []int{0, 2}}} {
		for _, src := range dists {
			for _, dst := range dists {
				crossMeshPair(t, layout.src, layout.dst, src, dst)
			}
		}
	}
}

func crossMeshPair(t *testing.T, srcRanks, dstRanks []int, src, dst pairDist) {
	t.Helper()
	name := fmt.Sprintf("%v to %v: %s → %s", srcRanks, dstRanks, src.text(), dst.text())
	text := pairModule([]int{2}, []int64{8, 12}, src, dst)
	text = strings.Replace(text, "mesh m shape [2] dims [a] ranks [0, 1]",
		"mesh m shape [2] dims [a] ranks "+ir.FormatInts(dstRanks)+"\nmesh s shape [2] dims [a] ranks "+ir.FormatInts(srcRanks), 1)
	text = strings.Replace(text, "var x : f64[8, 12] @m", "var x : f64[8, 12] @s", 1)
	m, err := ir.Parse("pair.dpir", []byte(text))
	if err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	passes.InsertReshards(m)
	ctx := context.Background()
	mods, err := passes.PartitionAll(ctx, m, nil)
	if err != nil {
		t.Errorf("%s: %v", name, err)
		return
	}
	if err := provenPair(m, mods); err != nil {
		t.Errorf("%s: %v", name, err)
	}
	rep, err := check.RunParts(ctx, m, passes.Ranks(m), mods, check.Options{})
	if err != nil || rep.Err() != nil || rep.Count("activation") == 0 {
		t.Errorf("%s: check: %v %v", name, err, rep.Err())
		return
	}
	part := int64(8 * 8 * 12)
	if slices.Contains(src.mapping, 0) {
		part /= 2
	}
	for i, rm := range mods {
		rank := passes.Ranks(m)[i]
		c, err := analysis.Get[*analysis.CommReport](analysis.NewCache(rm), analysis.Comm)
		if err != nil {
			t.Fatal(err)
		}
		allowed := map[string]bool{}
		if slices.Contains(srcRanks, rank) {
			allowed["send_v2"], allowed["c_reducescatter"] = true, true
		}
		if slices.Contains(dstRanks, rank) {
			for _, typ := range []string{"recv_v2", "c_allgather", "c_allreduce_sum", "c_allreduce_avg", "c_allreduce_max", "c_allreduce_min", "alltoall"} {
				allowed[typ] = true
			}
		}
		moves := 0
		for _, op := range c.Ops {
			if !allowed[op.Type] {
				t.Errorf("%s: rank %d holds %s", name, rank, op.Type)
			}
			if op.Type == "send_v2" || op.Type == "recv_v2" {
				moves++
				if op.Bytes > part {
					t.Errorf("%s: rank %d: %s moves %d bytes, more than its part of x (%d)", name, rank, op.Type, op.Bytes, part)
				}
			}
		}
		want := 1
		if slices.Contains(srcRanks, rank) && slices.Contains(dstRanks, rank) {
			want = 0
		}
		if moves != want {
			t.Errorf("%s: rank %d holds %d point-to-point ops, want %d", name, rank, moves, want)
		}
	}
}

// TestTwoStageMLP: the two-stage MLP of examples/pp_mlp.dpir, trained
// (backward and sgd) with insert-reshards making the moves between the
// stages: check passes over two steps, every rank holds only its stage's
// ops, and the moves are one send_v2 and one recv_v2 a rank (the
// activation forward, its grad back), but for the learning rate, which
// the optimizer of stage1 reads from stage0.
func TestTwoStageMLP(t *testing.T) {
	src, err := os.ReadFile("../examples/pp_mlp.dpir")
	if err != nil {
		t.Fatal(err)
	}
	m, err := ir.Parse("pp_mlp.dpir", src)
	if err != nil {
		t.Fatal(err)
	}
	pl, err := passes.DefaultRegistry().Parse("append-backward{loss=loss},append-optimizer{type=sgd},insert-reshards,verify")
	if err != nil {
		t.Fatal(err)
	}
	if err := (&passes.Manager{}).Run(context.Background(), pl, m); err != nil {
		t.Fatal(err)
	}
	rep, err := check.Run(context.Background(), m, check.Options{Steps: 2})
	if err != nil {
		t.Fatal(err)
	}
	if err := rep.Err(); err != nil || rep.Count("grad") != 2 {
		t.Fatalf("check: %v, %d grads compared", err, rep.Count("grad"))
	}
	mods, err := passes.PartitionAll(context.Background(), m, nil)
	if err != nil {
		t.Fatal(err)
	}
	for rank, rm := range mods {
		stage := "stage0"
		if rank >= 2 {
			stage = "stage1"
		}
		var moves []string
		for _, op := range rm.Main.Global().Ops {
			if op.Dist == nil || op.Dist.Mesh != stage {
				t.Errorf("rank %d holds %s, on %v", rank, op, op.Dist)
			}
			if op.Type == "send_v2" || op.Type == "recv_v2" {
				moves = append(moves, op.Type)
			}
		}
		want := "send_v2 recv_v2 send_v2"
		if rank >= 2 {
			want = "recv_v2 send_v2 recv_v2"
		}
		if got := strings.Join(moves, " "); got != want {
			t.Errorf("rank %d moves %s, want %s", rank, got, want)
		}
	}
}
