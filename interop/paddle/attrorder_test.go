package paddle

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/distpass/distpass/ir"
)

func intAttr(num, nameNum, typeNum, iNum int, name string, v uint64) fieldFn {
	return byts(num, msg(str(nameNum, name), vint(typeNum, atINT), vint(iNum, v)))
}

func opInt(name string, v uint64) fieldFn {
	return intAttr(opAttrs, attrName, attrType, attrI, name, v)
}

func varInt(name string, v uint64) fieldFn {
	return intAttr(varAttrs, varAttrName, varAttrType, varAttrI, name, v)
}

// reluWith is an OpDesc relu(X: x) with the given attrs, in that order.
func reluWith(attrs ...fieldFn) []byte {
	return msg(append([]fieldFn{byts(opInputs, msg(str(slotName, "X"), str(slotArgs, "x"))), str(opType, "relu")}, attrs...)...)
}

// The IR keeps attrs sorted; the order of a file's attrs, when it is not
// the one Export writes by default (sorted by name, op_role among an op's),
// is kept in paddle.attr_order, op_role's place or absence included. Each
// file exports to its own bytes, through the printed text too.
func TestAttrOrderImport(t *testing.T) {
	sortedVar := append(f32var("x", 2), msg(varInt("a", 1), varInt("b", 2))...)
	tests := []struct {
		name         string
		vars, op     []byte
		varOrder     []string // nil: none
		opOrder      []string
		role         ir.Role
		noneAnywhere bool
	}{
		{name: "sorted", vars: sortedVar, op: reluWith(opInt("axis", 1), opInt("op_role", 1), opInt("use_mkldnn", 0)),
			role: ir.RoleBackward, noneAnywhere: true},
		{name: "op_role out of place", vars: sortedVar, op: reluWith(opInt("op_role", 0), opInt("axis", 1)),
			opOrder: []string{"op_role", "axis"}},
		{name: "unsorted", vars: sortedVar, op: reluWith(opInt("use_mkldnn", 0), opInt("axis", 1), opInt("op_role", 2)),
			opOrder: []string{"use_mkldnn", "axis", "op_role"}, role: ir.RoleOptimize},
		{name: "no op_role", vars: sortedVar, op: reluWith(opInt("axis", 1), opInt("use_mkldnn", 0)),
			opOrder: []string{"axis", "use_mkldnn"}},
		{name: "no attrs at all", vars: f32var("x", 2), op: reluWith(), opOrder: []string{}},
		{name: "var attrs unsorted", vars: append(f32var("x", 2), msg(varInt("b", 2), varInt("a", 1))...),
			op: reluWith(opInt("op_role", 0)), varOrder: []string{"b", "a"}},
		{name: "a var attr named op_role is no role", vars: append(f32var("x", 2), msg(varInt("z", 2), varInt("op_role", 1))...),
			op: reluWith(opInt("op_role", 0)), varOrder: []string{"z", "op_role"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := tinyProgram(tt.vars, tt.op)
			m, err := Import("t.pdmodel", data)
			if err != nil {
				t.Fatal(err)
			}
			x, op := m.Main.Global().Var("x"), m.Main.Global().Ops[0]
			checkOrder(t, "var", x.Attrs, tt.varOrder)
			checkOrder(t, "op", op.Attrs, tt.opOrder)
			if op.Role != tt.role {
				t.Errorf("role = %v, want %v", op.Role, tt.role)
			}
			for _, as := range []ir.Attrs{x.Attrs, op.Attrs} {
				for i := 1; i < len(as); i++ {
					if as[i-1].Name >= as[i].Name {
						t.Errorf("attrs not sorted: %v", as)
					}
				}
			}
			if tt.noneAnywhere && bytes.Contains(ir.Print(m), []byte(resAttrOrder)) {
				t.Errorf("a sorted file gained %s:\n%s", resAttrOrder, ir.Print(m))
			}
			if err := ir.Verify(m); err != nil {
				t.Error(err)
			}
			out, err := Export(m)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(out, data) {
				t.Fatalf("export differs at byte %d", firstDiff(out, data))
			}
			m2, err := ir.Parse("t.dpir", ir.Print(m))
			if err != nil {
				t.Fatal(err)
			}
			if out2, err := Export(m2); err != nil || !bytes.Equal(out2, data) {
				t.Fatalf("export of the printed text differs (err %v)", err)
			}
		})
	}
}

func checkOrder(t *testing.T, what string, as ir.Attrs, want []string) {
	t.Helper()
	got, ok := as.Get(resAttrOrder).(ir.Strings)
	switch {
	case want == nil && as.Has(resAttrOrder):
		t.Errorf("%s: %s = %v, want none", what, resAttrOrder, as.Get(resAttrOrder))
	case want != nil && (!ok || strings.Join(got, " ") != strings.Join(want, " ") || got == nil):
		t.Errorf("%s: %s = %#v, want %q", what, resAttrOrder, as.Get(resAttrOrder), want)
	}
}

