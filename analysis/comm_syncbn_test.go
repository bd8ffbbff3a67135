package analysis_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/distpass/distpass/analysis"
	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/ops"
)

// syncBNModule is rank 1 of a 4-rank data-parallel program with C = 3
// channels. Each sync_batch_norm all-reduces 2C+1 = 7 elements; n = 4.
//
//	op 1 f32 X, ring 0:           7·4 = 28 B; 2·3/4 × 28 = 42 B
//	op 2 the grad, no ring_id:    ring 0, as Paddle: 42 B
//	op 3 c_allreduce_sum of f32[3]: 2·3/4 × 12 = 18 B
//	op 4 f64 X:                   7·8 = 56 B; 2·3/4 × 56 = 84 B
//	op 5 f16 X:                   f32 statistics, as op 1: 42 B
//	op 6 is_test:                 running statistics, no all-reduce: 0 B
//	op 7 ring 1, rank 1 alone:    a group of one: 0 B
//	op 8 Scale of unknown size:   data-dependent
const syncBNModule = `
mesh world shape [4] dims [dp] ranks [0, 1, 2, 3]
group 0 ranks [0, 1, 2, 3]
group 1 ranks [1]
program main rank 1 {
  block 0 {
    var x : f32[2, 3, 4, 4]
    var y : f32[2, 3, 4, 4]
    var dy : f32[2, 3, 4, 4]
    var dx : f32[2, 3, 4, 4]
    param scale : f32[3]
    var xd : f64[2, 3, 4, 4]
    var yd : f64[2, 3, 4, 4]
    param scaled : f64[3]
    var xh : f16[2, 3, 4, 4]
    var yh : f16[2, 3, 4, 4]
    var any : f32[-1]
    op 1 sync_batch_norm(X: x, Scale: scale) -> (Y: y) {origin = "batch_norm:0 synchronised batch norm", ring_id = 0}
    op 2 sync_batch_norm_grad(X: x, Scale: scale, Y@GRAD: dy) -> (X@GRAD: dx)
    op 3 c_allreduce_sum(X: scale) -> (Out: scale) {ring_id = 0}
    op 4 sync_batch_norm(X: xd, Scale: scaled) -> (Y: yd) {ring_id = 0}
    op 5 sync_batch_norm(X: xh, Scale: scale) -> (Y: yh) {ring_id = 0}
    op 6 sync_batch_norm(X: x, Scale: scale) -> (Y: y) {is_test = true, ring_id = 0}
    op 7 sync_batch_norm(X: x, Scale: scale) -> (Y: y) {ring_id = 1}
    op 8 sync_batch_norm(X: x, Scale: any) -> (Y: y) {ring_id = 0}
  }
}`

