package complete_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/distpass/distpass/check"
	"github.com/distpass/distpass/complete"
	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/models"
	"github.com/distpass/distpass/passes"
)

// forwardCase is a forward-only module annotated for dp,mp on 2×2.
type forwardCase struct {
	name  string
	build func(t *testing.T) *ir.Module
}

func forwardCases() []forwardCase {
	mesh := func() *ir.ProcessMesh { return models.Mesh([]int{2, 2}, []string{"dp", "mp"}) }
	return []forwardCase{
		{"mlp", func(t *testing.T) *ir.Module {
			m := models.MLP(models.MLPConfig{Layers: 2, Hidden: 8, Batch: 4, DType: ir.F64})
			if err := models.Annotate(m, "dp,mp", mesh()); err != nil {
				t.Fatal(err)
			}
			return m
		}},
		{"gpt", func(t *testing.T) *ir.Module {
			cfg := models.TinyGPT()
			cfg.Hidden, cfg.Vocab, cfg.Seq, cfg.DType = 16, 32, 4, ir.F64
			m := models.GPT(cfg)
			if err := models.AnnotateGPT(m, "dp,mp", mesh()); err != nil {
				t.Fatal(err)
			}
			return m
		}},
	}
}

// dists spells every op's and dense var's dist of m's main program, by
// op id and var name.
func dists(m *ir.Module) map[string]string {
	out := map[string]string{}
	for bi, b := range m.Main.Blocks {
		for _, v := range b.Vars() {
			if v.Type.IsTensor() {
				out[fmt.Sprintf("block %d var %s", bi, v.Name())] = spellTensor(v.Dist)
			}
		}
		for _, op := range b.Ops {
			out[op.String()] = spellOpDist(op.Dist)
		}
	}
	return out
}

func spellOpDist(d *ir.OpDist) string {
	if d == nil {
		return "none"
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "@%s impl %s:%d [", d.Mesh, d.ImplType, d.ImplIndex)
	for _, a := range d.Inputs {
		fmt.Fprintf(&sb, "%s: %s ", a.Name, ir.FormatInts(a.DimsMapping))
	}
	sb.WriteString("->")
	for _, a := range d.Outputs {
		fmt.Fprintf(&sb, " %s: %s", a.Name, ir.FormatInts(a.DimsMapping))
	}
	return sb.String() + "]"
}

// everythingHasADist fails for each dense var of m's main program
// without a dist and each op without an impl.
func everythingHasADist(t *testing.T, what string, m *ir.Module) {
	t.Helper()
	for bi, b := range m.Main.Blocks {
		for _, v := range b.Vars() {
			if v.Type.IsTensor() && v.Dist == nil {
				t.Errorf("%s: block %d var %s has no dist", what, bi, v.Name())
			}
		}
		for _, op := range b.Ops {
			if op.Dist == nil || op.Dist.ImplType == "" {
				t.Errorf("%s: %s has no dist or no impl", what, op)
			}
		}
	}
}

func checks(t *testing.T, what string, m *ir.Module) {
	t.Helper()
	if err := annotationsErr(m); err != nil {
		t.Fatalf("%s: check-annotations: %v", what, err)
	}
	cr, err := check.Run(context.Background(), m, check.Options{})
	if err != nil {
		t.Fatalf("%s: check: %v", what, err)
	}
	if err := cr.Err(); err != nil {
		t.Fatalf("%s: check: %v", what, err)
	}
}

// TestIncremental: a forward-only module with only its data and params
// annotated is completed; append-backward and append-optimizer (adam)
// are run on the completed module, which is completed again, as the
// passes leave it (they copy the forward dists to the grads) and with
// every dist they gave dropped (completion gives them): every grad and
// optimizer op and var gets a dist, nothing of the forward part
// changes, the adam moments follow their params, and check passes.
func TestIncremental(t *testing.T) {
	for _, c := range forwardCases() {
		for _, drop := range []bool{false, true} {
			name := c.name
			if drop {
				name += " (appended dists dropped)"
			}
			m := c.build(t)
			strip(m, nil)
			if _, err := complete.Complete(m, complete.Options{}); err != nil {
				t.Fatalf("%s: forward: %v", name, err)
			}
			everythingHasADist(t, name+" forward", m)
			fwd := dists(m)
			if _, err := passes.AppendBackward(m, "loss"); err != nil {
				t.Fatal(err)
			}
			if _, err := passes.AppendOptimizer(m, "adam", 0.01); err != nil {
				t.Fatal(err)
			}
			if drop {
				dropAppended(m, fwd)
			}
			rep, err := complete.Complete(m, complete.Options{})
			if err != nil {
				t.Fatalf("%s: training step: %v", name, err)
			}
			if drop && (rep.Vars.Completed == 0 || rep.Ops.Completed == 0) {
				t.Errorf("%s: the second completion completed nothing: %s", name, rep.Summary())
			}
			if len(rep.Reshards) != 0 {
				t.Errorf("%s: the training step needs reshards:\n%s", name, reportText(t, rep))
			}
			everythingHasADist(t, name+" training step", m)
			after := dists(m)
			for k, was := range fwd {
				if now := after[k]; now != was {
					t.Errorf("%s: %s was %s after the forward's completion, %s after the training step's", name, k, was, now)
				}
			}
			momentsFollow(t, name, m)
			checks(t, name, m)
		}
	}
}

// dropAppended drops the dist of every op and var of m's main program
// that fwd (dists of the forward part) does not name.
func dropAppended(m *ir.Module, fwd map[string]string) {
	for bi, b := range m.Main.Blocks {
		for _, v := range b.Vars() {
			if _, ok := fwd[fmt.Sprintf("block %d var %s", bi, v.Name())]; !ok {
				v.Dist = nil
			}
		}
		for _, op := range b.Ops {
			if _, ok := fwd[op.String()]; !ok {
				op.Dist = nil
			}
		}
	}
}

