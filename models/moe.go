package models

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/registry"
)

// MoEConfig sizes a mixture-of-experts layer. A zero field takes its
// default: 8 tokens of model width 4, 4 experts with hidden width 8,
// top-2 gating, f32.
type MoEConfig struct {
	Tokens, Model, Hidden, Experts, TopK int
	DType                                ir.DType
}

func (c MoEConfig) withDefaults() MoEConfig {
	if c.Tokens <= 0 {
		c.Tokens = 8
	}
	if c.Model <= 0 {
		c.Model = 4
	}
	if c.Hidden <= 0 {
		c.Hidden = 8
	}
	if c.Experts <= 0 {
		c.Experts = 4
	}
	if c.TopK <= 0 {
		c.TopK = 2
	}
	if c.DType == ir.DTypeInvalid {
		c.DType = ir.F32
	}
	return c
}

// MoEStrategies lists the strategies AnnotateMoE knows.
var MoEStrategies = []string{"ep", "dp,ep"}

// MoE returns a serial, forward-only MoE layer named "moe" over tokens x
// [Tokens, Model] (is_data), projected by a dense w_in, with its residual
// and a squared-mean loss:
//
//	input:    u = x·w_in
//	gate:     logits = u·gate_w; probs = softmax(logits); topv, topi = top_k(probs, k)
//	route:    local_count = number_count(topi); global_count = alltoall(local_count)
//	          pos = assign_pos(topi, cumsum(local_count)); tok = pos // k
//	dispatch: xs = gather(u, tok); xr = global_scatter(xs, local_count, global_count)
//	experts:  y = grouped_matmul(relu(grouped_matmul(xr, w1)), w2)   (w1 [E, d, h], w2 [E, h, d])
//	combine:  yb = global_gather(y, …); ys = scatter(0, pos, yb) [Tokens·k, d]
//	          moe = reshape(topv, [N, 1, k]) · reshape(ys, [N, k, d])
//	loss:     z = u + moe; loss = mean(z·z)
//
// The exchanges carry expert_axis "ep" and ring_id 0: serially they are a
// world of one (the identity on rows sorted by expert), and partitioning
// along ep makes them an all-to-all. Every token slot keeps its expert:
// there is no capacity limit.
func MoE(cfg MoEConfig) *ir.Module {
	cfg = cfg.withDefaults()
	n, d, h, e, k := int64(cfg.Tokens), int64(cfg.Model), int64(cfg.Hidden), int64(cfg.Experts), int64(cfg.TopK)
	dt := cfg.DType
	code, _ := dt.PaddleCode()
	i64code, _ := ir.I64.PaddleCode()

	m := ir.NewModule("moe")
	b := ir.NewBuilder(m)
	s := b.Startup()
	b.Var("x", ir.Tensor(dt, n, d)).WithFlags(ir.FlagIsData | ir.FlagStopGradient)
	params := []struct {
		name  string
		shape []int64
		fanIn int64
		seed  int64
	}{{"w_in", []int64{d, d}, d, 4}, {"gate_w", []int64{d, e}, d, 1}, {"w1", []int64{e, d, h}, d, 2}, {"w2", []int64{e, h, d}, h, 3}}
	for _, p := range params {
		b.Param(p.name, ir.Tensor(dt, p.shape...)).WithFlags(ir.FlagTrainable)
		s.Param(p.name, ir.Tensor(dt, p.shape...)).WithFlags(ir.FlagTrainable)
		bound := 1 / math.Sqrt(float64(p.fanIn))
		s.Op("uniform_random", nil, ir.Slots("Out", p.name),
			ir.A("dtype", ir.Int(code)), ir.A("shape", ir.Ints(slices.Clone(p.shape))),
			ir.A("min", ir.Float(-bound)), ir.A("max", ir.Float(bound)), ir.A("seed", ir.Int(p.seed)))
	}
	ints := func(name string, shape ...int64) {
		b.Var(name, ir.Tensor(ir.I64, shape...)).WithFlags(ir.FlagStopGradient)
	}
	exchange := []ir.Attr{ir.A("ring_id", ir.Int(0)), ir.A("use_calc_stream", ir.Bool(true)),
		ir.A(registry.ExpertAxisAttr, ir.String("ep"))}

	// The layer's input: a dense projection of the tokens, so that
	// gradients flow back through the whole layer.
	b.Var("u", ir.Tensor(dt, n, d))
	b.Op("matmul_v2", ir.Slots("X", "x", "Y", "w_in"), ir.Slots("Out", "u"),
		ir.A("trans_x", ir.Bool(false)), ir.A("trans_y", ir.Bool(false)))

	// Gate.
	b.Var("gate_logits", ir.Tensor(dt, n, e))
	b.Var("gate_probs", ir.Tensor(dt, n, e))
	b.Var("topv", ir.Tensor(dt, n, k))
	ints("topi", n, k)
	b.Op("matmul_v2", ir.Slots("X", "u", "Y", "gate_w"), ir.Slots("Out", "gate_logits"),
		ir.A("trans_x", ir.Bool(false)), ir.A("trans_y", ir.Bool(false)))
	b.Op("softmax", ir.Slots("X", "gate_logits"), ir.Slots("Out", "gate_probs"), ir.A("axis", ir.Int(-1)))
	b.Op("top_k_v2", ir.Slots("X", "gate_probs"), ir.Slots("Out", "topv", "Indices", "topi"),
		ir.A("k", ir.Int(k)), ir.A("axis", ir.Int(-1)), ir.A("largest", ir.Bool(true)), ir.A("sorted", ir.Bool(true)))

	// Routing: counts, their exchange, and the slots in expert order.
	ints("local_count", e)
	ints("global_count", e)
	ints("cum_count", e)
	ints("pos", -1)
	ints("top_k", 1)
	ints("tok", -1)
	b.Op("number_count", ir.Slots("numbers", "topi"), ir.Slots("Out", "local_count"), ir.A("upper_range", ir.Int(e)))
	b.Op("alltoall", ir.Slots("X", "local_count"), ir.Slots("Out", "global_count"), exchange...)
	b.Op("cumsum", ir.Slots("X", "local_count"), ir.Slots("Out", "cum_count"), ir.A("axis", ir.Int(0)))
	b.Op("assign_pos", ir.Slots("X", "topi", "cum_count", "cum_count"), ir.Slots("Out", "pos"))
	b.Op("fill_constant", nil, ir.Slots("Out", "top_k"),
		ir.A("dtype", ir.Int(i64code)), ir.A("shape", ir.Ints{1}), ir.A("value", ir.Float(float64(k))))
	b.Op("elementwise_floordiv", ir.Slots("X", "pos", "Y", "top_k"), ir.Slots("Out", "tok"), ir.A("axis", ir.Int(-1)))

	// Dispatch, experts, return.
	for _, v := range []struct {
		name string
		w    int64
	}{{"xs", d}, {"xr", d}, {"h1", h}, {"a1", h}, {"y", d}, {"yb", d}} {
		b.Var(v.name, ir.Tensor(dt, -1, v.w))
	}
	b.Op("gather", ir.Slots("X", "u", "Index", "tok"), ir.Slots("Out", "xs"), ir.A("axis", ir.Int(0)))
	b.Op("global_scatter", ir.Slots("X", "xs", "local_count", "local_count", "global_count", "global_count"), ir.Slots("Out", "xr"), exchange...)
	b.Op("grouped_matmul", ir.Slots("X", "xr", "W", "w1", "ExpertCount", "global_count"), ir.Slots("Out", "h1"))
	b.Op("relu", ir.Slots("X", "h1"), ir.Slots("Out", "a1"))
	b.Op("grouped_matmul", ir.Slots("X", "a1", "W", "w2", "ExpertCount", "global_count"), ir.Slots("Out", "y"))
	b.Op("global_gather", ir.Slots("X", "y", "local_count", "local_count", "global_count", "global_count"), ir.Slots("Out", "yb"), exchange...)

	// Combine: back to token-slot order, weighted by the gate.
	b.Var("slots_zero", ir.Tensor(dt, n*k, d)).WithFlags(ir.FlagStopGradient)
	b.Var("ys", ir.Tensor(dt, n*k, d))
	b.Var("ys3", ir.Tensor(dt, n, k, d))
	b.Var("ys3_xshape", ir.Tensor(dt, 0, n*k, d)).WithFlags(ir.FlagStopGradient)
	b.Var("gate3", ir.Tensor(dt, n, 1, k))
	b.Var("gate3_xshape", ir.Tensor(dt, 0, n, k)).WithFlags(ir.FlagStopGradient)
	b.Var("moe3", ir.Tensor(dt, n, 1, d))
	b.Var("moe", ir.Tensor(dt, n, d))
	b.Var("moe_xshape", ir.Tensor(dt, 0, n, 1, d)).WithFlags(ir.FlagStopGradient)
	b.Op("fill_constant", nil, ir.Slots("Out", "slots_zero"),
		ir.A("dtype", ir.Int(code)), ir.A("shape", ir.Ints{n * k, d}), ir.A("value", ir.Float(0)))
	b.Op("scatter", ir.Slots("X", "slots_zero", "Ids", "pos", "Updates", "yb"), ir.Slots("Out", "ys"), ir.A("overwrite", ir.Bool(true)))
	b.Op("reshape2", ir.Slots("X", "ys"), ir.Slots("Out", "ys3", "XShape", "ys3_xshape"), ir.A("shape", ir.Ints{n, k, d}))
	b.Op("reshape2", ir.Slots("X", "topv"), ir.Slots("Out", "gate3", "XShape", "gate3_xshape"), ir.A("shape", ir.Ints{n, 1, k}))
	b.Op("matmul_v2", ir.Slots("X", "gate3", "Y", "ys3"), ir.Slots("Out", "moe3"),
		ir.A("trans_x", ir.Bool(false)), ir.A("trans_y", ir.Bool(false)))
	b.Op("reshape2", ir.Slots("X", "moe3"), ir.Slots("Out", "moe", "XShape", "moe_xshape"), ir.A("shape", ir.Ints{n, d}))

	// Residual and loss.
	b.Var("z", ir.Tensor(dt, n, d))
	b.Var("zz", ir.Tensor(dt, n, d))
	b.Var("loss", ir.Tensor(dt))
	b.Op("elementwise_add", ir.Slots("X", "u", "Y", "moe"), ir.Slots("Out", "z"), ir.A("axis", ir.Int(-1)))
	b.Op("elementwise_mul", ir.Slots("X", "z", "Y", "z"), ir.Slots("Out", "zz"), ir.A("axis", ir.Int(-1)))
	b.Op("mean", ir.Slots("X", "zz"), ir.Slots("Out", "loss")).WithRole(ir.RoleLoss)
	if err := b.Err(); err != nil {
		panic("models.MoE: " + err.Error()) // the names above are distinct
	}
	return m
}

