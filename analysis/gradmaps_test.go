package analysis_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/distpass/distpass/analysis"
	"github.com/distpass/distpass/ir"
)

func gradVars(g *analysis.GradInfo, p *ir.Program) []string {
	var out []string
	for grad, v := range g.GradVars(p) {
		out = append(out, varID(grad)+" -> "+varID(v))
	}
	return out
}

func TestGradMapsMLP(t *testing.T) {
	m := example(t, "mlp_dp_mp.dpir")
	g := get[*analysis.GradInfo](t, analysis.NewCache(m), analysis.GradMaps)
	p := m.Main

	// Grad ops 6, 7, 8, 9 (positions 5-8) of forward ops 4, 3, 2, 1.
	wantOps := []analysis.OpPair{
		{Grad: ref{0, 5}, Fwd: ref{0, 3}},
		{Grad: ref{0, 6}, Fwd: ref{0, 2}},
		{Grad: ref{0, 7}, Fwd: ref{0, 1}},
		{Grad: ref{0, 8}, Fwd: ref{0, 0}},
	}
	if diff := cmp.Diff(wantOps, g.OpPairs(p)); diff != "" {
		t.Errorf("OpPairs (-want +got):\n%s", diff)
	}
	for _, pair := range wantOps {
		if f, ok := g.Forward(p, pair.Grad); !ok || f != pair.Fwd {
			t.Errorf("Forward(%v) = %v, %v; want %v", pair.Grad, f, ok, pair.Fwd)
		}
		if diff := cmp.Diff([]ref{pair.Grad}, g.GradOps(p, pair.Fwd)); diff != "" {
			t.Errorf("GradOps(%v) (-want +got):\n%s", pair.Fwd, diff)
		}
	}
	for _, notGrad := range []ref{{0, 4}, {0, 9}, {0, 0}} { // fill_constant, sgd, matmul_v2
		if f, ok := g.Forward(p, notGrad); ok {
			t.Errorf("Forward(%v) = %v, want none", notGrad, f)
		}
	}
	if got := g.GradOps(p, ref{0, 4}); got != nil {
		t.Errorf("GradOps(fill_constant) = %v", got)
	}
	if got := g.Dangling(p); len(got) != 0 {
		t.Errorf("Dangling = %v", got)
	}
	if got := g.OpPairs(m.Startup); len(got) != 0 {
		t.Errorf("startup OpPairs = %v", got)
	}

	wantVars := []string{
		"b0:loss@GRAD -> b0:loss",
		"b0:h2@GRAD -> b0:h2",
		"b0:a1@GRAD -> b0:a1",
		"b0:h1@GRAD -> b0:h1",
		"b0:w1@GRAD -> b0:w1",
		"b0:w2@GRAD -> b0:w2",
	}
	if diff := cmp.Diff(wantVars, gradVars(g, p)); diff != "" {
		t.Errorf("GradVars (-want +got):\n%s", diff)
	}
	if v, ok := g.VarOfGrad(p, 0, "h1@GRAD"); !ok || varID(v) != "b0:h1" {
		t.Errorf("VarOfGrad(h1@GRAD) = %v, %v", v, ok)
	}
	if v, ok := g.VarOfGrad(p, 0, "h1"); ok {
		t.Errorf("VarOfGrad(h1) = %v, want none", v)
	}

	var pgs []string
	for param, grad := range g.ParamGrads() {
		pgs = append(pgs, varID(param)+" -> "+varID(grad))
	}
	if diff := cmp.Diff([]string{"b0:w1 -> b0:w1@GRAD", "b0:w2 -> b0:w2@GRAD"}, pgs); diff != "" {
		t.Errorf("ParamGrads (-want +got):\n%s", diff)
	}
	if v, ok := g.GradOfParam("w2"); !ok || v != (analysis.VarID{Prog: p, Block: 0, Name: "w2@GRAD"}) {
		t.Errorf("GradOfParam(w2) = %v, %v", v, ok)
	}
	if v, ok := g.ParamOfGrad("w1@GRAD"); !ok || varID(v) != "b0:w1" {
		t.Errorf("ParamOfGrad(w1@GRAD) = %v, %v", v, ok)
	}
	for _, name := range []string{"x", "h1@GRAD", "nothing"} {
		if v, ok := g.GradOfParam(name); ok {
			t.Errorf("GradOfParam(%s) = %v, want none", name, v)
		}
		if v, ok := g.ParamOfGrad(name); ok {
			t.Errorf("ParamOfGrad(%s) = %v, want none", name, v)
		}
	}
}

