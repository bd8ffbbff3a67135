package ops_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/distpass/distpass/ops"
)

// TestTraitMembers: the traits that replaced the lists kept by the
// lowering, completion and check-annotations hold the same op types.
func TestTraitMembers(t *testing.T) {
	for _, c := range []struct {
		trait ops.Traits
		want  []string
	}{
		{ops.ShapeOfOut, []string{"fill_constant", "fill_constant_batch_size_like", "gaussian_random", "uniform_random"}},
		{ops.BackwardOnly, []string{"check_finite_and_unscale", "straight_through_estimator_grad", "update_loss_scaling"}},
		{ops.OwnPart, []string{"all_to_all", "alltoall", "assign_pos", "global_gather", "global_scatter", "limit_by_capacity", "prune_gate_by_capacity"}},
		{ops.KeepsIndex, []string{"assign", "cast", "elementwise_add", "elementwise_floordiv", "elementwise_mod", "elementwise_mul",
			"elementwise_sub", "flatten2", "flatten_contiguous_range", "reshape2", "scale", "squeeze2", "unsqueeze2"}},
		// The lists PassesPartial, LinearInParts and KeepsExtremum kept.
		{ops.Identity, []string{"assign", "flatten2", "flatten_contiguous_range", "reshape2", "squeeze2", "transpose2", "unsqueeze2"}},
		{ops.LinearUnary, []string{"cumsum", "scale", "straight_through_estimator_grad"}},
		{ops.Additive, []string{"elementwise_add", "elementwise_sub", "sum"}},
		{ops.Monotone, []string{"cast", "clip", "exp", "leaky_relu", "log", "relu", "relu6", "sigmoid", "softplus", "sqrt", "tanh"}},
		{ops.DataDependent, []string{"global_gather", "global_scatter"}},
		{ops.RankStart, []string{"c_embedding", "c_embedding_grad"}},
		{ops.NumbersRows, []string{"assign_pos"}},
	} {
		var got []string
		for _, d := range ops.All() {
			if ops.Has(d.Type, c.trait) {
				got = append(got, d.Type)
			}
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s:\n got %q\nwant %q", c.trait, got, c.want)
		}
	}
	var linear []string
	for _, d := range ops.All() {
		if len(d.LinearIn) > 0 {
			linear = append(linear, d.Type+" "+fmt.Sprint(d.LinearIn))
		}
	}
	if want := []string{"elementwise_div [X]", "elementwise_mul [X Y]", "matmul [X Y]", "matmul_v2 [X Y]", "mul [X Y]"}; !slices.Equal(linear, want) {
		t.Errorf("LinearIn:\n got %q\nwant %q", linear, want)
	}
	// The ops analysis/localindex.go and complete/local.go switched on.
	var indexing []string
	for _, d := range ops.All() {
		if x := d.Indexing; x != nil {
			indexing = append(indexing, fmt.Sprint(d.Type, " ", x.Index, " ", x.RowsIn, " ", x.RowsOut, " ", x.Axis))
		}
	}
	if want := []string{"gather Index [X] [] axis", "gather_grad Index [X] [X@GRAD] axis", "scatter Ids [X] [Out] ", "scatter_grad Ids [Out@GRAD] [X@GRAD] "}; !slices.Equal(indexing, want) {
		t.Errorf("Indexing:\n got %q\nwant %q", indexing, want)
	}
	if ops.Has("no_such_op", ops.OwnPart) {
		t.Error("an undefined type has a trait")
	}
}
