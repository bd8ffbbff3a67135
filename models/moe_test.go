package models

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/distpass/distpass/check"
	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/lower"
	"github.com/distpass/distpass/passes"
	"github.com/distpass/distpass/sim"
)

var moeCases = []strategyCase{
	{"ep", []int{2}, []string{"ep"}},
	{"ep", []int{4}, []string{"ep"}},
	{"dp,ep", []int{2, 2}, []string{"dp", "ep"}},
}

// The MoE layer trains the same partitioned as serial: 3 sgd steps, f64,
// 1e-5 relative, top-1 and top-2, on every strategy of the issue.
func TestMoETrainingChecks(t *testing.T) {
	for _, tc := range moeCases {
		for _, k := range []int{1, 2} {
			t.Run(tc.name()+"/top"+string(rune('0'+k)), func(t *testing.T) {
				m, err := MoETraining(MoEConfig{Tokens: 16, TopK: k, DType: ir.F64}, tc.strategy, Mesh(tc.shape, tc.dims), "sgd")
				if err != nil {
					t.Fatal(err)
				}
				checkAnnotations(t, m)
				// The expert weights and their grads, the gate's grad, the
				// layer output and the loss are all compared.
				checkF64(t, m, "loss", "w1", "w2", "gate_w", "w1@GRAD", "w2@GRAD", "gate_w@GRAD", "moe", "topv", "local_count")
			})
		}
	}
}

// Partitioned along ep, each rank holds E/ep experts, the exchanges run
// over the ep group, and only the gate's grad is averaged over ep.
func TestMoEPartitionShapesAndGroups(t *testing.T) {
	for _, tc := range moeCases {
		t.Run(tc.name(), func(t *testing.T) {
			mesh := Mesh(tc.shape, tc.dims)
			m, err := MoETraining(MoEConfig{Experts: 4, Model: 4, Hidden: 8}, tc.strategy, mesh, "sgd")
			if err != nil {
				t.Fatal(err)
			}
			mods, err := passes.PartitionAll(context.Background(), m, lower.DefaultRegistry())
			if err != nil {
				t.Fatal(err)
			}
			ep := tc.shape[len(tc.shape)-1]
			for r, pm := range mods {
				g := pm.Main.Global()
				if got := g.Var("w1").Type.Shape; !slices.Equal(got, []int64{int64(4 / ep), 4, 8}) {
					t.Errorf("rank %d: w1 local shape %v", r, got)
				}
				// The exchanged rows stay data-dependent.
				if got := g.Var("xr").Type.Shape; !slices.Equal(got, []int64{-1, 4}) {
					t.Errorf("rank %d: xr local shape %v, want [-1, 4]", r, got)
				}
				if err := ir.Verify(pm); err != nil {
					t.Errorf("rank %d: %v", r, err)
				}
				epGroup, _ := mesh.Group(mesh.DimIndex("ep"), r)
				exchanges := 0
				for _, op := range g.Ops {
					switch op.Type {
					case "alltoall", "global_scatter", "global_gather":
						exchanges++
						id, _ := op.Attrs.Int("ring_id")
						if grp := pm.Group(int(id)); grp == nil || !slices.Equal(grp.Ranks, epGroup) {
							t.Errorf("rank %d: %s ring_id %d is not the ep group %v", r, op, id, epGroup)
						}
					case "c_allreduce_sum":
						x := op.Input("X")[0]
						if strings.HasPrefix(x, "w1@") || strings.HasPrefix(x, "w2@") {
							id, _ := op.Attrs.Int("ring_id")
							if slices.Equal(pm.Group(int(id)).Ranks, epGroup) && len(epGroup) > 1 {
								t.Errorf("rank %d: expert grad %s is summed over the ep group", r, x)
							}
						}
					}
				}
				// alltoall, global_scatter, global_gather forward; their
				// two grads (alltoall's counts take no grad).
				if exchanges != 5 {
					t.Errorf("rank %d: %d exchanges, want 5", r, exchanges)
				}
			}
		})
	}
}

func TestAnnotateMoEErrors(t *testing.T) {
	for _, c := range []struct {
		strategy string
		mesh     *ir.ProcessMesh
		want     string
	}{
		{"mp", Mesh([]int{2}, []string{"ep"}), `unknown MoE strategy "mp"`},
		{"ep", Mesh([]int{2}, []string{"dp"}), "strategy ep needs a mesh dim named ep; mesh world has dims [dp]"},
		{"dp,ep", Mesh([]int{2}, []string{"ep"}), "strategy dp,ep needs a mesh dim named dp"},
	} {
		_, err := MoETraining(MoEConfig{}, c.strategy, c.mesh, "sgd")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s on %v: err = %v, want %q", c.strategy, c.mesh.DimNames, err, c.want)
		}
	}
	// Experts that do not split over ep: the annotator checks even splits.
	_, err := MoETraining(MoEConfig{Experts: 3}, "ep", Mesh([]int{2}, []string{"ep"}), "sgd")
	if err == nil || !strings.Contains(err.Error(), "var w1: dim 0 of size 3 does not split evenly over mesh dim ep of size 2") {
		t.Errorf("uneven experts: err = %v", err)
	}
	// An MoE layer needs an expert axis.
	_, err = GPTTraining(GPTConfig{Layers: 1, Hidden: 8, Heads: 2, Vocab: 16, Seq: 4, Batch: 2, MoEEvery: 1, Experts: 2, TopK: 1},
		"dp", Mesh([]int{2}, []string{"dp"}), "sgd")
	if err == nil || !strings.Contains(err.Error(), "MoE layers need strategy ep or dp,ep, not dp") {
		t.Errorf("GPT-MoE under dp: err = %v", err)
	}
}

