package models

import (
	"fmt"

	"github.com/distpass/distpass/ir"
)

// SyntheticGPT returns a GPT-shaped training module (forward, backward,
// adam) of about nOps ops in all, never fewer, annotated for dp,mp on a
// 2×4 mesh, deterministic from seed: the input of the scale benchmarks.
// Layers are what grows; each layer has the tiny GPT's shape, so even a
// million-op module stays small in memory per op.
func SyntheticGPT(nOps int, seed int64) (*ir.Module, error) {
	cfg := GPTConfig{Layers: 1, Hidden: 64, Heads: 4, Vocab: 128, Seq: 8, Batch: 8, DType: ir.F32, Seed: seed}
	build := func(layers int) (*ir.Module, error) {
		c := cfg
		c.Layers = layers
		return GPTTraining(c, "dp,mp", Mesh([]int{2, 4}, []string{"dp", "mp"}), "adam")
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

func numOps(m *ir.Module) int {
	n := 0
	for _, p := range m.Programs() {
		n += p.NumOps()
	}
	return n
}
