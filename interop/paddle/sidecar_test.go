package paddle

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/lower"
	"github.com/distpass/distpass/models"
	"github.com/distpass/distpass/passes"
)

func mlpModule(t *testing.T) *ir.Module {
	t.Helper()
	mesh := &ir.ProcessMesh{Name: "world", Shape: []int{2, 2}, DimNames: []string{"dp", "mp"}, ProcessIDs: []int{0, 1, 2, 3}}
	m, err := models.MLPTraining(models.MLPConfig{}, "dp,mp", mesh, "")
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// An annotated distpass module, serial and partitioned, survives
// ExportWithSidecar then ImportWithSidecar.
func TestSidecarRoundTrip(t *testing.T) {
	serial := mlpModule(t)
	rank := serial.Clone()
	if err := passes.Partition(rank, lower.DefaultRegistry(), 3); err != nil {
		t.Fatal(err)
	}
	if len(rank.Groups) == 0 || rank.Main.Rank != 3 {
		t.Fatalf("partitioned module has %d groups, rank %d", len(rank.Groups), rank.Main.Rank)
	}
	serial.Attrs.Set("note", ir.Float(0.1)) // a module attr the proto has no place for
	for name, m := range map[string]*ir.Module{"serial": serial, "rank3": rank} {
		t.Run(name, func(t *testing.T) {
			pb, side, err := ExportWithSidecar(m)
			if err != nil {
				t.Fatal(err)
			}
			var doc map[string]any
			if err := json.Unmarshal(side, &doc); err != nil {
				t.Fatalf("sidecar is not JSON: %v", err)
			}
			if doc["format"] != sidecarFormat || doc["version"] != float64(1) {
				t.Errorf("sidecar header: %v %v", doc["format"], doc["version"])
			}
			for _, key := range []string{"meshes", "param_grads", "main", "startup"} {
				if doc[key] == nil {
					t.Errorf("sidecar has no %q", key)
				}
			}
			got, err := ImportWithSidecar("x.pdmodel", pb, side)
			if err != nil {
				t.Fatal(err)
			}
			if d := ir.Diff(m, got); d != "" {
				t.Fatalf("round trip differs:\n%s", d)
			}
			if err := ir.Verify(got); err != nil {
				t.Errorf("Verify: %v", err)
			}
			// The proto alone is a plain Paddle program.
			plain, err := Import("x.pdmodel", pb)
			if err != nil {
				t.Fatal(err)
			}
			if len(plain.Meshes) != 0 || plain.Startup != nil || plain.Main.Global().Vars()[0].Dist != nil {
				t.Error("the proto carries annotations")
			}
			pb2, side2, err := ExportWithSidecar(got)
			if err != nil || !bytes.Equal(pb, pb2) || !bytes.Equal(side, side2) {
				t.Errorf("second export differs (err %v)", err)
			}
		})
	}
}

// Export alone names the first thing the proto cannot hold, and drops it
// all when told to.
func TestExportUnrepresentable(t *testing.T) {
	m := mlpModule(t)
	_, err := Export(m)
	want := "paddle: mesh world: the ProgramDesc cannot hold it (use ExportWithSidecar, or drop it with ExportOptions.Drop)"
	if err == nil || err.Error() != want {
		t.Fatalf("Export: %v\nwant %s", err, want)
	}
	edits := []struct {
		name string
		edit func(m *ir.Module)
		want string
	}{
		{"dist", func(m *ir.Module) {}, `main block 0 var "x": flags`},
		{"flags gone", func(m *ir.Module) {
			for _, v := range m.Main.Global().Vars() {
				v.Flags &^= sidecarFlags
			}
		}, `main block 0 var "x": tensor dist`},
		{"no dists", func(m *ir.Module) {
			for _, b := range m.Main.Blocks {
				for _, v := range b.Vars() {
					v.Flags &^= sidecarFlags
					v.Dist = nil
				}
			}
		}, "main block 0 op 3 matmul_v2: op id"},
	}
	m.Meshes, m.ParamGrads = nil, nil
	for _, e := range edits {
		e.edit(m)
		_, err := Export(m)
		if err == nil || !strings.HasPrefix(err.Error(), "paddle: "+e.want+":") {
			t.Errorf("%s: %v\nwant paddle: %s: ...", e.name, err, e.want)
		}
	}
	pb, err := ExportWith(mlpModule(t), ExportOptions{Drop: true})
	if err != nil {
		t.Fatal(err)
	}
	plain, err := Import("mlp.pdmodel", pb)
	if err != nil {
		t.Fatal(err)
	}
	if plain.Main.NumOps() != mlpModule(t).Main.NumOps() {
		t.Error("dropping lost ops")
	}
	if _, err := Export(plain); err != nil {
		t.Errorf("a dropped module still has what the proto cannot hold: %v", err)
	}
}

func TestSidecarErrors(t *testing.T) {
	pb, side, err := ExportWithSidecar(mlpModule(t))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ edit, want string }{
		{`"version": 1`, `"version": 2`},
		{`"format": "distpass-paddle-sidecar"`, `"format": "x"`},
		{`"name": "x"`, `"name": "nosuch"`},
		{`"pos": 0`, `"pos": 99`},
		{`"block": 0`, `"bogus": 0`},
	}
	wants := []string{
		"x.pdmodel sidecar: unsupported version 2 (want 1)",
		`x.pdmodel sidecar: format "x", want "distpass-paddle-sidecar"`,
		`x.pdmodel sidecar: main: block 0: no var "nosuch"`,
		"x.pdmodel sidecar: main: no op at block 0 position 99",
		`x.pdmodel sidecar: json: unknown field "bogus"`,
	}
	for i, tt := range tests {
		bad := strings.Replace(string(side), tt.edit, tt.want, 1)
		if bad == string(side) {
			t.Fatalf("%s: not in the sidecar", tt.edit)
		}
		_, err := ImportWithSidecar("x.pdmodel", pb, []byte(bad))
		if err == nil || err.Error() != wants[i] {
			t.Errorf("%s: %v\nwant %s", tt.want, err, wants[i])
		}
	}
	if m, err := ImportWithSidecar("x.pdmodel", pb, nil); err != nil || len(m.Meshes) != 0 {
		t.Errorf("empty sidecar: %v", err)
	}
}

// Rank-local positions keep their local dims through the sidecar,
// serial and partitioned (the per-rank program keeps them).
func TestSidecarLocal(t *testing.T) {
	serial, err := models.MoETraining(models.MoEConfig{DType: ir.F64}, "ep", models.Mesh([]int{2}, []string{"ep"}), "sgd")
	if err != nil {
		t.Fatal(err)
	}
	rank := serial.Clone()
	if err := passes.Partition(rank, lower.DefaultRegistry(), 1); err != nil {
		t.Fatal(err)
	}
	for name, m := range map[string]*ir.Module{"serial": serial, "rank1": rank} {
		if got := m.Main.Global().Var("pos").Dist.String(); got != "@world[-1] local [0]" {
			t.Fatalf("%s: pos is %s, want @world[-1] local [0]", name, got)
		}
		pb, side, err := ExportWithSidecar(m)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !bytes.Contains(side, []byte(`"local"`)) {
			t.Errorf("%s: the sidecar says no local dims", name)
		}
		got, err := ImportWithSidecar("x.pdmodel", pb, side)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if d := ir.Diff(m, got); d != "" {
			t.Errorf("%s: round trip differs:\n%s", name, d)
		}
	}
}
