package models

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/distpass/distpass/check"
	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/lower"
	"github.com/distpass/distpass/passes"
)

// TestGPTForwardOnly: the serial forward module verifies, and every
// strategy annotates it completely.
func TestGPTForwardOnly(t *testing.T) {
	for _, c := range strategyCases {
		t.Run(c.name(), func(t *testing.T) {
			m := GPT(TinyGPT())
			if err := ir.Verify(m); err != nil {
				t.Fatal(err)
			}
			if err := AnnotateGPT(m, c.strategy, Mesh(c.shape, c.dims)); err != nil {
				t.Fatal(err)
			}
			if err := ir.Verify(m); err != nil {
				t.Fatal(err)
			}
			checkAnnotations(t, m)
		})
	}
}

// TestGPTTrainingChecks partitions the tiny GPT and runs three training
// steps serially and on every rank.
//
// The adam run is f64: the key bias's gradient is zero analytically
// (softmax ignores a shift that is the same for every key), so in f32 it
// is rounding noise of ~1e-10 that differs between the serial and the
// partitioned sums, and adam, dividing by sqrt(v)+1e-8, turns that noise
// into updates of ~lr: l0_k_b then differs by 8e-4 > 1e-4. In f64 the
// noise is below adam's epsilon and the run matches to 1e-11.
func TestGPTTrainingChecks(t *testing.T) {
	cases := []struct {
		c   strategyCase
		opt string
		dt  ir.DType
	}{
		{strategyCase{"dp", []int{2}, []string{"dp"}}, "sgd", ir.F32},
		{strategyCase{"mp", []int{2}, []string{"mp"}}, "sgd", ir.F32},
		{strategyCase{"dp,mp", []int{2, 2}, []string{"dp", "mp"}}, "sgd", ir.F32},
		{strategyCase{"dp,mp", []int{2, 4}, []string{"dp", "mp"}}, "sgd", ir.F32},
		{strategyCase{"dp,mp", []int{2, 2}, []string{"dp", "mp"}}, "adam", ir.F64},
	}
	for _, tc := range cases {
		t.Run(tc.c.name()+"/"+tc.opt+"/"+tc.dt.String(), func(t *testing.T) {
			cfg := TinyGPT()
			cfg.DType = tc.dt
			m, err := GPTTraining(cfg, tc.c.strategy, Mesh(tc.c.shape, tc.c.dims), tc.opt)
			if err != nil {
				t.Fatal(err)
			}
			if err := ir.Verify(m); err != nil {
				t.Fatal(err)
			}
			checkAnnotations(t, m)
			rep, err := check.Run(context.Background(), m, check.Options{Steps: 3})
			if err != nil {
				t.Fatal(err)
			}
			if err := rep.Err(); err != nil {
				t.Fatal(err)
			}
			if len(rep.Rows) == 0 {
				t.Fatal("check compared nothing")
			}
		})
	}
}

