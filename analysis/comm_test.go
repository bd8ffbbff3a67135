package analysis_test

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/distpass/distpass/analysis"
	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/lower"
	"github.com/distpass/distpass/passes"
)

// partitioned returns m partitioned for rank, on a clone.
func partitioned(t *testing.T, m *ir.Module, rank int) *ir.Module {
	t.Helper()
	c := m.Clone()
	if err := passes.Partition(c, lower.DefaultRegistry(), rank); err != nil {
		t.Fatal(err)
	}
	return c
}

// TestCommMLPByHand checks the per-axis totals of the Megatron MLP on
// the 2×2 mesh (examples/mlp_dp_mp.dpir) against figures worked out by
// hand from the partitioned programs and the formulas of the package doc.
//
// The mesh is world [2, 2] dims [dp, mp] ranks [0, 1, 2, 3], so every dp
// and mp group has n = 2 ranks (dp pairs {0, 2} and {1, 3}, mp pairs
// {0, 1} and {2, 3}). Every rank's program has the same collectives
// (only the ring ids differ), with local shapes: x [8, 16] on dp → [4, 16];
// w1 [16, 32] column-parallel on mp → [16, 16]; w2 [32, 16] row-parallel
// on mp → [16, 16]. f32 is 4 bytes.
//
// main, per step:
//
//	op 12 c_identity of x f32[4, 16] over mp: local, 0 B
//	op 14 c_allreduce_sum of the partial h2, f32[4, 16] over mp (row-parallel Out):
//	      size = 4·16·4 = 256 B; 2(n-1)/n × size = 2·1/2 × 256 = 256 B
//	op 16 c_allreduce_sum of w2@GRAD f32[16, 16] over dp (data-parallel grad):
//	      size = 16·16·4 = 1024 B; 2·1/2 × 1024 = 1024 B
//	op 18 c_allreduce_sum of w1@GRAD f32[16, 16] over dp: 1024 B
//	(no mp allreduce of x@GRAD: x is stop_gradient, so op 9 has no X@GRAD)
//	dp: 1024 + 1024 = 2048 B; mp: 0 + 256 = 256 B; total 2304 B
//
// startup, once:
//
//	op 13 c_broadcast of w1 f32[16, 16] over dp (init sync; w1 is replicated on dp):
//	      (n-1)/n × 1024 = 512 B
//	op 15 c_broadcast of w2 f32[16, 16] over dp: 512 B
//	dp: 1024 B
func TestCommMLPByHand(t *testing.T) {
	type figures struct{ dp, mp, total int64 }
	wantMain := figures{dp: 2048, mp: 256, total: 2304}
	wantStartup := figures{dp: 1024, mp: 0, total: 1024}
	m := example(t, "mlp_dp_mp.dpir")
	for rank := range 4 {
		pm := partitioned(t, m, rank)
		rep := get[*analysis.CommReport](t, analysis.NewCache(pm), analysis.Comm)
		if rep.Rank != rank {
			t.Errorf("rank %d: report of rank %d", rank, rep.Rank)
		}
		for _, c := range []struct {
			tot  analysis.CommTotals
			want figures
		}{{rep.Main, wantMain}, {rep.Startup, wantStartup}} {
			dp, _ := c.tot.Axis("dp")
			mp, _ := c.tot.Axis("mp")
			got := figures{dp.Bytes, mp.Bytes, c.tot.Bytes}
			if got != c.want {
				t.Errorf("rank %d %s: got dp %d, mp %d, total %d; want dp %d, mp %d, total %d",
					rank, c.tot.Program, got.dp, got.mp, got.total, c.want.dp, c.want.mp, c.want.total)
			}
			if c.tot.DataDependent != 0 {
				t.Errorf("rank %d %s: %d data-dependent ops", rank, c.tot.Program, c.tot.DataDependent)
			}
		}
		// The ops themselves, in program order.
		var got []string
		for _, op := range rep.Ops {
			got = append(got, strings.Join([]string{op.Program, itoa(op.ID), op.Type, op.Axis, ir.FormatInts(op.Group), itoa(op.Bytes)}, " "))
		}
		dpG, mpG := map[int]string{0: "[0, 2]", 1: "[1, 3]", 2: "[0, 2]", 3: "[1, 3]"}[rank], map[int]string{0: "[0, 1]", 1: "[0, 1]", 2: "[2, 3]", 3: "[2, 3]"}[rank]
		want := []string{
			"main 12 c_identity mp " + mpG + " 0",
			"main 14 c_allreduce_sum mp " + mpG + " 256",
			"main 16 c_allreduce_sum dp " + dpG + " 1024",
			"main 18 c_allreduce_sum dp " + dpG + " 1024",
			"startup 13 c_broadcast dp " + dpG + " 512",
			"startup 15 c_broadcast dp " + dpG + " 512",
		}
		if !slices.Equal(got, want) {
			t.Errorf("rank %d ops:\n%s\nwant:\n%s", rank, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
}

// TestMemoryMLPByHand: rank 0 of the MLP holds, in f32 (4 bytes):
//
//	params:       w1 [16, 16] 1024 B, w2 [16, 16] 1024 B         → 2 vars, 2048 B
//	persistables: lr [1] 4 B                                     → 1 var, 4 B
//	activations:  x, h1, a1, h2, h2@GRAD, a1@GRAD, h1@GRAD,
//	              c_identity.tmp_0, c_allreduce_sum.tmp_0: [4, 16] 256 B each → 9 × 256 = 2304 B
//	              loss, loss@GRAD: [] 4 B each                   → 8 B
//	              w1@GRAD, w2@GRAD: [16, 16] 1024 B each          → 2048 B
//	                                                             → 13 vars, 4360 B
func TestMemoryMLPByHand(t *testing.T) {
	pm := partitioned(t, example(t, "mlp_dp_mp.dpir"), 0)
	rep := get[*analysis.MemoryReport](t, analysis.NewCache(pm), analysis.Memory)
	want := analysis.MemoryReport{
		Params:       analysis.MemoryClass{Vars: 2, Bytes: 2048},
		Persistables: analysis.MemoryClass{Vars: 1, Bytes: 4},
		Activations:  analysis.MemoryClass{Vars: 13, Bytes: 4360},
		// At op 9 (w1's grad) x [4, 16], h1@GRAD [4, 16] and both
		// weight grads [16, 16] are live: 2·256 + 2·1024 bytes. a1 and
		// a1@GRAD died at op 8 before it; everywhere else is 2048 at most.
		PeakActivations: 2560, PeakOp: 9,
	}
	if *rep != want {
		t.Errorf("got %+v, want %+v", *rep, want)
	}
	if rep.Total() != 2048+4+4360 {
		t.Errorf("total %d", rep.Total())
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// TestCollectiveBytes: the formulas and their rounding (half up).
func TestCollectiveBytes(t *testing.T) {
	for _, tc := range []struct {
		typ     string
		n       int
		in, out int64
		want    int64
	}{
		{"c_allreduce_sum", 2, 1024, 1024, 1024},
		{"c_allreduce_sum", 3, 10, 10, 13}, // 2·2/3·10 = 13.33
		{"c_allreduce_max", 4, 3, 3, 5},    // 2·3/4·3 = 4.5, half up
		{"all_reduce", 8, 800, 800, 1400},  // 2·7/8·800
		{"c_allgather", 3, 10, 30, 20},     // 2/3 of the output
		{"c_concat", 3, 10, 10, 7},         // 6.67
		{"c_reducescatter", 4, 64, 16, 48}, // 3/4 of the input
		{"alltoall", 2, 32, 32, 16},
		{"c_broadcast", 2, 3, 3, 2}, // 1.5, half up
		{"c_broadcast", 3, 1, 1, 1}, // 0.67
		{"c_broadcast", 4, 1, 1, 1}, // 0.75
		{"c_broadcast", 5, 1, 1, 1}, // 0.8
		{"send_v2", 2, 40, 0, 40},
		{"recv_v2", 2, 0, 40, 40},
		{"c_identity", 4, 40, 40, 0},
		{"c_split", 4, 40, 10, 0},
		{"c_allreduce_sum", 1, 40, 40, 0}, // a group of one
		{"global_scatter", 2, 64, 64, 32},
		{"c_allreduce_sum", 1 << 20, 1 << 40, 1 << 40, 2*(1<<40) - 2*(1<<20)},
	} {
		got, ok := analysis.CollectiveBytes(tc.typ, tc.n, tc.in, tc.out)
		if !ok || got != tc.want {
			t.Errorf("CollectiveBytes(%s, %d, %d, %d) = %d, %v; want %d", tc.typ, tc.n, tc.in, tc.out, got, ok, tc.want)
		}
	}
	if _, ok := analysis.CollectiveBytes("relu", 2, 1, 1); ok {
		t.Error("relu has a formula")
	}
}

const commModule = `
mesh world shape [2, 2] dims [dp, mp] ranks [0, 1, 2, 3]
mesh row shape [2] dims [r] ranks [0, 1]
group 0 ranks [0, 1, 2, 3]
group 1 ranks [0, 2]
group 3 ranks [0, 1]
group 7 ranks [0, 3]
group 9 ranks [0]

program main rank 0 {
  block 0 {
    var a : f32[3]
    var c : f32[6]
    var e : f32[5] @world[-1]
    var rows : f32[-1, 4]
    var out : f32[-1, 4]
    var lc : i64[4]
    var gc : i64[4]
    var cond : bool[1]
    op 1 c_allreduce_sum(X: a) -> (Out: a) {ring_id = 0}
    op 2 c_allgather(X: a) -> (Out: c) {nranks = 2, ring_id = 7}
    op 3 c_broadcast(X: e) -> (Out: e) {ring_id = 1, root = 0}
         dist @world impl default:0 [e: [-1] -> e: [-1]]
    op 4 c_allreduce_sum(X: a) -> (Out: a) {ring_id = 3}
         dist @row impl default:0 [a: [] -> a: []]
    op 5 global_scatter(X: rows, local_count: lc, global_count: gc) -> (Out: out) {ring_id = 3}
    op 6 send_v2(X: a) -> () {peer = 1, ring_id = 1}
    op 7 recv_v2() -> (Out: e) {peer = 1, ring_id = 3}
    op 8 c_identity(X: rows) -> (Out: out) {ring_id = 3}
    op 9 c_allreduce_sum(X: a) -> (Out: a) {ring_id = 9}
    op 10 conditional_block(Cond: cond) -> () {sub_block = ^1}
    op 11 relu(X: a) -> (Out: a)
  }
  block 1 parent 0 {
    var f : f16[2, 2]
    op 12 alltoall(x: f) -> (out: f) {ring_id = 1}
  }
}
`

// TestCommGroupsAndAxes: every way of naming a group, payloads in a
// sub-block, and the data-dependent exchanges.
func TestCommGroupsAndAxes(t *testing.T) {
	rep := get[*analysis.CommReport](t, analysis.NewCache(parse(t, commModule)), analysis.Comm)
	var got []string
	for _, op := range rep.Ops {
		b := itoa(op.Bytes)
		if op.DataDependent {
			b = "data-dependent"
		}
		got = append(got, strings.Join([]string{itoa(int64(op.Block)), itoa(op.ID), op.Type, itoa(op.RingID), op.Axis,
			ir.FormatInts(op.Group), op.Payload, op.DType.String(), int64s(op.Shape), b}, " "))
	}
	want := []string{
		"0 1 c_allreduce_sum 0 world [0, 1, 2, 3] a f32 [3] 18", // 2·3/4 × 12 B
		"0 2 c_allgather 7 group 7 [0, 3] a f32 [3] 12",         // 1/2 × 24 B (the output)
		"0 3 c_broadcast 1 dp [0, 2] e f32 [5] 10",              // 1/2 × 20 B
		"0 4 c_allreduce_sum 3 r [0, 1] a f32 [3] 12",           // the op's mesh row first: r, not mp
		"0 5 global_scatter 3 mp [0, 1] rows f32 [-1, 4] data-dependent",
		"0 6 send_v2 1 dp [0, 2] a f32 [3] 12", // peer 1: rank 2, the other of ring 1
		"0 7 recv_v2 3 mp [0, 1] e f32 [5] 20", // peer 1 of ring 3: the pair {0, 1} is the mp group
		"0 8 c_identity 3 mp [0, 1] rows f32 [-1, 4] 0",
		"0 9 c_allreduce_sum 9 group 9 [0] a f32 [3] 0", // a group of one
		"1 12 alltoall 1 dp [0, 2] f f16 [2, 2] 4",      // x in a sub-block; 1/2 × 8 B
	}
	if !slices.Equal(got, want) {
		t.Errorf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	mp, _ := rep.Main.Axis("mp")
	if mp != (analysis.CommTotal{Name: "mp", Ops: 3, Bytes: 20, DataDependent: 1}) {
		t.Errorf("mp total %+v", mp)
	}
	if rep.Main.Ops != 10 || rep.Main.DataDependent != 1 || rep.Main.Bytes != 18+12+10+12+12+20+4 {
		t.Errorf("main totals %+v", rep.Main)
	}
	if len(rep.Startup.ByAxis) != 0 || rep.Startup.Ops != 0 {
		t.Errorf("startup totals %+v", rep.Startup)
	}
	var names []string
	for _, tt := range rep.Main.ByType {
		names = append(names, tt.Name)
	}
	if want := "alltoall c_allgather c_allreduce_sum c_broadcast c_identity global_scatter recv_v2 send_v2"; strings.Join(names, " ") != want {
		t.Errorf("types %s, want %s", strings.Join(names, " "), want)
	}
}

func int64s(s []int64) string {
	xs := make([]int, len(s))
	for i, d := range s {
		xs[i] = int(d)
	}
	return ir.FormatInts(xs)
}

// TestCommErrors: what the report cannot account for is an error per op,
// every one, typed; a serial module is an error.
func TestCommErrors(t *testing.T) {
	m := parse(t, `
mesh world shape [2] dims [dp] ranks [0, 1]
group 0 ranks [0, 1]
group 1 ranks [1]
program main rank 0 {
  block 0 {
    var a : f32[3]
    op 1 c_allreduce_sum(X: a) -> (Out: a)
    op 2 c_allreduce_sum(X: a) -> (Out: a) {ring_id = 42}
    op 3 c_allreduce_sum(X: a) -> (Out: a) {ring_id = 1}
    op 4 c_allreduce_sum(X: nope) -> (Out: a) {ring_id = 0}
    op 5 c_allreduce_sum(X: a) -> (Out: a) {ring_id = 0}
  }
}`)
	_, err := analysis.Get[*analysis.CommReport](analysis.NewCache(m), analysis.Comm)
	if err == nil {
		t.Fatal("no error")
	}
	var got []string
	for _, e := range analysis.CommErrors(err) {
		got = append(got, e.Error())
	}
	want := []string{
		"op 1 c_allreduce_sum: no ring_id attr",
		"op 2 c_allreduce_sum: ring_id 42 is not in the module's group table",
		"op 3 c_allreduce_sum: rank 0 is not in group 1 [1]",
		"op 4 c_allreduce_sum: input X names undeclared var nope",
	}
	if !slices.Equal(got, want) {
		t.Errorf("got:\n%s\nwant:\n%s\n(error: %v)", strings.Join(got, "\n"), strings.Join(want, "\n"), err)
	}

	serial := example(t, "mlp_dp_mp.dpir")
	for _, a := range []*analysis.Analyzer{analysis.Comm, analysis.Memory} {
		if _, err := analysis.NewCache(serial).Get(a); err == nil || !strings.Contains(err.Error(), "not partitioned") {
			t.Errorf("%s of a serial module: %v", a, err)
		}
	}
}

// TestMemoryUnknown: vars with a dim of -1 are left out and counted.
func TestMemoryUnknown(t *testing.T) {
	m := parse(t, `
program main rank 0 {
  block 0 {
    param w : f64[2, 2]
    persist step : i64[1]
    persist buf : f32[-1]
    var x : f16[3]
    var rows : f32[-1, 4]
    var r : reader
  }
  block 1 parent 0 {
    var y : bf16[4]
  }
}`)
	rep := get[*analysis.MemoryReport](t, analysis.NewCache(m), analysis.Memory)
	want := analysis.MemoryReport{
		Params:       analysis.MemoryClass{Vars: 1, Bytes: 32},
		Persistables: analysis.MemoryClass{Vars: 1, Bytes: 8, Unknown: 1},
		Activations:  analysis.MemoryClass{Vars: 2, Bytes: 6 + 8, Unknown: 1},
	}
	if *rep != want {
		t.Errorf("got %+v, want %+v", *rep, want)
	}
}
