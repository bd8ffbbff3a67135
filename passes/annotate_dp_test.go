package passes_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/distpass/distpass/check"
	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/models"
	"github.com/distpass/distpass/passes"
)

// On the MLP's training step, annotate-data-parallel gives what the
// hand-written dp strategy gives, and the result trains like the serial
// program.
func TestAnnotateDataParallelMatchesTheDPStrategy(t *testing.T) {
	cfg := models.MLPConfig{Layers: 2, Hidden: 8, Batch: 8, DType: ir.F64}
	want, err := models.MLPTraining(cfg, "dp", models.Mesh([]int{2}, []string{"dp"}), "sgd")
	if err != nil {
		t.Fatal(err)
	}
	m := models.MLP(cfg)
	pl, err := passes.DefaultRegistry().Parse("append-backward{loss=loss},annotate-data-parallel{shape=2},append-optimizer,check-annotations")
	if err != nil {
		t.Fatal(err)
	}
	if err := (&passes.Manager{}).Run(context.Background(), pl, m); err != nil {
		t.Fatal(err)
	}
	for _, v := range want.Main.Global().Vars() {
		got := m.Main.Global().Var(v.Name())
		if got == nil || got.Dist == nil || v.Dist == nil {
			t.Errorf("var %s: dist %v, want %v", v.Name(), got, v)
			continue
		}
		if !slices.Equal(got.Dist.DimsMapping, v.Dist.DimsMapping) || !slices.Equal(got.Dist.Partial, v.Dist.Partial) {
			t.Errorf("var %s: %s, the dp strategy gives %s", v.Name(), ir.PrintVar(got), ir.PrintVar(v))
		}
	}
	rep, err := check.Run(context.Background(), m, check.Options{Steps: 2})
	if err != nil {
		t.Fatal(err)
	}
	if err := rep.Err(); err != nil {
		t.Fatal(err)
	}
}

// An inference program with an unknown batch (-1), a feed, a flattening
// reshape to [-1, K] (proved to keep the batch), an inference batch_norm.
func TestAnnotateDataParallelInference(t *testing.T) {
	m, err := ir.ParseString("infer", inferenceProgram(""))
	if err != nil {
		t.Fatal(err)
	}
	if err := passes.AnnotateDataParallel(m, "", 4, "dp"); err != nil {
		t.Fatal(err)
	}
	g := m.Main.Global()
	for name, want := range map[string]string{
		"x": "@world[0, -1, -1, -1]", "bn_y": "@world[0, -1, -1, -1]", "bn_saved_mean": "@world[-1]",
		"flat": "@world[0, -1]", "scale_w": "@world[-1]", "out": "@world[0, -1]", "flat_xshape": "@world[-1, 0, -1, -1, -1]",
	} {
		if got := ir.PrintVar(g.Var(name)); !strings.Contains(got, want) {
			t.Errorf("%s, want %s", got, want)
		}
	}
	if err := ir.Verify(m); err != nil {
		t.Fatal(err)
	}
	mods, err := passes.PartitionAll(context.Background(), m, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := mods[3].Main.Global().Var("flat").Type.Shape; !slices.Equal(got, []int64{-1, 12}) {
		t.Errorf("rank 3 flat %v", got)
	}
}

func inferenceProgram(extra string) string {
	return `program main {
  block 0 {
    var feed : feed_list
    var x : f32[-1, 3, 2, 2]
    persist scale_w : f32[3]
    persist bias : f32[3]
    persist mean : f32[3]
    persist variance : f32[3]
    var bn_y : f32[-1, 3, 2, 2]
    var bn_saved_mean : f32[3]
    var bn_saved_var : f32[3]
    var flat : f32[-1, 12]
    var flat_xshape : f32[0, -1, 3, 2, 2]
    var out : f32[-1, 12]
    var red : f32[12]
    var sh : i32[4]
    var moved : f32[12, -1]
    var moved_xshape : f32[0, -1, 12]
    op 1 feed(X: feed) -> (Out: x) {col = 0}
    op 2 batch_norm(X: x, Scale: scale_w, Bias: bias, Mean: mean, Variance: variance) -> (Y: bn_y, MeanOut: mean, VarianceOut: variance, SavedMean: bn_saved_mean, SavedVariance: bn_saved_var) {epsilon = 0.00001, is_test = true}
    op 3 reshape2(X: bn_y) -> (Out: flat, XShape: flat_xshape) {shape = [-1, 12]}
    op 4 relu(X: flat) -> (Out: out)
` + extra + `  }
}`
}

// What cannot be proved batch-parallel is refused, naming the op.
func TestAnnotateDataParallelRefuses(t *testing.T) {
	for _, c := range []struct{ extra, want string }{
		{"    op 5 reduce_sum(X: out) -> (Out: red) {dim = [0], keep_dim = false}\n",
			"op 5 reduce_sum: not provably batch-parallel: it reduces over the batch dim (dim [0], reduce_all false)"},
		{"    op 5 shape(Input: out) -> (Out: sh)\n",
			"op 5 shape: not provably batch-parallel: it reads the batch and writes sh [4], whose dim 0 is not the batch size -1 (a reduction over the batch?)"},
		{"    op 5 transpose2(X: out) -> (Out: moved, XShape: moved_xshape) {axis = [1, 0]}\n",
			"op 5 transpose2: not provably batch-parallel: its perm [1 0] moves the batch dim"},
		{"    op 5 reshape2(X: out) -> (Out: moved, XShape: moved_xshape) {shape = [12, -1]}\n",
			"op 5 reshape2: not provably batch-parallel: its shape [12 -1] does not keep the batch dim in dim 0"},
	} {
		m, err := ir.ParseString("infer", inferenceProgram(c.extra))
		if err != nil {
			t.Fatal(err)
		}
		before := string(ir.Print(m))
		err = passes.AnnotateDataParallel(m, "", 2, "dp")
		if err == nil || err.Error() != c.want {
			t.Errorf("err = %v\nwant %s", err, c.want)
		}
		if string(ir.Print(m)) != before {
			t.Errorf("%s: the module changed on error", c.want)
		}
	}
	// An annotated module, no data, uneven batch, meshes (training batch
	// norm is annotate_bn_test.go's).
	for _, c := range []struct {
		src, mesh string
		shape     int
		want      string
	}{
		{"program main { block 0 { var y : f32[4] } }", "", 2, "no data var (is_data, or written by a feed op) to take the batch dim from"},
		{"program main { block 0 { var x : f32[3, 2] {is_data} } }", "", 2, "the batch size 3 does not split evenly over mesh dim dp of size 2"},
		{"mesh w shape [2] dims [dp] ranks [0, 1]\nprogram main { block 0 { var x : f32[2] @w[0] {is_data} } }", "w", 0, "main block 0: var x already has a dist"},
		{"program main { block 0 { var x : f32[2] {is_data} } }", "w", 0, "no mesh named w"},
		{"program main { block 0 { var x : f32[2] {is_data} } }", "", ir.MaxMeshRanks + 1, "shape=1048577: want a rank count from 1 to 1048576 (ir.MaxMeshRanks)"},
		{"program main { block 0 { var x : f32[2] {is_data} } }", "", 1000000000, "shape=1000000000: want a rank count from 1 to 1048576 (ir.MaxMeshRanks)"},
		{"program main { block 0 { var x : f32[2] {is_data} } }", "", -2, "shape=-2: want a rank count from 1 to 1048576 (ir.MaxMeshRanks)"},
		{"program main { block 0 { var x : f32[2] {is_data} } }", "", 0, "give mesh=NAME or shape=N"},
	} {
		m, err := ir.ParseString("t", c.src)
		if err != nil {
			t.Fatal(err)
		}
		err = passes.AnnotateDataParallel(m, c.mesh, c.shape, "dp")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("err = %v\nwant %s", err, c.want)
		}
	}
}

