package models

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/distpass/distpass/ir"
)

// GPTConfig sizes a GPT decoder: Layers transformer blocks of width
// Hidden with Heads attention heads, a vocabulary of Vocab tokens,
// sequences of Seq tokens and batches of Batch sequences.
type GPTConfig struct {
	Layers, Hidden, Heads, Vocab, Seq, Batch int
	DType                                    ir.DType
	// Seed offsets the seeds of the random initialisers (0: the fixed
	// seeds 1, 2, ...), so generated modules differ by seed.
	Seed int64
	// MoEEvery, when positive, makes the MLP of every MoEEvery-th layer
	// (layers MoEEvery-1, 2·MoEEvery-1, ...) an MoE block of Experts
	// experts of hidden width 4·Hidden, top-TopK gating, and Capacity
	// (0: none) token slots per expert.
	MoEEvery, Experts, TopK, Capacity int
	// StatDims declares each layer norm's Mean and Variance [B,S], as
	// Paddle 3 keeps them, rather than flattened to [B*S]: a flattened
	// dim cannot hold a sequence split (sequence parallelism).
	StatDims bool
}

// TinyGPT is the GPT that tests run: 2 layers, hidden 64, 4 heads,
// vocabulary 128, sequence 8, batch 4, f32.
func TinyGPT() GPTConfig {
	return GPTConfig{Layers: 2, Hidden: 64, Heads: 4, Vocab: 128, Seq: 8, Batch: 4, DType: ir.F32}
}

// GPT2Small has the shape of GPT-2 small (124M parameters), batch 8. It
// is for benchmarks of the passes; check cannot run it in reasonable time.
func GPT2Small() GPTConfig {
	return GPTConfig{Layers: 12, Hidden: 768, Heads: 12, Vocab: 50304, Seq: 1024, Batch: 8, DType: ir.F32}
}

// GPT3 has the shape of GPT-3 175B, batch 8; for benchmarks only.
func GPT3() GPTConfig {
	return GPTConfig{Layers: 96, Hidden: 12288, Heads: 96, Vocab: 50304, Seq: 2048, Batch: 8, DType: ir.F32}
}

func (c GPTConfig) validate() error {
	if c.Layers <= 0 || c.Hidden <= 0 || c.Heads <= 0 || c.Vocab <= 0 || c.Seq <= 0 || c.Batch <= 0 {
		return fmt.Errorf("GPT config %+v: every size must be positive", c)
	}
	if c.Hidden%c.Heads != 0 {
		return fmt.Errorf("GPT config: hidden %d is not a multiple of heads %d", c.Hidden, c.Heads)
	}
	if c.MoEEvery > 0 && (c.Experts <= 0 || c.TopK <= 0 || c.TopK > c.Experts || c.Capacity < 0) {
		return fmt.Errorf("GPT config: MoE layers need experts > 0 and 0 < top-k <= experts, have %d and %d", c.Experts, c.TopK)
	}
	return nil
}

// The GPT's weight names that the strategies treat specially: the word
// embedding (vocab-parallel under mp), the column-parallel (suffix
// gptColumn) and row-parallel (gptRow) weights of each layer. Every other
// param is replicated.
const gptWordEmbedding = "wte"

var (
	gptColumn = []string{"_q_w", "_k_w", "_v_w", "_fc1_w"}
	gptRow    = []string{"_proj_w", "_fc2_w"}
)

func hasSuffix(s string, suffixes []string) bool {
	return slices.ContainsFunc(suffixes, func(x string) bool { return strings.HasSuffix(s, x) })
}

