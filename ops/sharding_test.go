package ops_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/ops"
	"github.com/distpass/distpass/spmd"
)

// shardCase is one rule run: an op (with the vars it reads and writes),
// the mappings given, and what the rule must give. Mappings are written
// as Paddle's tests write them: "[1, -1]"; partials as "0" or "0:avg".
type shardCase struct {
	name    string
	vars    string // var declarations
	op      string
	forward bool     // Forward from in, else Backward from out
	mesh    []int    // the mesh's sizes; 2×3 when nil
	given   []string // per input (forward) or output (backward) arg; "" for nil
	wantIn  []string
	wantOut []string
	partial []string // per output, Forward only: "" for none, "0", "0,1:avg"
	err     string   // a substring of the error, when the rule refuses
}

func runShardCases(t *testing.T, cases []shardCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := ir.Parse(c.name, []byte("program main {\n block 0 {\n"+c.vars+"\n"+c.op+"\n }\n}\n"))
			if err != nil {
				t.Fatal(err)
			}
			b := m.Main.Global()
			r, err := ops.ShardingRuleOf(b.Ops[0], b.Var)
			if err != nil || r == nil {
				t.Fatalf("rule: %v, %v", r, err)
			}
			given := make([][]int, len(c.given))
			for i, g := range c.given {
				given[i] = parseMapping(t, g)
			}
			mesh := c.mesh
			if mesh == nil {
				mesh = []int{2, 3}
			}
			var s spmd.Sharding
			if c.forward {
				s, err = r.Forward(mesh, given)
			} else {
				s, err = r.Backward(mesh, given)
			}
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err = %v, want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			check := func(what string, got [][]int, want []string) {
				t.Helper()
				if len(got) != len(want) {
					t.Fatalf("%s: %d mappings, want %d", what, len(got), len(want))
				}
				for i, w := range want {
					if !slices.Equal(got[i], parseMapping(t, w)) {
						t.Errorf("%s %d: %s, want %s", what, i, fmtMapping(got[i]), w)
					}
				}
			}
			check("input", s.Inputs, c.wantIn)
			check("output", s.Outputs, c.wantOut)
			for i, w := range c.partial {
				if got := fmtPartial(s.Partial[i]); got != w {
					t.Errorf("output %d partial %q, want %q", i, got, w)
				}
			}
			if !c.forward {
				for i, p := range s.Partial {
					if len(p) > 0 {
						t.Errorf("backward gave output %d a partial %v", i, p)
					}
				}
			}
		})
	}
}

func parseMapping(t *testing.T, s string) []int {
	t.Helper()
	if s == "" {
		return nil
	}
	s = strings.Trim(s, "[]")
	if s == "" {
		return []int{}
	}
	var m []int
	for _, f := range strings.Split(s, ",") {
		var d int
		if _, err := fmt.Sscan(strings.TrimSpace(f), &d); err != nil {
			t.Fatalf("mapping %q: %v", s, err)
		}
		m = append(m, d)
	}
	return m
}

func fmtMapping(m []int) string {
	if m == nil {
		return ""
	}
	return ir.FormatInts(m)
}

func fmtPartial(ps []ir.Partial) string {
	var s []string
	for _, p := range ps {
		if p.Reduce == ir.ReduceSum {
			s = append(s, fmt.Sprint(p.Dim))
		} else {
			s = append(s, fmt.Sprintf("%d:%s", p.Dim, p.Reduce))
		}
	}
	return strings.Join(s, ",")
}