// TestOptimizerStatesFollowParams: append-backward and append-optimizer
// run before completion, on a module whose biases nobody annotated (so
// their moments have no dist either): completion gives each moment its
// param's dist, and the step checks.
func TestOptimizerStatesFollowParams(t *testing.T) {
	for _, c := range forwardCases() {
		m := c.build(t)
		strip(m, func(v *ir.Var) bool {
			return v.Has(ir.FlagIsData) || v.Kind == ir.KindParam && len(v.Type.Shape) == 2
		})
		if _, err := passes.AppendBackward(m, "loss"); err != nil {
			t.Fatal(err)
		}
		if _, err := passes.AppendOptimizer(m, "adam", 0.01); err != nil {
			t.Fatal(err)
		}
		bare := 0
		for _, v := range m.Main.Global().Vars() {
			if strings.HasSuffix(v.Name(), "_moment1_0") && v.Dist == nil {
				bare++
			}
		}
		if bare == 0 {
			t.Fatalf("%s: every moment has a dist before completion: the test proves nothing", c.name)
		}
		if _, err := complete.Complete(m, complete.Options{}); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		everythingHasADist(t, c.name, m)
		momentsFollow(t, c.name, m)
		checks(t, c.name, m)
	}
}

// momentsFollow fails for each adam moment whose dist is not its param's.
func momentsFollow(t *testing.T, what string, m *ir.Module) {
	t.Helper()
	g := m.Main.Global()
	n := 0
	for _, pg := range m.ParamGrads {
		p := g.Var(pg.Param)
		for _, suffix := range []string{"_moment1_0", "_moment2_0"} {
			s := g.Var(pg.Param + suffix)
			if p == nil || s == nil {
				t.Errorf("%s: no %s%s", what, pg.Param, suffix)
				continue
			}
			n++
			if ps, ss := spellTensor(p.Dist), spellTensor(s.Dist); ps != ss {
				t.Errorf("%s: %s is %s, its param %s", what, s.Name(), ss, ps)
			}
		}
	}
	if n == 0 {
		t.Errorf("%s: no moments", what)
	}
}

// TestIncrementalSPMDPartialGrad: a forward module completed to the
// rule-based impl (batch and sequence split: matmul_v2 and mean on
// spmd:0), then append-backward and sgd appended with their dists
// dropped and completed: w@GRAD comes out of matmul_v2_grad partial,
// averaged over both mesh dims as the loss is, and sgd's read of it is a
// reshard the report lists and check-annotations names.
func TestIncrementalSPMDPartialGrad(t *testing.T) {
	m := parseModule(t, "sp.dpir", spModule)
	if _, err := complete.Complete(m, complete.Options{}); err != nil {
		t.Fatal(err)
	}
	if d := m.Main.Global().Ops[0].Dist; d.ImplType != "spmd" {
		t.Fatalf("matmul_v2 on %s:%d, want spmd:0", d.ImplType, d.ImplIndex)
	}
	fwd := dists(m)
	if _, err := passes.AppendBackward(m, "loss"); err != nil {
		t.Fatal(err)
	}
	if _, err := passes.AppendOptimizer(m, "sgd", 0.01); err != nil {
		t.Fatal(err)
	}
	dropAppended(m, fwd)
	rep, err := complete.Complete(m, complete.Options{})
	if err != nil {
		t.Fatal(err)
	}
	everythingHasADist(t, "sp", m)
	for k, was := range fwd {
		if now := dists(m)[k]; now != was {
			t.Errorf("%s was %s, now %s", k, was, now)
		}
	}
	g := m.Main.Global()
	if got := spellTensor(g.Var("w@GRAD").Dist); got != "@w[-1, -1] partial [0:avg, 1:avg]" {
		t.Errorf("w@GRAD: %s, want @w[-1, -1] partial [0:avg, 1:avg]", got)
	}
	for _, op := range g.Ops {
		if op.Type == "matmul_v2_grad" && op.Dist.ImplType != "spmd" {
			t.Errorf("%s on %s:%d, want its forward op's spmd:0", op, op.Dist.ImplType, op.Dist.ImplIndex)
		}
	}
	txt := reportText(t, rep)
	if !containsLine(txt, "reshard: op 7 sgd reads w@GRAD as [-1, -1], which is [-1, -1] partial [0:avg, 1:avg]\n") || len(rep.Reshards) != 1 {
		t.Errorf("report, want sgd's reshard of w@GRAD alone:\n%s", txt)
	}
	err = annotationsErr(m)
	if want := "op 7 sgd: reads w@GRAD as a whole value but w@GRAD is @w[-1, -1] partial [0:avg, 1:avg]"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("check-annotations: %v, want it to say %q", err, want)
	}
}

// spModule is a forward module whose matmul_v2 and mean complete to the
// rule-based impl: the batch split on dp, the sequence on sp.
const spModule = `mesh w shape [2, 2] dims [dp, sp] ranks [0, 1, 2, 3]
program main {
  block 0 {
    var x : f64[4, 4, 8] @w[0, 1, -1] {is_data, stop_gradient}
    param w : f64[8, 2] @w[-1, -1] {trainable}
    var o : f64[4, 4, 2]
    var loss : f64[]
    op 1 matmul_v2(X: x, Y: w) -> (Out: o) {trans_x = false, trans_y = false} role forward
    op 2 mean(X: o) -> (Out: loss) role forward
  }
}
`