// GPT returns a serial, forward-only GPT decoder named "gpt" (it panics
// on a bad config). Data vars: ids i64[B,S] and labels i64[B,S,1]
// (is_data, stop_gradient), pos_ids i64[B,S] (is_data) and causal_mask
// f32[S,S] (is_data, stop_gradient), added to the attention scores.
// check feeds causal_mask random values rather than 0 and -inf: the ops
// are the same, and every score stays finite.
//
// Embedding: lookup_table_v2 of ids in wte [V,H] plus that of pos_ids in
// wpe [S,H] -> emb. Layer i (names prefixed l<i>_), pre-norm:
//
//	ln1 = layer_norm(x); q, k, v = ln1 @ {q,k,v}_w [H,H] + {q,k,v}_b,
//	reshaped (reshape2) to [B,S,nh,hd] and transposed (transpose2, perm
//	[0,2,1,3]) to [B,nh,S,hd]; scores = matmul_v2(q, k, trans_y) scaled
//	by 1/sqrt(hd) plus causal_mask; probs = softmax(scores); ctx = probs
//	@ v transposed back and reshaped to [B,S,H]; res1 = x + ctx @ proj_w
//	+ proj_b; ln2 = layer_norm(res1); res2 = res1 + gelu(ln2 @ fc1_w
//	[H,4H] + fc1_b) @ fc2_w [4H,H] + fc2_b.
//
// Then lnf = layer_norm(x), logits = lnf @ lm_w [H,V] (untied from wte),
// softmax_with_cross_entropy(logits, labels) -> (softmax, xent [B,S,1])
// and mean(xent) -> loss with role forward|loss. The startup program
// fills weights with uniform_random (a fixed seed per param, range
// ±1/sqrt(fan-in), ±0.1 for the embeddings), biases with 0 and layer
// norm scales with 1.
func GPT(cfg GPTConfig) *ir.Module {
	if cfg.DType == ir.DTypeInvalid {
		cfg.DType = ir.F32
	}
	if err := cfg.validate(); err != nil {
		panic("models.GPT: " + err.Error())
	}
	B, S, H, V := int64(cfg.Batch), int64(cfg.Seq), int64(cfg.Hidden), int64(cfg.Vocab)
	nh := int64(cfg.Heads)
	hd := H / nh
	dt := cfg.DType
	code, _ := dt.PaddleCode()

	m := ir.NewModule("gpt")
	b := ir.NewBuilder(m)
	s := b.Startup()
	seed := cfg.Seed
	uniform := func(name string, bound float64, shape []int64) {
		seed++
		s.Op("uniform_random", nil, ir.Slots("Out", name),
			ir.A("dtype", ir.Int(code)), ir.A("shape", ir.Ints(shape)),
			ir.A("min", ir.Float(-bound)), ir.A("max", ir.Float(bound)), ir.A("seed", ir.Int(seed)))
	}
	param := func(name string, init string, shape ...int64) {
		b.Param(name, ir.Tensor(dt, shape...)).WithFlags(ir.FlagTrainable)
		s.Param(name, ir.Tensor(dt, shape...)).WithFlags(ir.FlagTrainable)
		switch init {
		case "zero", "one":
			v := 0.0
			if init == "one" {
				v = 1
			}
			s.Op("fill_constant", nil, ir.Slots("Out", name),
				ir.A("dtype", ir.Int(code)), ir.A("shape", ir.Ints(shape)), ir.A("value", ir.Float(v)))
		default:
			bound := 1 / math.Sqrt(float64(shape[0]))
			if init == "embedding" {
				bound = 0.1
			}
			uniform(name, bound, shape)
		}
	}
	tensor := func(name string, shape ...int64) string {
		b.Var(name, ir.Tensor(dt, shape...))
		return name
	}
	add := func(x, y, out string, shape ...int64) string {
		tensor(out, shape...)
		b.Op("elementwise_add", ir.Slots("X", x, "Y", y), ir.Slots("Out", out), ir.A("axis", ir.Int(-1)))
		return out
	}
	// linear is x @ w + bias for x [B,S,in].
	linear := func(x, name string, in, out int64) string {
		w, bias := name+"_w", name+"_b"
		param(w, "uniform", in, out)
		param(bias, "zero", out)
		mm := tensor(name+"_mm", B, S, out)
		b.Op("matmul_v2", ir.Slots("X", x, "Y", w), ir.Slots("Out", mm),
			ir.A("trans_x", ir.Bool(false)), ir.A("trans_y", ir.Bool(false)))
		return add(mm, bias, name+"_out", B, S, out)
	}
	layerNorm := func(x, name string) string {
		param(name+"_scale", "one", H)
		param(name+"_bias", "zero", H)
		y := tensor(name+"_out", B, S, H)
		mean, vr := name+"_mean", name+"_var"
		sdt := dt // the statistics of a half-precision X are f32
		if dt == ir.F16 || dt == ir.BF16 {
			sdt = ir.F32
		}
		stats := []int64{B * S}
		if cfg.StatDims {
			stats = []int64{B, S}
		}
		b.Var(mean, ir.Tensor(sdt, stats...))
		b.Var(vr, ir.Tensor(sdt, stats...))
		b.Op("layer_norm", ir.Slots("X", x, "Scale", name+"_scale", "Bias", name+"_bias"),
			ir.Slots("Y", y, "Mean", mean, "Variance", vr),
			ir.A("begin_norm_axis", ir.Int(2)), ir.A("epsilon", ir.Float(1e-5)))
		return y
	}
	reshape := func(x, out string, xshape []int64, shape ...int64) string {
		tensor(out, shape...)
		tensor(out+"_xshape", append([]int64{0}, xshape...)...)
		b.Op("reshape2", ir.Slots("X", x), ir.Slots("Out", out, "XShape", out+"_xshape"), ir.A("shape", ir.Ints(shape)))
		return out
	}
	transpose := func(x, out string, xshape []int64, shape ...int64) string {
		tensor(out, shape...)
		tensor(out+"_xshape", append([]int64{0}, xshape...)...)
		b.Op("transpose2", ir.Slots("X", x), ir.Slots("Out", out, "XShape", out+"_xshape"), ir.A("axis", ir.Ints{0, 2, 1, 3}))
		return out
	}

	b.Var("ids", ir.Tensor(ir.I64, B, S)).WithFlags(ir.FlagIsData | ir.FlagStopGradient)
	b.Var("labels", ir.Tensor(ir.I64, B, S, 1)).WithFlags(ir.FlagIsData | ir.FlagStopGradient)
	b.Var("pos_ids", ir.Tensor(ir.I64, B, S)).WithFlags(ir.FlagIsData | ir.FlagStopGradient)
	b.Var("causal_mask", ir.Tensor(dt, S, S)).WithFlags(ir.FlagIsData | ir.FlagStopGradient)
	param(gptWordEmbedding, "embedding", V, H)
	param("wpe", "embedding", S, H)
	tensor("tok_emb", B, S, H)
	tensor("pos_emb", B, S, H)
	b.Op("lookup_table_v2", ir.Slots("Ids", "ids", "W", gptWordEmbedding), ir.Slots("Out", "tok_emb"), ir.A("padding_idx", ir.Int(-1)))
	b.Op("lookup_table_v2", ir.Slots("Ids", "pos_ids", "W", "wpe"), ir.Slots("Out", "pos_emb"), ir.A("padding_idx", ir.Int(-1)))
	x := add("tok_emb", "pos_emb", "emb", B, S, H)

	bsh, bsnd, bnsd := []int64{B, S, H}, []int64{B, S, nh, hd}, []int64{B, nh, S, hd}
	for i := range cfg.Layers {
		p := "l" + strconv.Itoa(i) + "_"
		ln1 := layerNorm(x, p+"ln1")
		var qkv [3]string
		for j, n := range []string{"q", "k", "v"} {
			h := linear(ln1, p+n, H, H)
			h = reshape(h, p+n+"_4d", bsh, bsnd...)
			qkv[j] = transpose(h, p+n+"_t", bsnd, bnsd...)
		}
		scores := tensor(p+"scores", B, nh, S, S)
		b.Op("matmul_v2", ir.Slots("X", qkv[0], "Y", qkv[1]), ir.Slots("Out", scores),
			ir.A("trans_x", ir.Bool(false)), ir.A("trans_y", ir.Bool(true)))
		scaled := tensor(p+"scaled", B, nh, S, S)
		b.Op("scale", ir.Slots("X", scores), ir.Slots("Out", scaled),
			ir.A("scale", ir.Float(1/math.Sqrt(float64(hd)))), ir.A("bias", ir.Float(0)), ir.A("bias_after_scale", ir.Bool(true)))
		masked := add(scaled, "causal_mask", p+"masked", B, nh, S, S)
		probs := tensor(p+"probs", B, nh, S, S)
		b.Op("softmax", ir.Slots("X", masked), ir.Slots("Out", probs), ir.A("axis", ir.Int(-1)))
		ctx := tensor(p+"ctx", B, nh, S, hd)
		b.Op("matmul_v2", ir.Slots("X", probs, "Y", qkv[2]), ir.Slots("Out", ctx),
			ir.A("trans_x", ir.Bool(false)), ir.A("trans_y", ir.Bool(false)))
		ctxT := transpose(ctx, p+"ctx_t", bnsd, bsnd...)
		ctx3 := reshape(ctxT, p+"ctx_3d", bsnd, bsh...)
		res1 := add(x, linear(ctx3, p+"proj", H, H), p+"res1", B, S, H)
		ln2 := layerNorm(res1, p+"ln2")
		if cfg.MoEEvery > 0 && (i+1)%cfg.MoEEvery == 0 {
			// The MoE block works on tokens: [B*S, H] and back.
			flat := reshape(ln2, p+"moe_in", bsh, B*S, H)
			mc := MoEConfig{Tokens: int(B * S), Model: int(H), Hidden: int(4 * H), Experts: cfg.Experts,
				TopK: cfg.TopK, Capacity: cfg.Capacity, DType: dt}
			moe := moeBlock(b, p+"moe_", flat, mc, func(name string, fanIn int64, shape ...int64) {
				b.Param(name, ir.Tensor(dt, shape...)).WithFlags(ir.FlagTrainable)
				s.Param(name, ir.Tensor(dt, shape...)).WithFlags(ir.FlagTrainable)
				uniform(name, 1/math.Sqrt(float64(fanIn)), shape)
			})
			x = add(res1, reshape(moe, p+"moe_out", []int64{B * S, H}, bsh...), p+"res2", B, S, H)
			continue
		}
		fc1 := linear(ln2, p+"fc1", H, 4*H)
		gelu := tensor(p+"gelu", B, S, 4*H)
		b.Op("gelu", ir.Slots("X", fc1), ir.Slots("Out", gelu), ir.A("approximate", ir.Bool(false)))
		x = add(res1, linear(gelu, p+"fc2", 4*H, H), p+"res2", B, S, H)
	}
	lnf := layerNorm(x, "lnf")
	param("lm_w", "uniform", H, V)
	tensor("logits", B, S, V)
	b.Op("matmul_v2", ir.Slots("X", lnf, "Y", "lm_w"), ir.Slots("Out", "logits"),
		ir.A("trans_x", ir.Bool(false)), ir.A("trans_y", ir.Bool(false)))
	tensor("softmax", B, S, V)
	tensor("xent", B, S, 1)
	b.Op("softmax_with_cross_entropy", ir.Slots("Logits", "logits", "Label", "labels"),
		ir.Slots("Softmax", "softmax", "Loss", "xent"),
		ir.A("soft_label", ir.Bool(false)), ir.A("axis", ir.Int(-1)), ir.A("ignore_index", ir.Int(-100)))
	tensor("loss")
	b.Op("mean", ir.Slots("X", "xent"), ir.Slots("Out", "loss")).WithRole(ir.RoleLoss)
	if err := b.Err(); err != nil {
		panic("models.GPT: " + err.Error()) // the names above are distinct
	}
	return m
}

