package models

import (
	"math"
	"slices"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/lower"
)

// MoEConfig sizes a mixture-of-experts layer. A zero field takes its
// default: 8 tokens of model width 4, 4 experts with hidden width 8,
// top-2 gating, f32.
type MoEConfig struct {
	Tokens, Model, Hidden, Experts, TopK int
	// Capacity, when positive, is how many token slots each expert takes
	// at most; the rest are dropped.
	Capacity int
	DType    ir.DType
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

// AnnotateMoE distributes an MoE layer (MoE's ops, with or without their
// grad ops) for strategy "ep" or "dp,ep" on mesh, which must have a dim
// named ep (and dp): AnnotateGPT's rules for those strategies.
func AnnotateMoE(m *ir.Module, strategy string, mesh *ir.ProcessMesh) error {
	return annotateGPT(m, strategy, mesh, MoEStrategies, "MoE ")
}

// MoE returns a serial, forward-only MoE layer named "moe" over tokens x
// [Tokens, Model] (is_data), projected by a dense w_in, with its residual
// and a squared-mean loss:
//
//	input:    u = x·w_in
//	layer:    moe = the MoE block of u (see below)
//	loss:     z = u + moe; loss = mean(z·z)
//
// The MoE block of tokens u [N, d] (names prefixed as given, "" here):
//
//	gate:     logits = u·gate_w; probs = softmax(logits); topv, topi = top_k(probs, k)
//	route:    local_count = number_count(topi); global_count = alltoall(local_count)
//	          pos = assign_pos(topi, cumsum(local_count)); tok = pos // k
//	dispatch: xs = gather(u, tok); xr = global_scatter(xs, local_count, global_count)
//	experts:  y = grouped_matmul(relu(grouped_matmul(xr, w1)), w2)   (w1 [E, d, h], w2 [E, h, d])
//	combine:  yb = global_gather(y, …); ys = scatter(0, pos, yb) [N·k, d]
//	          moe = reshape(topv, [N, 1, k]) · reshape(ys, [N, k, d])
//
// The exchanges carry expert_axis "ep" and ring_id 0: serially they are a
// world of one (the identity on rows sorted by expert), and partitioning
// along ep makes them an all-to-all. With a Capacity, each expert takes
// at most that many token slots, the first in token order: the counts
// are exchanged, limited (limit_by_capacity), exchanged back, and the
// gate's choices beyond them pruned (prune_gate_by_capacity, -1 = dropped)
// before routing; a dropped slot contributes nothing to its token.
func MoE(cfg MoEConfig) *ir.Module {
	cfg = cfg.withDefaults()
	n, d := int64(cfg.Tokens), int64(cfg.Model)
	dt := cfg.DType
	m := ir.NewModule("moe")
	b := ir.NewBuilder(m)
	s := b.Startup()
	code, _ := dt.PaddleCode()
	param := func(name string, fanIn int64, seed int64, shape ...int64) {
		b.Param(name, ir.Tensor(dt, shape...)).WithFlags(ir.FlagTrainable)
		s.Param(name, ir.Tensor(dt, shape...)).WithFlags(ir.FlagTrainable)
		bound := 1 / math.Sqrt(float64(fanIn))
		s.Op("uniform_random", nil, ir.Slots("Out", name),
			ir.A("dtype", ir.Int(code)), ir.A("shape", ir.Ints(slices.Clone(shape))),
			ir.A("min", ir.Float(-bound)), ir.A("max", ir.Float(bound)), ir.A("seed", ir.Int(seed)))
	}
	b.Var("x", ir.Tensor(dt, n, d)).WithFlags(ir.FlagIsData | ir.FlagStopGradient)
	param("w_in", d, 4, d, d)
	// The layer's input: a dense projection of the tokens, so that
	// gradients flow back through the whole layer.
	b.Var("u", ir.Tensor(dt, n, d))
	b.Op("matmul_v2", ir.Slots("X", "x", "Y", "w_in"), ir.Slots("Out", "u"),
		ir.A("trans_x", ir.Bool(false)), ir.A("trans_y", ir.Bool(false)))
	seed := int64(0)
	moe := moeBlock(b, "", "u", cfg, func(name string, fanIn int64, shape ...int64) {
		seed++
		param(name, fanIn, seed, shape...)
	})
	b.Var("z", ir.Tensor(dt, n, d))
	b.Var("zz", ir.Tensor(dt, n, d))
	b.Var("loss", ir.Tensor(dt))
	b.Op("elementwise_add", ir.Slots("X", "u", "Y", moe), ir.Slots("Out", "z"), ir.A("axis", ir.Int(-1)))
	b.Op("elementwise_mul", ir.Slots("X", "z", "Y", "z"), ir.Slots("Out", "zz"), ir.A("axis", ir.Int(-1)))
	b.Op("mean", ir.Slots("X", "zz"), ir.Slots("Out", "loss")).WithRole(ir.RoleLoss)
	if err := b.Err(); err != nil {
		panic("models.MoE: " + err.Error()) // the names above are distinct
	}
	return m
}

// moeBlock appends the MoE block of MoE's doc over tokens u [Tokens,
// Model] to b, its vars prefixed p, and returns the name of its output
// [Tokens, Model]. param declares a trainable param and its initialiser.
func moeBlock(b *ir.Builder, p, u string, cfg MoEConfig, param func(name string, fanIn int64, shape ...int64)) string {
	n, d, h, e, k := int64(cfg.Tokens), int64(cfg.Model), int64(cfg.Hidden), int64(cfg.Experts), int64(cfg.TopK)
	dt := cfg.DType
	code, _ := dt.PaddleCode()
	i64code, _ := ir.I64.PaddleCode()
	ints := func(name string, shape ...int64) string {
		b.Var(p+name, ir.Tensor(ir.I64, shape...)).WithFlags(ir.FlagStopGradient)
		return p + name
	}
	tensor := func(name string, shape ...int64) string {
		b.Var(p+name, ir.Tensor(dt, shape...))
		return p + name
	}
	exchange := []ir.Attr{ir.A("ring_id", ir.Int(0)), ir.A("use_calc_stream", ir.Bool(true)),
		ir.A(lower.ExpertAxisAttr, ir.String("ep"))}
	fill := func(out string, c int64, value float64, shape ...int64) {
		b.Op("fill_constant", nil, ir.Slots("Out", out),
			ir.A("dtype", ir.Int(c)), ir.A("shape", ir.Ints(shape)), ir.A("value", ir.Float(value)))
	}
	gateW, w1, w2 := p+"gate_w", p+"w1", p+"w2"
	param(gateW, d, d, e)
	param(w1, d, e, d, h)
	param(w2, h, e, h, d)

	// Gate.
	logits, probs, topv := tensor("gate_logits", n, e), tensor("gate_probs", n, e), tensor("topv", n, k)
	topi := ints("topi", n, k)
	b.Op("matmul_v2", ir.Slots("X", u, "Y", gateW), ir.Slots("Out", logits),
		ir.A("trans_x", ir.Bool(false)), ir.A("trans_y", ir.Bool(false)))
	b.Op("softmax", ir.Slots("X", logits), ir.Slots("Out", probs), ir.A("axis", ir.Int(-1)))
	b.Op("top_k_v2", ir.Slots("X", probs), ir.Slots("Out", topv, "Indices", topi),
		ir.A("k", ir.Int(k)), ir.A("axis", ir.Int(-1)), ir.A("largest", ir.Bool(true)), ir.A("sorted", ir.Bool(true)))

	// Capacity: count, exchange, limit, exchange back, prune.
	if cfg.Capacity > 0 {
		all, allG := ints("all_count", e), ints("all_global_count", e)
		capacity, keptG, kept := ints("capacity", e), ints("kept_global_count", e), ints("kept_count", e)
		pruned := ints("topi_kept", n, k)
		b.Op("number_count", ir.Slots("numbers", topi), ir.Slots("Out", all), ir.A("upper_range", ir.Int(e)))
		b.Op("alltoall", ir.Slots("X", all), ir.Slots("Out", allG), exchange...)
		fill(capacity, i64code, float64(cfg.Capacity), e)
		b.Op("limit_by_capacity", ir.Slots("expert_count", allG, "capacity", capacity), ir.Slots("Out", keptG),
			ir.A("n_worker", ir.Int(1)), ir.A(lower.ExpertAxisAttr, ir.String("ep")))
		b.Op("alltoall", ir.Slots("X", keptG), ir.Slots("Out", kept), exchange...)
		b.Op("prune_gate_by_capacity", ir.Slots("GateIdx", topi, "ExpertCount", kept), ir.Slots("NewGateIdx", pruned),
			ir.A("n_expert", ir.Int(e)), ir.A("n_worker", ir.Int(1)), ir.A(lower.ExpertAxisAttr, ir.String("ep")))
		topi = pruned
	}

	// Routing: counts, their exchange, and the slots in expert order.
	local, global, cum := ints("local_count", e), ints("global_count", e), ints("cum_count", e)
	pos, topK, tok := ints("pos", -1), ints("top_k", 1), ints("tok", -1)
	b.Op("number_count", ir.Slots("numbers", topi), ir.Slots("Out", local), ir.A("upper_range", ir.Int(e)))
	b.Op("alltoall", ir.Slots("X", local), ir.Slots("Out", global), exchange...)
	b.Op("cumsum", ir.Slots("X", local), ir.Slots("Out", cum), ir.A("axis", ir.Int(0)))
	b.Op("assign_pos", ir.Slots("X", topi, "cum_count", cum), ir.Slots("Out", pos))
	fill(topK, i64code, float64(k), 1)
	b.Op("elementwise_floordiv", ir.Slots("X", pos, "Y", topK), ir.Slots("Out", tok), ir.A("axis", ir.Int(-1)))

	// Dispatch, experts, return.
	xs, xr := tensor("xs", -1, d), tensor("xr", -1, d)
	h1, a1, y, yb := tensor("h1", -1, h), tensor("a1", -1, h), tensor("y", -1, d), tensor("yb", -1, d)
	counts := []string{"local_count", local, "global_count", global}
	b.Op("gather", ir.Slots("X", u, "Index", tok), ir.Slots("Out", xs), ir.A("axis", ir.Int(0)))
	b.Op("global_scatter", ir.Slots(append([]string{"X", xs}, counts...)...), ir.Slots("Out", xr), exchange...)
	b.Op("grouped_matmul", ir.Slots("X", xr, "W", w1, "ExpertCount", global), ir.Slots("Out", h1))
	b.Op("relu", ir.Slots("X", h1), ir.Slots("Out", a1))
	b.Op("grouped_matmul", ir.Slots("X", a1, "W", w2, "ExpertCount", global), ir.Slots("Out", y))
	b.Op("global_gather", ir.Slots(append([]string{"X", y}, counts...)...), ir.Slots("Out", yb), exchange...)

	// Combine: back to token-slot order, weighted by the gate.
	zero := tensor("slots_zero", n*k, d)
	b.Block().Var(zero).WithFlags(ir.FlagStopGradient)
	ys, ys3, gate3 := tensor("ys", n*k, d), tensor("ys3", n, k, d), tensor("gate3", n, 1, k)
	moe3, out := tensor("moe3", n, 1, d), tensor("moe", n, d)
	xshape := func(of string, shape ...int64) string {
		return b.Var(of+"_xshape", ir.Tensor(dt, append([]int64{0}, shape...)...)).WithFlags(ir.FlagStopGradient).Name()
	}
	fill(zero, code, 0, n*k, d)
	b.Op("scatter", ir.Slots("X", zero, "Ids", pos, "Updates", yb), ir.Slots("Out", ys), ir.A("overwrite", ir.Bool(true)))
	b.Op("reshape2", ir.Slots("X", ys), ir.Slots("Out", ys3, "XShape", xshape(ys3, n*k, d)), ir.A("shape", ir.Ints{n, k, d}))
	b.Op("reshape2", ir.Slots("X", topv), ir.Slots("Out", gate3, "XShape", xshape(gate3, n, k)), ir.A("shape", ir.Ints{n, 1, k}))
	b.Op("matmul_v2", ir.Slots("X", gate3, "Y", ys3), ir.Slots("Out", moe3),
		ir.A("trans_x", ir.Bool(false)), ir.A("trans_y", ir.Bool(false)))
	b.Op("reshape2", ir.Slots("X", moe3), ir.Slots("Out", out, "XShape", xshape(out, n, 1, d)), ir.A("shape", ir.Ints{n, d}))
	return out
}

// MoETraining returns an annotated MoE training step: MoE(cfg), its
// backward, AnnotateMoE's strategy on mesh, and the optimizer ("" is
// sgd) with learning rate 0.01.
func MoETraining(cfg MoEConfig, strategy string, mesh *ir.ProcessMesh, optimizer string) (*ir.Module, error) {
	return train(MoE(cfg), AnnotateMoE, strategy, mesh, optimizer)
}

// moeOnly lists the op types only MoE blocks use.
var moeOnly = []string{"number_count", "alltoall", "assign_pos", "global_scatter", "global_gather",
	"grouped_matmul", "limit_by_capacity", "prune_gate_by_capacity"}

// moeSeeds seeds the MoE blocks. Under "ep" the tokens are split on
// their batch dim along ep and the experts w1, w2 (grouped_matmul's W)
// along their expert dim ([ep, -1, -1]); the gate weight is replicated,
// so its grad is averaged over ep by the batch-dim rule; complete infers
// the rest, the exchanges on the one mesh. With a capacity,
// limit_by_capacity is seeded with its own impl, its capacity split
// along ep as the experts are.
//
// Under "dp,ep" the experts are split along ep and replicated along dp,
// and the tokens are split over every rank: as a dims_mapping entry
// names one mesh dim, they live on a 1-D view of the ranks, mesh
// "tokens" (dim dp_ep), while the expert side lives on the strategy's
// mesh with its rows [dp, -1] (each dp replica's experts see their own
// tokens, so w1 and w2's grads are averaged over dp). Which mesh each
// side of an exchange lives on is not the sharding rules' to say: the
// exchanges (alltoall, global_scatter, global_gather, forward and grad)
// are seeded on the experts' mesh with their own impls, and so are the
// dispatch's gather and the combine's scatter (and their grads) on the
// tokens', with the dists of what they write; completed from the data
// and params alone, the combine lands on the experts' mesh and
// check-annotations refuses it (TestZooExchangesSeeded).
func (a *annotator) moeSeeds() {
	g := a.g
	for _, op := range g.Ops {
		switch {
		case !slices.Contains(moeOnly, op.Type):
		case a.expert == nil:
			a.fail("%s: MoE layers need strategy ep or dp,ep, not %s", op, a.strategy)
			return
		case op.Type == "limit_by_capacity" && a.rowAxis >= 0:
			// Each dp replica's experts would limit their own tokens
			// only: not what the serial program computes.
			a.fail("%s: a capacity limit under %s would apply per dp replica, which the serial program does not say; use ep", op, a.strategy)
		case op.Type == "limit_by_capacity":
			// Each rank limits its own experts, by their capacities split
			// as they are: completion would leave the constant whole, and
			// the op to the default impl, which needs it so.
			x, c, o := op.Input("expert_count"), op.Input("capacity"), op.Output("Out")
			if len(x) == 1 && len(c) == 1 && len(o) == 1 {
				a.setOn(a.expert, c[0], []int{a.epAxis})
				a.ops[op.ID] = &ir.OpDist{Mesh: a.expert.Name, ImplType: op.Type,
					Inputs:  []ir.ArgDist{{Name: x[0], DimsMapping: []int{-1}}, {Name: c[0], DimsMapping: []int{a.epAxis}}},
					Outputs: []ir.ArgDist{{Name: o[0], DimsMapping: []int{-1}}}}
			}
		case op.Type == "grouped_matmul":
			if w := op.Input("W"); len(w) == 1 {
				a.setOn(a.expert, w[0], []int{a.epAxis, -1, -1})
			}
		}
	}
	if a.rowAxis < 0 {
		return
	}
	fwdType := map[int64]string{}
	for _, op := range g.Ops {
		fwdType[op.ID] = op.Type
	}
	// expertRows: the rows an exchange delivers to, or takes from, the
	// experts.
	expertRows := map[string]bool{}
	for _, op := range g.Ops {
		switch op.Type {
		case "global_scatter":
			for _, o := range op.Output("Out") {
				expertRows[o] = true
			}
		case "global_gather":
			for _, x := range op.Input("X") {
				expertRows[x] = true
			}
		}
	}
	for _, op := range g.Ops {
		exchange := false
		switch op.Type {
		case "alltoall", "global_scatter", "global_gather":
			exchange = true
		case "gather", "scatter", "gather_grad", "scatter_grad":
		default:
			continue
		}
		d := &ir.OpDist{Mesh: a.mesh.Name, ImplType: "default"}
		if exchange {
			d.Mesh, d.ImplType = a.expert.Name, op.Type
			if op.Fwd != 0 {
				d.ImplType = fwdType[op.Fwd] // a grad exchange runs its forward op's impl
			}
		}
		mapping := func(name string) (*ir.ProcessMesh, []int) {
			v := g.Var(name)
			switch {
			case v.Type.Rank() == 1: // counts and positions
				if op.Type == "alltoall" {
					return a.expert, []int{-1}
				}
				return a.mesh, []int{-1}
			case expertRows[name]:
				return a.expert, append([]int{a.rowAxis}, replicated(v.Type.Rank()-1)...)
			case v.Type.Shape[0] < 0: // dispatched rows, replicated in their mapping
				return a.mesh, replicated(v.Type.Rank())
			}
			return a.mesh, a.batchMapping(v.Type.Rank())
		}
		for _, in := range op.Inputs {
			for _, arg := range in.Args {
				if v := g.Var(arg); v != nil && v.Type.IsTensor() {
					_, mp := mapping(arg)
					d.Inputs = append(d.Inputs, ir.ArgDist{Name: arg, DimsMapping: mp})
				}
			}
		}
		for _, out := range op.Outputs {
			for _, arg := range out.Args {
				if v := g.Var(arg); v != nil && v.Type.IsTensor() {
					pm, mp := mapping(arg)
					d.Outputs = append(d.Outputs, ir.ArgDist{Name: arg, DimsMapping: slices.Clone(mp)})
					a.setOn(pm, arg, mp)
				}
			}
		}
		a.ops[op.ID] = d
	}
}
