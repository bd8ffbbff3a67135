package ops_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/models"
	"github.com/distpass/distpass/ops"
)

// TestMoEShardingRules: the MoE ops alone. Counting a split batch is a
// contraction; the later counts are each rank's own (free); the
// exchanges keep rows split off the expert axis; grouped_matmul's
// experts select, its k contracts.
func TestMoEShardingRules(t *testing.T) {
	nc := "var topi : i64[8, 2]\nvar lc : i64[4]"
	ap := "var topi : i64[8, 2]\nvar cc : i64[4]\nvar pos : i64[-1]"
	ex := "var xs : f32[-1, 4]\nvar lc : i64[4]\nvar gc : i64[4]\nvar xr : f32[-1, 4]"
	gm := "var x : f32[-1, 4]\nvar w : f32[4, 4, 8]\nvar gc : i64[4]\nvar o : f32[-1, 8]"
	gmOp := "op 1 grouped_matmul(X: x, W: w, ExpertCount: gc) -> (Out: o)"
	gmg := gm + "\nvar g : f32[-1, 8]\nvar dx : f32[-1, 4]\nvar dw : f32[4, 4, 8]"
	gmgOp := "op 1 grouped_matmul_grad(X: x, W: w, ExpertCount: gc, Out@GRAD: g) -> (X@GRAD: dx, W@GRAD: dw) role backward"
	runShardCases(t, []shardCase{
		{name: "number_count of a split batch", vars: nc, op: "op 1 number_count(numbers: topi) -> (Out: lc) {upper_range = 4}", forward: true,
			given: []string{"[0, -1]"}, wantIn: []string{"[0, -1]"}, wantOut: []string{"[-1]"}, partial: []string{"0"}},
		{name: "number_count of both dims", vars: nc, op: "op 1 number_count(numbers: topi) -> (Out: lc) {upper_range = 4}", forward: true,
			given: []string{"[1, 0]"}, wantIn: []string{"[1, 0]"}, wantOut: []string{"[-1]"}, partial: []string{"0,1"}},
		{name: "number_count reverse", vars: nc, op: "op 1 number_count(numbers: topi) -> (Out: lc) {upper_range = 4}",
			given: []string{"[0]"}, wantIn: []string{"[-1, -1]"}, wantOut: []string{"[-1]"}},
		{name: "alltoall", vars: "var lc : i64[4]\nvar gc : i64[4]", op: "op 1 alltoall(X: lc) -> (Out: gc)", forward: true,
			given: []string{"[-1]"}, wantIn: []string{""}, wantOut: []string{""}, partial: []string{""}},
		{name: "alltoall reverse", vars: "var lc : i64[4]\nvar gc : i64[4]", op: "op 1 alltoall(X: lc) -> (Out: gc)",
			given: []string{"[0]"}, wantIn: []string{""}, wantOut: []string{""}},
		{name: "assign_pos", vars: ap, op: "op 1 assign_pos(X: topi, cum_count: cc) -> (Out: pos)", forward: true,
			given: []string{"[0, -1]", "[-1]"}, wantIn: []string{"[0, -1]", ""}, wantOut: []string{""}, partial: []string{""}},
		{name: "assign_pos reverse", vars: ap, op: "op 1 assign_pos(X: topi, cum_count: cc) -> (Out: pos)",
			given: []string{"[0]"}, wantIn: []string{"[-1, -1]", ""}, wantOut: []string{""}},
		{name: "limit_by_capacity", vars: "var ec : i64[4]\nvar cap : i64[2]\nvar o : i64[4]",
			op: "op 1 limit_by_capacity(expert_count: ec, capacity: cap) -> (Out: o) {n_worker = 2}", forward: true,
			given: []string{"[0]", "[0]"}, wantIn: []string{"", "[-1]"}, wantOut: []string{""}, partial: []string{""}},
		{name: "prune_gate_by_capacity", vars: "var gi : i64[8]\nvar ec : i64[4]\nvar o : i64[8]",
			op: "op 1 prune_gate_by_capacity(GateIdx: gi, ExpertCount: ec) -> (NewGateIdx: o) {n_expert = 2, n_worker = 2}", forward: true,
			given: []string{"[0]", "[-1]"}, wantIn: []string{"[0]", ""}, wantOut: []string{"[0]"}, partial: []string{""}},
		{name: "prune_gate_by_capacity reverse", vars: "var gi : i64[8]\nvar ec : i64[4]\nvar o : i64[8]",
			op:    "op 1 prune_gate_by_capacity(GateIdx: gi, ExpertCount: ec) -> (NewGateIdx: o) {n_expert = 2, n_worker = 2}",
			given: []string{"[1]"}, wantIn: []string{"[1]", ""}, wantOut: []string{"[1]"}},
		{name: "global_scatter", vars: ex, op: "op 1 global_scatter(X: xs, local_count: lc, global_count: gc) -> (Out: xr)", forward: true,
			given: []string{"[0, 1]", "[-1]", "[-1]"}, wantIn: []string{"[0, -1]", "", ""}, wantOut: []string{"[0, -1]"}, partial: []string{""}},
		{name: "global_gather reverse", vars: ex, op: "op 1 global_gather(X: xs, local_count: lc, global_count: gc) -> (Out: xr)",
			given: []string{"[1, 0]"}, wantIn: []string{"[1, -1]", "", ""}, wantOut: []string{"[1, -1]"}},
		// ep: experts split, rows each rank's own.
		{name: "grouped_matmul experts", vars: gm, op: gmOp, forward: true,
			given: []string{"[-1, -1]", "[0, -1, -1]", "[-1]"}, wantIn: []string{"[-1, -1]", "[0, -1, -1]", ""}, wantOut: []string{"[-1, -1]"}, partial: []string{""}},
		// dp,ep: the rows split along dp too.
		{name: "grouped_matmul dp rows", vars: gm, op: gmOp, forward: true,
			given: []string{"[0, -1]", "[1, -1, -1]", "[-1]"}, wantIn: []string{"[0, -1]", "[1, -1, -1]", ""}, wantOut: []string{"[0, -1]"}, partial: []string{""}},
		{name: "grouped_matmul k contracted", vars: gm, op: gmOp, forward: true,
			given: []string{"[-1, 1]", "[0, -1, -1]", "[-1]"}, wantIn: []string{"[-1, 1]", "[0, 1, -1]", ""}, wantOut: []string{"[-1, -1]"}, partial: []string{"1"}},
		// The rows and the experts on one mesh dim: the rows (sharded
		// first) keep it, the experts are wanted whole.
		{name: "grouped_matmul rows on the expert axis", vars: gm, op: gmOp, forward: true,
			given: []string{"[0, -1]", "[0, -1, -1]", "[-1]"}, wantIn: []string{"[0, -1]", "[-1, -1, -1]", ""}, wantOut: []string{"[0, -1]"}, partial: []string{""}},
		{name: "grouped_matmul reverse", vars: gm, op: gmOp,
			given: []string{"[0, 1]"}, wantIn: []string{"[0, -1]", "[-1, -1, 1]", ""}, wantOut: []string{"[0, 1]"}},
		// The grad: W@GRAD partial along the rows' mesh dim, X@GRAD not
		// along the experts'.
		{name: "grouped_matmul_grad ep", vars: gmg, op: gmgOp, forward: true,
			given:  []string{"[-1, -1]", "[0, -1, -1]", "[-1]", "[-1, -1]"},
			wantIn: []string{"[-1, -1]", "[0, -1, -1]", "", "[-1, -1]"}, wantOut: []string{"[-1, -1]", "[0, -1, -1]"}, partial: []string{"", ""}},
		{name: "grouped_matmul_grad dp,ep", vars: gmg, op: gmgOp, forward: true,
			given:  []string{"[0, -1]", "[1, -1, -1]", "[-1]", "[0, -1]"},
			wantIn: []string{"[0, -1]", "[1, -1, -1]", "", "[0, -1]"}, wantOut: []string{"[0, -1]", "[1, -1, -1]"}, partial: []string{"", "0"}},
		{name: "grouped_matmul_grad p contracted", vars: gmg, op: gmgOp, forward: true,
			given:  []string{"[-1, -1]", "[-1, -1, 1]", "[-1]", "[-1, 1]"},
			wantIn: []string{"[-1, -1]", "[-1, -1, 1]", "", "[-1, 1]"}, wantOut: []string{"[-1, -1]", "[-1, -1, 1]"}, partial: []string{"1", ""}},
	})
}

