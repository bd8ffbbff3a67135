package ir_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/distpass/distpass/ir"
)

// localSrc declares rank-local positions: pos alone, and tok partial
// too, so that local follows partial.
const localSrc = `mesh world shape [2, 2] dims [dp, ep] ranks [0, 1, 2, 3]

program main {
  block 0 {
    var pos : i64[16] @world[-1] local [0]
    var tok : i32[16] @world[-1] partial [1] local [0, 1]
    var top : i64[8, 2] @world[0, -1]
  }
}
`

// TestLocalRoundTrip: a dist's local mesh dims survive text and JSON,
// are printed only when there are some, and count in Equal, Hash and
// Clone.
func TestLocalRoundTrip(t *testing.T) {
	m, err := ir.Parse("local.dpir", []byte(localSrc))
	if err != nil {
		t.Fatal(err)
	}
	if err := ir.Verify(m); err != nil {
		t.Fatalf("verify: %v", err)
	}
	g := m.Main.Global()
	if got := g.Var("pos").Dist.Local; len(got) != 1 || got[0] != 0 {
		t.Fatalf("pos: Local = %v, want [0]", got)
	}
	if got := g.Var("top").Dist; got.IsLocal() {
		t.Fatalf("top: Local = %v, want none", got.Local)
	}
	if got := string(ir.Print(m)); got != localSrc {
		t.Fatalf("printed:\n%s\nwant:\n%s", got, localSrc)
	}
	if got := g.Var("tok").Dist.String(); got != "@world[-1] partial [1] local [0, 1]" {
		t.Errorf("tok's dist spells %q", got)
	}

	data, err := ir.EncodeJSON(m)
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(data, []byte(`"local"`)); n != 2 {
		t.Errorf("JSON has %d local members, want 2 (none for top):\n%s", n, data)
	}
	m2, err := ir.DecodeJSON(data)
	if err != nil {
		t.Fatal(err)
	}
	if d := ir.Diff(m, m2); d != "" {
		t.Fatalf("JSON round trip differs:\n%s", d)
	}
	if !bytes.Equal(ir.Print(m2), []byte(localSrc)) {
		t.Fatalf("JSON round trip prints otherwise:\n%s", ir.Print(m2))
	}

	c := m.Clone()
	if !ir.Equal(m, c) || ir.Hash(m) != ir.Hash(c) {
		t.Fatal("a clone differs")
	}
	c.Main.Global().Var("pos").Dist.Local[0] = 1
	if got := g.Var("pos").Dist.Local[0]; got != 0 {
		t.Fatal("the clone shares pos's Local")
	}
	if ir.Equal(m, c) || ir.Hash(m) == ir.Hash(c) {
		t.Error("Equal or Hash ignores a changed local dim")
	}
	c.Main.Global().Var("pos").Dist.Local = nil
	if ir.Equal(m, c) || ir.Hash(m) == ir.Hash(c) {
		t.Error("Equal or Hash ignores a dropped local")
	}
	if d := g.Var("pos").Dist.Clone(); &d.Local[0] == &g.Var("pos").Dist.Local[0] {
		t.Error("TensorDist.Clone shares Local")
	}
}

// TestLocalJSONErrors: JSON that the text format could not say is
// refused as for partial dims.
func TestLocalJSONErrors(t *testing.T) {
	for _, tc := range []struct{ local, want string }{
		{"[1, 0]", `main block 0 var "x": local dims must be ascending and unique`},
		{"[0, 0]", `main block 0 var "x": local dims must be ascending and unique`},
		{"[4294967296]", `main block 0 var "x": local dim 4294967296 out of range (the text format's integers here are 32-bit)`},
		{"[null]", "null"},
	} {
		src := `{"version": 1, "main": {"blocks": [{"vars": [{"name": "x", "type": {"dtype": "i64", "shape": [2]}, ` +
			`"dist": {"mesh": "m", "dims_mapping": [-1], "local": ` + tc.local + `}}]}]}}`
		_, err := ir.DecodeJSON([]byte(src))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("local %s: got %v, want %q", tc.local, err, tc.want)
		}
	}
}
