package lower

import (
	"testing"

	"github.com/distpass/distpass/ir"
)

func checkFiniteBuild(b *ir.Builder) *ir.Op {
	b.Var("w@GRAD", f32(8, 4)).WithDist("world", -1, 1)
	b.Var("loss_scaling", f32(1)).WithDist("world", -1)
	b.Var("found_inf", ir.Tensor(ir.Boolean, 1)).WithDist("world", -1)
	op := b.Op("check_finite_and_unscale", ir.Slots("X", "w@GRAD", "Scale", "loss_scaling"), ir.Slots("Out", "w@GRAD", "FoundInfinite", "found_inf"))
	op.WithRole(ir.RoleOptimize)
	return b.Annotate(op, "check_finite_and_unscale", 0)
}

func updateLossScalingBuild(b *ir.Builder) *ir.Op {
	b.Var("w@GRAD", f32(8, 4)).WithDist("world", -1, 1)
	b.Var("found_inf", ir.Tensor(ir.Boolean, 1)).WithDist("world", -1)
	b.Var("loss_scaling", f32(1)).WithDist("world", -1)
	op := b.Op("update_loss_scaling", ir.Slots("X", "w@GRAD", "FoundInfinite", "found_inf", "PrevLossScaling", "loss_scaling"),
		ir.Slots("Out", "w@GRAD", "LossScaling", "loss_scaling"), ir.A("incr_ratio", ir.Float(2)))
	op.WithRole(ir.RoleOptimize)
	return b.Annotate(op, "update_loss_scaling", 0)
}

func TestAMP(t *testing.T) {
	runLoweringCases(t, []loweringCase{{
		name:     "check_finite_and_unscale",
		build:    checkFiniteBuild,
		implType: "check_finite_and_unscale", fn: CheckFiniteAndUnscale().Backward,
		want: map[int]lowering{
			0: {
				Main: []string{
					"op 1 check_finite_and_unscale(X: w@GRAD, Scale: loss_scaling) -> (Out: w@GRAD, FoundInfinite: found_inf@local) role optimize dist @world impl check_finite_and_unscale:0 [w@GRAD: [-1, 1], loss_scaling: [-1] -> w@GRAD: [-1, 1], found_inf@local: [-1]]",
					"op 2 cast(X: found_inf@local) -> (Out: found_inf@cast_int32) {in_dtype = 0, origin = \"check_finite_and_unscale:0 amp: found_inf to int32 for the allreduce\", origin_op = 1, out_dtype = 2} role optimize dist @world impl check_finite_and_unscale:0 [found_inf@local: [-1] -> found_inf@cast_int32: [-1]]",
					"op 3 c_allreduce_max(X: found_inf@cast_int32) -> (Out: found_inf@cast_int32) {origin = \"check_finite_and_unscale:0 amp: found_inf is true on every rank if it is on one\", origin_op = 1, ring_id = 0, use_calc_stream = true} role optimize dist @world impl check_finite_and_unscale:0 [found_inf@cast_int32: [-1] -> found_inf@cast_int32: [-1]]",
					"op 4 cast(X: found_inf@cast_int32) -> (Out: found_inf) {in_dtype = 2, origin = \"check_finite_and_unscale:0 amp: found_inf back to bool\", origin_op = 1, out_dtype = 0} role optimize dist @world impl check_finite_and_unscale:0 [found_inf@cast_int32: [-1] -> found_inf: [-1]]",
				},
			},
			3: {
				Main: []string{
					"op 1 check_finite_and_unscale(X: w@GRAD, Scale: loss_scaling) -> (Out: w@GRAD, FoundInfinite: found_inf@local) role optimize dist @world impl check_finite_and_unscale:0 [w@GRAD: [-1, 1], loss_scaling: [-1] -> w@GRAD: [-1, 1], found_inf@local: [-1]]",
					"op 2 cast(X: found_inf@local) -> (Out: found_inf@cast_int32) {in_dtype = 0, origin = \"check_finite_and_unscale:0 amp: found_inf to int32 for the allreduce\", origin_op = 1, out_dtype = 2} role optimize dist @world impl check_finite_and_unscale:0 [found_inf@local: [-1] -> found_inf@cast_int32: [-1]]",
					"op 3 c_allreduce_max(X: found_inf@cast_int32) -> (Out: found_inf@cast_int32) {origin = \"check_finite_and_unscale:0 amp: found_inf is true on every rank if it is on one\", origin_op = 1, ring_id = 0, use_calc_stream = true} role optimize dist @world impl check_finite_and_unscale:0 [found_inf@cast_int32: [-1] -> found_inf@cast_int32: [-1]]",
					"op 4 cast(X: found_inf@cast_int32) -> (Out: found_inf) {in_dtype = 2, origin = \"check_finite_and_unscale:0 amp: found_inf back to bool\", origin_op = 1, out_dtype = 0} role optimize dist @world impl check_finite_and_unscale:0 [found_inf@cast_int32: [-1] -> found_inf: [-1]]",
				},
			},
		},
	}, {
		name:     "update_loss_scaling",
		build:    updateLossScalingBuild,
		implType: "update_loss_scaling", fn: UpdateLossScaling().Backward,
		want: map[int]lowering{
			1: {
				Main: []string{
					"op 1 update_loss_scaling(X: w@GRAD, FoundInfinite: found_inf, PrevLossScaling: loss_scaling) -> (Out: w@GRAD, LossScaling: loss_scaling) {incr_ratio = 2.0} role optimize dist @world impl update_loss_scaling:0 [w@GRAD: [-1, 1], found_inf: [-1], loss_scaling: [-1] -> w@GRAD: [-1, 1], loss_scaling: [-1]]",
				},
			},
		},
	}})
}