// TestMatmulShardingRule: the cases of Paddle's MatmulSPMDRule test
// (test/cpp/auto_parallel/spmd_rule_test.cc), X [64, 32] or [512, 48, 64,
// 32] and Y [32, 48] on a 2×3 mesh, and its reverse.
func TestMatmulShardingRule(t *testing.T) {
	v2 := "var x : f32[64, 32]\nvar y : f32[32, 48]\nvar o : f32[64, 48]"
	v4 := "var x : f32[512, 48, 64, 32]\nvar y : f32[32, 48]\nvar o : f32[512, 48, 64, 48]"
	mm := "op 1 matmul_v2(X: x, Y: y) -> (Out: o)"
	mmT := func(tx, ty bool) string {
		return fmt.Sprintf("op 1 matmul_v2(X: x, Y: y) -> (Out: o) {trans_x = %v, trans_y = %v}", tx, ty)
	}
	v4tx := "var x : f32[512, 48, 32, 64]\nvar y : f32[32, 48]\nvar o : f32[512, 48, 64, 48]"
	v4ty := "var x : f32[512, 48, 64, 32]\nvar y : f32[48, 32]\nvar o : f32[512, 48, 64, 48]"
	v4txy := "var x : f32[512, 48, 32, 64]\nvar y : f32[48, 32]\nvar o : f32[512, 48, 64, 48]"
	runShardCases(t, []shardCase{
		{name: "test1", vars: v2, op: mm, forward: true, given: []string{"[1, -1]", "[-1, -1]"},
			wantIn: []string{"[1, -1]", "[-1, -1]"}, wantOut: []string{"[1, -1]"}, partial: []string{""}},
		{name: "test2 column", vars: v2, op: mm, forward: true, given: []string{"[-1, -1]", "[-1, 0]"},
			wantIn: []string{"[-1, -1]", "[-1, 0]"}, wantOut: []string{"[-1, 0]"}, partial: []string{""}},
		{name: "test3 k from X", vars: v2, op: mm, forward: true, given: []string{"[1, 0]", "[-1, -1]"},
			wantIn: []string{"[1, 0]", "[0, -1]"}, wantOut: []string{"[1, -1]"}, partial: []string{"0"}},
		{name: "test4 k from Y", vars: v2, op: mm, forward: true, given: []string{"[-1, -1]", "[1, 0]"},
			wantIn: []string{"[-1, 1]", "[1, 0]"}, wantOut: []string{"[-1, 0]"}, partial: []string{"1"}},
		{name: "test5 batch", vars: v4, op: mm, forward: true, given: []string{"[0, 1, -1, -1]", "[-1, -1]"},
			wantIn: []string{"[0, 1, -1, -1]", "[-1, -1]"}, wantOut: []string{"[0, 1, -1, -1]"}, partial: []string{""}},
		{name: "test6 batch and k", vars: v4, op: mm, forward: true, given: []string{"[1, -1, -1, 0]", "[-1, -1]"},
			wantIn: []string{"[1, -1, -1, 0]", "[0, -1]"}, wantOut: []string{"[1, -1, -1, -1]"}, partial: []string{"0"}},
		{name: "test7 trans_x", vars: v4tx, op: mmT(true, false), forward: true, given: []string{"[1, -1, -1, 0]", "[-1, -1]"},
			wantIn: []string{"[1, -1, -1, 0]", "[-1, -1]"}, wantOut: []string{"[1, -1, 0, -1]"}, partial: []string{""}},
		{name: "test8 trans_y", vars: v4ty, op: mmT(false, true), forward: true, given: []string{"[-1, -1, -1, -1]", "[1, 0]"},
			wantIn: []string{"[-1, -1, -1, 0]", "[1, 0]"}, wantOut: []string{"[-1, -1, -1, 1]"}, partial: []string{"0"}},
		// Mesh dim 1 on m (from X) and n (from Y): m, seen first, keeps it.
		{name: "test9 conflict", vars: v4txy, op: mmT(true, true), forward: true, given: []string{"[-1, -1, 0, 1]", "[1, 0]"},
			wantIn: []string{"[-1, -1, 0, 1]", "[-1, 0]"}, wantOut: []string{"[-1, -1, 1, -1]"}, partial: []string{"0"}},
		// k on mesh dim 1 in X and 0 in Y: Paddle throws.
		{name: "test10 two mesh dims on k", vars: v4txy, op: mmT(true, true), forward: true, given: []string{"[-1, -1, 1, 0]", "[1, 0]"},
			err: `dim "k" is sharded along two mesh dims, 1 and 0`},
		{name: "reverse", vars: v2, op: mm, given: []string{"[1, 0]"},
			wantIn: []string{"[1, -1]", "[-1, 0]"}, wantOut: []string{"[1, 0]"}},
		{name: "reverse batch", vars: v4, op: mm, given: []string{"[0, -1, 1, -1]"},
			wantIn: []string{"[0, -1, 1, -1]", "[-1, -1]"}, wantOut: []string{"[0, -1, 1, -1]"}},
		// The notes' examples on [dp=2, mp=4]: column and row parallel.
		{name: "column parallel", vars: "var x : f32[8, 16, 32]\nvar y : f32[32, 64]\nvar o : f32[8, 16, 64]", op: mm, forward: true,
			given: []string{"[0, -1, -1]", "[-1, 1]"}, wantIn: []string{"[0, -1, -1]", "[-1, 1]"}, wantOut: []string{"[0, -1, 1]"}, partial: []string{""}},
		{name: "row parallel", vars: "var x : f32[8, 16, 32]\nvar y : f32[32, 64]\nvar o : f32[8, 16, 64]", op: mm, forward: true,
			given: []string{"[0, -1, 1]", "[1, -1]"}, wantIn: []string{"[0, -1, 1]", "[1, -1]"}, wantOut: []string{"[0, -1, -1]"}, partial: []string{"1"}},
		{name: "vector x", vars: "var x : f32[32]\nvar y : f32[4, 32, 48]\nvar o : f32[4, 48]", op: mm, forward: true,
			given: []string{"[0]", "[1, -1, -1]"}, wantIn: []string{"[0]", "[1, 0, -1]"}, wantOut: []string{"[1, -1]"}, partial: []string{"0"}},
		{name: "mul", vars: "var x : f32[8, 16, 32]\nvar y : f32[32, 64]\nvar o : f32[8, 16, 64]", op: "op 1 mul(X: x, Y: y) -> (Out: o) {x_num_col_dims = 2}", forward: true,
			given: []string{"[0, -1, 1]", "[-1, -1]"}, wantIn: []string{"[0, -1, 1]", "[1, -1]"}, wantOut: []string{"[0, -1, -1]"}, partial: []string{"1"}},
	})
}

// TestElementwiseShardingRules: Paddle's ElementwiseUnary and
// ElementwiseBinary rules: a bias wanted split as the activation it is
// added to, size-1 dims never sharded, static axis alignment.
func TestElementwiseShardingRules(t *testing.T) {
	add := "op 1 elementwise_add(X: x, Y: y) -> (Out: o)"
	runShardCases(t, []shardCase{
		{name: "bias", vars: "var x : f32[8, 16, 64]\nvar y : f32[64]\nvar o : f32[8, 16, 64]", op: add, forward: true,
			given: []string{"[0, -1, 1]", "[-1]"}, wantIn: []string{"[0, -1, 1]", "[1]"}, wantOut: []string{"[0, -1, 1]"}, partial: []string{""}},
		{name: "broadcast size-1", vars: "var x : f32[8, 1, 64]\nvar y : f32[8, 16, 64]\nvar o : f32[8, 16, 64]", op: add, forward: true,
			given: []string{"[0, 1, -1]", "[-1, -1, -1]"}, wantIn: []string{"[0, -1, -1]", "[0, -1, -1]"}, wantOut: []string{"[0, -1, -1]"}, partial: []string{""}},
		{name: "y longer", vars: "var x : f32[64]\nvar y : f32[8, 64]\nvar o : f32[8, 64]", op: add, forward: true,
			given: []string{"[1]", "[0, -1]"}, wantIn: []string{"[1]", "[0, 1]"}, wantOut: []string{"[0, 1]"}, partial: []string{""}},
		{name: "axis 0", vars: "var x : f32[8, 16]\nvar y : f32[8]\nvar o : f32[8, 16]", op: "op 1 elementwise_mul(X: x, Y: y) -> (Out: o) {axis = 0}", forward: true,
			given: []string{"[-1, 1]", "[0]"}, wantIn: []string{"[0, 1]", "[0]"}, wantOut: []string{"[0, 1]"}, partial: []string{""}},
		{name: "conflict", vars: "var x : f32[8, 16]\nvar y : f32[8, 16]\nvar o : f32[8, 16]", op: add, forward: true,
			given: []string{"[0, -1]", "[1, -1]"}, err: `dim "a" is sharded along two mesh dims, 0 and 1`},
		{name: "reverse", vars: "var x : f32[8, 16, 64]\nvar y : f32[64]\nvar o : f32[8, 16, 64]", op: add,
			given: []string{"[0, -1, 1]"}, wantIn: []string{"[0, -1, 1]", "[1]"}, wantOut: []string{"[0, -1, 1]"}},
		{name: "relu", vars: "var x : f32[8, 16]\nvar o : f32[8, 16]", op: "op 1 relu(X: x) -> (Out: o)", forward: true,
			given: []string{"[1, 0]"}, wantIn: []string{"[1, 0]"}, wantOut: []string{"[1, 0]"}, partial: []string{""}},
		{name: "dropout mask", vars: "var x : f32[8, 16]\nvar o : f32[8, 16]\nvar mk : u8[8, 16]", op: "op 1 dropout(X: x) -> (Out: o, Mask: mk)", forward: true,
			given: []string{"[0, -1]"}, wantIn: []string{"[0, -1]"}, wantOut: []string{"[0, -1]", "[0, -1]"}, partial: []string{"", ""}},
		{name: "scale tensor replicated", vars: "var x : f32[8]\nvar s : f32[1]\nvar o : f32[8]", op: "op 1 scale(X: x, ScaleTensor: s) -> (Out: o)", forward: true,
			given: []string{"[0]", "[0]"}, wantIn: []string{"[0]", "[-1]"}, wantOut: []string{"[0]"}, partial: []string{""}},
	})
}

