package analysis_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/distpass/distpass/analysis"
	"github.com/distpass/distpass/ir"
)

func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		role ir.Role
		want analysis.RoleClass
	}{
		{ir.RoleForward, analysis.ClassForward},
		{ir.RoleLoss, analysis.ClassLoss},
		{ir.RoleBackward | ir.RoleLoss, analysis.ClassLossGrad},
		{ir.RoleBackward, analysis.ClassBackward},
		{ir.RoleBackward | ir.RoleOptimize, analysis.ClassBackward},
		{ir.RoleBackward | ir.RoleRPC, analysis.ClassBackward},
		{ir.RoleOptimize, analysis.ClassOptimize},
		{ir.RoleOptimize | ir.RoleLRSched, analysis.ClassOptimize},
		{ir.RoleOptimize | ir.RoleLoss, analysis.ClassOptimize},
		{ir.RoleLRSched, analysis.ClassOther},
		{ir.RoleRPC, analysis.ClassOther},
		{ir.RoleDist, analysis.ClassOther},
		{ir.RoleRPC | ir.RoleDist, analysis.ClassOther},
		{ir.Role(0x4000), analysis.ClassOther},
	} {
		if got := analysis.Classify(tc.role); got != tc.want {
			t.Errorf("Classify(%v) = %v, want %v", tc.role, got, tc.want)
		}
	}
	var names []string
	for c := range analysis.NumRoleClasses {
		names = append(names, c.String())
	}
	if diff := cmp.Diff([]string{"forward", "backward", "optimize", "loss", "loss-grad", "other"}, names); diff != "" {
		t.Errorf("class names (-want +got):\n%s", diff)
	}
}

// counts builds RoleCounts from forward, backward, optimize, loss,
// loss-grad and other counts.
func counts(f, b, o, l, lg, other int) analysis.RoleCounts {
	return analysis.RoleCounts{f, b, o, l, lg, other}
}

func TestRolesMLP(t *testing.T) {
	m := example(t, "mlp_dp_mp.dpir")
	r := get[*analysis.RoleInfo](t, analysis.NewCache(m), analysis.Roles)
	// Ops 1-3 forward, 4 the loss, 5 the loss grad, 6-9 backward, 10-11 sgd.
	want := analysis.BlockRoles{FirstLoss: 3, FirstLossGrad: 4, Counts: counts(3, 4, 2, 1, 1, 0)}
	if diff := cmp.Diff(want, r.Block(m.Main, 0)); diff != "" {
		t.Errorf("main block 0 (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want.Counts, r.Counts(m.Main)); diff != "" {
		t.Errorf("main counts (-want +got):\n%s", diff)
	}
	// Startup: three initialisers, no loss.
	want = analysis.BlockRoles{FirstLoss: 3, FirstLossGrad: -1, Counts: counts(3, 0, 0, 0, 0, 0)}
	if diff := cmp.Diff(want, r.Block(m.Startup, 0)); diff != "" {
		t.Errorf("startup block 0 (-want +got):\n%s", diff)
	}
	if got := r.Others(m.Main); len(got) != 0 {
		t.Errorf("Others = %v", got)
	}
	if got := r.Block(m.Main, 7); got != (analysis.BlockRoles{FirstLossGrad: -1}) {
		t.Errorf("Block of a missing block = %+v", got)
	}
}

func TestRolesWhileLoop(t *testing.T) {
	m := example(t, "while_loop.dpir")
	r := get[*analysis.RoleInfo](t, analysis.NewCache(m), analysis.Roles)
	for b := range 2 {
		want := analysis.BlockRoles{FirstLoss: 4, FirstLossGrad: -1, Counts: counts(4, 0, 0, 0, 0, 0)}
		if diff := cmp.Diff(want, r.Block(m.Main, b)); diff != "" {
			t.Errorf("block %d (-want +got):\n%s", b, diff)
		}
	}
	if got, want := r.Counts(m.Main), counts(8, 0, 0, 0, 0, 0); got != want {
		t.Errorf("Counts = %v, want %v", got, want)
	}
}

func TestRolesOthersAndSecondLoss(t *testing.T) {
	m := parse(t, `
program main {
  block 0 {
    var a : f32[1]
    op 1 relu(X: a) -> (Out: a) role lrsched
    op 2 mean(X: a) -> (Out: a) role forward|loss
    op 3 relu(X: a) -> (Out: a) role forward
    op 4 mean(X: a) -> (Out: a) role forward|loss
    op 5 send(X: a) -> () role rpc
    op 6 fill_constant() -> (Out: a) role backward|loss
    op 7 fill_constant() -> (Out: a) role backward|loss
  }
  block 1 parent 0 {
    op 8 c_sync() -> () role dist
    op 9 lr() -> (Out: a) role optimize|lrsched
  }
}`)
	r := get[*analysis.RoleInfo](t, analysis.NewCache(m), analysis.Roles)
	want0 := analysis.BlockRoles{FirstLoss: 1, FirstLossGrad: 5, Counts: counts(1, 0, 0, 2, 2, 2)}
	if diff := cmp.Diff(want0, r.Block(m.Main, 0)); diff != "" {
		t.Errorf("block 0 (-want +got):\n%s", diff)
	}
	want1 := analysis.BlockRoles{FirstLoss: 2, FirstLossGrad: -1, Counts: counts(0, 0, 1, 0, 0, 1)}
	if diff := cmp.Diff(want1, r.Block(m.Main, 1)); diff != "" {
		t.Errorf("block 1 (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]ref{{0, 0}, {0, 4}, {1, 0}}, r.Others(m.Main)); diff != "" {
		t.Errorf("Others (-want +got):\n%s", diff)
	}
}
