package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/distpass/distpass/ir"
)

// The shared form holds everything: each rank rebuilt from its class's
// program and its values in ranks.json is byte-identical to the rank's
// own file from partition -all.
func TestPartitionAllSharedRebuildsEveryRank(t *testing.T) {
	var gpt bytes.Buffer
	if code := Main([]string{"example", "gpt", "-strategy", "dp,mp", "-mesh", "2x4", "-layers", "2"}, &Env{Stdout: &gpt, Stderr: os.Stderr}); code != ExitOK {
		t.Fatal("example gpt failed")
	}
	mlp, err := os.ReadFile(filepath.Join("..", "..", "examples", "mlp_dp_mp.dpir"))
	if err != nil {
		t.Fatal(err)
	}
	for name, src := range map[string][]byte{"gpt": gpt.Bytes(), "mlp": mlp} {
		dir := t.TempDir()
		plain, shared := filepath.Join(dir, "plain"), filepath.Join(dir, "shared")
		for _, args := range [][]string{{"partition", "-all", "-o", plain, "-"}, {"partition", "-all", "-shared", "-o", shared, "-"}} {
			var stderr bytes.Buffer
			if code := Main(args, &Env{Stdin: bytes.NewReader(src), Stdout: &stderr, Stderr: &stderr}); code != ExitOK {
				t.Fatalf("%s %v: %s", name, args, stderr.String())
			}
		}
		data, err := os.ReadFile(filepath.Join(shared, "ranks.json"))
		if err != nil {
			t.Fatal(err)
		}
		var table sharedTable
		if err := json.Unmarshal(data, &table); err != nil {
			t.Fatal(err)
		}
		if table.Version != 1 || len(table.Classes) != 1 || len(table.Plain) != 0 {
			t.Fatalf("%s: ranks.json %s", name, data)
		}
		rebuilt := 0
		for _, c := range table.Classes {
			src, err := os.ReadFile(filepath.Join(shared, c.File))
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range c.Ranks {
				m, err := ir.Parse(c.File, src)
				if err != nil {
					t.Fatal(err)
				}
				for _, p := range m.Programs() {
					p.Rank = r
				}
				ops := map[string]map[int64]*ir.Op{}
				for _, p := range m.Programs() {
					ops[p.Name] = map[int64]*ir.Op{}
					for _, b := range p.Blocks {
						for _, op := range b.Ops {
							ops[p.Name][op.ID] = op
						}
					}
				}
				vals := c.Values[strconv.Itoa(r)]
				for _, s := range c.Sites {
					if s.Value < 0 || s.Value >= len(vals) {
						t.Fatalf("%s rank %d: site value %d of %d values", name, r, s.Value, len(vals))
					}
					var v ir.Value
					switch x := vals[s.Value].(type) {
					case float64:
						v = ir.Int(int64(x))
					case []any:
						var xs ir.Ints
						for _, e := range x {
							xs = append(xs, int64(e.(float64)))
						}
						v = xs
					default:
						t.Fatalf("%s rank %d: value %v is neither an int nor a list", name, r, x)
					}
					ops[s.Program][s.Op].Attrs.Set(s.Attr, v)
				}
				// One ring id per mesh dim, the embedding's start, and one
				// shard_offset per split of a random op's var (its mapping
				// and local shape).
				draws := map[int]bool{}
				for _, s := range c.Sites {
					if s.Attr == "shard_offset" {
						draws[s.Value] = true
					}
				}
				if name == "gpt" && len(draws) == 0 {
					t.Errorf("gpt rank %d: no random op's shard_offset among the sites", r)
				}
				if len(vals) > 4+len(draws) {
					t.Errorf("%s rank %d: %d distinct values; a 2-D mesh needs at most one per dim, the embedding and %d random draws' offsets", name, r, len(vals), len(draws))
				}
				want, err := os.ReadFile(filepath.Join(plain, "rank"+strconv.Itoa(r)+".dpir"))
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(ir.Print(m), want) {
					t.Errorf("%s rank %d: rebuilt from the shared form differs from its file", name, r)
				}
				rebuilt++
			}
		}
		if want := map[string]int{"gpt": 8, "mlp": 4}[name]; rebuilt != want {
			t.Errorf("%s: rebuilt %d ranks, want %d", name, rebuilt, want)
		}
	}
}
