package paddle

import (
	"os"
	"strings"
	"testing"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/lower"
	"github.com/distpass/distpass/passes"
)

// rankPair exports rank 3 of the partitioned examples/mlp_dp_mp.dpir as
// Paddle saves it: main and startup ProgramDescs and a sidecar. Its
// initialisers' ranges (0.1) and learning rate (0.01) are no float32, so
// the sidecar holds their exact attrs.
func rankPair(t *testing.T) *Files {
	t.Helper()
	src, err := os.ReadFile("../../examples/mlp_dp_mp.dpir")
	if err != nil {
		t.Fatal(err)
	}
	m, err := ir.Parse("mlp_dp_mp.dpir", src)
	if err != nil {
		t.Fatal(err)
	}
	if err := passes.Partition(m, lower.DefaultRegistry(), 3); err != nil {
		t.Fatal(err)
	}
	f, err := ExportFiles(m, ExportOptions{Sidecar: true, Startup: true})
	if err != nil {
		t.Fatal(err)
	}
	back, err := ImportFiles("r3.pdmodel", "r3.startup.pdmodel", &Files{Main: f.Main, Startup: f.Startup, Sidecar: f.Sidecar, SidecarName: "r3.json"})
	if err != nil {
		t.Fatalf("the pair as written: %v", err)
	}
	if d := ir.Diff(m, back); d != "" {
		t.Fatalf("the pair as written imports otherwise:\n%s", d)
	}
	return f
}

// A sidecar that says otherwise than its ProgramDescs is refused, naming
// the op or var, both values and both files; so are a main program given
// as the startup file, two entries for one var, and a rank the text format
// cannot hold (issue 37, finding 7). Before, the sidecar's values won
// silently.
func TestSidecarDisagreeing(t *testing.T) {
	f := rankPair(t)
	side := string(f.Sidecar)
	edit := func(old, new string, n int) []byte {
		t.Helper()
		if strings.Count(side, old) < n {
			t.Fatalf("%q is not %d times in the sidecar", old, n)
		}
		return []byte(strings.Replace(side, old, new, n))
	}
	dupVar := strings.Replace(side, `"vars": [`, `"vars": [
      {"block": 0, "name": "w1", "flags": ["trainable"]},
      {"block": 0, "name": "w1"},`, 1)
	tests := []struct {
		name    string
		startup []byte
		side    []byte
		want    string
	}{
		{"learning rate", f.Startup, edit(`"value": 0.01`, `"value": 0.5`, 1),
			`r3.json: startup block 0 op fill_constant at position 2: attr value: the sidecar has 0.5, r3.startup.pdmodel has 0.009999999776482582`},
		{"initialiser range", f.Startup, edit(`"value": 0.1`, `"value": 0.3`, 1),
			`r3.json: startup block 0 op uniform_random at position 0: attr max: the sidecar has 0.3, r3.startup.pdmodel has 0.10000000149011612`},
		{"an attr the file has not", f.Startup, edit(`"name": "max"`, `"name": "maxx"`, 1),
			`r3.json: startup block 0 op uniform_random at position 0: attr max: the sidecar has none, r3.startup.pdmodel has 0.10000000149011612`},
		{"the main program as the startup file", f.Main, f.Sidecar,
			`r3.startup.pdmodel: not a startup program: block 0 op 1 c_identity (position 0): reads x, which no earlier op of it writes and which is no persistable: a startup program initialises from nothing`},
		{"two entries for a var", f.Startup, []byte(dupVar),
			`r3.json: main: block 0: var "w1" has two entries`},
		{"a rank beyond 32 bits", f.Startup, edit(`"rank": 3`, `"rank": 99999999999`, 1),
			`r3.json: main: rank 99999999999 is not a rank (0 to 2147483647)`},
		{"a negative rank", f.Startup, edit(`"rank": 3`, `"rank": -4`, 1),
			`r3.json: main: rank -4 is not a rank (0 to 2147483647)`},
		{"a group rank beyond 32 bits", f.Startup, edit(`"ranks": [
        0,
        2
      ]`, `"ranks": [0, 4294967298]`, 1),
			`r3.json: group 1: ranks entry 4294967298 is out of range (0 to 2147483647)`},
	}
	if dupVar == side {
		t.Fatal("no vars in the sidecar")
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ImportFiles("r3.pdmodel", "r3.startup.pdmodel", &Files{Main: f.Main, Startup: tt.startup, Sidecar: tt.side, SidecarName: "r3.json"})
			if err == nil || err.Error() != tt.want {
				t.Errorf("got  %v\nwant %s", err, tt.want)
			}
		})
	}
}
