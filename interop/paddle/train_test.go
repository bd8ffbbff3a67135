package paddle_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/distpass/distpass/check"
	"github.com/distpass/distpass/custom"
	"github.com/distpass/distpass/interop/paddle"
	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/ops"
	"github.com/distpass/distpass/passes"
	"github.com/distpass/distpass/proof"
)

// trainRows is every Paddle program of testdata (the shared fixtures are
// the same files) and the global input shape it trains at: 8 images of
// 32×32, 2 a rank, where the model allows; the MobileNets of Paddle-Lite
// end in a 7×7 pool (not a global one), so they need 224×224, and train
// at 1 image a rank. Only the light rows run under -short or -race (the
// others take seconds to tens of seconds, and up to 7 GB for the
// MobileNetV2, in a plain run; the race detector slows the simulator
// some tenfold); the table keeps the others' last lines there.
type trainRowSpec struct {
	file, shape string
	light       bool
	// loss is make-trainable's, when not softmax_with_cross_entropy;
	// defs a definition file of the custom op types the program uses.
	loss, defs string
}

var trainRows = []trainRowSpec{
	// The demo's linear layer reads the flattened batch of 32 (its
	// flatten folds the batch) and gives one number: a regression.
	{file: "demo_custom_gap.pdmodel", shape: "32x3x7x7", light: true, loss: "mse", defs: "../../examples/gap.dpop"},
	{file: "lite_conv_bn_relu.pdmodel", shape: "8x3x32x32", light: true},
	{file: "lite_mobilenetv1.pdmodel", shape: "4x3x224x224", light: false},
	{file: "lite_mobilenetv2.pdmodel", shape: "4x3x224x224", light: false},
	{file: "lite_resnet50.pdmodel", shape: "8x3x32x32", light: false},
	{file: "lite_resnet_cifar.pdmodel", shape: "8x3x32x32", light: false},
	{file: "p2o_pir_ifelse.json", shape: "8x3x32x32", light: true},
	{file: "p2o_pir_thresholded_relu.json", shape: "8x3x32x32", light: true},
	{file: "slim_mobilenetv1_int8.pdmodel", shape: "8x3x32x32", light: false},
	{file: "visualdl_mobilenetv1.pdmodel", shape: "8x3x32x32", light: false},
	// PaddleOCR's recognisers read text lines 48 high; a width of 64 (32
	// for the ResNet-style one) gives their SVTR necks 8 (4) positions.
	{file: "transformers/ppocr_rec_svtrneck_roc.pdmodel", shape: "4x3x48x32", light: false},
	{file: "transformers/ppocrv3_rec_en.pdmodel", shape: "4x3x48x64", light: false},
	{file: "transformers/ppocrv3_rec_finnish.pdmodel", shape: "4x3x48x64", light: false},
}

// trainStages is the pipeline of a row, a pass at a time so that a row
// that stops names the pass. Only the data vars are annotated; complete
// infers the rest.
var trainStages = []string{
	"make-trainable{loss=%s,shape=%s}",
	"append-backward{loss=loss}",
	"annotate-data-parallel{shape=4,data-only=true}",
	"append-optimizer{type=sgd}",
	"complete",
}

const trainTable = "testdata/trained.md"