// GPTTraining returns an annotated GPT training program: GPT(cfg), a
// backward of append-backward, the strategy of AnnotateGPT on mesh, and
// append-optimizer of type optimizer ("" is sgd) with learning rate 0.01.
// The sequence-parallel strategies declare the layer-norm statistics
// [B,S] (cfg.StatDims) and annotate the forward only: the module is for
// complete, then insert-reshards.
func GPTTraining(cfg GPTConfig, strategy string, mesh *ir.ProcessMesh, optimizer string) (*ir.Module, error) {
	if cfg.DType == ir.DTypeInvalid {
		cfg.DType = ir.F32
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if strings.HasSuffix(strategy, ",sp") {
		cfg.StatDims = true
		return trainForwardAnnotated(GPT(cfg), strategy, mesh, optimizer)
	}
	return train(GPT(cfg), AnnotateGPT, strategy, mesh, optimizer)
}

// AnnotateGPT gives every var and op of main's block 0 of a GPT-shaped
// module (GPT's ops, with or without their grad ops) a distribution on
// mesh for strategy, as Annotate does for the MLP: seeds, then complete
// (the same refusals; on error the module is unchanged). The seeds:
//
//   - "dp": the data vars' batch dim on dp, causal_mask and the params
//     replicated; completion splits the activations and their grads on
//     the batch (an XShape on its dim 1).
//   - "mp": Megatron. wte is vocab-parallel [mp, -1]; the q, k, v and
//     fc1 weights column-parallel [-1, mp], their biases [mp]; the proj
//     and fc2 weights row-parallel [mp, -1]; every other param
//     replicated. Completion splits the heads between them and leaves
//     the layer norms, the loss and the residual stream replicated along
//     mp.
//   - "dp,mp": both.
//   - "ep" and "dp,ep": the dense part data parallel (over ep, or over
//     every rank of the dp×ep mesh on a 1-D view of it, mesh "tokens"),
//     the MoE blocks expert parallel along ep (see annotator.moeSeeds).
//   - "mp,sp" and "dp,mp,sp": Megatron's sequence parallelism on top of
//     mp (or dp,mp), on the same mesh (sp names no mesh dim). Between
//     the tensor-parallel regions, the activations [B,S,H] (embeddings,
//     residual stream, layer norms and their statistics, which must be
//     declared [B,S]: GPTConfig.StatDims) are split on S along mp, and
//     pos_ids is fed so. The column-parallel matmuls (and the head, lm_w
//     replicated) read their X with S whole, the row-parallel ones leave
//     their Out partial (matmul_v2:1 emits no all-reduce), and the bias
//     add after them reads it split on S: insert-reshards turns these
//     into all-gathers and reduce-scatters. Those ops are seeded
//     (seqSeeds), the rest of the forward completed, and only the
//     forward ops and vars are annotated; run complete for the backward
//     and the optimizer.
func AnnotateGPT(m *ir.Module, strategy string, mesh *ir.ProcessMesh) error {
	return annotateGPT(m, strategy, mesh, GPTStrategies, "")
}

// GPTStrategies lists the strategies AnnotateGPT knows.
var GPTStrategies = []string{"dp", "mp", "dp,mp", "ep", "dp,ep", "mp,sp", "dp,mp,sp"}

func annotateGPT(m *ir.Module, strategy string, mesh *ir.ProcessMesh, known []string, what string) error {
	a, err := newAnnotator(m, strategy, mesh, known, what)
	if err != nil {
		return err
	}
	if a.seq {
		return a.annotateSeq()
	}
	if v := a.g.Var("causal_mask"); v != nil && v.Type.IsTensor() {
		a.set("causal_mask", replicated(v.Type.Rank()))
	}
	a.dataVars()
	a.moeSeeds()
	a.gptParams()
	a.seedParams()
	return a.complete()
}

// gptParams seeds the GPT's split params under mp: wte vocab-parallel
// [mp, -1], the column-parallel weights [-1, mp] and their biases [mp],
// the row-parallel weights [mp, -1].
func (a *annotator) gptParams() {
	mp := a.mpAxis
	if mp < 0 {
		return
	}
	for _, v := range a.g.Vars() {
		name := v.Name()
		if v.Kind != ir.KindParam {
			continue
		}
		switch {
		case name == gptWordEmbedding:
			a.set(name, []int{mp, -1})
		case hasSuffix(name, gptColumn):
			a.set(name, []int{-1, mp})
		case strings.HasSuffix(name, "_b") && hasSuffix(strings.TrimSuffix(name, "_b")+"_w", gptColumn):
			a.set(name, []int{mp})
		case hasSuffix(name, gptRow):
			a.set(name, []int{mp, -1})
		}
	}
}
