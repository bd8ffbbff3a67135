package check_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/distpass/distpass/check"
	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/lower"
	"github.com/distpass/distpass/ops"
	"github.com/distpass/distpass/passes"
)

// The per-impl property for the rule-based impl spmd:0, as
// TestImplsProperty states it for the others: every combination of the
// op's args' mappings (and of its output's partial state) on a 2×2 and a
// 4-rank mesh is refused or proven by check, forward and backward. After
// append-backward, the grad vars of spmd:0's grad ops are given the
// partial states the impl requires (spmdGradPartials, what completion
// writes): the grad rule's partials, averaged where the loss averages.

func spmdPropCases() []propCase {
	var cs []propCase
	for _, c := range propCases() {
		switch c.name {
		case "matmul_v2:0 x2", "matmul_v2:0 x3", "matmul_v2:0 x2 act Y", "elementwise:0 add+bias",
			"elementwise:0 relu", "softmax:0 axis -1", "default:0 reduce_sum dim 0", "transpose2:0 [0, 2, 1]", "reshape2:2 [4, 8] -> [8, 4]":
		default:
			continue
		}
		c.name = strings.Replace(c.name, strings.SplitN(c.name, " ", 2)[0], "spmd:0 "+c.op, 1)
		c.impl = "spmd:0"
		c.documents = nil
		cs = append(cs, c)
	}
	return cs
}

// spmdDocuments are combinations spmd:0 must accept and prove, forward
// ("fwd": the op alone) or in a training step ("train"): the
// Paddle-flavoured impls' own, 2-D tensor parallelism, partial Outs. A
// step cannot read a partial value (that needs a reshard), so the
// training ones are those without.
var spmdDocuments = map[string]map[string][]string{
	"spmd:0 matmul_v2 x2": {
		"fwd": {"x=[0, -1] w=[-1, 1] out=[0, 1]", "x=[0, 1] w=[1, -1] out=[0, -1] out partial [1]",
			"x=[-1, 0] w=[0, 1] out=[-1, 1] out partial [0]", "x=[1, 0] w=[0, -1] out=[1, -1] out partial [0]"},
		"train": {"x=[0, -1] w=[-1, -1] out=[0, -1]"},
	},
	"spmd:0 matmul_v2 x3":              {"train": {"x=[0, 1, -1] w=[-1, -1] out=[0, 1, -1]"}},
	"spmd:0 relu relu":                 {"fwd": {"x=[0, -1, 1] out=[0, -1, 1]"}, "train": {"x=[0, -1, 1] out=[0, -1, 1]"}},
	"spmd:0 elementwise_add add+bias":  {"fwd": {"x=[0, 1] b=[1] out=[0, 1]"}, "train": {"x=[0, -1] b=[-1] out=[0, -1]"}},
	"spmd:0 reduce_sum dim 0":          {"fwd": {"x=[0, 1] out=[1] out partial [0]"}},
	"spmd:0 softmax axis -1":           {"fwd": {"x=[0, -1] out=[0, -1]"}, "train": {"x=[0, -1] out=[0, -1]"}},
	"spmd:0 transpose2 [0, 2, 1]":      {"fwd": {"x=[0, -1, 1] out=[0, 1, -1] xs=[-1, 0, -1, 1]"}},
	"spmd:0 reshape2 [4, 8] -> [8, 4]": {"fwd": {"x=[0, -1] out=[0, -1] xs=[-1, 0, -1]"}},
}

