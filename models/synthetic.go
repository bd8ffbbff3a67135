package models

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/distpass/distpass/ir"
)

// SyntheticGPT returns a GPT-shaped training module (forward, backward,
// adam) of about nOps ops in all, never fewer, annotated for dp,mp on a
// 2×4 mesh, deterministic from seed: the input of the scale benchmarks.
// Layers are what grows; each layer has the tiny GPT's shape, so even a
// million-op module stays small in memory per op.
func SyntheticGPT(nOps int, seed int64) (*ir.Module, error) {
	return SyntheticGPTMesh(nOps, seed, 2, 4)
}

// SyntheticGPTMesh is SyntheticGPT annotated for dp,mp on a dp×mp mesh
// (ranks 0..dp·mp-1); SyntheticGPT is SyntheticGPTMesh(nOps, seed, 2, 4),
// and that mesh gives the same module. The op count does not depend on
// the mesh. Sizes grow with the mesh where they must divide evenly: the
// batch is lcm(8, dp), the heads lcm(4, mp), the hidden width lcm(64,
// heads) and the vocabulary lcm(128, mp), so an 8×8 mesh has 8 heads of
// width 8 and the tiny GPT's other sizes.
func SyntheticGPTMesh(nOps int, seed int64, dp, mp int) (*ir.Module, error) {
	if dp <= 0 || mp <= 0 {
		return nil, fmt.Errorf("synthetic GPT: mesh %dx%d: dims must be positive", dp, mp)
	}
	heads := lcm(4, mp)
	cfg := GPTConfig{Layers: 1, Hidden: lcm(64, heads), Heads: heads, Vocab: lcm(128, mp), Seq: 8, Batch: lcm(8, dp), DType: ir.F32, Seed: seed}
	build := func(layers int) (*ir.Module, error) {
		c := cfg
		c.Layers = layers
		return GPTTraining(c, "dp,mp", Mesh([]int{dp, mp}, []string{"dp", "mp"}), "adam")
	}
	one, err := build(2)
	if err != nil {
		return nil, err
	}
	two, err := build(4)
	if err != nil {
		return nil, err
	}
	count := func(m *ir.Module) int { return numOps(m) }
	perPair := count(two) - count(one) // mp needs layers in pairs
	base := count(one) - perPair
	if perPair <= 0 {
		return nil, fmt.Errorf("synthetic GPT: %d ops per layer pair", perPair)
	}
	pairs := max(1, (nOps-base+perPair-1)/perPair)
	return build(2 * pairs)
}

// SyntheticGPTReshards is SyntheticGPT with each layer's attention
// projection product (lN_proj_mm) left partial along mp, the sum the
// row-parallel matmul would make deferred: its bias add reads it whole,
// so every layer needs exactly one reshard (an all-reduce) where its
// reader is, which insert-reshards makes explicit. The input of the
// insert-reshards benchmark; ops and everything else as SyntheticGPT's.
func SyntheticGPTReshards(nOps int, seed int64) (*ir.Module, error) {
	m, err := SyntheticGPT(nOps, seed)
	if err != nil {
		return nil, err
	}
	b := m.Main.Block(0)
	mp := slices.Index(m.Mesh("world").DimNames, "mp")
	for i := 0; ; i++ {
		v := b.Var("l" + strconv.Itoa(i) + "_proj_mm")
		if v == nil {
			if i == 0 {
				return nil, fmt.Errorf("synthetic GPT: no layer 0 projection (l0_proj_mm)")
			}
			return m, nil
		}
		d := v.Dist.Clone()
		d.Partial = []ir.Partial{{Dim: mp, Reduce: ir.ReduceSum}}
		v.Dist = d
	}
}

func lcm(a, b int) int {
	x, y := a, b
	for y != 0 {
		x, y = y, x%y
	}
	return a / x * b
}

func numOps(m *ir.Module) int {
	n := 0
	for _, p := range m.Programs() {
		n += p.NumOps()
	}
	return n
}
