package check_test

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

// adamMLP is a 2-layer MLP on a 2×2 dp×mp mesh with adam, and its
// partition.
func adamMLP(t *testing.T) (*ir.Module, []int, []*ir.Module) {
	t.Helper()
	m, err := models.MLPTraining(models.MLPConfig{Layers: 2, Hidden: 8, Batch: 4}, "dp,mp",
		models.Mesh([]int{2, 2}, []string{"dp", "mp"}), "adam")
	if err != nil {
		t.Fatal(err)
	}
	ranks, mods := partsOf(t, m)
	return m, ranks, mods
}

// opOf returns the first op of p's global block of type typ whose
// outputs name out ("" for any).
func opOf(t *testing.T, p *ir.Program, typ, out string) *ir.Op {
	t.Helper()
	for _, op := range p.Global().Ops {
		if op.Type == typ && (out == "" || slices.Contains(slices.Collect(op.OutputNames), out)) {
			return op
		}
	}
	t.Fatalf("no %s op writing %q", typ, out)
	return nil
}

// TestRunPartsRefusesWrongSets: each kind of per-rank program set that is
// not the serial program is refused, by an error naming what and where,
// or by a diverged row; the partitioner's own set passes.
func TestRunPartsRefusesWrongSets(t *testing.T) {
	ctx := context.Background()
	m, ranks, mods := adamMLP(t)
	rep, err := check.RunParts(ctx, m, ranks, mods, check.Options{Steps: 2})
	if err != nil || rep.Err() != nil {
		t.Fatalf("as partitioned: %v %v", err, rep.Err())
	}
	fresh := func() []*ir.Module {
		out := make([]*ir.Module, len(mods))
		for i, pm := range mods {
			out[i] = pm.Clone()
		}
		return out
	}
	for _, tc := range []struct {
		name  string
		edit  func(parts []*ir.Module)
		want  string // in the error, or in rep.Err()
		isRow bool   // a diverged row rather than an error
	}{
		{
			name: "empty programs",
			edit: func(parts []*ir.Module) {
				for i, pm := range parts {
					pm.Main = ir.NewProgram("main")
					pm.Main.Rank = ranks[i]
					pm.Startup, pm.ParamGrads = nil, nil
				}
			},
			want: "rank 0 holds no startup ",
		},
		{
			name: "a part's mesh in another rank order",
			edit: func(parts []*ir.Module) {
				parts[1].Meshes[0].ProcessIDs = []int{1, 0, 2, 3}
			},
			want: "rank 1: mesh world is shape [2 2] dims [dp mp] ranks [1 0 2 3], the serial module's is shape [2 2] dims [dp mp] ranks [0 1 2 3]",
		},
		{
			name: "a grad declared partial to hide a dropped all-reduce",
			edit: func(parts []*ir.Module) {
				for _, pm := range parts {
					g := pm.Main.Global()
					g.Var("w_1@GRAD").Dist.Partial = []ir.Partial{{Dim: 0, Reduce: ir.ReduceSum}}
					g.Ops = slices.DeleteFunc(g.Ops, func(op *ir.Op) bool {
						return op.Type == "c_allreduce_sum" && slices.Contains(op.Input("X"), "w_1@GRAD")
					})
				}
			},
			want: "rank 0: main var w_1@GRAD is @world[1, -1] partial [0], the serial module has it @world[1, -1]",
		},
		{
			name: "replicas that drift apart within the tolerance",
			edit: func(parts []*ir.Module) {
				g := parts[2].Main.Global()
				g.Ops = append(g.Ops, &ir.Op{ID: 9999, Type: "scale", Role: ir.RoleOptimize,
					Inputs: []ir.Slot{{Name: "X", Args: []string{"w_1"}}}, Outputs: []ir.Slot{{Name: "Out", Args: []string{"w_1"}}},
					Attrs: ir.Attrs{ir.A("scale", ir.Float(1+1e-7))}})
			},
			want:  "param w_1 diverged on rank 2 after step 1: max abs error",
			isRow: true,
		},
		{
			// Rank 1 is the root of w_0's broadcast over dp to rank 3.
			name: "a rank's startup with its own seed",
			edit: func(parts []*ir.Module) {
				opOf(t, parts[1].Startup, "uniform_random", "w_0").Attrs.Set("seed", ir.Int(99))
			},
			want:  "startup w_0 diverged on rank 1 after the startup",
			isRow: true,
		},
		{
			name: "a rank's startup without its broadcasts and with its own seed",
			edit: func(parts []*ir.Module) {
				for _, pm := range parts {
					g := pm.Startup.Global()
					g.Ops = slices.DeleteFunc(g.Ops, func(op *ir.Op) bool { return op.Type == "c_broadcast" })
				}
				opOf(t, parts[2].Startup, "uniform_random", "w_1").Attrs.Set("seed", ir.Int(99))
			},
			want:  "startup w_1 diverged on rank 2 after the startup",
			isRow: true,
		},
		{
			name: "optimizer state updated wrongly",
			edit: func(parts []*ir.Module) {
				for _, pm := range parts {
					for _, op := range pm.Main.Global().Ops {
						if op.Type == "adam" {
							op.Attrs.Set("beta2", ir.Float(0.5))
						}
					}
				}
			},
			want:  "state ",
			isRow: true,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			parts := fresh()
			tc.edit(parts)
			rep, err := check.RunParts(ctx, m, ranks, parts, check.Options{Steps: 2})
			if !tc.isRow {
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("err = %v, want it to contain %q", err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var failed []string
			for _, row := range rep.Rows {
				if !row.OK() {
					failed = append(failed, row.Kind+" "+row.Var)
				}
			}
			got := ""
			if e := rep.Err(); e != nil {
				got = e.Error()
			}
			if !strings.Contains(got, tc.want) && !slices.ContainsFunc(failed, func(s string) bool { return strings.HasPrefix(s, tc.want) }) {
				t.Fatalf("rep.Err() = %q, diverged rows %v; want %q", got, failed, tc.want)
			}
		})
	}
}

// TestRunComparesRunningStatistics: batch norm's running mean and
// variance are compared after every step, like any persistable: the same
// per-rank programs with another momentum fail on them alone.
func TestRunComparesRunningStatistics(t *testing.T) {
	m := check.ConvBNReluDP(t)
	ranks, mods := partsOf(t, m)
	ctx := context.Background()
	rep, err := check.RunParts(ctx, m, ranks, mods, check.Options{Steps: 2})
	if err != nil || rep.Err() != nil {
		t.Fatalf("as partitioned: %v %v", err, rep.Err())
	}
	stats := 0
	for _, row := range rep.Rows {
		if row.Kind == "state" && strings.Contains(row.Var, "_bn_") {
			stats++
		}
	}
	if stats < 2 {
		t.Fatalf("%d running statistics compared, want mean and variance", stats)
	}
	for _, pm := range mods {
		for _, b := range pm.Main.Blocks {
			for _, op := range b.Ops {
				if strings.HasSuffix(op.Type, "batch_norm") {
					op.Attrs.Set("momentum", ir.Float(0.5))
				}
			}
		}
	}
	rep, err = check.RunParts(ctx, m, ranks, mods, check.Options{Steps: 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range rep.Rows {
		if row.OK() != (row.Kind != "state" || !strings.Contains(row.Var, "_bn_")) {
			t.Errorf("momentum changed: %s %s ok = %v", row.Kind, row.Var, row.OK())
		}
	}
}

// TestToleranceCatchesSmallErrors: the loss off by three times the
// tolerance, in f32 and in f64, fails the check; a default tolerance ten
// times looser fails this test.
func TestToleranceCatchesSmallErrors(t *testing.T) {
	for _, tc := range []struct {
		f64   bool
		scale float64
	}{{false, 1 + 3e-4}, {true, 1 + 3e-6}} {
		m, ranks, mods := adamMLP(t)
		if tc.f64 {
			if _, err := passes.ToF64(m); err != nil {
				t.Fatal(err)
			}
			for _, pm := range mods {
				if _, err := passes.ToF64(pm); err != nil {
					t.Fatal(err)
				}
			}
		}
		// Every rank's loss off alike: replicas stay equal, and only the
		// tolerance can see it.
		for _, pm := range mods {
			g := pm.Main.Global()
			at := slices.IndexFunc(g.Ops, func(op *ir.Op) bool { return slices.Contains(op.Output("Out"), "loss") })
			if at < 0 {
				t.Fatal("no op writes loss")
			}
			g.Ops = slices.Insert(g.Ops, at+1, &ir.Op{ID: 9999, Type: "scale", Role: ir.RoleForward,
				Inputs: []ir.Slot{{Name: "X", Args: []string{"loss"}}}, Outputs: []ir.Slot{{Name: "Out", Args: []string{"loss"}}},
				Attrs: ir.Attrs{ir.A("scale", ir.Float(tc.scale))},
				Dist: &ir.OpDist{Mesh: "world", ImplType: "default", Inputs: []ir.ArgDist{{Name: "loss", DimsMapping: []int{}}},
					Outputs: []ir.ArgDist{{Name: "loss", DimsMapping: []int{}}}}})
		}
		rep, err := check.RunParts(context.Background(), m, ranks, mods, check.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := rep.Err(); err == nil || !strings.HasPrefix(err.Error(), "loss loss diverged") {
			t.Errorf("f64 %v: the loss off by %.1g: %v", tc.f64, tc.scale-1, err)
		}
	}
}