// Export writes attrs by name when there is no paddle.attr_order, op_role
// always among them; with one, in its order, then what it does not list by
// name (a pass may have set an attr since the import, or dropped one).
func TestAttrOrderExport(t *testing.T) {
	tests := []struct {
		name, attrs string
		role        string
		want        string // attr names as written
	}{
		{"sorted", `{b = 1, a = 2, z = 3}`, "forward", "a b op_role z"},
		{"in order", `{b = 1, a = 2, paddle.attr_order = ["b", "op_role", "a"]}`, "forward", "b op_role a"},
		{"no op_role listed, role 0", `{b = 1, a = 2, paddle.attr_order = ["b", "a"]}`, "forward", "b a"},
		{"no op_role listed, a role", `{b = 1, a = 2, z = 3, paddle.attr_order = ["b"]}`, "backward", "b a op_role z"},
		{"stale", `{b = 1, c = 2, paddle.attr_order = ["c", "gone", "op_role"]}`, "forward", "c op_role b"},
		{"empty list", `{b = 1, a = 2, paddle.attr_order = strings[]}`, "forward", "a b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := ir.Parse("t", []byte("program main { block 0 { var x : f32[2]\nop 1 relu(X: x) -> () "+tt.attrs+" role "+tt.role+" } }"))
			if err != nil {
				t.Fatal(err)
			}
			pb, err := Export(m)
			if err != nil {
				t.Fatal(err)
			}
			m2, err := Import("t", pb)
			if err != nil {
				t.Fatal(err)
			}
			// The names as the file has them: the imported order, or the
			// sorted names when Import kept none.
			op := m2.Main.Global().Ops[0]
			var got []string
			if o, ok := op.Attrs.Get(resAttrOrder).(ir.Strings); ok {
				got = o
			} else {
				got = []string{roleAttr}
				for _, a := range op.Attrs {
					got = append(got, a.Name)
				}
				slices.Sort(got)
			}
			if s := strings.Join(got, " "); s != tt.want {
				t.Errorf("written in order %q, want %q", s, tt.want)
			}
			if op.Role != m.Main.Global().Ops[0].Role {
				t.Errorf("role %v, want %v", op.Role, m.Main.Global().Ops[0].Role)
			}
		})
	}
}

func TestAttrOrderExportErrors(t *testing.T) {
	tests := []struct{ attrs, want string }{
		{`{a = 1, paddle.attr_order = "a"}`, "paddle: main block 0 op 1 relu: attr paddle.attr_order is a string, want strings"},
		{`{a = 1, paddle.attr_order = ["a", "a"]}`, "paddle: main block 0 op 1 relu: attr paddle.attr_order lists a twice"},
		{`{a = 1, paddle.attr_order = ["b", "a", "b"]}`, "paddle: main block 0 op 1 relu: attr paddle.attr_order lists b twice"},
		{`{a = 1, paddle.attr_order = ["op_role", "a", "op_role"]}`, "paddle: main block 0 op 1 relu: attr paddle.attr_order lists op_role twice"},
		{`{a = 1, paddle.is_target = true, paddle.attr_order = ["paddle.is_target", "a"]}`,
			"paddle: main block 0 op 1 relu: attr paddle.attr_order lists paddle.is_target, a reserved attr"},
	}
	for _, tt := range tests {
		m, err := ir.Parse("t", []byte("program main { block 0 { var x : f32[2]\nop 1 relu(X: x) -> () "+tt.attrs+" } }"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Export(m); err == nil || err.Error() != tt.want {
			t.Errorf("%s:\n got %v\nwant %s", tt.attrs, err, tt.want)
		}
	}
	m, err := ir.Parse("t", []byte(`program main { block 0 { var x : f32[2] {a = 1, paddle.attr_order = ["a", "a"]} } }`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Export(m); err == nil || err.Error() != `paddle: main block 0 var "x": attr paddle.attr_order lists a twice` {
		t.Errorf("var: %v", err)
	}
}

// A file in Paddle's newer, sorted order (the develop-branch fixture)
// imports with no recorded order at all; the older fixtures keep theirs,
// and whatever the order, the module's attrs are sorted, so its text is
// what distpass fmt prints.
func TestAttrOrderFixtures(t *testing.T) {
	for name, data := range fixtures(t) {
		m, err := Import(name, data)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, b := range m.Main.Blocks {
			for _, op := range b.Ops {
				if op.Attrs.Has(resAttrOrder) {
					n++
				}
			}
		}
		if name == "demo_custom_gap.pdmodel" && n != 0 {
			t.Errorf("%s: %d ops with %s, want none", name, n, resAttrOrder)
		}
		if name == "lite_resnet_cifar.pdmodel" && n != m.Main.NumOps() {
			t.Errorf("%s: %d ops with %s, want all %d (no op has op_role)", name, n, resAttrOrder, m.Main.NumOps())
		}
		text := ir.Print(m)
		m2, err := ir.Parse(name, text)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(ir.Print(m2), text) || ir.Hash(m2) != ir.Hash(m) {
			t.Errorf("%s: the text is not canonical", name)
		}
	}
}
