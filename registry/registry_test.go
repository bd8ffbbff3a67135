package registry

import (
	"strings"
	"testing"
)

// TestDefaultRegistry checks every container and impl index against
// Paddle's registration order, and that every impl can lower both ways.
func TestDefaultRegistry(t *testing.T) {
	r := DefaultRegistry()
	matmul := []string{"column_parallel", "row_parallel", "replicate_parallel"}
	want := map[string][]string{
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
		"global_scatter":           {"expert_parallel"},
		"global_gather":            {"expert_parallel"},
		"alltoall":                 {"expert_parallel"},
		"grouped_matmul":           {"expert_parallel"},
		"limit_by_capacity":        {"expert_parallel"},
		"prune_gate_by_capacity":   {"expert_parallel"},
	}
	cs := r.Containers()
	if len(cs) != len(want) {
		var got []string
		for _, c := range cs {
			got = append(got, c.Type)
		}
		t.Errorf("containers %s, want %d", strings.Join(got, ", "), len(want))
	}
	for typ, names := range want {
		for i, name := range names {
			impl, err := r.Lookup(typ, i)
			if err != nil {
				t.Errorf("%s:%d: %v", typ, i, err)
				continue
			}
			if impl.Name != name {
				t.Errorf("%s:%d is %q, want %q", typ, i, impl.Name, name)
			}
			if impl.Doc == "" {
				t.Errorf("%s:%d %s has no doc", typ, i, name)
			}
			if impl.Forward == nil || impl.Backward == nil {
				t.Errorf("%s:%d %s lacks a lowering", typ, i, name)
			}
		}
		if _, err := r.Lookup(typ, len(names)); err == nil {
			t.Errorf("%s has more than %d impls", typ, len(names))
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
