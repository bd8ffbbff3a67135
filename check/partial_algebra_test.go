package check_test

import (
	"context"
	"strings"
	"testing"

	"github.com/distpass/distpass/check"
	"github.com/distpass/distpass/ir"
)

// partialSrc is a forward program on a 2×2 mesh whose last op combines
// partial values into z. s0 and s1 are sums (row-parallel matmuls over
// mesh dim 0 and 1), a0 and a0b averages over mesh dim 0 (means of the
// rows of r and r2, split along it).
const partialSrc = `module partials
mesh world shape [2, 2] dims [a, b] ranks RANKS

program main {
  block 0 {
    var x : DT[4, 8] @world[-1, 0] {is_data, stop_gradient}
    var w : DT[8, 4] @world[0, -1] {stop_gradient}
    var x1 : DT[4, 8] @world[-1, 1] {is_data, stop_gradient}
    var w1 : DT[8, 4] @world[1, -1] {stop_gradient}
    var r : DT[8, 4] @world[0, -1] {is_data, stop_gradient}
    var r2 : DT[8, 4] @world[0, -1] {is_data, stop_gradient}
    var s0 : DT[4, 4] @world[-1, -1] partial [0]
    var s0b : DT[4, 4] @world[-1, -1] partial [0]
    var s1 : DT[4, 4] @world[-1, -1] partial [1]
    var a0 : DT[1, 4] @world[-1, -1] partial [0:avg]
    var a0b : DT[1, 4] @world[-1, -1] partial [0:avg]
    var z : DT[SHAPE] @world[-1, -1] partial [Z]
    op 1 matmul_v2(X: x, Y: w) -> (Out: s0) {trans_x = false, trans_y = false} role forward
         dist @world impl matmul_v2:1 [x: [-1, 0], w: [0, -1] -> s0: [-1, -1]]
    op 2 matmul_v2(X: x, Y: w) -> (Out: s0b) {trans_x = false, trans_y = false} role forward
         dist @world impl matmul_v2:1 [x: [-1, 0], w: [0, -1] -> s0b: [-1, -1]]
    op 3 matmul_v2(X: x1, Y: w1) -> (Out: s1) {trans_x = false, trans_y = false} role forward
         dist @world impl matmul_v2:1 [x1: [-1, 1], w1: [1, -1] -> s1: [-1, -1]]
    op 4 reduce_mean(X: r) -> (Out: a0) {dim = [0], keep_dim = true, reduce_all = false} role forward
         dist @world impl default:0 [r: [0, -1] -> a0: [-1, -1]]
    op 5 reduce_mean(X: r2) -> (Out: a0b) {dim = [0], keep_dim = true, reduce_all = false} role forward
         dist @world impl default:0 [r2: [0, -1] -> a0b: [-1, -1]]
    op 6 OP -> (Out: z) ATTRS role forward
         dist @world impl default:0 [MAP -> z: [-1, -1]]
  }
}
`

// partialCase is op 6: its type and inputs, and z's partial state.
type partialCase struct {
	name, op, z string
	want        string // "" when it lowers and check proves it; else the refusal
}

func (c partialCase) module(t *testing.T, ranks, dt string) *ir.Module {
	t.Helper()
	typ, args, _ := strings.Cut(c.op, " ")
	var ins, maps []string
	shape := "4, 4"
	for i, a := range strings.Fields(args) {
		ins = append(ins, []string{"X", "Y"}[i]+": "+a)
		maps = append(maps, a+": [-1, -1]")
		if strings.HasPrefix(a, "a0") {
			shape = "1, 4"
		}
	}
	attrs := "{axis = -1}"
	if typ == "assign" {
		attrs = ""
	}
	src := strings.NewReplacer("RANKS", ranks, "DT", dt, "SHAPE", shape, "[Z]", "["+c.z+"]",
		"OP", typ+"("+strings.Join(ins, ", ")+")", "ATTRS", attrs, "MAP", strings.Join(maps, ", ")).Replace(partialSrc)
	m, err := ir.ParseString(c.name+".dpir", src)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestPartialsAddUp: an op given partial inputs computes on each rank's
// parts, which is right only when the parts of its inputs are parts
// alike (the same mesh dims, the same reductions) and its output is
// partial so. Those that are lower and check proves them on two rank
// orders and two dtypes; those that are not are refused before any rank
// is lowered, naming the op and the var (they ran before, and check
// found them off by half or by double).
func TestPartialsAddUp(t *testing.T) {
	for _, c := range []partialCase{
		{name: "assign_sum", op: "assign s0", z: "0"},
		{name: "add_sums_alike", op: "elementwise_add s0 s0b", z: "0"},
		{name: "add_avgs_alike", op: "elementwise_add a0 a0b", z: "0:avg"},
		{name: "sub_sums_alike", op: "elementwise_sub s0 s0b", z: "0"},
		{name: "assign_sum_into_avg", op: "assign s0", z: "0:avg",
			want: "main block 0: op 6 assign: assign carries a sum over mesh dim 0 into z, which is partial [0:avg]: its parts would be reduced as an average"},
		{name: "add_sum_and_avg", op: "elementwise_add s0 a0", z: "0",
			want: "main block 0: op 6 elementwise_add: elementwise_add reads s0, partial [0], with a0, partial [0:avg]: the parts of values partial along other mesh dims or by other reductions do not add up"},
		{name: "add_along_other_dims", op: "elementwise_add s0 s1", z: "0, 1",
			want: "main block 0: op 6 elementwise_add: elementwise_add reads s0, partial [0], with s1, partial [1]: the parts of values partial along other mesh dims or by other reductions do not add up"},
		{name: "avg_into_sum", op: "assign a0", z: "0",
			want: "main block 0: op 6 assign: assign carries an average over mesh dim 0 into z, which is partial [0]: its parts would be reduced as a sum"},
	} {
		for _, ranks := range []string{"[0, 1, 2, 3]", "[3, 1, 0, 2]"} {
			for _, dt := range []string{"f32", "f64"} {
				t.Run(c.name+"/"+ranks+"/"+dt, func(t *testing.T) {
					rep, err := check.Run(context.Background(), c.module(t, ranks, dt), check.Options{Steps: 1})
					if c.want != "" {
						if err == nil || !strings.Contains(err.Error(), c.want) {
							t.Fatalf("err = %v\nwant one containing %q", err, c.want)
						}
						return
					}
					if err != nil {
						t.Fatal(err)
					}
					if err := rep.Err(); err != nil {
						t.Fatal(err)
					}
					if rep.Count("activation") < 5 {
						t.Fatalf("%d activations compared, want z and its inputs", rep.Count("activation"))
					}
				})
			}
		}
	}
}
