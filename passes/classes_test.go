package passes_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/models"
	"github.com/distpass/distpass/passes"
)

// classCases are the modules the class partitioner is held to: every
// golden case whose pipeline partitions, and the example models.
func classCases(t *testing.T) map[string]*ir.Module {
	t.Helper()
	out := map[string]*ir.Module{}
	files, err := filepath.Glob(filepath.Join("..", "golden", "testdata", "*.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		ar, err := txtar.ParseFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var in, pipeline []byte
		for _, file := range ar.Files {
			switch file.Name {
			case "input.dpir":
				in = file.Data
			case "pipeline":
				pipeline = file.Data
			}
		}
		if !bytes.Contains(pipeline, []byte("partition{rank=$RANK}")) {
			continue
		}
		m, err := ir.Parse(f, in)
		if err != nil {
			t.Fatal(err)
		}
		out[strings.TrimSuffix(filepath.Base(f), ".txtar")] = m
	}
	gpt, err := models.GPTTraining(models.TinyGPT(), "dp,mp", models.Mesh([]int{2, 4}, []string{"dp", "mp"}), "adam")
	if err != nil {
		t.Fatal(err)
	}
	out["gpt dp,mp 2x4"] = gpt
	for _, c := range []struct {
		strategy string
		shape    []int
		dims     []string
	}{{"ep", []int{4}, []string{"ep"}}, {"dp,ep", []int{2, 2}, []string{"dp", "ep"}}} {
		moe, err := models.MoETraining(models.MoEConfig{Capacity: 6}, c.strategy, models.Mesh(c.shape, c.dims), "sgd")
		if c.strategy == "dp,ep" {
			moe, err = models.MoETraining(models.MoEConfig{}, c.strategy, models.Mesh(c.shape, c.dims), "sgd")
		}
		if err != nil {
			t.Fatal(err)
		}
		out["moe "+c.strategy] = moe
	}
	pp, err := os.ReadFile(filepath.Join("..", "examples", "mlp_dp_mp.dpir"))
	if err != nil {
		t.Fatal(err)
	}
	if out["example mlp_dp_mp"], err = ir.Parse("mlp_dp_mp.dpir", pp); err != nil {
		t.Fatal(err)
	}
	return out
}

// Every rank's module built from its class is byte-identical to its plain
// lowering, with no class falling back, and the input is not changed.
func TestPartitionClassesEqualsPlainLowering(t *testing.T) {
	cases := classCases(t)
	if len(cases) < 15 {
		t.Fatalf("only %d cases", len(cases))
	}
	for name, m := range cases {
		t.Run(name, func(t *testing.T) {
			before := ir.Print(m)
			plain, perr := passes.PartitionAll(context.Background(), m, nil)
			cs, err := passes.PartitionClasses(context.Background(), m, nil, nil)
			if (perr == nil) != (err == nil) {
				t.Fatalf("plain error %v, classes error %v", perr, err)
			}
			if err != nil {
				if err.Error() != perr.Error() {
					t.Errorf("classes error %q, plain %q", err, perr)
				}
				return
			}
			for _, c := range cs.Classes {
				if c.Fallback != "" {
					t.Errorf("class %v fell back: %s", c.Ranks, c.Fallback)
				}
			}
			for i, r := range passes.Ranks(m) {
				got, err := cs.Module(r)
				if err != nil {
					t.Fatal(err)
				}
				if g, w := ir.Print(got), ir.Print(plain[i]); !bytes.Equal(g, w) {
					t.Errorf("rank %d differs from its plain lowering", r)
				}
			}
			if !bytes.Equal(ir.Print(m), before) {
				t.Error("the input changed")
			}
		})
	}
}
