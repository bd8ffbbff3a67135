package ops_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/ops"
)

// TestInferDoesNotAllocate: verifying 100 ops of a type costs no more
// allocations than verifying one, for ops of the data, MoE, collective
// and control families (verify must stay cheap at 10^6 ops).
func TestInferDoesNotAllocate(t *testing.T) {
	types := []string{
		"fill_constant() -> (Out: o%d) {dtype = 5, shape = [2, 3]}",
		"reshape2(X: x) -> (Out: r%d, XShape: xs%d) {shape = [3, 2]}",
		"transpose2(X: x) -> (Out: t%d, XShape: ts%d) {axis = [1, 0]}",
		"squeeze2(X: x) -> (Out: q%d, XShape: xs%d)",
		"unsqueeze2(X: x) -> (Out: u%d, XShape: us%d) {axes = [0]}",
		"flatten_contiguous_range(X: x) -> (Out: f%d, XShape: xs%d) {start_axis = 0, stop_axis = 1}",
		"concat(X: [x, x]) -> (Out: c%d) {axis = 0}",
		"slice(Input: x) -> (Out: s%d) {axes = [0], starts = [0], ends = [1]}",
		"arg_max(X: x) -> (Out: a%d) {axis = long(1)}",
		"top_k_v2(X: x) -> (Out: k%d, Indices: ki%d) {k = 1}",
		"c_allgather(X: x) -> (Out: g%d) {nranks = 2, ring_id = 0}",
		"c_sync_comm_stream(X: [x]) -> (Out: [x]) {ring_id = 0}",
		"pd_op.full() -> (out0: p%d) {dtype = \"float32\", shape = [2, 3]}",
	}
	decl := map[string]string{"o": "f32[2, 3]", "r": "f32[3, 2]", "xs": "f32[0, 2, 3]", "t": "f32[3, 2]", "ts": "f32[0, 2, 3]",
		"q": "f32[2, 3]", "u": "f32[1, 2, 3]", "us": "f32[0, 2, 3]", "f": "f32[6]", "c": "f32[4, 3]", "s": "f32[1, 3]",
		"a": "i64[2]", "k": "f32[2, 1]", "ki": "i64[2, 1]", "g": "f32[4, 3]", "p": "f32[2, 3]"}
	for _, op := range types {
		build := func(n int) string {
			var b strings.Builder
			b.WriteString("group 0 ranks [0, 1]\nprogram main { block 0 {\nvar x : f32[2, 3]\n")
			for i := range n {
				line := strings.ReplaceAll(op, "%d", "_"+fmt.Sprint(i))
				for p, ty := range decl {
					if strings.Contains(line, " "+p+"_"+fmt.Sprint(i)+")") || strings.Contains(line, " "+p+"_"+fmt.Sprint(i)+",") {
						fmt.Fprintf(&b, "var %s_%d : %s\n", p, i, ty)
					}
				}
				fmt.Fprintf(&b, "op %d %s\n", i+1, line)
			}
			b.WriteString("}}")
			return b.String()
		}
		m1, m100 := parseModule(t, build(1)), parseModule(t, build(100))
		if _, err := ops.Verify(m100, ops.Options{}); err != nil {
			t.Fatalf("%s: %v", op, err)
		}
		a1 := testing.AllocsPerRun(5, func() { ops.Verify(m1, ops.Options{}) })
		a100 := testing.AllocsPerRun(5, func() { ops.Verify(m100, ops.Options{}) })
		if a100 > a1 {
			t.Errorf("%s: verify of 1 op allocates %v times, of 100 ops %v", op, a1, a100)
		}
	}
}

func parseModule(t *testing.T, src string) *ir.Module {
	t.Helper()
	m, err := ir.Parse("p", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return m
}
