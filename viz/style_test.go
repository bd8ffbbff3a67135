package viz

import (
	"testing"

	"github.com/distpass/distpass/ir"
)

func TestRoleClass(t *testing.T) {
	for _, c := range []struct {
		role ir.Role
		want roleClass
	}{
		{ir.RoleForward, classForward},
		{ir.RoleLoss, classLoss},
		{ir.RoleBackward, classBackward},
		{ir.RoleBackward | ir.RoleLoss, classLossGrad},
		{ir.RoleOptimize, classOptimize},
		{ir.RoleOptimize | ir.RoleLRSched, classOptimize},
		{ir.RoleBackward | ir.RoleOptimize, classOptimize},
		{ir.RoleLRSched, classOther},
		{ir.RoleRPC | ir.RoleDist, classOther},
		{ir.Role(0x200), classOther},
	} {
		if got := roleClassOf(c.role); got != c.want {
			t.Errorf("roleClassOf(%v) = %d, want %d", c.role, got, c.want)
		}
	}
}

func TestAppendDOTString(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", `""`},
		{"x\nf32[8, 16]", `"x\nf32[8, 16]"`},
		{`a"b`, `"a\"b"`},
		{`a\b`, `"a\\b"`},
		{`\N\G`, `"\\N\\G"`},
		{"a&lt;b", `"a&amp;lt;b"`},
		{"<b>", `"<b>"`},
		{"tab\tcr\rnul\x00del\x7f", `"tab\\x09cr\\x0dnul\\x00del\\x7f"`},
		{"ünï €", `"ünï €"`},
		{"\xff\xfe", `"\\xff\\xfe"`},
		{"\xe2\x82", `"\\xe2\\x82"`}, // a cut-off rune
	} {
		if got := string(appendDOTString(nil, []byte(c.in))); got != c.want {
			t.Errorf("appendDOTString(%q) = %s, want %s", c.in, got, c.want)
		}
	}
}

func TestAppendName(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"x", "x"},
		{"h@GRAD", "h@GRAD"},
		{"layer_3.w", "layer_3.w"},
		{"", `""`},
		{"9lives", `"9lives"`},
		{"a-b", `"a-b"`},
		{"new\nline", `"new\nline"`},
		{"\xff", `"\xff"`},
	} {
		if got := string(appendName(nil, c.in)); got != c.want {
			t.Errorf("appendName(%q) = %s, want %s", c.in, got, c.want)
		}
	}
}
