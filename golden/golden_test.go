package golden_test

import (
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"

	"github.com/distpass/distpass/golden"
	"github.com/distpass/distpass/ir"
)

func TestGolden(t *testing.T) { golden.RunDir(t, "testdata") }

// TestGPTCollectiveCounts holds the counts the gpt1_* cases derive by
// hand in their comments against every rank's expected program: per
// collective type and mesh axis of its group.
func TestGPTCollectiveCounts(t *testing.T) {
	want := map[string]map[string]int{
		"gpt1_dp":   {"c_broadcast/dp": 21, "c_allreduce_sum/dp": 21, "scale/dp": 21},
		"gpt1_mp":   {"c_broadcast/mp": 10, "c_identity/mp": 4, "c_allreduce_sum/mp": 7},
		"gpt1_dpmp": {"c_broadcast/dp": 21, "c_broadcast/mp": 10, "c_identity/mp": 4, "c_allreduce_sum/mp": 7, "c_allreduce_sum/dp": 21, "scale/dp": 21},
	}
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
						axis = "dp"
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
		if n != 4 {
			t.Errorf("%s: %d ranks, want 4", name, n)
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
