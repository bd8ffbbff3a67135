package models

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/distpass/distpass/analysis"
	"github.com/distpass/distpass/check"
	"github.com/distpass/distpass/complete"
	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/lower"
	"github.com/distpass/distpass/ops"
	"github.com/distpass/distpass/passes"
	"github.com/google/go-cmp/cmp"
)

// The sequence-parallel cases: on one mesh dim, and with dp.
var seqCases = []strategyCase{
	{"mp,sp", []int{2}, []string{"mp"}},
	{"dp,mp,sp", []int{2, 2}, []string{"dp", "mp"}},
}

// tpGPT is the tiny GPT's training step under plain tensor parallelism
// on sc's mesh.
func tpGPT(t *testing.T, sc strategyCase) *ir.Module {
	t.Helper()
	cfg := TinyGPT()
	cfg.DType = ir.F64
	m, err := GPTTraining(cfg, strings.TrimSuffix(sc.strategy, ",sp"), Mesh(sc.shape, sc.dims), "sgd")
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// seqGPT is the tiny GPT's training step under strategy c, completed
// and with its reshards inserted, as complete,insert-reshards gives it.
func seqGPT(t *testing.T, c strategyCase) *ir.Module {
	t.Helper()
	cfg := TinyGPT()
	cfg.DType = ir.F64
	m, err := GPTTraining(cfg, c.strategy, Mesh(c.shape, c.dims), "sgd")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := complete.Complete(m, complete.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Conflicts) > 0 || len(rep.Barriers) > 0 || len(rep.Fallbacks) > 0 {
		t.Fatalf("completion: conflicts %v, barriers %v, fallbacks %v", rep.Conflicts, rep.Barriers, rep.Fallbacks)
	}
	passes.InsertReshards(m)
	if err := ir.Verify(m); err != nil {
		t.Fatal(err)
	}
	checkAnnotations(t, m)
	return m
}

// spell writes a dist as the text format does: [0, 1, -1] partial [1].
func spell(d *ir.TensorDist) string {
	s := ir.FormatInts(d.DimsMapping)
	if len(d.Partial) == 0 {
		return s
	}
	var ps []string
	for _, p := range d.Partial {
		if p.Reduce == ir.ReduceSum {
			ps = append(ps, fmt.Sprint(p.Dim))
		} else {
			ps = append(ps, fmt.Sprintf("%d:%s", p.Dim, p.Reduce))
		}
	}
	return s + " partial [" + strings.Join(ps, ", ") + "]"
}

// isParamGrad reports whether v is the grad of one of m's params.
func isParamGrad(m *ir.Module, v string) bool {
	i := strings.Index(v, "@GRAD")
	p := m.Main.Global().Var(v[:max(i, 0)])
	return i > 0 && p != nil && p.Kind == ir.KindParam
}

// TestGPTSeqParallelAnnotations: the strategies annotate the forward ops
// and vars only (the backward is completion's), declare the layer-norm
// statistics [B,S] split on both, and refuse flattened statistics.
func TestGPTSeqParallelAnnotations(t *testing.T) {
	m, err := GPTTraining(TinyGPT(), "dp,mp,sp", Mesh([]int{2, 2}, []string{"dp", "mp"}), "sgd")
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{
		"ids": "@world[0, -1]", "pos_ids": "@world[0, 1]", "labels": "@world[0, -1, -1]",
		"wte": "@world[1, -1]", "emb": "@world[0, 1, -1]", "l0_ln1_out": "@world[0, 1, -1]",
		"l0_ln1_mean": "@world[0, 1]", "l0_q_mm": "@world[0, -1, 1]", "l0_q_t": "@world[0, 1, -1, -1]",
		"l0_proj_mm": "@world[0, -1, -1] partial [1]", "l0_proj_out": "@world[0, 1, -1]",
		"l0_res1": "@world[0, 1, -1]", "l0_fc2_mm": "@world[0, -1, -1] partial [1]",
		"lnf_out": "@world[0, 1, -1]", "logits": "@world[0, -1, -1]", "loss": "@world[] partial [0:avg]",
	} {
		if line := varLine(t, m, name); !strings.HasSuffix(strings.TrimSuffix(line, " {trainable}"), " "+want) &&
			!strings.Contains(line, " "+want+" {") {
			t.Errorf("var %s: %q, want %s", name, line, want)
		}
	}
	g := m.Main.Global()
	for _, op := range g.Ops {
		if forward := op.Fwd == 0 && op.Role.IsForward(); forward != (op.Dist != nil) {
			t.Errorf("%s: dist %v; want one exactly on forward ops", op, op.Dist)
		}
	}
	if d := g.Var("l0_ln1_out@GRAD").Dist; d != nil {
		t.Errorf("l0_ln1_out@GRAD has dist %+v: the backward is completion's", d)
	}
	reads := map[string]string{} // op type and X -> the mapping the op reads X as
	for _, op := range g.Ops {
		if op.Dist != nil && len(op.Input("X")) == 1 {
			m, _ := op.Dist.InputMapping(op.Input("X")[0])
			reads[op.Type+" "+op.Input("X")[0]] = ir.FormatInts(m)
		}
	}
	for k, want := range map[string]string{
		"matmul_v2 l0_ln1_out": "[0, -1, -1]", "matmul_v2 l0_ln2_out": "[0, -1, -1]", "matmul_v2 lnf_out": "[0, -1, -1]",
		"elementwise_add l0_proj_mm": "[0, 1, -1]", "elementwise_add tok_emb": "[0, 1, -1]",
		"matmul_v2 l0_ctx_3d": "[0, -1, 1]", "layer_norm l0_res1": "[0, 1, -1]",
	} {
		if reads[k] != want {
			t.Errorf("%s: read as %s, want %s", k, reads[k], want)
		}
	}

	// Flattened statistics cannot hold the sequence split.
	flat := GPT(TinyGPT())
	err = AnnotateGPT(flat, "mp,sp", Mesh([]int{2}, []string{"mp"}))
	if err == nil || !strings.Contains(err.Error(), "op 8 layer_norm") || !strings.Contains(err.Error(), "Mean l0_ln1_mean must be declared [B, S]") {
		t.Errorf("flattened statistics: %v", err)
	}
	if _, err := GPTTraining(TinyGPT(), "dp,mp,sp", Mesh([]int{2}, []string{"dp"}), "sgd"); err == nil ||
		!strings.Contains(err.Error(), "needs a mesh dim named mp") {
		t.Errorf("no mp dim: %v", err)
	}
}

// TestGPTSeqParallelReshards: complete,insert-reshards puts reshards
// exactly where Megatron's sequence parallelism has its collectives.
// Forward: before each column-parallel block (q, k and v read one
// ln1_out; fc1 reads ln2_out) and the head, the sequence is gathered
// (S(1)->R); after each row-parallel matmul (proj, fc2) its partial Out
// goes onto the sequence shards (P->S(1)). The word embedding's
// vocab-parallel lookup all-reduces itself (its impl takes no partial
// Out) and is sliced (R->S(1), local). Backward mirrors it: the row-
// parallel matmuls' Out@GRAD gathered, the column-parallel blocks'
// X@GRAD (q, k and v's parts summed first) reduce-scattered. The other
// reshards are the params' grads made whole before the optimizer: the
// sums over the sequence shards of the replicated params' (layer norms,
// the biases after the row-parallel matmuls, wpe), and with dp the
// average of the column-parallel weights' (the rule-based impl leaves
// that to a reshard). No activation is all-reduced (P->R).
func TestGPTSeqParallelReshards(t *testing.T) {
	for _, c := range seqCases {
		t.Run(c.name(), func(t *testing.T) {
			m := seqGPT(t, c)
			dp, mp := -1, len(c.dims)-1
			if len(c.dims) == 2 {
				dp = 0
			}
			S := ir.FormatInts([]int{dp, mp, -1})
			R := ir.FormatInts([]int{dp, -1, -1})
			P := fmt.Sprintf("%s partial [%d]", R, mp)
			want := []string{"tok_emb: " + R + " -> " + S}
			layers := TinyGPT().Layers
			for i := range layers {
				p := fmt.Sprintf("l%d_", i)
				want = append(want, p+"ln1_out: "+S+" -> "+R, p+"proj_mm: "+P+" -> "+S,
					p+"ln2_out: "+S+" -> "+R, p+"fc2_mm: "+P+" -> "+S)
			}
			want = append(want, "lnf_out: "+S+" -> "+R, "lnf_out@GRAD: "+R+" -> "+S)
			for i := layers - 1; i >= 0; i-- {
				p := fmt.Sprintf("l%d_", i)
				want = append(want, p+"fc2_mm@GRAD: "+S+" -> "+R, p+"ln2_out@GRAD: "+P+" -> "+S,
					p+"proj_mm@GRAD: "+S+" -> "+R, p+"ln1_out@GRAD: "+P+" -> "+S)
			}
			want = append(want, "tok_emb@GRAD: "+S+" -> "+R)

			var got, params []string
			g := m.Main.Global()
			for _, op := range g.Ops {
				if op.Type != ops.ReshardType {
					continue
				}
				x, out := g.Var(op.Input("X")[0]), g.Var(op.Output("Out")[0])
				if isParamGrad(m, x.Name()) {
					if !x.Dist.IsPartial() || out.Dist.IsPartial() || !slices.Equal(x.Dist.DimsMapping, out.Dist.DimsMapping) {
						t.Errorf("param grad %s: %s -> %s, want its partial made whole", x.Name(), spell(x.Dist), spell(out.Dist))
					}
					params = append(params, strings.TrimSuffix(x.Name(), "@GRAD"))
					continue
				}
				got = append(got, x.Name()+": "+spell(x.Dist)+" -> "+spell(out.Dist))
				if x.Dist.IsPartial() && !slices.Contains(out.Dist.DimsMapping, mp) {
					t.Errorf("%s: %s -> %s all-reduces an activation", x.Name(), spell(x.Dist), spell(out.Dist))
				}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("activation reshards (-want +got):\n%s", diff)
			}
			wantParams := []string{"wpe"}
			for i := range layers {
				p := fmt.Sprintf("l%d_", i)
				wantParams = append(wantParams, p+"ln1_scale", p+"ln1_bias")
				if dp >= 0 {
					wantParams = append(wantParams, p+"q_w", p+"k_w", p+"v_w")
				}
				wantParams = append(wantParams, p+"proj_b", p+"ln2_scale", p+"ln2_bias")
				if dp >= 0 {
					wantParams = append(wantParams, p+"fc1_w")
				}
				wantParams = append(wantParams, p+"fc2_b")
			}
			wantParams = append(wantParams, "lnf_scale", "lnf_bias")
			if diff := cmp.Diff(wantParams, params); diff != "" {
				t.Errorf("param grads made whole (-want +got):\n%s", diff)
			}
		})
	}
}

// rank0 partitions m for every rank and returns rank 0's collectives.
func rank0(t *testing.T, m *ir.Module) *analysis.CommReport {
	t.Helper()
	mods, err := passes.PartitionAll(context.Background(), m, lower.DefaultRegistry())
	if err != nil {
		t.Fatal(err)
	}
	rep, err := analysis.Get[*analysis.CommReport](analysis.NewCache(mods[0]), analysis.Comm)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// byAxis returns the bytes of main's collectives along axis.
func byAxis(rep *analysis.CommReport, axis string) int64 {
	for _, a := range rep.Main.ByAxis {
		if a.Name == axis {
			return a.Bytes
		}
	}
	return 0
}

// TestGPTSeqParallelCollectives: partitioned, the reshards are
// all-gathers and reduce-scatters along mp (none an all-reduce of an
// activation), and each layer's move as many bytes as four all-reduces
// of its activation, tensor parallelism's two forward and two backward
// (an all-reduce is a reduce-scatter and an all-gather). Over the whole
// step mp moves no more than under plain tensor parallelism, which
// all-reduces q's, k's and v's X@GRAD one by one where the sequence-
// parallel backward sums them and reduce-scatters once; the sums of the
// replicated params' grads over the sequence shards are on top, small.
func TestGPTSeqParallelCollectives(t *testing.T) {
	for _, c := range seqCases {
		t.Run(c.name(), func(t *testing.T) {
			sp := rank0(t, seqGPT(t, c))
			tpm := tpGPT(t, c)
			tp := rank0(t, tpm)

			kinds := map[string]int{}
			layerBytes := map[string]int64{}
			for _, op := range sp.Ops {
				if op.Program != "main" || !strings.HasPrefix(op.Origin, "reshard:0") || op.Axis != "mp" {
					continue
				}
				x := strings.Fields(op.Origin)[2] // "reshard:0 reshard X @mesh… to …"
				if isParamGrad(tpm, x) {
					if op.Type != "c_allreduce_sum" {
						t.Errorf("op %d %s: %s, want the param grad summed", op.ID, op.Type, op.Origin)
					}
					continue
				}
				kinds[op.Type]++
				if l, _, ok := strings.Cut(x, "_"); ok && strings.HasPrefix(l, "l") {
					layerBytes[l] += op.Bytes
				}
			}
			layers := TinyGPT().Layers
			// Per layer 2 gathers and 2 reduce-scatters each way; lnf_out
			// gathered for the head and tok_emb@GRAD for the lookup.
			if want := map[string]int{"c_allgather": 4*layers + 2, "c_reducescatter": 4 * layers}; !maps.Equal(kinds, want) {
				t.Errorf("activation reshards along mp lower to %v, want %v", kinds, want)
			}
			var allreduce int64 // tensor parallelism's row-parallel all-reduce of l0_proj
			for _, op := range tp.Ops {
				if op.Type == "c_allreduce_sum" && strings.HasPrefix(op.Origin, "matmul_v2:1 row-parallel") {
					allreduce = op.Bytes
					break
				}
			}
			if allreduce == 0 {
				t.Fatal("no row-parallel all-reduce under tensor parallelism")
			}
			for i := range layers {
				l := fmt.Sprintf("l%d", i)
				if layerBytes[l] != 4*allreduce {
					t.Errorf("layer %s moves %d bytes along mp, want 4 all-reduces of %d", l, layerBytes[l], allreduce)
				}
			}
			spMP, tpMP := byAxis(sp, "mp"), byAxis(tp, "mp")
			if spMP > tpMP || spMP == 0 {
				t.Errorf("mp moves %d bytes a step, tensor parallelism %d", spMP, tpMP)
			}
			if dp := byAxis(sp, "dp"); dp != byAxis(tp, "dp") {
				t.Errorf("dp moves %d bytes a step, tensor parallelism %d", dp, byAxis(tp, "dp"))
			}
			t.Logf("bytes a step along mp: %d sequence parallel, %d tensor parallel", spMP, tpMP)
		})
	}
}

// activationBytes sums the local bytes on rank 0 of m's activations
// (non-persistable dense vars, grads included), but for the vars a
// reshard writes: what the model holds, not the lowering's transit.
func activationBytes(t *testing.T, m *ir.Module) int64 {
	t.Helper()
	ls, err := analysis.Get[*analysis.LocalShapeInfo](analysis.NewCache(m), analysis.LocalShapes(0))
	if err != nil {
		t.Fatal(err)
	}
	transit := map[string]bool{}
	g := m.Main.Global()
	for _, op := range g.Ops {
		if op.Type == ops.ReshardType {
			transit[op.Output("Out")[0]] = true
		}
	}
	var n int64
	for _, v := range g.Vars() {
		if v.Kind != ir.KindVar || !v.Type.IsTensor() || transit[v.Name()] {
			continue
		}
		s, ok := ls.Of(m.Main, 0, v.Name())
		if !ok {
			t.Fatalf("var %s: no local shape", v.Name())
		}
		b := int64(v.Type.DType.Size())
		for _, d := range s.Shape {
			b *= d
		}
		n += b
	}
	return n
}

// TestGPTSeqParallelMemory: each rank holds 1/mp of the activations
// between the tensor-parallel regions (the residual stream, the layer
// norms' inputs, outputs and statistics, and their grads), so that the
// model's activations take less per rank than under plain tensor
// parallelism on the same mesh. explain -memory sums every var of a
// partitioned program at once, the reshards' transit buffers included
// (the gathered inputs of the column-parallel blocks, the split parts):
// that upper bound is not the model's, and it is logged, not compared.
func TestGPTSeqParallelMemory(t *testing.T) {
	for _, c := range seqCases {
		t.Run(c.name(), func(t *testing.T) {
			sp, tp := seqGPT(t, c), tpGPT(t, c)
			mp := int64(c.shape[len(c.shape)-1])
			lsp, err := analysis.Get[*analysis.LocalShapeInfo](analysis.NewCache(sp), analysis.LocalShapes(0))
			if err != nil {
				t.Fatal(err)
			}
			ltp, err := analysis.Get[*analysis.LocalShapeInfo](analysis.NewCache(tp), analysis.LocalShapes(0))
			if err != nil {
				t.Fatal(err)
			}
			numel := func(ls *analysis.LocalShapeInfo, m *ir.Module, name string) int64 {
				s, ok := ls.Of(m.Main, 0, name)
				if !ok {
					t.Fatalf("var %s: no local shape", name)
				}
				n := int64(1)
				for _, d := range s.Shape {
					n *= d
				}
				return n
			}
			seq := []string{"emb", "lnf_out", "lnf_mean", "emb@GRAD"}
			for i := range TinyGPT().Layers {
				for _, v := range []string{"res1", "res2", "ln1_out", "ln2_out", "ln1_var", "proj_out", "fc2_out", "res1@GRAD", "res2@GRAD", "proj_out@GRAD"} {
					seq = append(seq, fmt.Sprintf("l%d_%s", i, v))
				}
			}
			for _, v := range seq {
				if s, p := numel(lsp, sp, v), numel(ltp, tp, v); s*mp != p {
					t.Errorf("var %s: %d elements on rank 0, want 1/%d of tensor parallelism's %d", v, s, mp, p)
				}
			}
			a, b := activationBytes(t, sp), activationBytes(t, tp)
			if a >= b {
				t.Errorf("activations take %d bytes on rank 0, tensor parallelism's %d", a, b)
			}
			// explain -memory: the activations live at once, each rank's
			// own program. Every var of the program at once (its upper
			// bound) counts the reshards' short-lived buffers as if they
			// lived all step; the peak does not.
			var upper, peak [2]int64
			for i, m := range []*ir.Module{sp, tp} {
				mods, err := passes.PartitionAll(context.Background(), m, lower.DefaultRegistry())
				if err != nil {
					t.Fatal(err)
				}
				for r, pm := range mods {
					mem, err := analysis.Get[*analysis.MemoryReport](analysis.NewCache(pm), analysis.Memory)
					if err != nil {
						t.Fatal(err)
					}
					if r == 0 {
						upper[i], peak[i] = mem.Activations.Bytes, mem.PeakActivations
					} else if mem.PeakActivations != peak[i] {
						t.Errorf("rank %d's peak %d differs from rank 0's %d", r, mem.PeakActivations, peak[i])
					}
				}
			}
			if peak[0] >= peak[1] {
				t.Errorf("activations live at once: %d bytes on rank 0 sequence parallel, %d tensor parallel", peak[0], peak[1])
			}
			t.Logf("rank 0 activations: model's %d bytes sequence parallel, %d tensor parallel; live at once %d and %d; every var of the program %d and %d",
				a, b, peak[0], peak[1], upper[0], upper[1])
		})
	}
}

// TestGPTSeqParallelChecks trains the sequence-parallel GPT three steps
// serially and on every rank.
func TestGPTSeqParallelChecks(t *testing.T) {
	for _, c := range append(slices.Clone(seqCases), strategyCase{"dp,mp,sp", []int{2, 4}, []string{"dp", "mp"}}) {
		t.Run(c.name(), func(t *testing.T) {
			m := seqGPT(t, c)
			rep, err := check.Run(context.Background(), m, check.Options{Steps: 3})
			if err != nil {
				t.Fatal(err)
			}
			if err := rep.Err(); err != nil {
				t.Fatal(err)
			}
			if rep.Count("grad") == 0 || rep.Count("activation") == 0 {
				t.Fatal("check compared nothing")
			}
		})
	}
}