// buildForward writes the module of the op alone, its inputs fed (data
// or parameters) with mappings ms, its output partial along partialOut
// (when >= 0): no loss, no backward.
func (c propCase) buildForward(mesh propMesh, ms [][]int, partialOut int) string {
	var vars strings.Builder
	var ins, outs, inDist, outDist []string
	for i, a := range c.args {
		m, sh := fmtMap(ms[i]), fmtShape(a.shape)
		switch a.kind {
		case actArg:
			fmt.Fprintf(&vars, "    var %s : f64%s @w%s {is_data, stop_gradient}\n", a.name, sh, m)
		case weightArg:
			fmt.Fprintf(&vars, "    param %s : f64%s @w%s {trainable}\n", a.name, sh, m)
		case idsArg:
			fmt.Fprintf(&vars, "    var %s : i64%s @w%s {is_data, stop_gradient}\n", a.name, sh, m)
		case outArg:
			p := ""
			if partialOut >= 0 {
				p = fmt.Sprintf(" partial [%d]", partialOut)
			}
			fmt.Fprintf(&vars, "    var %s : f64%s @w%s%s\n", a.name, sh, m, p)
		case shapeArg:
			fmt.Fprintf(&vars, "    var %s : f64%s @w%s {stop_gradient}\n", a.name, sh, m)
		}
		arg, ad := fmt.Sprintf("%s: %s", a.slot, a.name), fmt.Sprintf("%s: %s", a.name, m)
		if a.kind == outArg || a.kind == shapeArg {
			outs, outDist = append(outs, arg), append(outDist, ad)
		} else {
			ins, inDist = append(ins, arg), append(inDist, ad)
		}
	}
	attrs := ""
	if c.attrs != "" {
		attrs = " " + c.attrs
	}
	return fmt.Sprintf("%s\nprogram main {\n  block 0 {\n%s    op 1 %s(%s) -> (%s)%s role forward\n         dist @w impl %s [%s -> %s]\n  }\n}\n",
		mesh.decl, vars.String(), c.op, strings.Join(ins, ", "), strings.Join(outs, ", "), attrs, c.impl,
		strings.Join(inDist, ", "), strings.Join(outDist, ", "))
}

// spmdGradPartials gives each output var of a grad op lowered by spmd:0
// the partial state the impl requires: its grad rule's, averaged along
// the mesh dims the loss averages over (lower.SPMDGradPartial).
// append-backward leaves the grad ops of spmd:0 ops without a dist (for
// completion): they get the impl and their vars' mappings first.
func spmdGradPartials(m *ir.Module, loss string) error {
	g := m.Main.Global()
	lv := g.Var(loss)
	fwd := map[int64]*ir.Op{}
	for _, op := range g.Ops {
		fwd[op.ID] = op
	}
	for _, op := range g.Ops {
		if f := fwd[op.Fwd]; op.Role.IsBackward() && op.Dist == nil && f != nil && f.Dist != nil && f.Dist.ImplType == lower.SPMDType {
			d := &ir.OpDist{Mesh: f.Dist.Mesh, ImplType: lower.SPMDType}
			for a := range op.InputNames {
				if v := g.Var(a); v != nil && v.Dist != nil {
					d.Inputs = append(d.Inputs, ir.ArgDist{Name: a, DimsMapping: slices.Clone(v.Dist.DimsMapping)})
				}
			}
			for a := range op.OutputNames {
				if v := g.Var(a); v != nil && v.Dist != nil {
					d.Outputs = append(d.Outputs, ir.ArgDist{Name: a, DimsMapping: slices.Clone(v.Dist.DimsMapping)})
				}
			}
			op.Dist = d
		}
	}
	for _, op := range g.Ops {
		if !op.Role.IsBackward() || op.Fwd == 0 || op.Dist == nil || op.Dist.ImplType != lower.SPMDType {
			continue
		}
		rule, err := ops.ShardingRuleOf(op, g.Var)
		if err != nil || rule == nil {
			return err
		}
		var in [][]int
		for a := range op.InputNames {
			mm, ok := op.Dist.InputMapping(a)
			if v := g.Var(a); !ok || v == nil || v.Type.Kind != ir.DenseTensor {
				mm = nil
			}
			in = append(in, mm)
		}
		sh, err := rule.Forward(m.Mesh(op.Dist.Mesh).Shape, in)
		if err != nil {
			continue // refused by the impl
		}
		j := 0
		for a := range op.OutputNames {
			if v := g.Var(a); v != nil && v.Dist != nil && j < len(sh.Partial) && !slices.Contains(v.Type.Shape, 0) {
				v.Dist.Partial = lower.SPMDGradPartial(sh.Partial[j], lv.Dist)
			}
			j++
		}
	}
	return nil
}

