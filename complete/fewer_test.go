package complete_test

import (
	"context"
	"strings"
	"testing"

	"github.com/distpass/distpass/check"
	"github.com/distpass/distpass/complete"
	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/models"
	"github.com/distpass/distpass/passes"
)

// TestFewerAnnotationsGPT: GPT dp×mp on 2×4 with only the data vars and
// the weight matrices annotated (no biases, layer norms or embeddings):
// the completed module partitions and checks.
func TestFewerAnnotationsGPT(t *testing.T) {
	cfg := models.TinyGPT()
	cfg.Hidden, cfg.Vocab, cfg.Seq, cfg.DType = 16, 32, 4, ir.F64
	m, err := models.GPTTraining(cfg, "dp,mp", models.Mesh([]int{2, 4}, []string{"dp", "mp"}), "sgd")
	if err != nil {
		t.Fatal(err)
	}
	strip(m, func(v *ir.Var) bool {
		return v.Has(ir.FlagIsData) || v.Kind == ir.KindParam && len(v.Type.Shape) == 2 && strings.HasSuffix(v.Name(), "_w")
	})
	rep, err := complete.Complete(m, complete.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Log(rep.Summary())
	if len(rep.Reshards) > 0 {
		t.Errorf("completion needs %d reshards, e.g. %+v", len(rep.Reshards), rep.Reshards[0])
	}
	if err := annotationsErr(m); err != nil {
		t.Fatal(err)
	}
	if _, err := passes.PartitionAll(context.Background(), m, nil); err != nil {
		t.Fatal(err)
	}
	cr, err := check.Run(context.Background(), m, check.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := cr.Err(); err != nil {
		t.Fatal(err)
	}
}