// TestShapeShardingRules: softmax, transpose, reductions, layer_norm and
// the embedding, as Paddle's rules for them.
func TestShapeShardingRules(t *testing.T) {
	ln := "var x : f32[64, 32, 1024]\nvar s : f32[1024]\nvar b : f32[1024]\nvar y : f32[64, 32, 1024]\nvar mu : f32[64, 32]\nvar va : f32[64, 32]"
	lnFlat := "var x : f32[64, 32, 1024]\nvar s : f32[1024]\nvar b : f32[1024]\nvar y : f32[64, 32, 1024]\nvar mu : f32[2048]\nvar va : f32[2048]"
	runShardCases(t, []shardCase{
		{name: "softmax", vars: "var x : f32[8, 16, 64]\nvar o : f32[8, 16, 64]", op: "op 1 softmax(X: x) -> (Out: o) {axis = -1}", forward: true,
			given: []string{"[0, -1, 1]"}, wantIn: []string{"[0, -1, -1]"}, wantOut: []string{"[0, -1, -1]"}, partial: []string{""}},
		{name: "softmax strict", vars: "var x : f32[8, 16, 64]\nvar o : f32[8, 16, 64]", op: "op 1 softmax(X: x) -> (Out: o) {axis = 0}", forward: true,
			given: []string{"[-1, 0, 0]"}, err: "mesh dim 0 shards dims"},
		{name: "transpose", vars: "var x : f32[8, 16, 64]\nvar o : f32[16, 8, 64]", op: "op 1 transpose2(X: x) -> (Out: o) {axis = [1, 0, 2]}", forward: true,
			given: []string{"[0, -1, 1]"}, wantIn: []string{"[0, -1, 1]"}, wantOut: []string{"[-1, 0, 1]"}, partial: []string{""}},
		{name: "transpose reverse", vars: "var x : f32[8, 16, 64]\nvar o : f32[16, 8, 64]", op: "op 1 transpose2(X: x) -> (Out: o) {axis = [1, 0, 2]}",
			given: []string{"[1, 0, -1]"}, wantIn: []string{"[0, 1, -1]"}, wantOut: []string{"[1, 0, -1]"}},
		{name: "reduce_sum", vars: "var x : f32[8, 16]\nvar o : f32[8]", op: "op 1 reduce_sum(X: x) -> (Out: o) {dim = [1]}", forward: true,
			given: []string{"[0, 1]"}, wantIn: []string{"[0, 1]"}, wantOut: []string{"[0]"}, partial: []string{"1"}},
		{name: "reduce_mean keep_dim", vars: "var x : f32[8, 16]\nvar o : f32[1, 16]", op: "op 1 reduce_mean(X: x) -> (Out: o) {dim = [0], keep_dim = true}", forward: true,
			given: []string{"[0, 1]"}, wantIn: []string{"[0, 1]"}, wantOut: []string{"[-1, 1]"}, partial: []string{"0:avg"}},
		{name: "reduce_max all", vars: "var x : f32[8, 16]\nvar o : f32[]", op: "op 1 reduce_max(X: x) -> (Out: o) {reduce_all = true}", forward: true,
			given: []string{"[1, 0]"}, wantIn: []string{"[1, 0]"}, wantOut: []string{"[]"}, partial: []string{"0:max,1:max"}},
		{name: "reduce reverse", vars: "var x : f32[8, 16]\nvar o : f32[8]", op: "op 1 reduce_sum(X: x) -> (Out: o) {dim = [1]}",
			given: []string{"[0]"}, wantIn: []string{"[0, -1]"}, wantOut: []string{"[0]"}},
		{name: "mean of a dp loss", vars: "var x : f32[8, 16]\nvar o : f32[1]", op: "op 1 mean(X: x) -> (Out: o)", forward: true,
			given: []string{"[0, -1]"}, wantIn: []string{"[0, -1]"}, wantOut: []string{"[-1]"}, partial: []string{"0:avg"}},
		// Paddle's LayerNormSPMDRule test1 and test2 (spmd_rule_test.cc).
		{name: "layer_norm test1", vars: ln, op: "op 1 layer_norm(X: x, Scale: s, Bias: b) -> (Y: y, Mean: mu, Variance: va) {begin_norm_axis = 2}", forward: true,
			given: []string{"[1, -1, -1]", "[-1]", "[-1]"}, wantIn: []string{"[1, -1, -1]", "[-1]", "[-1]"},
			wantOut: []string{"[1, -1, -1]", "[1, -1]", "[1, -1]"}, partial: []string{"", "", ""}},
		{name: "layer_norm test2", vars: ln, op: "op 1 layer_norm(X: x, Scale: s, Bias: b) -> (Y: y, Mean: mu, Variance: va) {begin_norm_axis = 2}", forward: true,
			given: []string{"[1, 0, -1]", "[0]", "[0]"}, wantIn: []string{"[1, 0, -1]", "[-1]", "[-1]"},
			wantOut: []string{"[1, 0, -1]", "[1, 0]", "[1, 0]"}, partial: []string{"", "", ""}},
		// Statistics flattened to [B*S] (programs before Paddle 3): a rank's
		// block of them is contiguous only when B alone is split.
		{name: "layer_norm flattened statistics", vars: lnFlat, op: "op 1 layer_norm(X: x, Scale: s, Bias: b) -> (Y: y, Mean: mu, Variance: va) {begin_norm_axis = 2}", forward: true,
			given: []string{"[0, -1, -1]", "[-1]", "[-1]"}, wantIn: []string{"[0, -1, -1]", "[-1]", "[-1]"},
			wantOut: []string{"[0, -1, -1]", "[0]", "[0]"}, partial: []string{"", "", ""}},
		{name: "layer_norm flattened statistics, sequence split", vars: lnFlat, op: "op 1 layer_norm(X: x, Scale: s, Bias: b) -> (Y: y, Mean: mu, Variance: va) {begin_norm_axis = 2}", forward: true,
			given: []string{"[0, 1, -1]", "[-1]", "[-1]"}, wantIn: []string{"[0, -1, -1]", "[-1]", "[-1]"},
			wantOut: []string{"[0, -1, -1]", "[0]", "[0]"}, partial: []string{"", "", ""}},
		{name: "layer_norm flattened statistics reverse", vars: lnFlat, op: "op 1 layer_norm(X: x, Scale: s, Bias: b) -> (Y: y, Mean: mu, Variance: va) {begin_norm_axis = 2}",
			given: []string{"[-1, -1, -1]", "[1]", "[-1]"}, wantIn: []string{"[1, -1, -1]", "[-1]", "[-1]"}, wantOut: []string{"[1, -1, -1]", "[1]", "[1]"}},
		// XShape is [0] + X's dims, split as X; an output the rule does not
		// spell is never partial.
		{name: "transpose xshape", vars: "var x : f32[8, 16]\nvar o : f32[16, 8]\nvar xs : f32[0, 8, 16]", op: "op 1 transpose2(X: x) -> (Out: o, XShape: xs) {axis = [1, 0]}", forward: true,
			given: []string{"[0, 1]"}, wantIn: []string{"[0, 1]"}, wantOut: []string{"[1, 0]", "[-1, 0, 1]"}, partial: []string{"", ""}},
		{name: "unspelled outputs are not partial", vars: "var x : f32[8, 16]\nvar o : f32[8]\nvar k : f32[8, 16]", op: "op 1 reduce_sum(X: x) -> (Out: o, Extra: k) {dim = [1]}", forward: true,
			given: []string{"[0, 1]"}, wantIn: []string{"[0, 1]"}, wantOut: []string{"[0]", "[-1, -1]"}, partial: []string{"1", ""}},
		{name: "embedding vocab parallel", vars: "var w : f32[1000, 64]\nvar ids : i64[8, 16]\nvar o : f32[8, 16, 64]",
			op: "op 1 lookup_table_v2(W: w, Ids: ids) -> (Out: o)", forward: true,
			given: []string{"[1, -1]", "[0, -1]"}, wantIn: []string{"[1, -1]", "[0, -1]"}, wantOut: []string{"[0, -1, -1]"}, partial: []string{"1"}},
		{name: "embedding padding_idx", vars: "var w : f32[1000, 64]\nvar ids : i64[8, 16]\nvar o : f32[8, 16, 64]",
			op: "op 1 lookup_table_v2(W: w, Ids: ids) -> (Out: o) {padding_idx = 0}", forward: true,
			given: []string{"[1, -1]", "[0, -1]"}, wantIn: []string{"[-1, -1]", "[0, -1]"}, wantOut: []string{"[0, -1, -1]"}, partial: []string{""}},
		{name: "embedding reverse", vars: "var w : f32[1000, 64]\nvar ids : i64[8, 16]\nvar o : f32[8, 16, 64]",
			op:    "op 1 lookup_table_v2(W: w, Ids: ids) -> (Out: o)",
			given: []string{"[0, -1, 1]"}, wantIn: []string{"[-1, 1]", "[0, -1]"}, wantOut: []string{"[0, -1, 1]"}},
	})
}