func TestSPMDProperty(t *testing.T) {
	reg := lower.DefaultRegistry()
	rnd := rand.New(rand.NewPCG(3, 4))
	var sb strings.Builder
	fmt.Fprintf(&sb, "%-36s %6s %8s %7s %7s %8s\n", "impl (representative op)", "tried", "accepted", "refused", "proven", "fwd-only")
	for _, c := range spmdPropCases() {
		tried, accepted, refused, proven, fwdOnly := 0, 0, 0, 0, 0
		documented := map[string]bool{}
		// try partitions src (a training step when train) and proves it
		// by check when accepted; it reports whether it was accepted.
		try := func(kind, combo string, must bool, m *ir.Module) bool {
			tried++
			if err := passes.Partition(m.Clone(), reg, 0); err != nil {
				refused++
				if must {
					t.Errorf("%s: the documented %s case %s is refused: %v", c.name, kind, combo, err)
				}
				return false
			}
			accepted++
			documented[kind+" "+combo] = true
			rep, err := check.Run(context.Background(), m, check.Options{Steps: 1})
			if err == nil {
				err = rep.Err()
			}
			if err != nil {
				t.Errorf("%s: %s %s is accepted but not proven: %v\n%s", c.name, kind, combo, err, ir.Print(m))
				return true
			}
			if kind == "train" {
				proven++
			} else {
				fwdOnly++
			}
			return true
		}
		for _, mesh := range propMeshes {
			var per [][][]int
			for _, a := range c.args {
				per = append(per, mappings(len(a.shape), mesh.dims))
			}
			for _, ms := range product(per) {
				for partial := -1; partial < mesh.dims; partial++ {
					combo := c.combo(ms)
					if partial >= 0 {
						if slices.Contains(ms[c.outIndex()], partial) {
							continue
						}
						combo += fmt.Sprintf(" out partial [%d]", partial)
					}
					docs := spmdDocuments[c.name]
					mustFwd := mesh.dims == 2 && slices.Contains(docs["fwd"], combo)
					mustTrain := mesh.dims == 2 && slices.Contains(docs["train"], combo)
					if sampled() && !mustFwd && !mustTrain && rnd.IntN(8) != 0 {
						continue
					}
					m, err := ir.Parse(c.name, []byte(c.buildForward(mesh, ms, partial)))
					if err != nil {
						t.Fatalf("%s %s: %v", c.name, combo, err)
					}
					try("fwd", combo, mustFwd, m)
					src, sinkable := c.build(mesh, ms, partial)
					if !sinkable {
						continue
					}
					if m, err = ir.Parse(c.name, []byte(src)); err != nil {
						t.Fatalf("%s %s: %v\n%s", c.name, combo, err, src)
					}
					if _, err := passes.AppendBackward(m, "loss"); err != nil {
						t.Fatalf("%s %s: append-backward: %v", c.name, combo, err)
					}
					if err := spmdGradPartials(m, "loss"); err != nil {
						t.Fatalf("%s %s: %v", c.name, combo, err)
					}
					try("train", combo, mustTrain, m)
				}
			}
		}
		for kind, ds := range spmdDocuments[c.name] {
			for _, d := range ds {
				if !documented[kind+" "+d] {
					t.Errorf("%s: the documented %s case %s was not accepted", c.name, kind, d)
				}
			}
		}
		fmt.Fprintf(&sb, "%-36s %6d %8d %7d %7d %8d\n", c.name, tried, accepted, refused, proven, fwdOnly)
	}
	t.Logf("\n%s", sb.String())
}
