package suggest

import "testing"

func TestDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"relu", "relu", 0}, {"", "abc", 3}, {"matmul_v3", "matmul_v2", 1},
		{"matmul_v3", "matmul", 3}, {"kitten", "sitting", 3}, {"gelu", "relu", 1}, {"dce", "dec", 2},
	} {
		if got := Distance(c.a, c.b); got != c.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
		if got := Distance(c.b, c.a); got != c.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", c.b, c.a, got, c.want)
		}
	}
}
