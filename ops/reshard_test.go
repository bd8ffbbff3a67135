package ops_test

import (
	"strings"
	"testing"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/ops"
)

const reshardMeshes = "mesh m shape [2, 2] dims [dp, mp] ranks [0, 1, 2, 3]\nmesh n shape [2] dims [pp] ranks [4, 5]\n"

// TestReshardVerify: a reshard is the identity on types, needs a dist on
// both ends, and an op dist that agrees with them.
func TestReshardVerify(t *testing.T) {
	runOpCases(t, reshardMeshes, []opCase{
		{"ok", "var x : f32[4, 6] @m[0, -1] partial [1]\nvar o : f32[4, 6] @m[-1, 1]\n" +
			"op 1 reshard(X: x) -> (Out: o) {origin = \"op 2 matmul_v2 Y\"}\n     dist @m impl reshard:0 [x: [0, -1] -> o: [-1, 1]]", nil},
		{"ok/cross_mesh", "var x : f32[4, 6] @m[0, 1]\nvar o : f32[4, 6] @n[0, -1]\nop 1 reshard(X: x) -> (Out: o)", nil},
		{"ok/no_op_dist", "var x : f32[4, 6] @m[0, -1]\nvar o : f32[4, 6] @m[-1, -1]\nop 1 reshard(X: x) -> (Out: o)", nil},
		{"shape", "var x : f32[4, 6] @m[0, -1]\nvar o : f32[6, 4] @m[-1, -1]\nop 1 reshard(X: x) -> (Out: o)",
			[]string{"op 1 reshard: output Out o: declared f32[6, 4], inferred [4, 6] from X f32[4, 6]"}},
		{"dtype", "var x : f32[4, 6] @m[0, -1]\nvar o : f16[4, 6] @m[-1, -1]\nop 1 reshard(X: x) -> (Out: o)",
			[]string{"op 1 reshard: output Out o: declared f16[4, 6], inferred dtype f32 from X f32[4, 6]"}},
		{"no_x_dist", "var x : f32[4, 6]\nvar o : f32[4, 6] @m[-1, -1]\nop 1 reshard(X: x) -> (Out: o)",
			[]string{"op 1 reshard: X x has no dist: a reshard converts X's dist into Out's"}},
		{"no_dists", "var x : f32[4, 6]\nvar o : f32[4, 6]\nop 1 reshard(X: x) -> (Out: o)",
			[]string{"op 1 reshard: X x has no dist: a reshard converts X's dist into Out's",
				"op 1 reshard: Out o has no dist: a reshard converts X's dist into Out's"}},
		{"op_mesh", "var x : f32[4, 6] @m[0, -1]\nvar o : f32[4, 6] @n[0, -1]\nop 1 reshard(X: x) -> (Out: o)\n     dist @m [x: [0, -1] -> o: [0, -1]]",
			[]string{"op 1 reshard: dist mesh m is not Out o's mesh n"}},
		{"op_mapping", "var x : f32[4, 6] @m[0, -1]\nvar o : f32[4, 6] @m[-1, 1]\nop 1 reshard(X: x) -> (Out: o)\n     dist @m [x: [-1, -1] -> o: [-1, 0]]",
			[]string{"op 1 reshard: dist input X x: dims_mapping [-1, -1] is not its var's [0, -1]",
				"op 1 reshard: dist output Out o: dims_mapping [-1, 0] is not its var's [-1, 1]"}},
		{"two_args", "var x : f32[4, 6] @m[0, -1]\nvar y : f32[4, 6] @m[0, -1]\nvar o : f32[4, 6] @m[-1, -1]\nop 1 reshard(X: [x, y]) -> (Out: o)",
			[]string{"op 1 reshard: input slot X has 2 args (x, y); it takes one"}},
		{"origin_kind", "var x : f32[4, 6] @m[0, -1]\nvar o : f32[4, 6] @m[-1, -1]\nop 1 reshard(X: x) -> (Out: o) {origin = 3}",
			[]string{"op 1 reshard: attr origin is int, want string"}},
	})
}

// TestReshardInvalidDist: a dist that does not fit its mesh is refused at
// the var by ir.Verify, which ops.Verify runs first.
func TestReshardInvalidDist(t *testing.T) {
	for _, c := range []struct{ name, vars, want string }{
		{"twice", "var x : f32[4, 6] @m[0, 0]\nvar o : f32[4, 6] @m[-1, -1]",
			"main block 0: var x: dims_mapping [0, 0] uses mesh dim 0 twice"},
		{"outside", "var x : f32[4, 6] @m[0, -1]\nvar o : f32[4, 6] @n[1, -1]",
			"main block 0: var o: dims_mapping [1, -1] has entry 1 outside [-1, 1) of mesh n"},
		{"partial_mapped", "var x : f32[4, 6] @m[0, -1] partial [0]\nvar o : f32[4, 6] @m[-1, -1]",
			"main block 0: var x: partial dim 0 is also in dims_mapping [0, -1]"},
		{"unknown_mesh", "var x : f32[4, 6] @m[0, -1]\nvar o : f32[4, 6] @q[-1, -1]",
			"main block 0: var o: dist on unknown mesh q"},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := parseBlock(t, reshardMeshes, c.vars+"\nop 1 reshard(X: x) -> (Out: o)")
			_, err := ops.Verify(m, ops.Options{Strict: true})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("verify: %v\nwant it to hold %q", err, c.want)
			}
		})
	}
}

// TestReshardDef: the def is what insert-reshards is written against.
func TestReshardDef(t *testing.T) {
	d := ops.Lookup("reshard")
	if d == nil {
		t.Fatal("reshard has no def")
	}
	if d.Family != "reshard" || d.Grad != nil || d.Traits != 0 || d.Sharding == nil || d.Check == nil {
		t.Errorf("reshard: family %q, grad %v, traits %v, sharding %v, check %v", d.Family, d.Grad != nil, d.Traits, d.Sharding != nil, d.Check != nil)
	}
	if ops.IsCollective("reshard") {
		t.Error("reshard is a collective for ir: it names no group until lowered")
	}
}

// TestReshardRoundTrip: a reshard prints and parses like any op, its
// origin and op dist included, in text and in JSON.
func TestReshardRoundTrip(t *testing.T) {
	m := parseBlock(t, reshardMeshes, "var x : f32[4, 6] @m[0, -1] partial [1:avg]\nvar o : f32[4, 6] @n[0, -1]\n"+
		"op 1 reshard(X: x) -> (Out: o) {origin = \"op 2 relu X\"}\n     dist @n impl reshard:0 [x: [0, -1] -> o: [0, -1]]")
	if _, err := ops.Verify(m, ops.Options{Strict: true}); err != nil {
		t.Fatal(err)
	}
	text := ir.Print(m)
	back, err := ir.Parse("back", text)
	if err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	if !ir.Equal(m, back) {
		t.Errorf("text round trip changed the module:\n%s\n%s", text, ir.Print(back))
	}
	js, err := ir.EncodeJSON(m)
	if err != nil {
		t.Fatal(err)
	}
	back, err = ir.ParseJSON("back", js)
	if err != nil || !ir.Equal(m, back) {
		t.Errorf("JSON round trip: %v", err)
	}
	if got := ir.PrintOp(m.Main.Global().Ops[0]); !strings.Contains(got, `reshard(X: x) -> (Out: o) {origin = "op 2 relu X"}`) {
		t.Errorf("PrintOp = %s", got)
	}
}