// TestMoEShardingRulesAgainstStrategies runs each rule of the MoE
// example's ops on the hand-written strategies' input mappings (ep, and
// dp,ep on 2×2) and compares what it gives with the annotations: the
// op's input and output mappings, and the output vars' partials. The
// differences are listed: each is an annotation no rule gives (see the
// comments), the rest agree.
func TestMoEShardingRulesAgainstStrategies(t *testing.T) {
	for _, c := range []struct {
		strategy string
		mesh     *ir.ProcessMesh
		want     []string
	}{
		{"ep", models.Mesh([]int{2}, []string{"ep"}), moeDiffs},
		{"dp,ep", models.Mesh([]int{2, 2}, []string{"dp", "ep"}), moeDPDiffs},
	} {
		t.Run(c.strategy, func(t *testing.T) {
			m, err := models.MoETraining(models.MoEConfig{}, c.strategy, c.mesh, "")
			if err != nil {
				t.Fatal(err)
			}
			got := ruleDiffs(t, m)
			if !slices.Equal(got, c.want) {
				t.Errorf("differences from the strategy:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(c.want, "\n"))
			}
		})
	}
}

// moeDiffs are the MoE example's annotations that the rules do not give,
// under ep:
//   - cumsum of the partial local counts: its annotation keeps the
//     partial (a sum of prefix sums is the prefix sum of the sum), which
//     a rule, given mappings only, does not propagate: the engine must
//     carry an input's partial through a linear op;
//   - gather (and gather_grad) of the batch-split u by tok, each rank's
//     own token indexes: the gather rule reads Index as one global
//     tensor and wants X's gathered axis whole;
//   - scatter of each rank's own slots (pos) into its shard of the slot
//     buffer: the scatter rule wants the scattered axis whole (pos, a
//     replicated index tensor in the rule's terms, could point anywhere
//     in it), and scatter_grad's Out@GRAD for the same reason;
//   - the weight grads of the data-parallel matmuls: the rule says
//     partial along the batch's mesh dim; the annotation has no partial,
//     as the default impl all-reduces them itself.
var moeDiffs = []string{
	"op 11 cumsum: output 0 cum_count: rule gives partial [], strategy [0]",
	"op 15 gather: input 0 u: rule wants [-1, -1], strategy [0, -1]",
	"op 22 scatter: input 0 slots_zero: rule wants [-1, -1], strategy [0, -1]",
	"op 22 scatter: output 0 ys: rule gives [-1, -1], strategy [0, -1]",
	"op 39 scatter_grad: input 2 ys@GRAD: rule wants [-1, -1], strategy [0, -1]",
	"op 45 gather_grad: input 0 u: rule wants [-1, -1], strategy [0, -1]",
	"op 45 gather_grad: output 0 u@GRAD@RENAME@1: rule gives [-1, -1], strategy [0, -1]",
	"op 48 matmul_v2_grad: output 1 gate_w@GRAD: rule gives partial [0], strategy []",
	"op 50 matmul_v2_grad: output 0 w_in@GRAD: rule gives partial [0], strategy []",
}

// moeDPDiffs are dp,ep's: ep's, and
//   - the exchanges' rows: the tokens side lives on the 1-D mesh tokens,
//     the experts side on the 2-D world; the annotation writes the rows
//     of each rank's own tokens [-1] on tokens and the rows the experts
//     of a dp replica receive [0] (dp) on world. A rule keeps a mesh dim
//     index from X to Out and never changes meshes: it gives xr X's [-1]
//     and yb y's [0];
//   - the expert weights' grads: partial along dp, the rows' mesh dim
//     (the expert_parallel impl averages them over dp itself).
var moeDPDiffs = []string{
	"op 11 cumsum: output 0 cum_count: rule gives partial [], strategy [0]",
	"op 15 gather: input 0 u: rule wants [-1, -1], strategy [0, -1]",
	"op 16 global_scatter: output 0 xr: rule gives [-1, -1], strategy [0, -1]",
	"op 20 global_gather: output 0 yb: rule gives [0, -1], strategy [-1, -1]",
	"op 22 scatter: input 0 slots_zero: rule wants [-1, -1], strategy [0, -1]",
	"op 22 scatter: output 0 ys: rule gives [-1, -1], strategy [0, -1]",
	"op 39 scatter_grad: input 2 ys@GRAD: rule wants [-1, -1], strategy [0, -1]",
	"op 40 global_scatter: output 0 y@GRAD: rule gives [-1, -1], strategy [0, -1]",
	"op 41 grouped_matmul_grad: output 1 w2@GRAD: rule gives partial [0], strategy []",
	"op 43 grouped_matmul_grad: output 1 w1@GRAD: rule gives partial [0], strategy []",
	"op 44 global_gather: output 0 xs@GRAD: rule gives [0, -1], strategy [-1, -1]",
	"op 45 gather_grad: input 0 u: rule wants [-1, -1], strategy [0, -1]",
	"op 45 gather_grad: output 0 u@GRAD@RENAME@1: rule gives [-1, -1], strategy [0, -1]",
	"op 48 matmul_v2_grad: output 1 gate_w@GRAD: rule gives partial [0], strategy []",
	"op 50 matmul_v2_grad: output 0 w_in@GRAD: rule gives partial [0], strategy []",
}

// ruleDiffs runs the rule of every op of m's main block that has one,
// Forward on the op's annotated input mappings, and lists where it
// differs from the annotations (a free arg agrees with anything).
func ruleDiffs(t *testing.T, m *ir.Module) []string {
	t.Helper()
	var diffs []string
	p := m.Main
	b := p.Global()
	lookup := func(name string) *ir.Var { return p.LookupVar(b, name) }
	for _, op := range b.Ops {
		if op.Dist == nil {
			continue
		}
		r, err := ops.ShardingRuleOf(op, lookup)
		if err != nil {
			t.Fatalf("%s: %v", op, err)
		}
		if r == nil {
			continue
		}
		pm := m.Mesh(op.Dist.Mesh)
		if pm == nil {
			t.Fatalf("%s: no mesh %s", op, op.Dist.Mesh)
		}
		var in []string
		var given [][]int
		for _, s := range op.Inputs {
			for _, a := range s.Args {
				mp, _ := op.Dist.InputMapping(a)
				in, given = append(in, a), append(given, mp)
			}
		}
		s, err := r.Forward(pm.Shape, given)
		if err != nil {
			t.Fatalf("%s: forward: %v", op, err)
		}
		for i, want := range s.Inputs {
			if want != nil && !slices.Equal(want, given[i]) {
				diffs = append(diffs, fmt.Sprintf("op %d %s: input %d %s: rule wants %s, strategy %s", op.ID, op.Type, i, in[i], ir.FormatInts(want), ir.FormatInts(given[i])))
			}
		}
		j := 0
		for _, sl := range op.Outputs {
			for _, a := range sl.Args {
				got, want := s.Outputs[j], []int(nil)
				if mp, ok := op.Dist.OutputMapping(a); ok {
					want = mp
				}
				if got != nil && want != nil && !slices.Equal(got, want) {
					diffs = append(diffs, fmt.Sprintf("op %d %s: output %d %s: rule gives %s, strategy %s", op.ID, op.Type, j, a, ir.FormatInts(got), ir.FormatInts(want)))
				}
				var vp []ir.Partial
				if v := lookup(a); v != nil && v.Dist != nil {
					vp = v.Dist.Partial
				}
				if got != nil && fmtPartialDims(s.Partial[j]) != fmtPartialDims(vp) {
					diffs = append(diffs, fmt.Sprintf("op %d %s: output %d %s: rule gives partial [%s], strategy [%s]", op.ID, op.Type, j, a, fmtPartialDims(s.Partial[j]), fmtPartialDims(vp)))
				}
				j++
			}
		}
	}
	return diffs
}

// fmtPartialDims spells the mesh dims of ps, in order.
func fmtPartialDims(ps []ir.Partial) string {
	var s []string
	for _, p := range ps {
		s = append(s, fmt.Sprint(p.Dim))
	}
	slices.Sort(s)
	return strings.Join(s, ", ")
}
