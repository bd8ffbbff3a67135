package sim

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/ops"
)

func init() {
	// How many rows an MoE exchange delivers is what the counts say.
	dataDependent["global_scatter"] = true
	dataDependent["global_gather"] = true
}

// collectiveCase is one collective op run by the SPMD runner on the
// ranks of group 0, to compare what each rank receives with what the op
// table infers from that rank's program. Src is rank 0's module; $RANK
// is replaced by the rank, and each Swap pair (old, new) is applied to
// the programs of ranks other than 0 (a send becomes a receive).
type collectiveCase struct {
	Name   string
	Ranks  int
	Src    string
	Swap   []string
	Values map[string]*Tensor // exact inputs (counts), the same on every rank
}

var collectiveCases = []collectiveCase{
	{Name: "c_allreduce_sum", Ranks: 2, Src: `program main rank $RANK { block 0 {
 var x : f32[2, 3]
 var o : f32[-1, -1]
 op 1 c_allreduce_sum(X: x) -> (Out: o) {ring_id = 0, use_calc_stream = true}
}}`},
	{Name: "c_allreduce_max", Ranks: 2, Src: `program main rank $RANK { block 0 {
 var x : f64[4]
 var o : f64[-1]
 op 1 c_allreduce_max(X: x) -> (Out: o) {ring_id = 0}
}}`},
	{Name: "c_allreduce_min", Ranks: 2, Src: `program main rank $RANK { block 0 {
 var x : i64[2, 2]
 var o : i64[-1, -1]
 op 1 c_allreduce_min(X: x) -> (Out: o) {ring_id = 0}
}}`},
	{Name: "c_allreduce_prod", Ranks: 2, Src: `program main rank $RANK { block 0 {
 var x : f32[3]
 var o : f32[-1]
 op 1 c_allreduce_prod(X: x) -> (Out: o) {ring_id = 0}
}}`},
	{Name: "all_reduce", Ranks: 2, Src: `program main rank $RANK { block 0 {
 var x : f32[2, 3]
 var o : f32[-1, -1]
 op 1 all_reduce(x: x) -> (out: o) {reduce_type = 1, ring_id = 0}
}}`},
	{Name: "c_identity", Ranks: 2, Src: `program main rank $RANK { block 0 {
 var x : f32[2, 3]
 var o : f32[-1, -1]
 op 1 c_identity(X: x) -> (Out: o) {ring_id = 0, use_model_parallel = true}
}}`},
	{Name: "c_broadcast", Ranks: 2, Src: `program main rank $RANK { block 0 {
 var x : f32[2, 3]
 var o : f32[-1, -1]
 op 1 c_broadcast(X: x) -> (Out: o) {ring_id = 0, root = 1}
}}`},
	{Name: "broadcast", Ranks: 2, Src: `program main rank $RANK { block 0 {
 var x : f32[3]
 var o : f32[-1]
 op 1 broadcast(x: x) -> (out: o) {ring_id = 0, root = 0}
}}`},
	{Name: "c_allgather", Ranks: 2, Src: `program main rank $RANK { block 0 {
 var x : f32[2, 3]
 var o : f32[-1, -1]
 op 1 c_allgather(X: x) -> (Out: o) {ring_id = 0, nranks = 2}
}}`},
	{Name: "all_gather", Ranks: 3, Src: `program main rank $RANK { block 0 {
 var x : f32[1, 2]
 var o : f32[-1, -1]
 op 1 all_gather(x: x) -> (out: o) {ring_id = 0, nranks = 3}
}}`},
	{Name: "c_concat", Ranks: 2, Src: `program main rank $RANK { block 0 {
 var x : f32[2, 3]
 var o : f32[-1, -1]
 op 1 c_concat(X: x) -> (Out: o) {ring_id = 0, nranks = 2, rank = $RANK}
}}`},
	{Name: "c_split", Ranks: 2, Src: `program main rank $RANK { block 0 {
 var x : f32[3, 4]
 var o : f32[-1, -1]
 op 1 c_split(X: x) -> (Out: o) {ring_id = 0, nranks = 2, rank = $RANK}
}}`},
	{Name: "alltoall", Ranks: 2, Src: `program main rank $RANK { block 0 {
 var x : i64[4]
 var o : i64[-1]
 op 1 alltoall(X: x) -> (Out: o) {ring_id = 0}
}}`},
	{Name: "all_to_all", Ranks: 2, Src: `program main rank $RANK { block 0 {
 var x : f32[4, 2]
 var o : f32[-1, -1]
 op 1 all_to_all(x: x) -> (out: o) {ring_id = 0}
}}`},
	{Name: "send_v2/recv_v2", Ranks: 2, Src: `program main rank $RANK { block 0 {
 var x : f32[2, 3]
 var o : f32[-1, -1]
 op 1 send_v2(X: x) -> () {peer = 1, ring_id = 0}
}}`, Swap: []string{"op 1 send_v2(X: x) -> () {peer = 1, ring_id = 0}",
		"op 1 recv_v2() -> (Out: o) {dtype = 5, out_shape = [2, 3], peer = 0, ring_id = 0}"}},
	{Name: "recv_v2/dynamic", Ranks: 2, Src: `program main rank $RANK { block 0 {
 var x : f64[2, 3]
 var o : f64[2, 3]
 op 1 send_v2(X: x) -> () {peer = 1, ring_id = 0, dynamic_shape = true}
}}`, Swap: []string{"op 1 send_v2(X: x) -> () {peer = 1, ring_id = 0, dynamic_shape = true}",
		"op 1 recv_v2() -> (Out: o) {dtype = 6, peer = 0, ring_id = 0, dynamic_shape = true}"}},
	// A world of one: the counts are this rank's own.
	{Name: "global_scatter", Ranks: 1, Values: map[string]*Tensor{
		"lc": MustFromData(ir.I64, []int64{2}, []float64{2, 3}), "gc": MustFromData(ir.I64, []int64{2}, []float64{2, 3})},
		Src: `program main rank $RANK { block 0 {
 var x : f32[5, 3]
 var lc : i64[2]
 var gc : i64[2]
 var o : f32[-1, -1]
 op 1 global_scatter(X: x, local_count: lc, global_count: gc) -> (Out: o) {ring_id = 0, use_calc_stream = true}
}}`},
	{Name: "global_gather", Ranks: 1, Values: map[string]*Tensor{
		"lc": MustFromData(ir.I64, []int64{2}, []float64{1, 3}), "gc": MustFromData(ir.I64, []int64{2}, []float64{1, 3})},
		Src: `program main rank $RANK { block 0 {
 var x : f32[4, 2]
 var lc : i64[2]
 var gc : i64[2]
 var o : f32[-1, -1]
 op 1 global_gather(X: x, local_count: lc, global_count: gc) -> (Out: o) {ring_id = 0}
}}`},
}

