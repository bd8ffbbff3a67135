package lower

import (
	"testing"
)

// TestDefaultRegistry checks every container and impl index against
// Paddle's registration order, and that every impl can lower both ways.
func TestDefaultRegistry(t *testing.T) {
	r := DefaultRegistry()
	// Every container: each impl is named (once in its container), says
	// what it emits and lowers both ways.
	for _, c := range r.Containers() {
		seen := map[string]bool{}
		for i, impl := range c.Impls {
			if impl.Name == "" || seen[impl.Name] {
				t.Errorf("%s:%d: name %q is empty or repeated", c.Type, i, impl.Name)
			}
			seen[impl.Name] = true
			if impl.Doc == "" {
				t.Errorf("%s:%d %s has no doc", c.Type, i, impl.Name)
			}
			if impl.Forward == nil || impl.Backward == nil {
				t.Errorf("%s:%d %s lacks a lowering", c.Type, i, impl.Name)
			}
		}
	}
	// The containers Paddle has number their impls as Paddle does, so
	// that an impl index read from a Paddle program means the same impl
	// (paddle-semantics.md §3).
	matmul := []string{"column_parallel", "row_parallel", "replicate_parallel"}
	paddle := map[string][]string{
		"default":                  {"replicate_parallel"},
		"matmul_v2":                matmul,
		"matmul":                   matmul,
		"mul":                      matmul,
		"lookup_table_v2":          {"row_parallel"},
		"lookup_table":             {"row_parallel"},
		"elementwise":              {"replicate_parallel"},
		"reshape2":                 {"add_one_dim_back", "remove_one_dim_back", "same_dim_shape"},
		"transpose2":               {"same_mapping_transpose"},
		"softmax":                  {"replicate_last_axis"},
		"check_finite_and_unscale": {"check_finite_and_unscale"},
		"update_loss_scaling":      {"update_loss_scaling"},
	}
	for typ, names := range paddle {
		for i, name := range names {
			impl, err := r.Lookup(typ, i)
			if err != nil {
				t.Errorf("%s:%d: %v", typ, i, err)
				continue
			}
			if impl.Name != name {
				t.Errorf("%s:%d is %q, want %q", typ, i, impl.Name, name)
			}
		}
		if _, err := r.Lookup(typ, len(names)); err == nil {
			t.Errorf("%s has more than Paddle's %d impls", typ, len(names))
		}
	}
	if _, err := r.Lookup("matmul_v2", 3); err == nil || err.Error() != "impl type matmul_v2 has no impl 3 (it has 3)" {
		t.Errorf("matmul_v2:3: %v", err)
	}
}

// TestLowers: the generic containers lower any op; the others, as
// registered, only the op type they are named after.
func TestLowers(t *testing.T) {
	for _, tc := range []struct {
		impl, op string
		want     bool
	}{
		{"default", "relu", true}, {"elementwise", "elementwise_add", true}, {"elementwise", "matmul_v2", true},
		{"matmul_v2", "matmul_v2", true}, {"matmul_v2", "matmul", false}, {"softmax", "relu", false},
		{"reshape2", "reshape", false}, {"global_scatter", "global_gather", false},
		{"spmd", "matmul_v2", true}, {"spmd", "layer_norm", true},
	} {
		if got := Lowers(tc.impl, tc.op); got != tc.want {
			t.Errorf("Lowers(%q, %q) = %v, want %v", tc.impl, tc.op, got, tc.want)
		}
	}
	for _, c := range DefaultRegistry().Containers() {
		if !Lowers(c.Type, c.Type) {
			t.Errorf("container %s does not lower its own op type", c.Type)
		}
	}
}