// TestGPTStrategyMappings pins the dist of one var of each class and the
// impl of each op kind per strategy, and counts the collectives of rank
// 0's partitioned program.
func TestGPTStrategyMappings(t *testing.T) {
	type want struct{ name, text string }
	cases := []struct {
		c    strategyCase
		vars []want
		// impls: op type and position -> the impl completion picks (the
		// first that fits: where the hand-written strategies said default:0
		// or elementwise:0, it may pick matmul_v2:2 or default:0, which
		// lower alike there).
		impls map[string]string
		colls map[string]int // collective op types of rank 0's main, at least
	}{
		{strategyCase{"dp", []int{2}, []string{"dp"}}, []want{
			{"ids", "@world[0, -1]"}, {"labels", "@world[0, -1, -1]"}, {"causal_mask", "@world[-1, -1]"},
			{"wte", "@world[-1, -1]"}, {"l0_q_w", "@world[-1, -1]"}, {"l0_q_b", "@world[-1]"},
			{"l0_q_4d", "@world[0, -1, -1, -1]"}, {"l0_q_4d_xshape", "@world[-1, 0, -1, -1]"},
			{"l0_probs", "@world[0, -1, -1, -1]"}, {"l0_ln1_mean", "@world[0]"},
			{"loss", "@world[] partial [0:avg]"}, {"l0_fc1_w@GRAD", "@world[-1, -1]"},
		}, map[string]string{
			"lookup_table_v2#0": "default:0", "matmul_v2#0": "matmul_v2:2", "matmul_v2#3": "matmul_v2:2",
			"reshape2#0": "reshape2:0", "reshape2#3": "reshape2:1", "transpose2#0": "transpose2:0",
			"softmax#0": "softmax:0", "scale#0": "default:0", "elementwise_add#0": "default:0",
			"layer_norm#0": "default:0", "softmax_with_cross_entropy#0": "default:0", "matmul_v2_grad#0": "matmul_v2:2",
		}, map[string]int{"c_allreduce_sum": 1}},
		{strategyCase{"dp,mp", []int{2, 2}, []string{"dp", "mp"}}, []want{
			{"ids", "@world[0, -1]"}, {"wte", "@world[1, -1]"}, {"wpe", "@world[-1, -1]"},
			{"l0_q_w", "@world[-1, 1]"}, {"l0_q_b", "@world[1]"}, {"l0_q_out", "@world[0, -1, 1]"},
			{"l0_q_4d", "@world[0, -1, 1, -1]"}, {"l0_q_t", "@world[0, 1, -1, -1]"}, {"l0_scores", "@world[0, 1, -1, -1]"},
			{"l0_ctx_3d", "@world[0, -1, 1]"}, {"l0_proj_w", "@world[1, -1]"}, {"l0_proj_b", "@world[-1]"},
			{"l0_res1", "@world[0, -1, -1]"}, {"l0_fc1_w", "@world[-1, 1]"}, {"l0_gelu", "@world[0, -1, 1]"},
			{"l0_fc2_w", "@world[1, -1]"}, {"lm_w", "@world[-1, -1]"}, {"logits", "@world[0, -1, -1]"},
			{"l0_ln1_scale", "@world[-1]"}, {"loss", "@world[] partial [0:avg]"}, {"l0_q_t@GRAD", "@world[0, 1, -1, -1]"},
		}, map[string]string{
			"lookup_table_v2#0": "lookup_table_v2:0", "lookup_table_v2#1": "default:0",
			"matmul_v2#0": "matmul_v2:0", "matmul_v2#3": "matmul_v2:2", "matmul_v2#4": "matmul_v2:2",
			"matmul_v2#5": "matmul_v2:1", "matmul_v2#6": "matmul_v2:0", "matmul_v2#7": "matmul_v2:1",
			"matmul_v2#16": "matmul_v2:2", "scale#0": "elementwise:0", "gelu#0": "elementwise:0",
			"elementwise_add#0": "default:0", "softmax#0": "softmax:0", "layer_norm#0": "default:0",
			"gelu_grad#0": "elementwise:0",
		}, map[string]int{"c_allreduce_sum": 1, "c_identity": 1}},
	}
	for _, tc := range cases {
		t.Run(tc.c.name(), func(t *testing.T) {
			m := GPT(TinyGPT())
			if _, err := passes.AppendBackward(m, "loss"); err != nil {
				t.Fatal(err)
			}
			if err := AnnotateGPT(m, tc.c.strategy, Mesh(tc.c.shape, tc.c.dims)); err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.vars {
				line := varLine(t, m, w.name)
				if !strings.Contains(line, " "+w.text) || strings.Contains(line, "partial") && !strings.Contains(w.text, "partial") {
					t.Errorf("var %s: %q, want %s", w.name, line, w.text)
				}
			}
			count := map[string]int{}
			seen := map[string]bool{}
			for _, op := range m.Main.Global().Ops {
				k := fmt.Sprintf("%s#%d", op.Type, count[op.Type])
				count[op.Type]++
				if want, ok := tc.impls[k]; ok {
					seen[k] = true
					if got := fmt.Sprintf("%s:%d", op.Dist.ImplType, op.Dist.ImplIndex); got != want {
						t.Errorf("%s (%s): impl %s, want %s", op, k, got, want)
					}
				}
			}
			for k := range tc.impls {
				if !seen[k] {
					t.Errorf("no op %s", k)
				}
			}
			if _, err := passes.AppendOptimizer(m, "sgd", 0.01); err != nil {
				t.Fatal(err)
			}
			mods, err := passes.PartitionAll(context.Background(), m, lower.DefaultRegistry())
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]int{}
			for _, op := range mods[0].Main.Global().Ops {
				got[op.Type]++
			}
			for typ, n := range tc.colls {
				if got[typ] < n {
					t.Errorf("rank 0 has %d %s ops, want at least %d", got[typ], typ, n)
				}
			}
		})
	}
}

// TestGPTErrors: bad configs and meshes that do not split the GPT evenly.
func TestGPTErrors(t *testing.T) {
	if _, err := GPTTraining(GPTConfig{Layers: 1, Hidden: 10, Heads: 4, Vocab: 8, Seq: 2, Batch: 2}, "dp",
		Mesh([]int{2}, []string{"dp"}), "sgd"); err == nil || !strings.Contains(err.Error(), "not a multiple of heads") {
		t.Errorf("hidden 10, heads 4: %v", err)
	}
	m := GPT(TinyGPT())
	before := ir.Print(m)
	// 8 ranks do not split 4 heads: the reshape to heads cannot keep q's
	// columns split, and completion would have to gather them there.
	err := AnnotateGPT(m, "mp", Mesh([]int{8}, []string{"mp"}))
	if err == nil || !strings.Contains(err.Error(), "op 13 reshape2: l0_q_out would need a reshard from [-1, -1, 0] to [-1, -1, -1]") {
		t.Errorf("mp 8 over 4 heads: %v", err)
	}
	if string(ir.Print(m)) != string(before) {
		t.Error("a failed AnnotateGPT changed the module")
	}
}

// BenchmarkGPTTraining builds (never runs) GPT-2 small's dp,mp training
// program; GPT3() is the same at 96 layers.
func BenchmarkGPTTraining(b *testing.B) {
	mesh := Mesh([]int{2, 4}, []string{"dp", "mp"})
	for b.Loop() {
		if _, err := GPTTraining(GPT2Small(), "dp,mp", mesh, "adam"); err != nil {
			b.Fatal(err)
		}
	}
}
