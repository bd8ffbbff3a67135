package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/distpass/distpass/interop/paddle"
	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/passes"
)

// partition -all -format pdmodel of a 2x2 dp×mp module: each rank's
// startup ProgramDesc begins by creating exactly the communicators of
// the rings its main program uses, in ascending ring id order (one order
// on every rank, so that no two ranks wait on each other), each with the
// rank's index in the group and the group's size, the endpoints those of
// -endpoints; the files import back and verify (issue 37, finding 14).
func TestPartitionPdmodelSetsUpCommunicators(t *testing.T) {
	src, err := os.ReadFile("../../examples/mlp_dp_mp.dpir")
	if err != nil {
		t.Fatal(err)
	}
	m, err := ir.Parse("mlp_dp_mp.dpir", src)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	eps := []string{"10.0.0.1:7000", "10.0.0.1:7001", "10.0.0.2:7000", "10.0.0.2:7001"}
	var stderr bytes.Buffer
	env := &Env{Stdout: &stderr, Stderr: &stderr}
	if code := Main([]string{"partition", "-all", "-format", "pdmodel", "-endpoints", strings.Join(eps, ","), "-o", dir, "../../examples/mlp_dp_mp.dpir"}, env); code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	ranks := passes.Ranks(m)
	if len(ranks) != 4 {
		t.Fatalf("ranks %v", ranks)
	}
	for _, r := range ranks {
		base := filepath.Join(dir, "rank"+strconv.Itoa(r))
		read := func(ext string) []byte {
			data, err := os.ReadFile(base + ext)
			if err != nil {
				t.Fatal(err)
			}
			return data
		}
		f := &paddle.Files{Main: read(".pdmodel"), Startup: read(".startup.pdmodel"), Sidecar: read(".json")}
		pm, err := paddle.ImportFiles(base+".pdmodel", base+".startup.pdmodel", f)
		if err != nil {
			t.Fatalf("rank %d: import: %v", r, err)
		}
		if err := passes.Verify(pm); err != nil {
			t.Fatalf("rank %d: verify: %v", r, err)
		}
		// The rings of main, as partition -rank writes it.
		want := m.Clone()
		if err := passes.Partition(want, nil, r); err != nil {
			t.Fatal(err)
		}
		var mainRings []int
		for _, b := range want.Main.Blocks {
			for _, op := range b.Ops {
				if id, ok := op.Attrs.Int("ring_id"); ok && !slices.Contains(mainRings, int(id)) {
					mainRings = append(mainRings, int(id))
				}
			}
		}
		slices.Sort(mainRings)
		if len(mainRings) != 2 {
			t.Fatalf("rank %d: main uses rings %v; a dp and an mp ring expected", r, mainRings)
		}
		ops := pm.Startup.Global().Ops
		var got []int
		for i := 0; i+1 < len(ops) && ops[i].Type == "c_gen_nccl_id"; i += 2 {
			gen, ini := ops[i], ops[i+1]
			ring, _ := gen.Attrs.Int("ring_id")
			g := pm.Group(int(ring))
			if g == nil {
				t.Fatalf("rank %d: ring %d names no group", r, ring)
			}
			me := slices.Index(g.Ranks, r)
			others := []string{}
			for _, x := range g.Ranks {
				if x != r {
					others = append(others, eps[x])
				}
			}
			all := []string{}
			for _, x := range g.Ranks {
				all = append(all, eps[x])
			}
			id := paddle.CommIDVar(int(ring))
			wantGen := fmt.Sprintf(`c_gen_nccl_id() -> (Out: %s) {endpoint = %q, other_endpoints = ["%s"], rank = %d, ring_id = %d}`, id, eps[r], strings.Join(others, `", "`), me, ring)
			wantInit := fmt.Sprintf(`c_comm_init(X: %s) -> () {device_id = -1, endpoints = %q, nranks = %d, rank = %d, ring_id = %d}`, id, strings.Join(all, ","), len(g.Ranks), me, ring)
			if s := opText(pm, gen); !strings.Contains(s, wantGen) {
				t.Errorf("rank %d: %s\nwant %s", r, s, wantGen)
			}
			if s := opText(pm, ini); !strings.Contains(s, wantInit) {
				t.Errorf("rank %d: %s\nwant %s", r, s, wantInit)
			}
			if v := pm.Startup.Global().Var(id); v == nil || v.Type.Kind != ir.Raw || !v.Persistable() {
				t.Errorf("rank %d: the id var %s is not a persistable raw var", r, id)
			}
			got = append(got, int(ring))
		}
		if !slices.Equal(got, mainRings) {
			t.Errorf("rank %d: the startup sets up rings %v, its main uses %v (ascending)", r, got, mainRings)
		}
		for _, op := range ops[2*len(got):] {
			if op.Type == "c_gen_nccl_id" || op.Type == "c_comm_init" {
				t.Errorf("rank %d: %s after the set-up", r, op.Type)
			}
		}
	}
}

// opText is the line of the startup op as the text format prints m.
func opText(m *ir.Module, op *ir.Op) string {
	text := string(ir.Print(m))
	text = text[strings.Index(text, "program startup"):]
	for _, line := range strings.Split(text, "\n") {
		if strings.Contains(line, fmt.Sprintf("op %d %s(", op.ID, op.Type)) {
			return strings.TrimSpace(line)
		}
	}
	return ""
}
