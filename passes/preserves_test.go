package passes_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/distpass/distpass/analysis"
	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/passes"
)

// liar declares PreservesAll, as a check does, but sets an attr on the
// first op of main: a change the verifier has no reason to reject, so
// only the hash comparison can tell.
func liar() *passes.Pass {
	return &passes.Pass{
		Name: "liar", Doc: "claim to preserve everything and change an attr, for tests",
		PreservesAll: true,
		Run: func(ctx *passes.Context, m *ir.Module) error {
			// Warm the cache first, so that the stale-analysis hazard the
			// check guards against is real.
			if _, err := analysis.Get[*analysis.DefUseInfo](ctx.Analyses, analysis.DefUse); err != nil {
				return err
			}
			m.Main.Global().Ops[0].Attrs.Set("lied", ir.Bool(true))
			return nil
		},
	}
}

// TestVerifyEachCatchesAPassThatLiesAboutPreservingAll: under
// verify-each, a PreservesAll pass that changes the module fails, named,
// even though the module it leaves verifies; the honest checks of the
// partition pipeline pass the same test.
func TestVerifyEachCatchesAPassThatLiesAboutPreservingAll(t *testing.T) {
	r := testRegistry(t, liar())
	m := loadExample(t, "mlp_dp_mp.dpir")
	err := run(t, r, "verify,liar,dce", m, passes.VerifyEach{})
	if err == nil {
		t.Fatal("the lying pass went unnoticed under verify-each")
	}
	const want = `pass liar (execution 2 of "verify,liar,dce"): declares PreservesAll but changed the module (structural hash `
	if !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("err = %v\nwant prefix %s", err, want)
	}
	var pe *passes.PassError
	if !errors.As(err, &pe) || pe.Exec.Step.Pass.Name != "liar" || pe.Exec.N != 2 {
		t.Fatalf("error does not name the pass: %#v", pe)
	}
	// The module the liar left is valid: verification alone would not
	// have caught it.
	if verr := ir.Verify(m); verr != nil {
		t.Fatalf("the liar's module should verify, so that only the hash catches it: %v", verr)
	}

	// Nested, the liar is caught as itself, not as the pass around it.
	m = loadExample(t, "mlp_dp_mp.dpir")
	err = run(t, r, "repeat{count=2}(dce,liar)", m, passes.VerifyEach{})
	if !errors.As(err, &pe) || pe.Exec.Step.Pass.Name != "liar" || pe.Exec.N != 3 {
		t.Fatalf("nested: err = %v", err)
	}

	// The honest PreservesAll passes pass: those of the partition
	// pipeline inside it, every other one before it, with its defaults.
	m = loadExample(t, "mlp_dp_mp.dpir")
	steps := passes.PartitionStepNames()
	pipeline := "verify"
	for _, p := range passes.DefaultRegistry().Passes() {
		if p.PreservesAll && !slices.Contains(steps, p.Name) {
			pipeline += "," + p.Name
		}
	}
	pipeline += ",partition{rank=3},verify"
	if err := run(t, r, pipeline, m, passes.VerifyEach{}); err != nil {
		t.Fatal(err)
	}

	// The check is verify-each's: a plain run trusts the declaration
	// (see VerifyEach's doc for why).
	m = loadExample(t, "mlp_dp_mp.dpir")
	if err := run(t, r, "verify,liar,dce", m); err != nil {
		t.Fatalf("without verify-each: %v", err)
	}
}