func TestAMPDetails(t *testing.T) {
	// The int32 flag is declared like FoundInfinite.
	m, b := testModule()
	op := checkFiniteBuild(b)
	buildGroups(m)
	ctx := newLowering(m, 1, m.Main.Global(), newState())
	ctx.begin(op, m.Mesh("world"), "check_finite_and_unscale", 0)
	if err := CheckFiniteAndUnscale().Backward(ctx, op); err != nil {
		t.Fatal(err)
	}
	v := m.Main.Global().Var("found_inf@cast_int32")
	if v == nil {
		t.Fatal("no var found_inf@cast_int32")
	}
	if got, want := ir.PrintVar(v), "var found_inf@cast_int32 : i32[1] @world[-1] {stop_gradient}"; got != want {
		t.Errorf("found_inf@cast_int32:\n got %s\nwant %s", got, want)
	}

	// Forward is an error for both; Compatible accepts every op.
	for _, impl := range []*Impl{CheckFiniteAndUnscale(), UpdateLossScaling()} {
		if impl.Compatible != nil {
			t.Errorf("%s: Compatible is not nil", impl.Name)
		}
		_, err := lower(t, checkFiniteBuild, 0, "check_finite_and_unscale", 0, impl.Forward, nil)
		if err == nil || err.Error() != "op 1 check_finite_and_unscale is backward-only: it has no forward lowering" {
			t.Errorf("%s forward: %v", impl.Name, err)
		}
	}

	// Without a world group, or without FoundInfinite: errors.
	m, b = testModule()
	op = checkFiniteBuild(b)
	ctx = newLowering(m, 0, m.Main.Global(), newState())
	ctx.begin(op, m.Mesh("world"), "check_finite_and_unscale", 0)
	if err := CheckFiniteAndUnscale().Backward(ctx, op); err == nil || err.Error() != "op 1 check_finite_and_unscale: no world group (id 0) in the group table" {
		t.Errorf("no group table: %v", err)
	}
	noFlag := func(b *ir.Builder) *ir.Op {
		op := checkFiniteBuild(b)
		op.Outputs = op.Outputs[:1]
		return op
	}
	if _, err := lower(t, noFlag, 0, "check_finite_and_unscale", 0, CheckFiniteAndUnscale().Backward, nil); err == nil ||
		err.Error() != "op 1 check_finite_and_unscale has no output FoundInfinite" {
		t.Errorf("no FoundInfinite: %v", err)
	}
}