// MoETraining returns an annotated MoE training step: MoE(cfg), its
// backward, AnnotateMoE's strategy on mesh, and the optimizer ("" is
// sgd) with learning rate 0.01.
func MoETraining(cfg MoEConfig, strategy string, mesh *ir.ProcessMesh, optimizer string) (*ir.Module, error) {
	return train(MoE(cfg), AnnotateMoE, strategy, mesh, optimizer)
}

// expertOps are the op types that run on the expert side of the layer.
var expertOps = map[string]bool{"alltoall": true, "global_scatter": true, "global_gather": true, "grouped_matmul": true, "relu": true}

// AnnotateMoE distributes an MoE layer (MoE's ops, with or without their
// grad ops) on mesh, which must have a dim named ep, and for "dp,ep" one
// named dp too:
//
//   - "ep": one mesh. Tokens are split on their batch dim along ep
//     (every token-side var [ep, -1…]); expert weights w1, w2 along their
//     expert dim ([ep, -1, -1]); the gate weight replicated, so its grad
//     is averaged over ep by the batch-dim rule. The expert-side rows
//     (xr, h1, a1, y) are data-dependent and replicated in their mapping.
//   - "dp,ep": experts split along ep and replicated along dp; tokens split
//     over every rank. Since a dims_mapping entry names one mesh dim,
//     the token side lives on a second, 1-D mesh "tokens" over the same
//     ranks in the same order (dim "dp_ep"), and the expert-side rows are
//     [dp, -1] on mesh: each dp replica's experts see their own tokens,
//     so w1 and w2's grads are averaged over dp by the batch-dim rule.
//
// Exchange ops get impl expert_parallel (global_scatter:0, …), the
// grouped matmuls grouped_matmul:0, reshapes the reshape2 impl of their
// rank change, softmax softmax:0, everything else default:0. The loss is
// partial avg over the token axis; local_count (each rank's own counts)
// partial sum. Grad vars take their var's mapping without the partial;
// grad ops their forward op's mesh and impl; other ops the mesh of their
// first output. On error the module is left unchanged.
func AnnotateMoE(m *ir.Module, strategy string, mesh *ir.ProcessMesh) error {
	if !slices.Contains(MoEStrategies, strategy) {
		return fmt.Errorf("unknown MoE strategy %q (want %s)", strategy, strings.Join(MoEStrategies, ", "))
	}
	if mesh == nil || mesh.Name == "" {
		return errors.New("annotate: a named mesh is required")
	}
	ep := mesh.DimIndex("ep")
	if ep < 0 {
		return fmt.Errorf("strategy %s needs a mesh dim named ep; mesh %s has dims [%s]", strategy, mesh.Name, strings.Join(mesh.DimNames, ", "))
	}
	if old := m.Mesh(mesh.Name); old != nil && !meshEqual(old, mesh) {
		return fmt.Errorf("annotate: the module already has a different mesh %s", mesh.Name)
	}
	if m.Main == nil || len(m.Main.Blocks) != 1 {
		return errors.New("annotate: the module must have a main program of one block")
	}
	tokens, tokenAxis, rowAxis := mesh, ep, -1
	var newMeshes []*ir.ProcessMesh
	if m.Mesh(mesh.Name) == nil {
		newMeshes = append(newMeshes, cloneMesh(mesh))
	}
	if strategy == "dp,ep" {
		dp := mesh.DimIndex("dp")
		if dp < 0 {
			return fmt.Errorf("strategy %s needs a mesh dim named dp; mesh %s has dims [%s]", strategy, mesh.Name, strings.Join(mesh.DimNames, ", "))
		}
		tokens = &ir.ProcessMesh{Name: "tokens", Shape: []int{len(mesh.ProcessIDs)}, DimNames: []string{"dp_ep"},
			ProcessIDs: slices.Clone(mesh.ProcessIDs)}
		if old := m.Mesh(tokens.Name); old != nil && !meshEqual(old, tokens) {
			return fmt.Errorf("annotate: the module already has a different mesh %s", tokens.Name)
		} else if old == nil {
			newMeshes = append(newMeshes, tokens)
		}
		tokenAxis, rowAxis = 0, dp
	}
	g := m.Main.Global()
	p := &plan{dists: map[string]*ir.TensorDist{}, ops: map[int64]opPlan{}}
	tok := func(mapping ...int) *ir.TensorDist { return &ir.TensorDist{Mesh: tokens.Name, DimsMapping: mapping} }
	exp := func(mapping ...int) *ir.TensorDist { return &ir.TensorDist{Mesh: mesh.Name, DimsMapping: mapping} }
	// Vars by role in the layer; names are MoE's.
	for _, v := range g.Vars() {
		if !v.Type.IsTensor() || strings.Contains(v.Name, "@GRAD") {
			continue
		}
		r := v.Type.Rank()
		switch {
		case v.Name == "w1" || v.Name == "w2":
			p.dists[v.Name] = exp(ep, -1, -1)
		case v.Name == "gate_w" || v.Name == "w_in":
			p.dists[v.Name] = tok(-1, -1)
		case v.Name == "loss":
			p.dists[v.Name] = &ir.TensorDist{Mesh: tokens.Name, DimsMapping: []int{}, Partial: []ir.Partial{{Dim: tokenAxis, Reduce: ir.ReduceAvg}}}
		case v.Name == "local_count" || v.Name == "cum_count":
			// Each rank counts its own tokens; the counts add up (cumsum
			// is linear).
			p.dists[v.Name] = &ir.TensorDist{Mesh: tokens.Name, DimsMapping: []int{-1}, Partial: []ir.Partial{{Dim: tokenAxis, Reduce: ir.ReduceSum}}}
		case v.Name == "global_count":
			p.dists[v.Name] = exp(-1)
		case slices.Contains([]string{"xr", "h1", "a1", "y"}, v.Name):
			p.dists[v.Name] = exp(rowAxis, -1)
		case v.Type.Shape[0] == -1 || v.Name == "top_k":
			// Data-dependent rows (pos, tok, xs, yb) and the constant k.
			p.dists[v.Name] = tok(replicated(r)...)
		case strings.HasSuffix(v.Name, "_xshape"):
			mp := replicated(r)
			mp[1] = tokenAxis
			p.dists[v.Name] = tok(mp...)
		default: // token-major activations
			mp := replicated(r)
			mp[0] = tokenAxis
			p.dists[v.Name] = tok(mp...)
		}
	}
	for _, v := range g.Vars() {
		if i := strings.Index(v.Name, "@GRAD"); i > 0 && v.Type.IsTensor() {
			if d, ok := p.dists[v.Name[:i]]; ok {
				p.dists[v.Name] = &ir.TensorDist{Mesh: d.Mesh, DimsMapping: slices.Clone(d.DimsMapping)}
			}
		}
	}
	for _, op := range g.Ops {
		if op.Fwd != 0 {
			continue
		}
		o := opPlan{mesh: tokens.Name, impl: impl{"default", 0}}
		switch {
		case op.Type == "alltoall" || op.Type == "global_scatter" || op.Type == "global_gather":
			o = opPlan{mesh: mesh.Name, impl: impl{op.Type, 0}}
		case op.Type == "grouped_matmul":
			o = opPlan{mesh: mesh.Name, impl: impl{"grouped_matmul", 0}}
		case expertOps[op.Type]:
			o.mesh = mesh.Name
		case op.Type == "reshape2":
			o.impl = reshapeImpl(g, op)
		case op.Type == "softmax":
			o.impl = impl{"softmax", 0}
		case !op.Role.IsForward():
			// The loss grad, grad sums, optimizer ops: their output's mesh.
			for a := range op.OutputNames {
				if d := p.dists[a]; d != nil {
					o.mesh = d.Mesh
					break
				}
			}
		}
		p.ops[op.ID] = o
	}
	return p.apply(m, g, newMeshes)
}

