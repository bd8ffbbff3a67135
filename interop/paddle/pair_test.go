package paddle_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/distpass/distpass/interop/paddle"
	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/passes"
)

// pairOpts is what export -startup -sidecar asks for.
var pairOpts = paddle.ExportOptions{Sidecar: true, Startup: true}

func importFixture(t *testing.T, name string) *ir.Module {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	m, err := paddle.Import(name, data)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func runPipeline(m *ir.Module, text string) error {
	pl, err := passes.DefaultRegistry().Parse(text)
	if err != nil {
		return err
	}
	return (&passes.Manager{}).Run(context.Background(), pl, m)
}

// checkPair exports m as a main and a startup ProgramDesc and a sidecar,
// and checks that the files import back to m, that exporting that gives
// the same files, and that the ProgramDescs are plain Paddle programs: the
// main one the bytes a main-only export writes, the startup one its ops.
func checkPair(t *testing.T, m *ir.Module) *paddle.Files {
	t.Helper()
	f, err := paddle.ExportFiles(m, pairOpts)
	if err != nil {
		t.Fatal(err)
	}
	if f.Main == nil || f.Startup == nil || f.Sidecar == nil {
		t.Fatalf("files: main %d, startup %d, sidecar %d bytes", len(f.Main), len(f.Startup), len(f.Sidecar))
	}
	got, err := paddle.ImportFiles("x.pdmodel", "x.startup.pdmodel", f)
	if err != nil {
		t.Fatal(err)
	}
	if d := ir.Diff(m, got); d != "" {
		t.Fatalf("Import(Export(m)) differs:\n%s", d)
	}
	if err := ir.Verify(got); err != nil {
		t.Errorf("Verify: %v", err)
	}
	f2, err := paddle.ExportFiles(got, pairOpts)
	if err != nil || !bytes.Equal(f.Main, f2.Main) || !bytes.Equal(f.Startup, f2.Startup) || !bytes.Equal(f.Sidecar, f2.Sidecar) {
		t.Errorf("second export differs (err %v)", err)
	}

	var doc struct {
		Startup map[string]any `json:"startup"`
	}
	if err := json.Unmarshal(f.Sidecar, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Startup["separate"] != true || doc.Startup["program"] != nil {
		t.Errorf("sidecar startup member: %v, want separate and no program", doc.Startup)
	}
	// Where the startup program goes does not change the main file.
	main, _, err := paddle.ExportWithSidecar(m)
	if err != nil || !bytes.Equal(main, f.Main) {
		t.Errorf("the main ProgramDesc depends on where the startup goes (err %v)", err)
	}
	plain, err := paddle.Import("x.startup.pdmodel", f.Startup)
	if err != nil {
		t.Fatal(err)
	}
	if want, have := opTypes(m.Startup), opTypes(plain.Main); want != have {
		t.Errorf("startup file ops: %s\nwant %s", have, want)
	}
	return f
}

func opTypes(p *ir.Program) string {
	var s []string
	for _, b := range p.Blocks {
		for _, op := range b.Ops {
			s = append(s, op.Type)
		}
	}
	return strings.Join(s, " ")
}

// Every fixture: as imported it has no startup program, and ExportFiles
// refuses to write one; made trainable (a startup that initialises its
// params), then with grads and an optimizer as far as the op table goes,
// each stage exports as a pair that imports back equal.
func TestPairRoundTripFixtures(t *testing.T) {
	files, err := filepath.Glob("testdata/*.pdmodel")
	if err != nil || len(files) != 8 {
		t.Fatalf("fixtures: %v, %v", files, err)
	}
	optimized := map[string]bool{}
	for _, file := range files {
		name := filepath.Base(file)
		t.Run(name, func(t *testing.T) {
			m := importFixture(t, name)
			_, err := paddle.ExportFiles(m, pairOpts)
			if err == nil || err.Error() != "paddle: module has no startup program to write" {
				t.Errorf("inference program with Startup: %v", err)
			}
			if err := runPipeline(m, "make-trainable{loss=softmax_with_cross_entropy}"); err != nil {
				t.Fatal(err)
			}
			if m.Startup == nil || len(m.Startup.Global().Ops) == 0 {
				t.Fatal("make-trainable made no startup program")
			}
			checkPair(t, m)
			// Grads stop at the first op the op table cannot differentiate
			// (others are adding them): round trip what there is.
			if err := runPipeline(m, "append-backward{loss=loss},append-optimizer{type=sgd}"); err != nil {
				t.Logf("stops before training: %v", err)
				return
			}
			checkPair(t, m)
			optimized[name] = true
		})
	}
	for _, name := range []string{"lite_conv_bn_relu.pdmodel", "lite_resnet_cifar.pdmodel", "lite_resnet50.pdmodel"} {
		if !optimized[name] {
			t.Errorf("%s did not reach a training program", name)
		}
	}
}

// A data-parallel training program's ranks: each rank's pair of
// ProgramDescs and sidecar imports back to the rank's module; the sidecar
// holds the rank and the process-group table, the main ProgramDesc the
// collectives with their ring ids. ResNet-cifar, from Paddle 2.2, has
// attrs in hash order, which its grad ops inherit.
func TestPairPartitionedRanks(t *testing.T) {
	for _, name := range []string{"lite_conv_bn_relu.pdmodel", "lite_resnet_cifar.pdmodel"} {
		t.Run(name, func(t *testing.T) { checkRanks(t, name) })
	}
}

func checkRanks(t *testing.T, name string) {
	m := importFixture(t, name)
	err := runPipeline(m, "make-trainable{loss=softmax_with_cross_entropy,shape=8x3x32x32,batch-norm=global},"+
		"append-backward{loss=loss},annotate-data-parallel{shape=4},append-optimizer{type=sgd}")
	if err != nil {
		t.Fatal(err)
	}
	ranks, err := passes.PartitionAll(context.Background(), m, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(ranks) != 4 {
		t.Fatalf("%d ranks", len(ranks))
	}
	for r, pm := range ranks {
		f := checkPair(t, pm)
		var doc struct {
			Groups []struct {
				ID    int   `json:"id"`
				Ranks []int `json:"ranks"`
			} `json:"groups"`
			Main    struct{ Rank *int } `json:"main"`
			Startup struct{ Rank *int } `json:"startup"`
		}
		if err := json.Unmarshal(f.Sidecar, &doc); err != nil {
			t.Fatal(err)
		}
		if doc.Main.Rank == nil || *doc.Main.Rank != r || doc.Startup.Rank == nil || *doc.Startup.Rank != r {
			t.Errorf("rank %d: sidecar ranks main %v startup %v", r, doc.Main.Rank, doc.Startup.Rank)
		}
		if len(doc.Groups) != 1 || doc.Groups[0].ID != 0 || len(doc.Groups[0].Ranks) != 4 {
			t.Errorf("rank %d: sidecar groups %+v, want group 0 of the 4 ranks", r, doc.Groups)
		}
		plain, err := paddle.Import("rank.pdmodel", f.Main)
		if err != nil {
			t.Fatal(err)
		}
		rings := 0
		for _, op := range plain.Main.Global().Ops {
			if strings.HasPrefix(op.Type, "c_allreduce") && op.Attrs.Get("ring_id") == ir.Int(0) {
				rings++
			}
		}
		if rings == 0 {
			t.Errorf("rank %d: the main ProgramDesc has no c_allreduce on ring 0", r)
		}
		sp, err := paddle.Import("rank.startup.pdmodel", f.Startup)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(opTypes(sp.Main), "c_broadcast") {
			t.Errorf("rank %d: the startup ProgramDesc does not broadcast the params: %s", r, opTypes(sp.Main))
		}
	}
}

// A pair as Paddle writes it, main and startup each with its version and
// op version map, and no sidecar: the startup's fields are kept apart from
// the main program's, so the pair exports back byte for byte, from the
// module and from its text; without Startup, the startup program is what
// the ProgramDesc cannot hold.
func TestPaddlePairBytes(t *testing.T) {
	// The pair: a training program's main ProgramDesc without a version,
	// and its startup's with the version and op version map of the
	// Paddle file it came from.
	tr := importFixture(t, "lite_conv_bn_relu.pdmodel")
	if err := runPipeline(tr, "make-trainable{loss=mse},append-backward{loss=loss},append-optimizer{type=sgd}"); err != nil {
		t.Fatal(err)
	}
	facts := tr.Attrs
	tr.Attrs = nil
	mainPB, err := paddle.ExportWith(&ir.Module{Main: tr.Main}, paddle.ExportOptions{Drop: true})
	if err != nil {
		t.Fatal(err)
	}
	sp := tr.Startup.Clone()
	sp.Name = "main"
	startPB, err := paddle.ExportWith(&ir.Module{Main: sp, Attrs: facts}, paddle.ExportOptions{Drop: true})
	if err != nil {
		t.Fatal(err)
	}
	m, err := paddle.ImportFiles("cifar.pdmodel", "cifar.startup.pdmodel", &paddle.Files{Main: mainPB, Startup: startPB})
	if err != nil {
		t.Fatal(err)
	}
	if v := m.Attrs.Get("paddle.startup.version"); v != ir.Long(2002002) {
		t.Errorf("paddle.startup.version = %v, want long(2002002)", v)
	}
	if m.Attrs.Get("paddle.version") != nil {
		t.Errorf("the main program of lite_resnet_cifar has no version; got %v", m.Attrs.Get("paddle.version"))
	}
	text := ir.Print(m)
	m2, err := ir.Parse("cifar.dpir", text)
	if err != nil {
		t.Fatalf("the printed text does not parse: %v", err)
	}
	for _, mod := range []*ir.Module{m, m2} {
		f, err := paddle.ExportFiles(mod, paddle.ExportOptions{Startup: true})
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(f.Main, mainPB) || !bytes.Equal(f.Startup, startPB) || f.Sidecar != nil {
			t.Errorf("the pair does not export to its bytes (main %v, startup %v)", bytes.Equal(f.Main, mainPB), bytes.Equal(f.Startup, startPB))
		}
	}
	_, err = paddle.Export(m)
	var unrep *paddle.UnrepresentableError
	if !errors.As(err, &unrep) || unrep.What != "startup program" {
		t.Errorf("Export without Startup: %v, want the startup program unrepresentable", err)
	}
	// Dropped, the startup goes and its fields with it.
	pb, err := paddle.ExportWith(m, paddle.ExportOptions{Drop: true})
	if err != nil || !bytes.Equal(pb, mainPB) {
		t.Errorf("Drop: err %v, main bytes equal %v", err, bytes.Equal(pb, mainPB))
	}
}

// Drop with Startup writes both programs and loses the annotations only.
func TestPairDrop(t *testing.T) {
	m := importFixture(t, "lite_conv_bn_relu.pdmodel")
	if err := runPipeline(m, "make-trainable{loss=mse},append-backward{loss=loss},append-optimizer{type=sgd}"); err != nil {
		t.Fatal(err)
	}
	if _, err := paddle.ExportFiles(m, paddle.ExportOptions{Startup: true}); err == nil || !strings.Contains(err.Error(), "params-grads entry") {
		t.Errorf("Startup without Sidecar or Drop: %v, want the params-grads refused", err)
	}
	f, err := paddle.ExportFiles(m, paddle.ExportOptions{Drop: true, Startup: true})
	if err != nil {
		t.Fatal(err)
	}
	if f.Sidecar != nil {
		t.Error("Drop wrote a sidecar")
	}
	got, err := paddle.ImportFiles("x.pdmodel", "x.startup.pdmodel", f)
	if err != nil {
		t.Fatal(err)
	}
	if got.Startup == nil || opTypes(got.Startup) != opTypes(m.Startup) || opTypes(got.Main) != opTypes(m.Main) {
		t.Fatalf("dropped pair lost ops")
	}
	if len(got.ParamGrads) != 0 {
		t.Error("dropped pair kept params-grads")
	}
}

func TestPairErrors(t *testing.T) {
	m := importFixture(t, "lite_conv_bn_relu.pdmodel")
	if err := runPipeline(m, "make-trainable{loss=mse}"); err != nil {
		t.Fatal(err)
	}
	if _, err := paddle.ExportFiles(m, paddle.ExportOptions{Drop: true, Sidecar: true}); err == nil || err.Error() != "paddle: Drop and Sidecar do not go together" {
		t.Errorf("Drop and Sidecar: %v", err)
	}
	if _, err := paddle.ExportWith(m, pairOpts); err == nil || !strings.Contains(err.Error(), "use ExportFiles") {
		t.Errorf("ExportWith and Startup: %v", err)
	}
	pair, err := paddle.ExportFiles(m, pairOpts)
	if err != nil {
		t.Fatal(err)
	}
	legacyMain, legacySide, err := paddle.ExportWithSidecar(m)
	if err != nil {
		t.Fatal(err)
	}
	gap, err := os.ReadFile("testdata/demo_custom_gap.pdmodel")
	if err != nil {
		t.Fatal(err)
	}
	both := strings.Replace(string(pair.Sidecar), `"separate": true,`, `"separate": true, "program": "CgA=",`, 1)
	tests := []struct {
		name string
		f    *paddle.Files
		want string
	}{
		{"separate, no startup file", &paddle.Files{Main: pair.Main, Sidecar: pair.Sidecar},
			"x.pdmodel sidecar: startup: the startup program is a ProgramDesc file of its own, not given"},
		{"startup in the sidecar and a file", &paddle.Files{Main: legacyMain, Startup: pair.Startup, Sidecar: legacySide},
			"x.pdmodel sidecar: startup: the sidecar holds the startup program, and a startup file was given too"},
		{"separate and program", &paddle.Files{Main: pair.Main, Startup: pair.Startup, Sidecar: []byte(both)},
			`x.pdmodel sidecar: startup: "separate" and "program" do not go together`},
		{"a startup file that is no ProgramDesc", &paddle.Files{Main: pair.Main, Startup: []byte("\x0a\x05"), Sidecar: pair.Sidecar},
			"s.pdmodel: ProgramDesc: field 1 (blocks) truncated: its value has 5 bytes, the file ends after 0 of them at byte offset 0"},
		{"an inference program as the startup file", &paddle.Files{Main: pair.Main, Startup: gap, Sidecar: pair.Sidecar},
			"s.pdmodel: not a startup program: block 0 op 1 feed (position 0): a startup program has no feed op (it takes no input and gives no output)"},
		{"the main program as the startup file", &paddle.Files{Main: pair.Main, Startup: pair.Main, Sidecar: pair.Sidecar},
			"s.pdmodel: not a startup program: block 0 op 1 conv2d (position 0): reads image, which no earlier op of it writes and which is no persistable: a startup program initialises from nothing"},
	}
	if both == string(pair.Sidecar) {
		t.Fatal("no separate member in the sidecar")
	}
	for _, tt := range tests {
		_, err := paddle.ImportFiles("x.pdmodel", "s.pdmodel", tt.f)
		if err == nil || err.Error() != tt.want {
			t.Errorf("%s: %v\nwant %s", tt.name, err, tt.want)
		}
	}
	// The startup's file fields need a startup program to go in.
	plain := importFixture(t, "lite_conv_bn_relu.pdmodel")
	plain.Attrs.Set("paddle.startup.version", ir.Long(2002002))
	if _, err := paddle.ExportWith(plain, paddle.ExportOptions{Drop: true}); err == nil || err.Error() != "paddle: module attr paddle.startup.version, but the module has no startup program" {
		t.Errorf("startup attr without a startup: %v", err)
	}
}

// An attr order or VarDesc field list a pass left stale is no error for
// Export (the ProgramDesc it writes is right), and a sidecar brings it
// back as it was.
func TestStaleBookkeepingRoundTrips(t *testing.T) {
	src := `program main { block 0 {
  var x : f32[2] {stop_gradient, paddle.fields = strings[]}
  var y : f32[2]
  op 1 relu(X: x) -> (Out: y) {b = 1, c = 2, paddle.attr_order = ["c", "gone"]} role backward
} }`
	m, err := ir.Parse("t.dpir", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := paddle.Export(m); err != nil {
		t.Fatalf("Export: %v", err)
	}
	plain, err := paddle.Import("t.pdmodel", mustExport(t, m))
	if err != nil {
		t.Fatal(err)
	}
	if ir.Equal(m, plain) {
		t.Fatal("the stale attrs came back without a sidecar: the case tests nothing")
	}
	pb, side, err := paddle.ExportWithSidecar(m)
	if err != nil {
		t.Fatal(err)
	}
	got, err := paddle.ImportWithSidecar("t.pdmodel", pb, side)
	if err != nil {
		t.Fatal(err)
	}
	if d := ir.Diff(m, got); d != "" {
		t.Errorf("with a sidecar:\n%s", d)
	}
}

func mustExport(t *testing.T, m *ir.Module) []byte {
	t.Helper()
	pb, err := paddle.Export(m)
	if err != nil {
		t.Fatal(err)
	}
	return pb
}