// TestAxisShardingRules: the ops that cut, join, scan or sort along an
// axis replicate it; slice, gather and softmax_with_cross_entropy as
// Paddle's rules.
func TestAxisShardingRules(t *testing.T) {
	runShardCases(t, []shardCase{
		{name: "split", vars: "var x : f32[8, 16]\nvar a : f32[8, 8]\nvar b : f32[8, 8]", op: "op 1 split(X: x) -> (Out: [a, b]) {axis = 1, num = 2}", forward: true,
			given: []string{"[0, 1]"}, wantIn: []string{"[0, -1]"}, wantOut: []string{"[0, -1]", "[0, -1]"}, partial: []string{"", ""}},
		{name: "split reverse", vars: "var x : f32[8, 16]\nvar a : f32[8, 8]\nvar b : f32[8, 8]", op: "op 1 split(X: x) -> (Out: [a, b]) {axis = 1, num = 2}",
			given: []string{"[0, -1]", "[-1, -1]"}, wantIn: []string{"[0, -1]"}, wantOut: []string{"[0, -1]", "[0, -1]"}},
		{name: "concat", vars: "var a : f32[8, 4]\nvar b : f32[8, 6]\nvar o : f32[8, 10]", op: "op 1 concat(X: [a, b]) -> (Out: o) {axis = -1}", forward: true,
			given: []string{"[-1, 1]", "[0, -1]"}, wantIn: []string{"[0, -1]", "[0, -1]"}, wantOut: []string{"[0, -1]"}, partial: []string{""}},
		{name: "cumsum", vars: "var x : f32[8, 16]\nvar o : f32[8, 16]", op: "op 1 cumsum(X: x) -> (Out: o) {axis = 0}", forward: true,
			given: []string{"[0, 1]"}, wantIn: []string{"[-1, 1]"}, wantOut: []string{"[-1, 1]"}, partial: []string{""}},
		{name: "top_k", vars: "var x : f32[8, 16]\nvar o : f32[8, 2]\nvar i : i64[8, 2]", op: "op 1 top_k_v2(X: x) -> (Out: o, Indices: i) {k = 2}", forward: true,
			given: []string{"[0, 1]"}, wantIn: []string{"[0, -1]"}, wantOut: []string{"[0, -1]", "[0, -1]"}, partial: []string{"", ""}},
		{name: "slice", vars: "var x : f32[8, 16, 4]\nvar o : f32[8, 4]", op: "op 1 slice(Input: x) -> (Out: o) {axes = [1], starts = [0], ends = [1], decrease_axis = [1]}", forward: true,
			given: []string{"[0, 1, -1]"}, wantIn: []string{"[0, -1, -1]"}, wantOut: []string{"[0, -1]"}, partial: []string{""}},
		{name: "gather", vars: "var x : f32[10, 16]\nvar i : i64[4]\nvar o : f32[4, 16]", op: "op 1 gather(X: x, Index: i) -> (Out: o)", forward: true,
			given: []string{"[0, 1]", "[0]"}, wantIn: []string{"[-1, 1]", "[0]"}, wantOut: []string{"[0, 1]"}, partial: []string{""}},
		{name: "softmax_with_cross_entropy", vars: "var x : f32[8, 100]\nvar l : i64[8, 1]\nvar s : f32[8, 100]\nvar o : f32[8, 1]",
			op: "op 1 softmax_with_cross_entropy(Logits: x, Label: l) -> (Softmax: s, Loss: o)", forward: true,
			given: []string{"[0, 1]", "[-1, -1]"}, wantIn: []string{"[0, -1]", "[0, -1]"}, wantOut: []string{"[0, -1]", "[0, -1]"}, partial: []string{"", ""}},
		{name: "sum", vars: "var a : f32[8, 16]\nvar b : f32[8, 16]\nvar o : f32[8, 16]", op: "op 1 sum(X: [a, b]) -> (Out: o)", forward: true,
			given: []string{"[0, -1]", "[-1, 1]"}, wantIn: []string{"[0, 1]", "[0, 1]"}, wantOut: []string{"[0, 1]"}, partial: []string{""}},
	})
}

