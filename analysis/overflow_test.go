package analysis_test

import (
	"strings"
	"testing"

	"github.com/distpass/distpass/analysis"
)

// TestShapeOverflow: a shape whose element count overflows int64 is an
// error where sizes are computed, naming the var: the annotation check,
// the local shapes, the memory report; and a collective whose payload's
// bytes overflow is an error of the communication report. Never a wrapped
// figure, nor one counted as unknown.
func TestShapeOverflow(t *testing.T) {
	serial := parse(t, `
mesh world shape [2] dims [dp] ranks [0, 1]
program main {
  block 0 {
    var x : f32[4294967296, 4294967296] @world[0, -1]
    var u : f32[-1, 4294967296, 4294967296] @world[-1, -1, -1]
  }
}`)
	c := analysis.NewCache(serial)
	rep := get[*analysis.AnnotationReport](t, c, analysis.Annotations)
	want := "main block 0: var x: shape [4294967296, 4294967296]: element count overflows int64\n" +
		"main block 0: var u: shape [-1, 4294967296, 4294967296]: element count overflows int64"
	if err := rep.Err(); err == nil || err.Error() != want {
		t.Errorf("annotations:\ngot  %v\nwant %s", err, want)
	}
	_, err := analysis.Get[*analysis.LocalShapeInfo](c, analysis.LocalShapes(0))
	if want := "local-shapes{rank=0}: " + want; err == nil || err.Error() != want {
		t.Errorf("local shapes:\ngot  %v\nwant %s", err, want)
	}

	// 2^31 × 2^31 elements fit int64; their f32 bytes do not.
	part := parse(t, `
mesh world shape [2] dims [dp] ranks [0, 1]
group 0 ranks [0, 1]
program main rank 0 {
  block 0 {
    var small : f32[4]
    var x : f32[2147483648, 2147483648]
    op 1 c_allreduce_sum(X: x) -> (Out: x) {ring_id = 0}
  }
}`)
	_, err = analysis.Get[*analysis.MemoryReport](analysis.NewCache(part), analysis.Memory)
	if want := "memory: main block 0: var x: f32[2147483648, 2147483648]: 4611686018427387904 elements of 4 bytes overflow int64"; err == nil || err.Error() != want {
		t.Errorf("memory:\ngot  %v\nwant %s", err, want)
	}
	_, err = analysis.Get[*analysis.CommReport](analysis.NewCache(part), analysis.Comm)
	if want := "op 1 c_allreduce_sum: input X x: f32[2147483648, 2147483648]: 4611686018427387904 elements of 4 bytes overflow int64"; err == nil || !strings.HasSuffix(err.Error(), want) {
		t.Errorf("comm:\ngot  %v\nwant …%s", err, want)
	}

	// Each var fits; their sum, or what an all-reduce moves, does not.
	big := parse(t, `
mesh world shape [2] dims [dp] ranks [0, 1]
group 0 ranks [0, 1]
program main rank 0 {
  block 0 {
    var x : u8[4611686018427387904]
    var y : u8[4611686018427387904]
    op 1 c_allreduce_sum(X: x) -> (Out: x) {ring_id = 0}
  }
}`)
	_, err = analysis.Get[*analysis.MemoryReport](analysis.NewCache(big), analysis.Memory)
	if want := "memory: main block 0: var y: the local bytes of main's vars overflow int64 with this u8[4611686018427387904] of 4611686018427387904 bytes"; err == nil || err.Error() != want {
		t.Errorf("memory sum:\ngot  %v\nwant %s", err, want)
	}
	_, err = analysis.Get[*analysis.CommReport](analysis.NewCache(big), analysis.Comm)
	if want := "op 1 c_allreduce_sum: payload x of 4611686018427387904 bytes: the bytes it moves overflow int64"; err == nil || !strings.HasSuffix(err.Error(), want) {
		t.Errorf("comm payload:\ngot  %v\nwant …%s", err, want)
	}
	many := parse(t, `
mesh world shape [2] dims [dp] ranks [0, 1]
group 0 ranks [0, 1]
program main rank 0 {
  block 0 {
    var x : u8[4611686018427387903]
    op 1 c_allreduce_sum(X: x) -> (Out: x) {ring_id = 0}
    op 2 c_allreduce_sum(X: x) -> (Out: x) {ring_id = 0}
    op 3 c_allreduce_sum(X: x) -> (Out: x) {ring_id = 0}
  }
}`)
	_, err = analysis.Get[*analysis.CommReport](analysis.NewCache(many), analysis.Comm)
	if want := "comm: main: the collectives move more than 9223372036854775807 bytes, which overflows int64"; err == nil || err.Error() != want {
		t.Errorf("comm total:\ngot  %v\nwant %s", err, want)
	}
}
