package complete_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"strings"

	"github.com/distpass/distpass/complete"
	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/models"
	"github.com/distpass/distpass/passes"
)

// handwrittenCases are the strategies recorded in
// testdata/handwritten.txt: the zoo's (those it does not annotate
// further) and a few more shapes.
func handwrittenCases() []zooCase {
	var cases []zooCase
	for _, c := range zoo() {
		if c.keepOps == nil {
			cases = append(cases, c)
		}
	}
	mesh := models.Mesh
	gptMoE := func(s string, pm *ir.ProcessMesh) func() (*ir.Module, error) {
		return func() (*ir.Module, error) {
			cfg := models.GPTConfig{Layers: 2, Hidden: 16, Heads: 2, Vocab: 32, Seq: 4, Batch: 4, DType: ir.F64, MoEEvery: 2, Experts: 4, TopK: 2}
			return models.GPTTraining(cfg, s, pm, "sgd")
		}
	}
	return append(cases,
		zooCase{name: "mlp dp,mp 4 layers on 2x4", build: func() (*ir.Module, error) {
			return models.MLPTraining(models.MLPConfig{Layers: 4, Hidden: 16, Batch: 8, DType: ir.F64}, "dp,mp", mesh([]int{2, 4}, []string{"dp", "mp"}), "adam")
		}},
		zooCase{name: "gpt-moe ep", build: gptMoE("ep", mesh([]int{2}, []string{"ep"}))},
		zooCase{name: "gpt-moe dp,ep", build: gptMoE("dp,ep", mesh([]int{2, 2}, []string{"dp", "ep"}))},
		zooCase{name: "moe ep capacity", build: func() (*ir.Module, error) {
			return models.MoETraining(models.MoEConfig{Tokens: 16, TopK: 2, Capacity: 5, DType: ir.F64}, "ep", mesh([]int{4}, []string{"ep"}), "sgd")
		}},
		zooCase{name: "gpt mp,sp, completed, reshards inserted", build: gptSeq("mp,sp", mesh([]int{2}, []string{"mp"}))},
		zooCase{name: "gpt dp,mp,sp, completed, reshards inserted", build: gptSeq("dp,mp,sp", mesh([]int{2, 2}, []string{"dp", "mp"}))},
	)
}

// gptSeq builds a sequence-parallel GPT, which annotates the forward
// only, and completes it with its reshards made ops.
func gptSeq(s string, pm *ir.ProcessMesh) func() (*ir.Module, error) {
	return func() (*ir.Module, error) {
		cfg := models.TinyGPT()
		cfg.Hidden, cfg.Vocab, cfg.Seq, cfg.DType = 16, 32, 4, ir.F64
		m, err := models.GPTTraining(cfg, s, pm, "sgd")
		if err != nil {
			return nil, err
		}
		if _, err := complete.Complete(m, complete.Options{}); err != nil {
			return nil, err
		}
		passes.InsertReshards(m)
		return m, nil
	}
}

// record spells what a strategy gave m: every main var's dist, every
// op's mesh and arg mappings (not its impl: two impls may lower alike),
// and a digest of each rank's program with impl names blanked.
func record(m *ir.Module) string {
	var sb strings.Builder
	g := m.Main.Global()
	for _, v := range g.Vars() {
		if v.Type.IsTensor() {
			fmt.Fprintf(&sb, "var %s %s\n", v.Name(), spellTensor(v.Dist))
		}
	}
	args := func(as []ir.ArgDist) string {
		var parts []string
		for _, a := range as {
			parts = append(parts, a.Name+" "+ir.FormatInts(a.DimsMapping))
		}
		return strings.Join(parts, ", ")
	}
	for _, op := range g.Ops {
		if op.Dist == nil {
			fmt.Fprintf(&sb, "%s: none\n", op)
			continue
		}
		fmt.Fprintf(&sb, "%s @%s reads %s gives %s\n", op, op.Dist.Mesh, args(op.Dist.Inputs), args(op.Dist.Outputs))
	}
	mods, err := passes.PartitionAll(context.Background(), m, nil)
	if err != nil {
		return sb.String() + "partition: " + err.Error() + "\n"
	}
	for _, r := range mods {
		sum := sha256.Sum256(implName.ReplaceAll(ir.Print(r), []byte("${1}_")))
		fmt.Fprintf(&sb, "rank %d: %x\n", r.Main.Rank, sum[:8])
	}
	return sb.String()
}