// TestShardingRulesOnCorpus builds the rule of every op of the corpus
// that has one: it must build, spell each arg with its rank, and give a
// replicated op replicated outputs without partials, both ways.
func TestShardingRulesOnCorpus(t *testing.T) {
	n := map[string]int{}
	seen := map[string]bool{} // the op types with a rule the corpus has
	for _, cm := range opCorpus(t) {
		if ir.Verify(cm.m) != nil {
			continue
		}
		for _, p := range cm.m.Programs() {
			for _, b := range p.Blocks {
				for _, op := range b.Ops {
					if d := ops.Lookup(op.Type); d != nil && d.Sharding != nil {
						seen[op.Type] = true
					}
					lookup := func(name string) *ir.Var { return p.LookupVar(b, name) }
					r, err := ops.ShardingRuleOf(op, lookup)
					if err != nil {
						t.Errorf("%s: %v", cm.name, err)
						continue
					}
					if r == nil {
						continue
					}
					n[op.Type]++
					in, out := replicated(op.Inputs, lookup), replicated(op.Outputs, lookup)
					for _, dir := range []string{"forward", "backward"} {
						var s spmd.Sharding
						if dir == "forward" {
							s, err = r.Forward([]int{2, 2}, in)
						} else {
							s, err = r.Backward([]int{2, 2}, out)
						}
						if err != nil {
							t.Errorf("%s: %s: %s: %v", cm.name, op, dir, err)
							continue
						}
						slots := argSlots(op)
						for i, m := range append(s.Inputs, s.Outputs...) {
							want := append(in, out...)[i]
							if m == nil && slices.Contains(unconstrained[op.Type], slots[i]) {
								continue // the rule leaves it free
							}
							if want != nil && !slices.Equal(m, want) {
								t.Errorf("%s: %s: %s: arg %d: %v, want %v", cm.name, op, dir, i, m, want)
							}
						}
						for i, p := range s.Partial {
							if len(p) > 0 {
								t.Errorf("%s: %s: %s: output %d partial %v", cm.name, op, dir, i, p)
							}
						}
					}
				}
			}
		}
	}
	t.Logf("rules built: %v", n)
	// The corpus' op types with a rule: a type that loses its rule (or
	// whose builder stops building) shows here.
	if len(n) < corpusRuleTypes {
		t.Errorf("rules built for %d op types of the corpus, want at least %d", len(n), corpusRuleTypes)
	}
	// A builder that gives no rule for any op of a type it is written for
	// (a slot it misspells, a rank it does not expect) is a bug.
	for typ := range seen {
		if n[typ] == 0 {
			t.Errorf("%s: no rule built for any of its ops in the corpus", typ)
		}
	}
}

// corpusRuleTypes is how many op types of the corpus have a rule built.
const corpusRuleTypes = 76

// unconstrained lists, per op type, the slots whose args its rule leaves
// free (nil both ways): what is fed, fetched, filled or carried by a
// sub-block, and the MoE counts, which hold each rank's own.
var unconstrained = map[string][]string{
	"feed": {"X", "Out"}, "fetch": {"X", "Out"}, "fetch_v2": {"X", "Out"},
	"fill_constant": {"Out"}, "uniform_random": {"Out"}, "gaussian_random": {"Out"},
	"shape":      {"Input"},
	"pd_op.data": {"out0"}, "pd_op.full": {"out0"}, "pd_op.fetch": {"in0", "out0"},
	"while": {"X", "Condition", "Out", "StepScopes"}, "conditional_block": {"Cond", "Input", "Out", "Scope"},
	"pd_op.if": {"in0", "out"}, "cf.yield": {"in"},
	"alltoall":               {"X", "Out"},
	"reshard":                {"X", "Out"}, // its two ends are what it converts
	"assign_pos":             {"cum_count", "eff_num_len", "Out"},
	"limit_by_capacity":      {"expert_count", "Out"},
	"prune_gate_by_capacity": {"ExpertCount"},
	"global_scatter":         {"local_count", "global_count"},
	"global_gather":          {"local_count", "global_count"},
	"grouped_matmul":         {"ExpertCount"},
	"grouped_matmul_grad":    {"ExpertCount"},
}