// TestTrainFixtures takes every Paddle program of testdata from an
// inference file to proven per-rank training programs and back:
// import, the trainStages, partition -all (4 ranks), each rank exported
// as Paddle's main and startup ProgramDescs and a sidecar and imported
// back equal, then check -steps 2 -f64 of those re-imported programs
// against the serial one. testdata/trained.md is the table, a row a
// program (DISTPASS_UPDATE=1 rewrites it, in a plain run only; review
// its diff); a row that stops says where and why.
func TestTrainFixtures(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.pdmodel")
	pir, _ := filepath.Glob("testdata/*.json")
	tf, _ := filepath.Glob("testdata/transformers/*.pdmodel")
	for _, f := range slices.Concat(files, pir, tf) {
		if !slices.ContainsFunc(trainRows, func(r trainRowSpec) bool { return r.file == strings.TrimPrefix(f, "testdata/") }) {
			t.Errorf("%s has no row in trainRows", f)
		}
	}
	lightOnly := testing.Short() || raceEnabled
	update := os.Getenv("DISTPASS_UPDATE") != ""
	if update && lightOnly {
		t.Fatal("DISTPASS_UPDATE=1 needs every row: run without -short and -race")
	}
	old := map[string]string{}
	if data, err := os.ReadFile(trainTable); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			if f := strings.Split(line, " | "); len(f) > 1 {
				old[strings.TrimPrefix(f[0], "| ")] = line
			}
		}
	} else if !update {
		t.Fatalf("%v (DISTPASS_UPDATE=1 writes it)", err)
	}

	var sb strings.Builder
	sb.WriteString("| program | input | training program | completion | rank 0 of 4 | Paddle files per rank | check -steps 2 -f64 | static proof (package proof) |\n")
	sb.WriteString("|---|---|---|---|---|---|---|---|\n")
	for _, r := range trainRows {
		if lightOnly && !r.light {
			line, ok := old[r.file]
			if !ok {
				t.Fatalf("%s: no row in %s to keep", r.file, trainTable)
			}
			sb.WriteString(line + "\n")
			continue
		}
		start := time.Now()
		cells, stopped := trainRow(t, r)
		if t.Failed() {
			return
		}
		if !stopped {
			t.Logf("%s at %s: %.1fs", r.file, r.shape, time.Since(start).Seconds())
		}
		input := r.shape
		if r.loss != "" {
			input += ", loss " + r.loss
		}
		if r.defs != "" {
			input += ", -defs " + strings.TrimPrefix(r.defs, "../../")
		}
		sb.WriteString("| " + r.file + " | " + input + " | " + strings.Join(cells, " | ") + " |\n")
	}
	got := sb.String()
	if update {
		if err := os.WriteFile(trainTable, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, _ := os.ReadFile(trainTable)
	if d := cmp.Diff(strings.Split(string(want), "\n"), strings.Split(got, "\n")); d != "" {
		t.Errorf("%s differs (-want +got; DISTPASS_UPDATE=1 rewrites it):\n%s", trainTable, d)
	}
}

// trainRow runs one program through and returns its cells after the
// input's; stopped says a stage refused it (the cell says which and
// why). A failure of what the table does not record (a round trip, a
// check) fails t.
func trainRow(t *testing.T, r trainRowSpec) (cells []string, stopped bool) {
	t.Helper()
	file := r.file
	if r.defs != "" {
		if err := loadDefs(r.defs); err != nil {
			t.Fatal(err)
		}
	}
	loss := r.loss
	if loss == "" {
		loss = "softmax_with_cross_entropy"
	}
	stop := func(stage string, err error) ([]string, bool) {
		var pe *passes.PassError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		msg := strings.ReplaceAll(err.Error(), "\n", "; ")
		cells := slices.Repeat([]string{""}, 6)
		cells[0] = fmt.Sprintf("stops at %s: %s", stage, msg)
		return cells, true
	}
	data, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	var m *ir.Module
	if paddle.IsPIR(data) {
		m, err = paddle.ImportPIR(file, data)
	} else {
		m, err = paddle.Import(file, data)
	}
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	for _, st := range trainStages {
		if strings.HasPrefix(st, "make-trainable") {
			st = fmt.Sprintf(st, loss, r.shape)
		}
		if err := runPipeline(m, st); err != nil {
			return stop("`"+strings.SplitN(st, "{", 2)[0]+"`", err)
		}
		if err := passes.Verify(m); err != nil {
			t.Fatalf("%s: after %s: %v", file, st, err)
		}
	}
	g := m.Main.Global()
	roles := map[string]int{}
	for _, op := range g.Ops {
		switch {
		case op.Role.IsOptimize():
			roles["optimizer"]++
		case op.Role.IsBackward():
			roles["backward"]++
		default:
			roles["forward"]++
		}
	}
	params := 0
	for _, v := range g.Vars() {
		if v.Kind == ir.KindParam {
			params++
		}
	}
	cells = append(cells, fmt.Sprintf("%d ops (%d forward, %d backward, %d sgd), %d params",
		len(g.Ops), roles["forward"], roles["backward"], roles["optimizer"], params))

	// What completion gave beyond the data vars: the impls.
	impls := map[string]int{}
	for _, op := range g.Ops {
		if op.Dist != nil {
			impls[fmt.Sprintf("%s:%d", op.Dist.ImplType, op.Dist.ImplIndex)]++
		}
	}
	var is []string
	for _, k := range slices.Sorted(maps.Keys(impls)) {
		is = append(is, fmt.Sprintf("%s ×%d", k, impls[k]))
	}
	cells = append(cells, strings.Join(is, ", "))

	ranks, err := passes.PartitionAll(context.Background(), m, nil)
	if err != nil {
		return stop("`partition -all`", err)
	}
	colls := map[string]int{}
	for _, op := range ranks[0].Main.Global().Ops {
		if strings.HasPrefix(op.Type, "c_") || strings.HasSuffix(op.Type, "_v2") && strings.Contains(op.Type, "send") {
			colls[op.Type]++
		}
	}
	var cs []string
	for _, k := range slices.Sorted(maps.Keys(colls)) {
		cs = append(cs, fmt.Sprintf("%s ×%d", k, colls[k]))
	}
	cells = append(cells, fmt.Sprintf("%d ops; %s; startup %d ops", len(ranks[0].Main.Global().Ops), strings.Join(cs, ", "), ranks[0].Startup.NumOps()))

	static := staticProof(t, file, m, ranks) // before proveRanks makes m f64
	rep, kib := proveRanks(t, file, m, ranks)
	cells = append(cells, fmt.Sprintf("%d pairs of main and startup ProgramDescs, %d KiB; each re-imported equal", len(ranks), kib))
	cells = append(cells, fmt.Sprintf("ok: %d loss, %d activations, %d params, %d grads, %d state, %d startup values; %d replica comparisons",
		rep.Count("loss"), rep.Count("activation"), rep.Count("param"), rep.Count("grad"), rep.Count("state"), rep.Count("startup"), rep.Replicas))
	cells = append(cells, static)
	return cells, false
}

// staticProof is the static proof's cell for m's ranks: proven, or
// unproven with the op types it does not follow yet; a refutation of a
// program the simulator proves is a false alarm and fails t.
func staticProof(t *testing.T, file string, m *ir.Module, ranks []*ir.Module) string {
	t.Helper()
	res, err := proof.Check(m, passes.Ranks(m), ranks)
	if err != nil {
		t.Fatalf("%s: proof: %v", file, err)
	}
	if f := res.Refuted(); f != nil {
		t.Errorf("%s: the static proof refutes what check proves: %s", file, f)
		return "refuted"
	}
	if res.Proven() {
		return "proven"
	}
	types := map[string]bool{}
	for _, f := range res.Findings {
		types[f.OpType] = true
	}
	return "unproven: follows no " + strings.Join(slices.Sorted(maps.Keys(types)), ", ")
}

// proveRanks exports each of the per-rank modules of m as Paddle's main
// and startup ProgramDescs and a sidecar, imports them back, fails t
// unless each is equal to what was exported, and checks the re-imported
// programs (check -steps 2 -f64 -parts) against m, which it converts to
// f64. It returns the check's report and the ProgramDescs' size in KiB.
func proveRanks(t *testing.T, file string, m *ir.Module, ranks []*ir.Module) (*check.Report, int) {
	t.Helper()
	back := make([]*ir.Module, len(ranks))
	bytes := 0
	for r, pm := range ranks {
		f, err := paddle.ExportFiles(pm, pairOpts)
		if err != nil {
			t.Fatalf("%s: rank %d: export: %v", file, r, err)
		}
		bytes += len(f.Main) + len(f.Startup)
		back[r], err = paddle.ImportFiles(fmt.Sprintf("rank%d.pdmodel", r), fmt.Sprintf("rank%d.startup.pdmodel", r), f)
		if err != nil {
			t.Fatalf("%s: rank %d: import: %v", file, r, err)
		}
		if d := ir.Diff(pm, back[r]); d != "" {
			t.Fatalf("%s: rank %d: the re-imported module differs:\n%s", file, r, d)
		}
	}
	if _, err := passes.ToF64(m); err != nil {
		t.Fatalf("%s: to-f64: %v", file, err)
	}
	for r, pm := range back {
		if _, err := passes.ToF64(pm); err != nil {
			t.Fatalf("%s: rank %d: to-f64: %v", file, r, err)
		}
	}
	rep, err := check.RunParts(context.Background(), m, passes.Ranks(m), back, check.Options{Steps: 2})
	if err != nil {
		t.Fatalf("%s: check: %v", file, err)
	}
	if err := rep.Err(); err != nil {
		t.Fatalf("%s: check: %v", file, err)
	}
	return rep, (bytes + 512) / 1024
}

// dpmpPipeline is README's pipeline of the CIFAR ResNet on dp × mp.
const dpmpPipeline = `make-trainable{shape=8x3x32x32},` +
	`annotate{mesh="world shape [2, 2] dims [dp, mp] ranks [0, 1, 2, 3]",var="fc_0.w_0 @world[-1, 1]"},` +
	`append-backward{loss=loss},annotate-data-parallel{mesh=world,axis=dp,data-only=true},append-optimizer{type=sgd},complete,insert-reshards`

// TestTrainResNetCifarDPMP: the CIFAR ResNet trained on a 2×2 mesh [dp,
// mp], its classifier's weight fc_0.w_0 annotated column-parallel
// ([-1, 1]: its 10 classes split over mp) and its data split over dp,
// nothing else annotated. complete infers the rest: the convolutions and
// batch norms data-parallel, the mul rule-based (a local product on the
// weight's columns); insert-reshards gathers the logits' columns before
// the softmax, and all-reduces fc_0.w_0's grad over dp (it is the sum of
// the ranks' batches) before sgd reads it. Each rank's programs go to
// Paddle's files and back, and the re-imported ones check against the
// serial step in f64.
func TestTrainResNetCifarDPMP(t *testing.T) {
	if raceEnabled {
		t.Skip("seconds of simulation, some tenfold under the race detector; the light rows of TestTrainFixtures cover the path")
	}
	const file = "lite_resnet_cifar.pdmodel"
	m := importFixture(t, file)
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil || !strings.Contains(string(readme), "'"+dpmpPipeline+"'") {
		t.Fatalf("README.md does not give this test's pipeline (%v)", err)
	}
	if err := runPipeline(m, dpmpPipeline); err != nil {
		t.Fatal(err)
	}
	g := m.Main.Global()
	if d := g.Var("fc_0.w_0@GRAD").Dist.String(); d != "@world[-1, 1] partial [0:avg]" {
		t.Errorf("fc_0.w_0@GRAD is %s, want @world[-1, 1] partial [0:avg]", d)
	}
	var reshards []string
	for _, op := range g.Ops {
		if op.Type == ops.ReshardType {
			x, out := g.Var(op.Input("X")[0]), g.Var(op.Output("Out")[0])
			reshards = append(reshards, x.Name()+" "+x.Dist.String()+" -> "+out.Dist.String())
		}
	}
	want := []string{
		"fc_0.tmp_1 @world[0, 1] -> @world[0, -1]",
		"fc_0.tmp_1@GRAD @world[0, -1] -> @world[0, 1]",
		"pool2d_0.tmp_0@GRAD @world[0, -1, -1, -1] partial [1] -> @world[0, -1, -1, -1]",
		"fc_0.w_0@GRAD @world[-1, 1] partial [0:avg] -> @world[-1, 1]",
	}
	if d := cmp.Diff(want, reshards); d != "" {
		t.Errorf("reshards (-want +got):\n%s", d)
	}
	ranks, err := passes.PartitionAll(context.Background(), m, nil)
	if err != nil {
		t.Fatal(err)
	}
	for r, pm := range ranks {
		if w := pm.Main.Global().Var("fc_0.w_0"); w.Type.String() != "f32[64, 5]" {
			t.Errorf("rank %d: fc_0.w_0 is %s, want f32[64, 5]", r, w.Type)
		}
	}
	rep, _ := proveRanks(t, file, m, ranks)
	if rep.Count("param") != 101 || rep.Count("grad") != 101 {
		t.Errorf("compared %d params and %d grads, want 101 of each", rep.Count("param"), rep.Count("grad"))
	}
}

// loadDefs defines the op types of a definition file, once a process.
func loadDefs(path string) error {
	defsMu.Lock()
	defer defsMu.Unlock()
	if !defsLoaded[path] {
		if _, err := custom.Load(path); err != nil {
			return err
		}
		defsLoaded[path] = true
	}
	return nil
}

var (
	defsMu     sync.Mutex
	defsLoaded = map[string]bool{}
)

// tpPipeline trains a PaddleOCR recogniser on a 2×2 mesh [dp, mp]: the
// MLPs and attention projections of its SVTR neck tensor-parallel by
// pattern (fc1 by columns, fc2 and the projections by rows), the data
// split over dp, the rest completed.
const tpPipeline = `make-trainable{shape=4x3x48x64},` +
	`annotate{mesh="world shape [2, 2] dims [dp, mp] ranks [0, 1, 2, 3]"},annotate-tensor-parallel{mesh=world,axis=mp},` +
	`append-backward{loss=loss},annotate-data-parallel{mesh=world,axis=dp,data-only=true},append-optimizer{type=sgd},complete,insert-reshards`

// TestTrainTransformerTP: PP-OCRv3's SVTR neck trains tensor-parallel:
// annotate-tensor-parallel finds both MLPs and both attention
// projections, the activation between fc1 and fc2 stays split on mp, the
// attention runs head-parallel (its fused q/k/v projection stays whole,
// each rank cutting its heads from it), and the per-rank Paddle files,
// exported and imported back, are proven by check against the serial
// program in f64.
func TestTrainTransformerTP(t *testing.T) {
	if raceEnabled || testing.Short() {
		t.Skip("seconds of simulation, some tenfold under the race detector; passes' TestAnnotateTensorParallelMLP covers the pattern")
	}
	const file = "transformers/ppocrv3_rec_finnish.pdmodel"
	m := importFixture(t, file)
	if err := runPipeline(m, tpPipeline); err != nil {
		t.Fatal(err)
	}
	g := m.Main.Global()
	var cols, rows []string
	for _, v := range g.Vars() {
		if v.Kind != ir.KindParam || v.Dist == nil {
			continue
		}
		switch v.Dist.String() {
		case "@world[-1, 1]":
			cols = append(cols, v.Name())
		case "@world[1, -1]":
			rows = append(rows, v.Name())
		}
	}
	if len(cols) != 2 || len(rows) != 4 {
		t.Fatalf("column-split params %v and row-split %v: want the two MLPs' fc1, and their fc2 and the two attention projections", cols, rows)
	}
	for name, want := range map[string]string{
		"swish_9.tmp_0": "@world[0, -1, 1]", "swish_10.tmp_0": "@world[0, -1, 1]", // the MLPs' activations
		"softmax_0.tmp_0": "@world[0, 1, -1, -1]", "softmax_1.tmp_0": "@world[0, 1, -1, -1]", // the attention probabilities, by head
	} {
		if d := g.Var(name).Dist; d == nil || d.String() != want {
			t.Errorf("%s is %v, want %s", name, d, want)
		}
	}
	ranks, err := passes.PartitionAll(context.Background(), m, nil)
	if err != nil {
		t.Fatal(err)
	}
	for r, pm := range ranks {
		if w := pm.Main.Global().Var(cols[0]); w.Type.Shape[1]*2 != g.Var(cols[0]).Type.Shape[1] {
			t.Errorf("rank %d: %s is %s, want half the columns of %s", r, cols[0], w.Type, g.Var(cols[0]).Type)
		}
	}
	rep, _ := proveRanks(t, file, m, ranks)
	if rep.Count("param") != 132 || rep.Count("grad") != 132 {
		t.Errorf("compared %d params and %d grads, want 132 of each", rep.Count("param"), rep.Count("grad"))
	}
}
