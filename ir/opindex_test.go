package ir

import "testing"

func TestIndexOps(t *testing.T) {
	for _, sparse := range []bool{false, true} {
		m := NewModule("m")
		b := m.Main.Global()
		big := int64(1)
		if sparse {
			big = 1 << 40 // beyond any dense table of this module
		}
		b.Ops = []*Op{{ID: 3, Type: "a"}, nil, {ID: big, Type: "b"}, {ID: 3, Type: "c"}, {ID: 0, Type: "d"}, {ID: -2, Type: "e"}}
		x := IndexOps(m, m.Main, func(op *Op, bi, pos int) *Op { return op })
		if (x.sparse != nil) != sparse {
			t.Fatalf("sparse %v: map %v", sparse, x.sparse != nil)
		}
		for _, c := range []struct {
			id   int64
			want string
			n    int
		}{{3, "a", 2}, {big, "b", 1}, {0, "", 0}, {-2, "", 0}, {7, "", 0}, {1 << 50, "", 0}} {
			op, n := x.Get(c.id)
			got := ""
			if op != nil {
				got = op.Type
			}
			if got != c.want || n != c.n {
				t.Errorf("sparse %v: Get(%d) = %q, %d; want %q, %d", sparse, c.id, got, n, c.want, c.n)
			}
		}
	}
}