// TestCommSyncBatchNorm: the all-reduce inside sync_batch_norm and its
// grad is listed as one, costed as c_allreduce_sum on a buffer of 2C+1
// elements, and counted in the totals.
func TestCommSyncBatchNorm(t *testing.T) {
	if ops.IsCollective("sync_batch_norm") || ops.IsCollective("sync_batch_norm_grad") {
		t.Error("sync_batch_norm became a collective: the simulator would not run its kernel")
	}
	rep := get[*analysis.CommReport](t, analysis.NewCache(parse(t, syncBNModule)), analysis.Comm)

	first := analysis.CommOp{Program: "main", ID: 1, Type: "sync_batch_norm", RingID: 0,
		Group: []int{0, 1, 2, 3}, Axis: "dp", Payload: "", DType: ir.F32, Shape: []int64{7},
		Bytes: 42, Origin: "batch_norm:0 synchronised batch norm"}
	if len(rep.Ops) == 0 {
		t.Fatal("no ops")
	}
	if !commOpEqual(rep.Ops[0], first) {
		t.Errorf("first op %+v, want %+v", rep.Ops[0], first)
	}
	// 2(n-1)/n × (2C+1) × 4 for f32, in the package's integer rounding.
	if want, _ := analysis.CollectiveBytes("c_allreduce_sum", 4, (2*3+1)*4, 0); want != rep.Ops[0].Bytes {
		t.Errorf("bytes %d, c_allreduce_sum of the buffer moves %d", rep.Ops[0].Bytes, want)
	}

	var got []string
	for _, op := range rep.Ops {
		b := itoa(op.Bytes)
		if op.DataDependent {
			b = "data-dependent"
		}
		got = append(got, strings.Join([]string{itoa(op.ID), op.Type, itoa(op.RingID), op.Axis,
			ir.FormatInts(op.Group), op.DType.String(), int64s(op.Shape), b}, " "))
	}
	want := []string{
		"1 sync_batch_norm 0 dp [0, 1, 2, 3] f32 [7] 42",
		"2 sync_batch_norm_grad 0 dp [0, 1, 2, 3] f32 [7] 42",
		"3 c_allreduce_sum 0 dp [0, 1, 2, 3] f32 [3] 18",
		"4 sync_batch_norm 0 dp [0, 1, 2, 3] f64 [7] 84",
		"5 sync_batch_norm 0 dp [0, 1, 2, 3] f32 [7] 42",
		"6 sync_batch_norm 0 dp [0, 1, 2, 3] f32 [7] 0",
		"7 sync_batch_norm 1 group 1 [1] f32 [7] 0",
		"8 sync_batch_norm 0 dp [0, 1, 2, 3] f32 [-1] data-dependent",
	}
	if !slices.Equal(got, want) {
		t.Errorf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	const total = 42 + 42 + 18 + 84 + 42
	if rep.Main.Ops != 8 || rep.Main.Bytes != total || rep.Main.DataDependent != 1 {
		t.Errorf("main totals %+v, want 8 ops, %d B, 1 data-dependent", rep.Main, total)
	}
	wantAxes := []analysis.CommTotal{
		{Name: "dp", Ops: 7, Bytes: total, DataDependent: 1},
		{Name: "group 1", Ops: 1},
	}
	if !slices.Equal(rep.Main.ByAxis, wantAxes) {
		t.Errorf("by axis %+v, want %+v", rep.Main.ByAxis, wantAxes)
	}
	wantTypes := []analysis.CommTotal{
		{Name: "c_allreduce_sum", Ops: 1, Bytes: 18},
		{Name: "sync_batch_norm", Ops: 6, Bytes: 42 + 84 + 42, DataDependent: 1},
		{Name: "sync_batch_norm_grad", Ops: 1, Bytes: 42},
	}
	if !slices.Equal(rep.Main.ByType, wantTypes) {
		t.Errorf("by type %+v, want %+v", rep.Main.ByType, wantTypes)
	}
}

func commOpEqual(a, b analysis.CommOp) bool {
	return a.Program == b.Program && a.Block == b.Block && a.ID == b.ID && a.Type == b.Type &&
		a.RingID == b.RingID && slices.Equal(a.Group, b.Group) && a.Axis == b.Axis &&
		a.Payload == b.Payload && a.DType == b.DType && slices.Equal(a.Shape, b.Shape) &&
		a.Bytes == b.Bytes && a.DataDependent == b.DataDependent && a.Origin == b.Origin && a.Impl == b.Impl
}

// TestCommSyncBatchNormErrors: a sync_batch_norm whose buffer or group
// cannot be known is an error naming the op, as a collective's is.
func TestCommSyncBatchNormErrors(t *testing.T) {
	m := parse(t, `
group 0 ranks [0, 1]
group 1 ranks [1]
program main rank 0 {
  block 0 {
    var x : f32[2, 3]
    var y : f32[2, 3]
    param scale : f32[3]
    op 1 sync_batch_norm(X: x) -> (Y: y) {ring_id = 0}
    op 2 sync_batch_norm(X: x, Scale: nope) -> (Y: y) {ring_id = 0}
    op 3 sync_batch_norm_grad(Scale: scale) -> (Y: y) {ring_id = 0}
    op 4 sync_batch_norm(X: x, Scale: scale) -> (Y: y) {ring_id = 7}
    op 5 sync_batch_norm(X: x, Scale: scale) -> (Y: y) {ring_id = 1}
    op 6 sync_batch_norm(X: x, Scale: scale) -> (Y: y) {ring_id = 0}
  }
}`)
	_, err := analysis.Get[*analysis.CommReport](analysis.NewCache(m), analysis.Comm)
	var got []string
	for _, e := range analysis.CommErrors(err) {
		got = append(got, e.Error())
	}
	want := []string{
		"op 1 sync_batch_norm: input Scale has 0 args, want 1",
		"op 2 sync_batch_norm: input Scale names undeclared var nope",
		"op 3 sync_batch_norm_grad: input X has 0 args, want 1",
		"op 4 sync_batch_norm: ring_id 7 is not in the module's group table",
		"op 5 sync_batch_norm: rank 0 is not in group 1 [1]",
	}
	if !slices.Equal(got, want) {
		t.Errorf("got:\n%s\nwant:\n%s\n(error: %v)", strings.Join(got, "\n"), strings.Join(want, "\n"), err)
	}
}