// plan is an annotation being built: var dists and op meshes and impls.
type plan struct {
	dists map[string]*ir.TensorDist
	ops   map[int64]opPlan
}

type opPlan struct {
	mesh string
	impl impl
}

// apply checks the plan (every var and op covered, an arg read on another
// mesh than its var's replicated, startup vars known) and writes it.
func (p *plan) apply(m *ir.Module, g *ir.Block, newMeshes []*ir.ProcessMesh) error {
	var errs []error
	for _, op := range g.Ops {
		if op.Fwd != 0 {
			f, ok := p.ops[op.Fwd]
			if !ok {
				errs = append(errs, fmt.Errorf("%s: its forward op %d has no plan", op, op.Fwd))
			}
			p.ops[op.ID] = f
		}
	}
	for _, v := range g.Vars() {
		if _, ok := p.dists[v.Name]; !ok && v.Type.IsTensor() {
			errs = append(errs, fmt.Errorf("var %s: the strategy does not know how to distribute it", v.Name))
		}
	}
	for _, op := range g.Ops {
		mesh := p.ops[op.ID].mesh
		for _, slots := range [2][]ir.Slot{op.Inputs, op.Outputs} {
			for _, s := range slots {
				for _, a := range s.Args {
					if d := p.dists[a]; d != nil && d.Mesh != mesh && !allReplicatedInts(d.DimsMapping) {
						errs = append(errs, fmt.Errorf("%s on mesh %s reads %s of mesh %s with dims_mapping %v: only replicated args cross meshes",
							op, mesh, a, d.Mesh, d.DimsMapping))
					}
				}
			}
		}
	}
	if m.Startup != nil {
		for _, b := range m.Startup.Blocks {
			for _, v := range b.Vars() {
				if _, ok := p.dists[v.Name]; !ok && v.Type.IsTensor() {
					errs = append(errs, fmt.Errorf("startup var %s: main's block 0 has no var of that name", v.Name))
				}
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("annotate: %w", err)
	}
	m.Meshes = append(m.Meshes, newMeshes...)
	for _, v := range g.Vars() {
		if d, ok := p.dists[v.Name]; ok {
			v.Dist = d.Clone()
		}
	}
	if m.Startup != nil {
		for _, b := range m.Startup.Blocks {
			for _, v := range b.Vars() {
				if d, ok := p.dists[v.Name]; ok {
					v.Dist = &ir.TensorDist{Mesh: d.Mesh, DimsMapping: slices.Clone(d.DimsMapping)}
				}
			}
		}
	}
	for _, op := range g.Ops {
		o := p.ops[op.ID]
		op.Dist = &ir.OpDist{Mesh: o.mesh, ImplType: o.impl.typ, ImplIndex: o.impl.index,
			Inputs: argDists(op.Inputs, p.dists), Outputs: argDists(op.Outputs, p.dists)}
	}
	return nil
}

func allReplicatedInts(m []int) bool {
	for _, x := range m {
		if x != -1 {
			return false
		}
	}
	return true
}

// reshapeImpl picks reshape2's impl by what the reshape does to the rank:
// add a dim (0), remove one (1), or keep the rank (2).
func reshapeImpl(g *ir.Block, op *ir.Op) impl {
	in, out := g.Var(op.Input("X")[0]), g.Var(op.Output("Out")[0])
	switch d := out.Type.Rank() - in.Type.Rank(); {
	case d > 0:
		return impl{"reshape2", 0}
	case d < 0:
		return impl{"reshape2", 1}
	}
	return impl{"reshape2", 2}
}