// TestAnnotateDataParallelEmptyAxis: the new mesh's dim needs a name (an
// empty one made a mesh that Verify refuses).
func TestAnnotateDataParallelEmptyAxis(t *testing.T) {
	m, err := ir.ParseString("t", "program main { block 0 { var x : f32[2] {is_data} } }")
	if err != nil {
		t.Fatal(err)
	}
	if err := passes.AnnotateDataParallel(m, "", 2, ""); err == nil || err.Error() != `axis="": the mesh dim needs a name` {
		t.Errorf("err = %v", err)
	}
	if len(m.Meshes) != 0 {
		t.Error("a mesh was added")
	}
}

// data-only annotates the data vars alone, keeps a weight's dist, and
// refuses nothing else (a reduction over the batch is completion's to
// place), but a data var that has a dist.
func TestAnnotateDataParallelDataOnly(t *testing.T) {
	src := strings.Replace(inferenceProgram("    op 5 reduce_sum(X: out) -> (Out: red) {dim = [0], keep_dim = false}\n"),
		"persist scale_w : f32[3]", "persist scale_w : f32[3] @world[-1]", 1)
	src = "mesh world shape [2, 2] dims [dp, mp] ranks [0, 1, 2, 3]\n" + src
	m, err := ir.ParseString("infer", src)
	if err != nil {
		t.Fatal(err)
	}
	if err := passes.AnnotateDataParallelWith(m, passes.DataParallelOptions{Mesh: "world", Axis: "mp", DataOnly: true}); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, v := range m.Main.Global().Vars() {
		if v.Dist != nil {
			got = append(got, ir.PrintVar(v))
		}
	}
	want := []string{"var x : f32[-1, 3, 2, 2] @world[1, -1, -1, -1]", "persist scale_w : f32[3] @world[-1]"}
	if !slices.Equal(got, want) {
		t.Errorf("vars with a dist:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(m.Meshes) != 1 || slices.ContainsFunc(m.Main.Global().Ops, func(op *ir.Op) bool { return op.Dist != nil }) {
		t.Errorf("meshes %d, or an op got a dist:\n%s", len(m.Meshes), ir.Print(m))
	}

	err = passes.AnnotateDataParallelWith(m, passes.DataParallelOptions{Mesh: "world", Axis: "dp", DataOnly: true})
	if err == nil || err.Error() != "data var x already has a dist (@world[1, -1, -1, -1])" {
		t.Errorf("err = %v, want a refusal of x's dist", err)
	}
}