// argSlots returns the slot of each of op's input and output args, in
// the rules' order; a numbered slot (in0, out1) by its prefix.
func argSlots(op *ir.Op) []string {
	var res []string
	for _, ss := range [2][]ir.Slot{op.Inputs, op.Outputs} {
		for _, s := range ss {
			name := strings.TrimRight(s.Name, "0123456789")
			if d := ops.Lookup(op.Type); d != nil && !slices.ContainsFunc(append(slices.Clip(d.Inputs), d.Outputs...), func(sl ops.Slot) bool { return sl.Name == s.Name }) {
				s.Name = name
			}
			for range s.Args {
				res = append(res, s.Name)
			}
		}
	}
	return res
}

// replicated returns an all -1 mapping per arg of slots that is a dense
// tensor (nil for others).
func replicated(slots []ir.Slot, lookup func(string) *ir.Var) [][]int {
	var res [][]int
	for _, s := range slots {
		for _, a := range s.Args {
			var m []int
			if v := lookup(a); v != nil && v.Type.IsTensor() {
				m = make([]int, len(v.Type.Shape))
				for i := range m {
					m[i] = -1
				}
			}
			res = append(res, m)
		}
	}
	return res
}

// TestVisionShardingRules: conv2d as Paddle's Conv2dInferSpmd (input
// channels with the filter's, a split making Output partial), but the
// spatial dims replicated; pool2d and batch_norm keep the batch and the
// channels.
func TestVisionShardingRules(t *testing.T) {
	conv := "var x : f32[8, 16, 32, 32]\nvar w : f32[64, 16, 3, 3]\nvar o : f32[8, 64, 30, 30]"
	runShardCases(t, []shardCase{
		{name: "conv batch", vars: conv, op: "op 1 conv2d(Input: x, Filter: w) -> (Output: o)", forward: true,
			given: []string{"[0, -1, -1, -1]", "[-1, -1, -1, -1]"}, wantIn: []string{"[0, -1, -1, -1]", "[-1, -1, -1, -1]"},
			wantOut: []string{"[0, -1, -1, -1]"}, partial: []string{""}},
		{name: "conv in channels", vars: conv, op: "op 1 conv2d(Input: x, Filter: w) -> (Output: o)", forward: true,
			given: []string{"[0, 1, -1, -1]", "[-1, -1, -1, -1]"}, wantIn: []string{"[0, 1, -1, -1]", "[-1, 1, -1, -1]"},
			wantOut: []string{"[0, -1, -1, -1]"}, partial: []string{"1"}},
		{name: "conv out channels", vars: conv, op: "op 1 conv2d(Input: x, Filter: w) -> (Output: o)", forward: true,
			given: []string{"[0, -1, -1, -1]", "[1, -1, -1, -1]"}, wantIn: []string{"[0, -1, -1, -1]", "[1, -1, -1, -1]"},
			wantOut: []string{"[0, 1, -1, -1]"}, partial: []string{""}},
		{name: "conv spatial replicated", vars: conv, op: "op 1 conv2d(Input: x, Filter: w) -> (Output: o)", forward: true,
			given: []string{"[-1, -1, 0, -1]", "[-1, -1, -1, -1]"}, wantIn: []string{"[-1, -1, -1, -1]", "[-1, -1, -1, -1]"},
			wantOut: []string{"[-1, -1, -1, -1]"}, partial: []string{""}},
		{name: "conv reverse", vars: conv, op: "op 1 conv2d(Input: x, Filter: w) -> (Output: o)",
			given: []string{"[0, 1, -1, -1]"}, wantIn: []string{"[0, -1, -1, -1]", "[1, -1, -1, -1]"}, wantOut: []string{"[0, 1, -1, -1]"}},
		{name: "depthwise channels replicated", vars: "var x : f32[8, 16, 32, 32]\nvar w : f32[16, 1, 3, 3]\nvar o : f32[8, 16, 30, 30]",
			op: "op 1 depthwise_conv2d(Input: x, Filter: w) -> (Output: o) {groups = 16}", forward: true,
			given: []string{"[0, 1, -1, -1]", "[-1, -1, -1, -1]"}, wantIn: []string{"[0, -1, -1, -1]", "[-1, -1, -1, -1]"},
			wantOut: []string{"[0, -1, -1, -1]"}, partial: []string{""}},
		{name: "pool", vars: "var x : f32[8, 16, 32, 32]\nvar o : f32[8, 16, 16, 16]",
			op: "op 1 pool2d(X: x) -> (Out: o) {ksize = [2, 2], pooling_type = \"max\", strides = [2, 2]}", forward: true,
			given: []string{"[0, 1, -1, 0]"}, wantIn: []string{"[0, 1, -1, -1]"}, wantOut: []string{"[0, 1, -1, -1]"}, partial: []string{""}},
		{name: "batch_norm", vars: "var x : f32[8, 16, 4, 4]\nvar s : f32[16]\nvar b : f32[16]\nvar m : f32[16]\nvar v : f32[16]\nvar y : f32[8, 16, 4, 4]\nvar sm : f32[16]\nvar sv : f32[16]",
			op: "op 1 batch_norm(X: x, Scale: s, Bias: b, Mean: m, Variance: v) -> (Y: y, MeanOut: m, VarianceOut: v, SavedMean: sm, SavedVariance: sv)", forward: true,
			given:   []string{"[0, 1, -1, -1]", "[-1]", "[-1]", "[-1]", "[-1]"},
			wantIn:  []string{"[0, 1, -1, -1]", "[1]", "[1]", "[1]", "[1]"},
			wantOut: []string{"[0, 1, -1, -1]", "[1]", "[1]", "[1]", "[1]"}, partial: []string{"", "", "", "", ""}},
	})
}

