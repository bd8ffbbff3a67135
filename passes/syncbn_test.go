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

// convBNReLU is lite_conv_bn_relu.pdmodel (conv2d, batch_norm, relu)
// trained: batch 8 of 3x8x8 images, a softmax cross-entropy loss, sgd,
// its batch split over 4 ranks with annotate-data-parallel{bn}, and
// every f32 made f64 so that check can compare closely.
func convBNReLU(t *testing.T, bn string) *ir.Module {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "interop", "paddle", "testdata", "lite_conv_bn_relu.pdmodel"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := paddle.Import("lite_conv_bn_relu.pdmodel", data)
	if err != nil {
		t.Fatal(err)
	}
	pipeline := "make-trainable{shape=8x3x8x8},append-backward{loss=loss},annotate-data-parallel{shape=4,batch-norm=" + bn + "},append-optimizer{type=sgd,lr=0.5},verify"
	if err := run(t, testRegistry(t), pipeline, m); err != nil {
		t.Fatal(err)
	}
	for _, p := range m.Programs() {
		for _, b := range p.Blocks {
			for _, v := range b.Vars() {
				if v.Type.IsTensor() && v.Type.DType == ir.F32 {
					v.Type.DType = ir.F64
				}
			}
			for _, op := range b.Ops {
				for _, a := range []string{"dtype", "out_dtype", "in_dtype"} {
					if op.Attrs.Get(a) == ir.Int(5) { // Paddle's FP32 code; FP64 is 6
						op.Attrs.Set(a, ir.Int(6))
					}
				}
			}
		}
	}
	if err := passes.Verify(m); err != nil {
		t.Fatal(err)
	}
	return m
}

// With batch-norm=sync (the default), the training batch norm of a
// data-parallel conv-bn-relu is lowered to sync_batch_norm and its grad
// over the dp group, and two steps on 4 ranks are the serial program's,
// in f64, to 1e-9: local statistics differ by some 0.1 (a rank's two
// images against the batch's eight).
func TestSyncBatchNormChecks(t *testing.T) {
	m := convBNReLU(t, "sync")
	for _, op := range m.Main.Global().Ops {
		if op.Type == "batch_norm" && (op.Dist == nil || op.Dist.ImplType != "batch_norm" || op.Dist.ImplIndex != 0) {
			t.Fatalf("%s: want impl batch_norm:0", ir.PrintOp(op))
		}
	}
	rep, err := check.Run(context.Background(), m, check.Options{Steps: 2, Tol: 1e-9})
	if err != nil {
		t.Fatal(err)
	}
	if err := rep.Err(); err != nil {
		var sb strings.Builder
		_ = rep.Write(&sb)
		t.Fatalf("%v\n%s", err, sb.String())
	}
	if rep.Count("loss") != 1 || rep.Count("param") != 3 || rep.Count("grad") != 3 || rep.Count("activation") < 4 {
		t.Fatalf("compared %d loss, %d params, %d grads, %d activations; want 1, 3, 3, 4 or more",
			rep.Count("loss"), rep.Count("param"), rep.Count("grad"), rep.Count("activation"))
	}
	mods, err := passes.PartitionAll(context.Background(), m, nil)
	if err != nil {
		t.Fatal(err)
	}
	var dp int64 = -1
	for _, g := range mods[2].Groups {
		if len(g.Ranks) == 4 {
			dp = int64(g.ID)
		}
	}
	seen := map[string]bool{}
	for _, op := range mods[2].Main.Global().Ops {
		switch op.Type {
		case "batch_norm", "batch_norm_grad":
			t.Errorf("rank 2 keeps %s", ir.PrintOp(op))
		case "sync_batch_norm", "sync_batch_norm_grad":
			seen[op.Type] = true
			if id, _ := op.Attrs.Int("ring_id"); id != dp {
				t.Errorf("%s: ring_id %d, want the dp group %d", op, id, dp)
			}
		}
	}
	if !seen["sync_batch_norm"] || !seen["sync_batch_norm_grad"] {
		t.Errorf("rank 2 has %v, want sync_batch_norm and its grad", seen)
	}
}

// With batch-norm=local, Paddle's default, each rank's batch_norm
// normalises by its shard's statistics: check compares with the serial
// program run on each rank's shard, to 1e-9, and says so; the saved
// statistics, each rank's own, are not compared.
func TestLocalBatchNormChecksPerShard(t *testing.T) {
	m := convBNReLU(t, "local")
	for _, op := range m.Main.Global().Ops {
		if op.Type == "batch_norm" && op.Dist.ImplType != "default" {
			t.Fatalf("%s: want impl default:0", ir.PrintOp(op))
		}
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
		t.Fatalf("%v\n%s", err, sb.String())
	}
	if rep.Count("loss") != 1 || rep.Count("param") != 3 || rep.Count("grad") != 3 {
		t.Fatalf("compared %d loss, %d params, %d grads; want 1, 3, 3", rep.Count("loss"), rep.Count("param"), rep.Count("grad"))
	}
	for _, want := range []string{
		"local batch norm (each rank's statistics its shard's): op 3 batch_norm over dp; compared with the serial program run on each rank's shard\n",
		"not compared, each rank's own statistics: batch_norm_0.tmp_0, batch_norm_0.tmp_1, conv1_bn_mean, conv1_bn_variance\n",
		"activation  batch_norm_0.tmp_2 ",
	} {
		if !strings.Contains(sb.String(), want) {
			t.Errorf("the report lacks %q:\n%s", want, sb.String())
		}
	}
	for _, row := range rep.Rows {
		if row.Var == "batch_norm_0.tmp_0" || row.Var == "batch_norm_0.tmp_1" {
			t.Errorf("a rank's own statistics %s compared", row.Var)
		}
	}
}

// Inference batch norm keeps the default impl under batch-norm=sync: its
// running statistics need no communication. A bad batch-norm= is refused.
func TestAnnotateDataParallelBatchNorm(t *testing.T) {
	m := parseModule(t, inferenceProgram(""))
	if err := passes.AnnotateDataParallel(m, "", 2, "dp"); err != nil {
		t.Fatal(err)
	}
	if d := m.Main.Global().Ops[1].Dist; d.ImplType != "default" {
		t.Errorf("inference batch_norm: impl %s, want default", d.ImplType)
	}
	err := passes.AnnotateDataParallelWith(parseModule(t, inferenceProgram("")), passes.DataParallelOptions{Shape: 2, Axis: "dp", BatchNorm: "global"})
	if err == nil || err.Error() != `batch-norm="global": want sync or local` {
		t.Errorf("err = %v", err)
	}
}