// A GPT whose second layer's MLP is an MoE block trains the same
// partitioned as serial, with the dense part data parallel.
func TestGPTMoETrainingChecks(t *testing.T) {
	for _, tc := range moeCases {
		t.Run(tc.name(), func(t *testing.T) {
			cfg := GPTConfig{Layers: 2, Hidden: 16, Heads: 2, Vocab: 32, Seq: 4, Batch: 4, DType: ir.F64,
				MoEEvery: 2, Experts: 4, TopK: 2}
			m, err := GPTTraining(cfg, tc.strategy, Mesh(tc.shape, tc.dims), "sgd")
			if err != nil {
				t.Fatal(err)
			}
			checkAnnotations(t, m)
			if m.Main.Global().Var("l1_moe_w1") == nil || m.Main.Global().Var("l0_fc1_w") == nil || m.Main.Global().Var("l1_fc1_w") != nil {
				t.Fatal("layer 1's MLP should be the MoE block, layer 0's dense")
			}
			checkF64(t, m, "l1_moe_w1@GRAD", "l0_fc1_w@GRAD", "l1_moe_gate_w@GRAD", "loss")
		})
	}
}

// With a capacity, the slots beyond it are dropped the same way serially
// and expert-parallel: the first in token order keep their expert.
func TestMoECapacityChecks(t *testing.T) {
	for _, ep := range []int{2, 4} {
		t.Run(fmt.Sprint("ep", ep), func(t *testing.T) {
			// 16 tokens × top-2 over 4 experts average 8 slots per
			// expert: a capacity of 5 drops some.
			m, err := MoETraining(MoEConfig{Tokens: 16, TopK: 2, Capacity: 5, DType: ir.F64}, "ep", Mesh([]int{ep}, []string{"ep"}), "sgd")
			if err != nil {
				t.Fatal(err)
			}
			checkF64(t, m, "w1@GRAD", "topi_kept")
			// Something was dropped: the serial run's kept slots are
			// fewer than all.
			out, err := sim.Run(m, feedFor(t, m), nil)
			if err != nil {
				t.Fatal(err)
			}
			kept, all := out["local_count"], out["all_count"]
			if sum(kept.Data) >= sum(all.Data) {
				t.Errorf("capacity 5 dropped nothing: kept %v of %v", kept.Data, all.Data)
			}
			for e, c := range kept.Data {
				if c > 5 {
					t.Errorf("expert %d keeps %v slots, over the capacity", e, c)
				}
			}
		})
	}
	_, err := MoETraining(MoEConfig{Capacity: 5}, "dp,ep", Mesh([]int{2, 2}, []string{"dp", "ep"}), "sgd")
	if err == nil || !strings.Contains(err.Error(), "a capacity limit under dp,ep would apply per dp replica") {
		t.Errorf("capacity under dp,ep: err = %v", err)
	}
}

func sum(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s
}

// feedFor feeds x with values in [-1, 1).
func feedFor(t *testing.T, m *ir.Module) sim.Scope {
	t.Helper()
	v := m.Main.Global().Var("x")
	x := sim.Zeros(v.Type.DType, v.Type.Shape...)
	r := rand.New(rand.NewPCG(3, 5))
	for i := range x.Data {
		x.Data[i] = 2*r.Float64() - 1
	}
	return sim.Scope{"x": x}
}

// checkF64 runs 3 steps of m serial and partitioned, wants them equal to
// 1e-5 relative, and the vars named compared.
func checkF64(t *testing.T, m *ir.Module, compared ...string) {
	t.Helper()
	rep, err := check.Run(context.Background(), m, check.Options{Steps: 3, Tol: 1e-5})
	if err != nil {
		t.Fatal(err)
	}
	var sb strings.Builder
	rep.Write(&sb)
	if err := rep.Err(); err != nil {
		t.Fatalf("%v\n%s", err, sb.String())
	}
	for _, v := range compared {
		if !slices.ContainsFunc(rep.Rows, func(r check.Row) bool { return r.Var == v }) {
			t.Errorf("%s was not compared:\n%s", v, sb.String())
		}
	}
}