// TestInferMatchesCollectives runs each collective case on its ranks and
// checks that every output each rank's op writes has exactly the dtype
// and shape inferred from that rank's program (only compatible shapes
// where the data decides).
func TestInferMatchesCollectives(t *testing.T) {
	for _, c := range collectiveCases {
		t.Run(c.Name, func(t *testing.T) {
			var ranks []int
			var head strings.Builder
			head.WriteString("group 0 ranks [")
			for r := range c.Ranks {
				ranks = append(ranks, r)
				if r > 0 {
					head.WriteString(", ")
				}
				head.WriteString(strconv.Itoa(r))
			}
			head.WriteString("]\n")
			rng := rand.New(rand.NewPCG(7, uint64(len(c.Name))))
			mods := make([]*ir.Module, c.Ranks)
			scopes := make([]Scope, c.Ranks)
			for r := range c.Ranks {
				src := strings.ReplaceAll(c.Src, "$RANK", strconv.Itoa(r))
				if r > 0 {
					for i := 0; i+1 < len(c.Swap); i += 2 {
						src = strings.Replace(src, c.Swap[i], c.Swap[i+1], 1)
					}
				}
				m, err := ir.Parse(c.Name, []byte(head.String()+src))
				if err != nil {
					t.Fatal(err)
				}
				mods[r] = m
				b := m.Main.Global()
				scopes[r] = Scope{}
				for _, s := range b.Ops[0].Inputs {
					for _, a := range s.Args {
						if v := c.Values[a]; v != nil {
							scopes[r][a] = v
						} else {
							scopes[r][a] = randomTensor(t, rng, b.Var(a), 3)
						}
					}
				}
			}
			out, err := (&SPMD{Deadline: 10 * time.Second}).RunProgram("main", ranks, mods, scopes)
			if err != nil {
				t.Fatal(err)
			}
			checked := 0
			for r, m := range mods {
				b := m.Main.Global()
				op := b.Ops[0]
				inferred, err := ops.InferOp(op, b.Var)
				if err != nil {
					t.Fatalf("rank %d: %v", r, err)
				}
				for _, res := range inferred {
					got := out[r][op.Output(res.Slot)[res.Index]]
					if got == nil {
						t.Errorf("rank %d: output %s[%d]: inferred %s, the run wrote none", r, res.Slot, res.Index, res.Type)
						continue
					}
					checked++
					if got.DType != res.Type.DType {
						t.Errorf("rank %d: output %s[%d]: run dtype %s, inferred %s", r, res.Slot, res.Index, got.DType, res.Type.DType)
					}
					ok := slices.Equal(got.Shape, res.Type.Shape) ||
						dataDependent[op.Type] && ops.Compatible(got.Shape, res.Type.Shape)
					if !ok {
						t.Errorf("rank %d: output %s[%d]: run shape %v, inferred %v (%s)", r, res.Slot, res.Index, got.Shape, res.Type.Shape, ops.Lookup(op.Type).Shape)
					}
				}
			}
			if checked == 0 {
				t.Fatal("no output was inferred")
			}
		})
	}
}

// TestCollectiveNranks: a gather or split whose nranks is not its
// group's size fails, naming both: its declared shape, which verify
// checks against nranks, would not be what the group delivers.
func TestCollectiveNranks(t *testing.T) {
	for _, typ := range []string{"c_allgather", "c_concat", "c_split"} {
		t.Run(typ, func(t *testing.T) {
			src := "group 0 ranks [0, 1, 2]\nprogram main rank $RANK { block 0 {\n var x : f32[6, 6]\n var o : f32[-1, -1]\n op 1 " +
				typ + "(X: x) -> (Out: o) {nranks = 2, ring_id = 0}\n}}"
			var mods []*ir.Module
			var scopes []Scope
			for r := range 3 {
				m, err := ir.Parse(typ, []byte(strings.ReplaceAll(src, "$RANK", strconv.Itoa(r))))
				if err != nil {
					t.Fatal(err)
				}
				mods = append(mods, m)
				scopes = append(scopes, Scope{"x": Zeros(ir.F32, 6, 6)})
			}
			_, err := (&SPMD{Deadline: 10 * time.Second}).RunProgram("main", []int{0, 1, 2}, mods, scopes)
			want := "op 1 " + typ + ": nranks 2, but ring 0's group [0 1 2] has 3 ranks"
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("error %v, want it to contain %q", err, want)
			}
		})
	}
}
