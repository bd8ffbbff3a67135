package passes_test

import (
	"testing"

	"github.com/distpass/distpass/passes"
)

// make-trainable's shape option refuses a shape whose element count
// overflows int64 when it reads it (issue 37, finding 8): the module it
// would give verify refuses.
func TestParseShapeRefusesOverflow(t *testing.T) {
	for _, c := range []struct{ s, want string }{
		{"4611686018427387904x8", `shape "4611686018427387904x8": the element count overflows int64`},
		{"4294967296x4294967296", `shape "4294967296x4294967296": the element count overflows int64`},
		{"9223372036854775807x1", ""},
		{"8x3x32x32", ""},
	} {
		_, err := passes.ParseShape(c.s)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.s, err)
		case c.want != "" && (err == nil || err.Error() != c.want):
			t.Errorf("%s: got %v, want %s", c.s, err, c.want)
		}
	}
}