// TestOptimizerShardingRule: an update keeps Param's sharding on every
// tensor of its shape, and the scalars replicated.
func TestOptimizerShardingRule(t *testing.T) {
	runShardCases(t, []shardCase{
		{name: "sgd", vars: "var w : f32[16, 32]\nvar lr : f32[1]\nvar g : f32[16, 32]",
			op: "op 1 sgd(Param: w, LearningRate: lr, Grad: g) -> (ParamOut: w)", forward: true,
			given: []string{"[-1, 1]", "[-1]", "[0, -1]"}, wantIn: []string{"[0, 1]", "[-1]", "[0, 1]"}, wantOut: []string{"[0, 1]"}, partial: []string{""}},
		{name: "adam reverse", vars: "var w : f32[16, 32]\nvar lr : f32[1]\nvar g : f32[16, 32]\nvar m1 : f32[16, 32]\nvar m2 : f32[16, 32]\nvar b1 : f32[1]\nvar b2 : f32[1]",
			op:     "op 1 adam(Param: w, Grad: g, LearningRate: lr, Moment1: m1, Moment2: m2, Beta1Pow: b1, Beta2Pow: b2) -> (ParamOut: w, Moment1Out: m1, Moment2Out: m2, Beta1PowOut: b1, Beta2PowOut: b2)",
			given:  []string{"[1, -1]", "[-1, -1]", "[-1, -1]", "[-1]", "[-1]"},
			wantIn: []string{"[1, -1]", "[1, -1]", "[-1]", "[1, -1]", "[1, -1]", "[-1]", "[-1]"}, wantOut: []string{"[1, -1]", "[1, -1]", "[1, -1]", "[-1]", "[-1]"}},
	})
}

// TestViewShardingRules: reshape2 and its kin through spmd.ReshapeSharding,
// with XShape following X and the shape inputs replicated.
func TestViewShardingRules(t *testing.T) {
	heads := "var x : f32[8, 1024, 768]\nvar o : f32[8, 1024, 12, 64]\nvar xs : f32[0, 8, 1024, 768]"
	runShardCases(t, []shardCase{
		{name: "reshape2 heads", vars: heads, op: "op 1 reshape2(X: x) -> (Out: o, XShape: xs) {shape = [0, 0, 12, 64]}", forward: true, mesh: []int{2, 2},
			given: []string{"[0, -1, 1]"}, wantIn: []string{"[0, -1, 1]"}, wantOut: []string{"[0, -1, 1, -1]", "[-1, 0, -1, 1]"}, partial: []string{"", ""}},
		{name: "reshape2 heads, 8 ranks", vars: heads, op: "op 1 reshape2(X: x) -> (Out: o, XShape: xs) {shape = [0, 0, 12, 64]}", forward: true, mesh: []int{2, 8},
			given: []string{"[0, -1, 1]"}, wantIn: []string{"[0, -1, -1]"}, wantOut: []string{"[0, -1, -1, -1]", "[-1, 0, -1, -1]"}, partial: []string{"", ""}},
		{name: "reshape2 reverse", vars: heads, op: "op 1 reshape2(X: x) -> (Out: o, XShape: xs) {shape = [0, 0, 12, 64]}", mesh: []int{2, 2},
			given: []string{"[0, -1, 1, -1]", "[-1, -1, -1, -1]"}, wantIn: []string{"[0, -1, 1]"}, wantOut: []string{"[0, -1, 1, -1]", "[-1, 0, -1, 1]"}},
		{name: "flatten", vars: "var x : f32[8, 16, 4]\nvar o : f32[128, 4]\nvar xs : f32[0, 8, 16, 4]",
			op: "op 1 flatten_contiguous_range(X: x) -> (Out: o, XShape: xs) {start_axis = 0, stop_axis = 1}", forward: true,
			given: []string{"[0, 1, -1]"}, wantIn: []string{"[0, -1, -1]"}, wantOut: []string{"[0, -1]", "[-1, 0, -1, -1]"}, partial: []string{"", ""}},
		{name: "unsqueeze2", vars: "var x : f32[8, 16]\nvar o : f32[8, 1, 16]\nvar xs : f32[0, 8, 16]",
			op: "op 1 unsqueeze2(X: x) -> (Out: o, XShape: xs) {axes = [1]}", forward: true,
			given: []string{"[0, 1]"}, wantIn: []string{"[0, 1]"}, wantOut: []string{"[0, -1, 1]", "[-1, 0, 1]"}, partial: []string{"", ""}},
	})
}