func TestGradMapsNamesAndBlocks(t *testing.T) {
	m := parse(t, `
program main {
  block 0 {
    var x : f32[2]
    var y : f32[2]
    var x@GRAD : f32[2]
    var x@GRAD@RENAME@0 : f32[2]
    var x@GRAD@RENAME@block1@2 : f32[2]
    var x@GRAD@GRAD : f32[2]
    var x@GRAD@RENAME@ : f32[2]
    var z@GRAD : f32[2]
    var "@GRAD" : f32[2]
    var y@grad : f32[2]
    param w : f32[2]
    param v : f32[2]
    op 1 scale(X: x) -> (Out: y) role forward
    op 2 scale_grad(Out@GRAD: y) -> (X@GRAD: x@GRAD) role backward fwd 1
    op 3 scale_grad(Out@GRAD: y) -> (X@GRAD: x@GRAD@RENAME@0) role backward fwd 99
    op 4 scale_grad(Out@GRAD: y) -> (X@GRAD: x@GRAD@GRAD) role backward fwd 2
    op 8 scale_grad(Out@GRAD: y) -> (X@GRAD: x@GRAD) role optimize fwd 1
  }
  block 1 parent 0 {
    var s : f32[2]
    op 5 relu(X: x) -> (Out: s) role forward
  }
  block 2 parent 0 forward 1 {
    var s@GRAD : f32[2]
    op 6 relu_grad(Out@GRAD: s@GRAD) -> (X@GRAD: x@GRAD) role backward fwd 5
    op 7 relu_grad(Out@GRAD: s@GRAD) -> (X@GRAD: x@GRAD) role backward fwd 1
  }
}
grads w -> x@GRAD
grads v -> []
grads undeclared -> y
`)
	g := get[*analysis.GradInfo](t, analysis.NewCache(m), analysis.GradMaps)
	p := m.Main

	// x@GRAD@RENAME@ has an empty rename suffix, z has no var, "@GRAD"
	// no base name, y@grad the wrong case. s@GRAD finds s through the
	// forward block of its grad block.
	wantVars := []string{
		"b0:x@GRAD -> b0:x",
		"b0:x@GRAD@RENAME@0 -> b0:x",
		"b0:x@GRAD@RENAME@block1@2 -> b0:x",
		"b0:x@GRAD@GRAD -> b0:x@GRAD",
		"b2:s@GRAD -> b1:s",
	}
	if diff := cmp.Diff(wantVars, gradVars(g, p)); diff != "" {
		t.Errorf("GradVars (-want +got):\n%s", diff)
	}
	var grads []string
	for _, id := range g.GradsOfVar(p, 1, "x") {
		grads = append(grads, varID(id))
	}
	if diff := cmp.Diff([]string{"b0:x@GRAD", "b0:x@GRAD@RENAME@0", "b0:x@GRAD@RENAME@block1@2"}, grads); diff != "" {
		t.Errorf("GradsOfVar(x) (-want +got):\n%s", diff)
	}
	if v, ok := g.VarOfGrad(p, 2, "s@GRAD"); !ok || varID(v) != "b1:s" {
		t.Errorf("VarOfGrad(s@GRAD) = %v, %v", v, ok)
	}

	// Op 3's fwd names no op and op 4's a backward op; op 8 is a grad
	// op of the optimize role. Op 6 in block 2 finds op 5 in block 1.
	wantOps := []analysis.OpPair{
		{Grad: ref{0, 1}, Fwd: ref{0, 0}},
		{Grad: ref{0, 4}, Fwd: ref{0, 0}},
		{Grad: ref{2, 0}, Fwd: ref{1, 0}},
		{Grad: ref{2, 1}, Fwd: ref{0, 0}},
	}
	if diff := cmp.Diff(wantOps, g.OpPairs(p)); diff != "" {
		t.Errorf("OpPairs (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]ref{{0, 2}, {0, 3}}, g.Dangling(p)); diff != "" {
		t.Errorf("Dangling (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]ref{{0, 1}, {0, 4}, {2, 1}}, g.GradOps(p, ref{0, 0})); diff != "" {
		t.Errorf("GradOps(op 1) (-want +got):\n%s", diff)
	}

	var pgs []string
	for param, grad := range g.ParamGrads() {
		pgs = append(pgs, varID(param)+" -> "+varID(grad))
	}
	if diff := cmp.Diff([]string{"b0:w -> b0:x@GRAD", "b0:v -> -"}, pgs); diff != "" {
		t.Errorf("ParamGrads (-want +got):\n%s", diff)
	}
	if v, ok := g.GradOfParam("v"); ok {
		t.Errorf("GradOfParam(v) = %v, want none", v)
	}
	if v, ok := g.ParamOfGrad("y"); ok {
		t.Errorf("ParamOfGrad(y) = %v; its param is not declared", v)
	}
}
