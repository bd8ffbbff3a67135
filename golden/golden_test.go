package golden_test

import (
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/distpass/distpass/golden"
	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/passes"
	"github.com/distpass/distpass/proof"
)

func TestGolden(t *testing.T) { golden.RunDir(t, "testdata") }

// TestCollectiveCounts holds the counts the gpt1_* and moe_ep2 cases
// derive by hand in their comments against every rank's expected
// program: per collective type and mesh axis of its group, and the
// gradient scales by the axis they average over ("experts" for the
// expert-parallel average, which has no collective).
func TestCollectiveCounts(t *testing.T) {
	want := map[string]map[string]int{
		"gpt1_dp":   {"c_broadcast/dp": 21, "c_allreduce_sum/dp": 21, "scale/dp": 21},
		"gpt1_mp":   {"c_broadcast/mp": 10, "c_identity/mp": 4, "c_allreduce_sum/mp": 7},
		"gpt1_dpmp": {"c_broadcast/dp": 21, "c_broadcast/mp": 10, "c_identity/mp": 4, "c_allreduce_sum/mp": 7, "c_allreduce_sum/dp": 21, "scale/dp": 21},
		"moe_ep2": {"c_broadcast/ep": 2, "c_allreduce_sum/ep": 2, "scale/ep": 2, "scale/experts": 2,
			"alltoall/ep": 1, "global_scatter/ep": 2, "global_gather/ep": 2},
		// The rule-based impl emits nothing but startup broadcasts; the
		// partial Out of a row-parallel matmul is not summed.
		"spmd_matmul_2d":          {},
		"spmd_row_partial":        {},
		"spmd_train_dpmp":         {"c_broadcast/dp": 2, "c_allreduce_sum/mp": 1, "c_allreduce_sum/dp": 1, "scale/dp": 1},
		"spmd_train_dpsp":         {"c_broadcast/dp": 1, "c_broadcast/sp": 1},
		"spmd_train_ln":           {"c_broadcast/dp": 3},
		"spmd_square_2d":          {},
		"spmd_train_seq":          {"c_broadcast/dp": 1},
		"spmd_row_partial_square": {},
		"spmd_fill":               {},
	}
	ranks := map[string]int{"gpt1_dp": 4, "gpt1_mp": 4, "gpt1_dpmp": 4, "moe_ep2": 2,
		"spmd_matmul_2d": 4, "spmd_row_partial": 2, "spmd_train_dpmp": 4, "spmd_train_dpsp": 4, "spmd_train_ln": 2,
		"spmd_square_2d": 4, "spmd_train_seq": 2, "spmd_row_partial_square": 2, "spmd_fill": 4}
	for name, counts := range want {
		ar, err := txtar.ParseFile(filepath.Join("testdata", name+".txtar"))
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, f := range ar.Files {
			if !strings.HasPrefix(f.Name, "want/rank") {
				continue
			}
			n++
			m, err := ir.Parse(f.Name, f.Data)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]int{}
			mesh := m.Meshes[0]
			for _, p := range m.Programs() {
				for _, op := range p.Global().Ops {
					axis := ""
					if id, ok := op.Attrs.Int("ring_id"); ok {
						axis = axisOf(mesh, m.Group(int(id)).Ranks, p.Rank)
					} else if o, _ := op.Attrs.String("origin"); op.Type == "scale" && strings.Contains(o, "data-parallel") {
						_, axis, _ = strings.Cut(o, "averaged over ")
					} else if op.Type == "scale" && strings.Contains(o, "expert-parallel") {
						axis = "experts"
					} else {
						continue
					}
					got[op.Type+"/"+axis]++
				}
			}
			if !maps.Equal(got, counts) {
				t.Errorf("%s %s: collectives %v, want %v", name, f.Name, got, counts)
			}
		}
		if n != ranks[name] {
			t.Errorf("%s: %d ranks, want %d", name, n, ranks[name])
		}
	}
}

// axisOf names the mesh axis whose group of rank is ranks.
func axisOf(mesh *ir.ProcessMesh, ranks []int, rank int) string {
	for axis, name := range mesh.DimNames {
		if g, err := mesh.Group(axis, rank); err == nil && slices.Equal(g, ranks) {
			return name
		}
	}
	return "?"
}

// TestGoldensProven: the static proof (package proof) of every case's
// expected per-rank programs, the very bytes the goldens pin, against
// the case's input: proven, never refuted (no false alarm). A case that
// does not pin every rank's program, or partitions nothing, is skipped.
func TestGoldensProven(t *testing.T) {
	files, err := filepath.Glob("testdata/*.txtar")
	if err != nil {
		t.Fatal(err)
	}
	// unproven names the cases the proof cannot follow to the end, and why.
	unproven := map[string]string{}
	proven := 0
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".txtar")
		ar, err := txtar.ParseFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sections := map[string][]byte{}
		for _, s := range ar.Files {
			sections[s.Name] = s.Data
		}
		if !strings.HasPrefix(strings.TrimSpace(string(sections["pipeline"])), "partition{rank=$RANK}") {
			continue
		}
		serial, err := ir.Parse(name+":input.dpir", sections["input.dpir"])
		if err != nil {
			t.Fatal(err)
		}
		ranks := passes.Ranks(serial)
		parts := make([]*ir.Module, len(ranks))
		for i, r := range ranks {
			text, ok := sections["want/rank"+strconv.Itoa(r)+".dpir"]
			if !ok {
				parts = nil
				break
			}
			if parts[i], err = ir.Parse(name, text); err != nil {
				t.Fatal(err)
			}
		}
		if parts == nil {
			continue
		}
		t.Run(name, func(t *testing.T) {
			res, err := proof.Check(serial, ranks, parts)
			if err != nil {
				t.Fatal(err)
			}
			if f := res.Refuted(); f != nil {
				t.Fatalf("a false alarm: %s", f)
			}
			if why, ok := unproven[name]; ok {
				if res.Proven() {
					t.Errorf("proven, though listed unproven (%s)", why)
				}
				return
			}
			if !res.Proven() {
				t.Fatalf("unproven: %s", res.Findings[0])
			}
			proven++
		})
	}
	if proven < 20 {
		t.Errorf("%d cases proven, want every partitioned case's", proven)
	}
}