// TestGradShardingRules: a grad op's rule is its forward op's letters,
// so a weight's grad under data parallelism and an activation's grad
// under a split contraction come out partial, as Paddle's grad rules
// give them (MatmulGradInferSpmd, ElementwiseBinaryGradInferSpmd,
// EmbeddingGradInferSpmd).
func TestGradShardingRules(t *testing.T) {
	mm := "var x : f32[8, 32]\nvar w : f32[32, 64]\nvar o : f32[8, 64]\nvar g : f32[8, 64]\nvar dx : f32[8, 32]\nvar dw : f32[32, 64]"
	mmGrad := "op 1 matmul_v2_grad(X: x, Y: w, Out@GRAD: g) -> (X@GRAD: dx, Y@GRAD: dw) role backward"
	runShardCases(t, []shardCase{
		{name: "matmul dp", vars: mm, op: mmGrad, forward: true,
			given: []string{"[0, -1]", "[-1, -1]", "[0, -1]"}, wantIn: []string{"[0, -1]", "[-1, -1]", "[0, -1]"},
			wantOut: []string{"[0, -1]", "[-1, -1]"}, partial: []string{"", "0"}},
		{name: "matmul column", vars: mm, op: mmGrad, forward: true,
			given: []string{"[0, -1]", "[-1, 1]", "[0, 1]"}, wantIn: []string{"[0, -1]", "[-1, 1]", "[0, 1]"},
			wantOut: []string{"[0, -1]", "[-1, 1]"}, partial: []string{"1", "0"}},
		{name: "matmul row", vars: mm, op: mmGrad, forward: true,
			given: []string{"[0, 1]", "[1, -1]", "[0, -1]"}, wantIn: []string{"[0, 1]", "[1, -1]", "[0, -1]"},
			wantOut: []string{"[0, 1]", "[1, -1]"}, partial: []string{"", "0"}},
		{name: "bias grad", vars: "var x : f32[8, 16, 64]\nvar b : f32[64]\nvar g : f32[8, 16, 64]\nvar dx : f32[8, 16, 64]\nvar db : f32[64]",
			op: "op 1 elementwise_add_grad(X: x, Y: b, Out@GRAD: g) -> (X@GRAD: dx, Y@GRAD: db) role backward", forward: true,
			given: []string{"[0, -1, 1]", "[1]", "[0, -1, 1]"}, wantIn: []string{"[0, -1, 1]", "[1]", "[0, -1, 1]"},
			wantOut: []string{"[0, -1, 1]", "[1]"}, partial: []string{"", "0"}},
		{name: "relu grad", vars: "var o : f32[8, 16]\nvar g : f32[8, 16]\nvar dx : f32[8, 16]",
			op: "op 1 relu_grad(Out: o, Out@GRAD: g) -> (X@GRAD: dx) role backward", forward: true,
			given: []string{"[0, 1]", "[0, 1]"}, wantIn: []string{"[0, 1]", "[0, 1]"}, wantOut: []string{"[0, 1]"}, partial: []string{""}},
		{name: "embedding grad", vars: "var ids : i64[8, 16]\nvar w : f32[1000, 64]\nvar g : f32[8, 16, 64]\nvar dw : f32[1000, 64]",
			op: "op 1 lookup_table_v2_grad(Ids: ids, W: w, Out@GRAD: g) -> (W@GRAD: dw) role backward", forward: true,
			given: []string{"[0, -1]", "[1, -1]", "[0, -1, -1]"}, wantIn: []string{"[0, -1]", "[1, -1]", "[0, -1, -1]"},
			wantOut: []string{"[1, -1]"}, partial: []string{"0"}},
		{name: "layer_norm grad", vars: "var x : f32[8, 16, 64]\nvar s : f32[64]\nvar b : f32[64]\nvar mu : f32[8, 16]\nvar va : f32[8, 16]\nvar g : f32[8, 16, 64]\nvar dx : f32[8, 16, 64]\nvar ds : f32[64]\nvar dbb : f32[64]",
			op: "op 1 layer_norm_grad(X: x, Scale: s, Bias: b, Mean: mu, Variance: va, Y@GRAD: g) -> (X@GRAD: dx, Scale@GRAD: ds, Bias@GRAD: dbb) {begin_norm_axis = 2} role backward", forward: true,
			given:   []string{"[0, -1, -1]", "[-1]", "[-1]", "[0, -1]", "[0, -1]", "[0, -1, -1]"},
			wantIn:  []string{"[0, -1, -1]", "[-1]", "[-1]", "[0, -1]", "[0, -1]", "[0, -1, -1]"},
			wantOut: []string{"[0, -1, -1]", "[-1]", "[-1]"}, partial: []string{"", "0", "0"}},
	})
}

// TestConcatAlignRefuses: the cost alignment of concat's inputs refuses
// mappings and meshes it cannot weigh, naming them.
func TestConcatAlignRefuses(t *testing.T) {
	v := "var a : f32[8, 4]\nvar b : f32[8, 6]\nvar o : f32[8, 10]"
	cat := "op 1 concat(X: [a, b]) -> (Out: o) {axis = 1}"
	runShardCases(t, []shardCase{
		{name: "mesh dim out of the mesh", vars: v, op: cat, forward: true, given: []string{"[2, -1]", "[0, -1]"},
			err: "mapping [2, -1] uses mesh dim 2 of a 2-dim mesh"},
		{name: "mesh dim twice", vars: v, op: cat, forward: true, given: []string{"[0, 0]", "[0, -1]"},
			err: "mapping [0, 0] uses mesh dim 0 twice"},
		{name: "empty mesh dim", vars: v, op: cat, forward: true, mesh: []int{2, 0}, given: []string{"[0, -1]", "[-1, -1]"},
			err: "mesh dim 1 has size 0"},
		{name: "length", vars: v, op: cat, forward: true, given: []string{"[0]", "[-1, -1]"},
			err: "mapping [0] of 1 dims for a 2-dim input"},
		// One input unconstrained: the other decides.
		{name: "nil input", vars: v, op: cat, forward: true, given: []string{"", "[1, -1]"},
			wantIn: []string{"", "[1, -1]"}, wantOut: []string{"[1, -1]"}, partial: []string{""}},
	})
}

// TestViewGradShardingRule: reshape2_grad regroups Out@GRAD into X's
// shape, the reshape rule the other way; XShape keeps [-1] + X@GRAD's
// mapping, so that each rank's holds its local X's dims.
func TestViewGradShardingRule(t *testing.T) {
	runShardCases(t, []shardCase{
		{name: "reshape2_grad", vars: "var xs : f32[0, 8, 1024, 768]\nvar g : f32[8, 1024, 12, 64]\nvar dx : f32[8, 1024, 768]",
			op: "op 1 reshape2_grad(XShape: xs, Out@GRAD: g) -> (X@GRAD: dx) role backward", forward: true, mesh: []int{2, 2},
			given: []string{"[-1, -1, -1, -1]", "[0, -1, 1, -1]"}, wantIn: []string{"[-1, 0, -1, 1]", "[0, -1, 1, -1]"},
			wantOut: []string{"[0, -1, 1]"}, partial: []string{""}},
		{name: "reshape2_grad reverse", vars: "var xs : f32[0, 8, 1024, 768]\nvar g : f32[8, 1024, 12, 64]\nvar dx : f32[8, 1024, 768]",
			op: "op 1 reshape2_grad(XShape: xs, Out@GRAD: g) -> (X@GRAD: dx) role backward", mesh: []int{2, 2},
			given: []string{"[0, -1, 1]"}, wantIn: []string{"[-1, 0, -1, 1]", "[0, -1, 1, -1]"}, wantOut: []string{"[0, -1, 1]"}},
	})
}
