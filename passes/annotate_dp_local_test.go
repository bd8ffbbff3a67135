package passes_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/distpass/distpass/check"
	"github.com/distpass/distpass/interop/paddle"
	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/passes"
)

// trainedConvBNReLU is lite_conv_bn_relu.pdmodel made a training step by
// pipeline, every f32 then made f64 so that check compares closely.
func trainedConvBNReLU(t *testing.T, pipeline string) *ir.Module {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "interop", "paddle", "testdata", "lite_conv_bn_relu.pdmodel"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := paddle.Import("lite_conv_bn_relu.pdmodel", data)
	if err != nil {
		t.Fatal(err)
	}
	if err := run(t, testRegistry(t), pipeline, m); err != nil {
		t.Fatal(err)
	}
	if err := run(t, testRegistry(t), "to-f64,verify", m); err != nil {
		t.Fatal(err)
	}
	return m
}

// annotate-data-parallel{data-only=true,batch-norm=local} keeps batch
// norm local: complete would make a training batch_norm on the split
// batch sync_batch_norm, so the pass annotates each such op with impl
// default:0, and every rank's program runs Paddle's batch_norm and its
// grad on its own shard's statistics, no sync_batch_norm, as
// batch-norm=local without data-only does; check holds it to the serial
// program run on each rank's shard. With batch-norm=sync (the default)
// the same pipeline gives sync_batch_norm, as before.
func TestAnnotateDataParallelDataOnlyLocalBatchNorm(t *testing.T) {
	const pipe = "make-trainable{shape=8x3x8x8},append-backward{loss=loss},annotate-data-parallel{shape=4,data-only=true%s},append-optimizer{type=sgd,lr=0.5},complete"
	for _, c := range []struct {
		opt, impl string
		want, not string // op types rank 2's program has, and has not
	}{
		{",batch-norm=local", "default", "batch_norm", "sync_batch_norm"},
		{"", "batch_norm", "sync_batch_norm", "batch_norm"},
	} {
		pipeline := strings.Replace(pipe, "%s", c.opt, 1)
		m := trainedConvBNReLU(t, pipeline)
		bns := 0
		for _, op := range m.Main.Global().Ops {
			if op.Type == "batch_norm" || op.Type == "batch_norm_grad" {
				bns++
				if op.Dist == nil || op.Dist.ImplType != c.impl || op.Dist.ImplIndex != 0 {
					t.Errorf("%s: %s: dist %v, want impl %s:0", pipeline, op, op.Dist, c.impl)
				}
			}
		}
		if bns != 2 {
			t.Fatalf("%s: %d batch_norm ops and grads, want 2", pipeline, bns)
		}
		mods, err := passes.PartitionAll(context.Background(), m, nil)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for _, op := range mods[2].Main.Global().Ops {
			seen[op.Type] = true
		}
		if !seen[c.want] || !seen[c.want+"_grad"] || seen[c.not] || seen[c.not+"_grad"] {
			t.Errorf("%s: rank 2 has batch_norm %v, sync_batch_norm %v (and grads %v, %v); want %s and its grad only",
				pipeline, seen["batch_norm"], seen["sync_batch_norm"], seen["batch_norm_grad"], seen["sync_batch_norm_grad"], c.want)
		}
		rep, err := check.Run(context.Background(), m, check.Options{Steps: 2, Tol: 1e-9})
		if err != nil {
			t.Fatal(err)
		}
		var sb strings.Builder
		if err := rep.Write(&sb); err != nil {
			t.Fatal(err)
		}
		if err := rep.Err(); err != nil {
			t.Fatalf("%s: %v\n%s", pipeline, err, sb.String())
		}
		local := strings.Contains(sb.String(), "local batch norm (each rank's statistics its shard's): op 3 batch_norm over dp")
		if local != (c.impl == "default") {
			t.Errorf("%s: the report says local batch norm: %v\n%s", pipeline, local, sb.String())
		}
	}
}
