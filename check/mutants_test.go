package check_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/distpass/distpass/check"
	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/models"
	"github.com/distpass/distpass/passes"
	"github.com/distpass/distpass/proof"
)

// The bug classes the translation validators found in Megatron,
// DeepSpeed and nnScaler (issue 40), rebuilt as mutants of the per-rank
// programs partition writes: each mutant changes every rank the same
// way, as a compiler bug would, and must be refused, by the static proof
// (package proof) without running and by the simulator; the unmutated
// bases must be proven. testdata/mutants.md is the table, a row a
// mutant, with each check's verdict.

// mutantBase is a serial module and its per-rank programs.
type mutantBase struct {
	name   string
	serial *ir.Module
	ranks  []*ir.Module
}

// mutant changes the per-rank programs; it reports false when a rank's
// program lacks what it changes (the mutant is then not made).
type mutant struct {
	class, name, base string
	mutate            func(r *ir.Module) bool
}

// firstOp returns the index in block 0 of rank module r of the first op
// pred holds for, or -1.
func firstOp(r *ir.Module, pred func(op *ir.Op) bool) int {
	for i, op := range r.Main.Global().Ops {
		if pred(op) {
			return i
		}
	}
	return -1
}

// origin reports whether op's origin attr holds s.
func origin(op *ir.Op, s string) bool {
	o, _ := op.Attrs.String("origin")
	return strings.Contains(o, s)
}

// dropOp removes op i, its output read after it as its input (an
// in-place op is removed; another becomes an assign).
func dropOp(r *ir.Module, i int) {
	g := r.Main.Global()
	op := g.Ops[i]
	x, out := op.Input("X")[0], op.Output("Out")[0]
	if x == out {
		g.Ops = append(g.Ops[:i], g.Ops[i+1:]...)
		return
	}
	// Still the lowering's op (origin, origin_op), now a copy.
	g.Ops[i] = &ir.Op{ID: op.ID, Type: "assign", Inputs: ir.Slots("X", x), Outputs: ir.Slots("Out", out), Role: op.Role, Attrs: op.Attrs.Clone()}
}

// change finds the first op pred holds for and applies f to it.
func change(pred func(op *ir.Op) bool, f func(r *ir.Module, i int)) func(r *ir.Module) bool {
	return func(r *ir.Module) bool {
		i := firstOp(r, pred)
		if i < 0 {
			return false
		}
		f(r, i)
		return true
	}
}

func isType(typ string, also ...func(*ir.Op) bool) func(*ir.Op) bool {
	return func(op *ir.Op) bool {
		if op.Type != typ {
			return false
		}
		for _, f := range also {
			if !f(op) {
				return false
			}
		}
		return true
	}
}

func withOrigin(s string) func(*ir.Op) bool { return func(op *ir.Op) bool { return origin(op, s) } }

func backward(op *ir.Op) bool { return op.Role.IsBackward() }

var mutants = []mutant{
	{"missing forward tensor-parallel all-reduce", "the row-parallel matmul's sum over mp dropped", "mlp",
		change(isType("c_allreduce_sum", withOrigin("row-parallel")), dropOp)},
	{"missing backward tensor-parallel all-reduce", "the column-parallel input's grad sum over mp dropped", "gpt",
		change(isType("c_allreduce_sum", backward, withOrigin("column-parallel")), dropOp)},
	{"missing data-parallel grad sync", "w2@GRAD's sum over dp dropped", "mlp",
		change(isType("c_allreduce_sum", withOrigin("w2@GRAD summed over dp")), dropOp)},
	{"dp scale missing", "w1@GRAD's 1/dp dropped", "mlp",
		change(isType("scale", withOrigin("w1@GRAD averaged over dp")), dropOp)},
	{"dp scale doubled", "w1@GRAD scaled by 1/dp twice", "mlp",
		change(isType("scale", withOrigin("w1@GRAD averaged over dp")), func(r *ir.Module, i int) {
			op := r.Main.Global().Ops[i]
			s, _ := op.Attrs.Float("scale")
			op.Attrs.Set("scale", ir.Float(s*s))
		})},
	{"wrong group", "the row-parallel sum on dp's ring", "mlp",
		change(isType("c_allreduce_sum", withOrigin("row-parallel")), func(r *ir.Module, i int) {
			op := r.Main.Global().Ops[i]
			dp := r.Main.Global().Ops[firstOp(r, isType("c_allreduce_sum", withOrigin("over dp")))]
			ring, _ := dp.Attrs.Int("ring_id")
			op.Attrs.Set("ring_id", ir.Int(ring))
		})},
	{"wrong collective kind or reduction", "the row-parallel sum a max", "mlp",
		change(isType("c_allreduce_sum", withOrigin("row-parallel")), func(r *ir.Module, i int) {
			r.Main.Global().Ops[i].Type = "c_allreduce_max"
		})},
	{"double reduction", "the row-parallel sum over mp done twice", "mlp",
		change(isType("c_allreduce_sum", withOrigin("row-parallel")), func(r *ir.Module, i int) {
			g := r.Main.Global()
			twice := &ir.Op{ID: r.FreshOpID(), Type: g.Ops[i].Type, Attrs: g.Ops[i].Attrs.Clone(), Role: g.Ops[i].Role}
			out := g.Ops[i].Output("Out")[0]
			twice.Inputs, twice.Outputs = ir.Slots("X", out), ir.Slots("Out", out)
			g.Ops = append(g.Ops[:i+1], append([]*ir.Op{twice}, g.Ops[i+1:]...)...)
		})},
	{"bias added to a partial value", "the projection's bias added before its sum over mp", "gpt",
		change(func(op *ir.Op) bool { return op.Type == "c_allreduce_sum" && origin(op, "row-parallel") }, func(r *ir.Module, i int) {
			g := r.Main.Global()
			ar, add := g.Ops[i], g.Ops[i+1]
			p, sum, out := ar.Input("X")[0], ar.Output("Out")[0], add.Output("Out")[0]
			add.Inputs[0].Args, add.Outputs[0].Args, add.Dist = []string{p}, []string{sum}, nil
			ar.Inputs[0].Args, ar.Outputs[0].Args, ar.Dist = []string{sum}, []string{out}, nil
			g.Ops[i], g.Ops[i+1] = add, ar
		})},
	{"a declared placement the data does not have", "h1 declared split [1, 0] (mesh dims swapped: the same local shape)", "mlp",
		func(r *ir.Module) bool {
			v := r.Main.Global().Var("h1")
			if v == nil || v.Dist == nil {
				return false
			}
			v.Dist.DimsMapping = []int{1, 0}
			return true
		}},
	{"an op left out", "the relu between the matmuls dropped", "mlp",
		change(isType("relu"), func(r *ir.Module, i int) {
			g := r.Main.Global()
			g.Ops = append(g.Ops[:i], g.Ops[i+1:]...)
		})},
	{"a group's collectives in another order on one rank", "rank 1 sums w2@GRAD over dp after w1@GRAD", "mlp",
		func(r *ir.Module) bool {
			if r.Main.Rank != 1 {
				return false
			}
			g := r.Main.Global()
			i := firstOp(r, isType("c_allreduce_sum", withOrigin("w2@GRAD summed over dp")))
			j := firstOp(r, isType("c_allreduce_sum", withOrigin("w1@GRAD summed over dp")))
			if i < 0 || j < i {
				return false
			}
			op := g.Ops[i]
			g.Ops = slices.Insert(slices.Delete(g.Ops, i, i+1), j, op)
			return true
		}},
	{"attr drifting from the serial op", "a layer_norm's epsilon", "gpt",
		change(isType("layer_norm"), func(r *ir.Module, i int) {
			r.Main.Global().Ops[i].Attrs.Set("epsilon", ir.Float(0.0005))
		})},
	{"wrong slice offset or rank order", "the vocabulary-parallel embedding's start_index", "gpt",
		change(isType("c_embedding", func(op *ir.Op) bool { s, _ := op.Attrs.Int("start_index"); return s > 0 }), func(r *ir.Module, i int) {
			r.Main.Global().Ops[i].Attrs.Set("start_index", ir.Long(0))
		})},
	{"missing all-reduce in an expert MLP", "an expert weight's grad sum over dp dropped", "moe",
		change(isType("c_allreduce_sum", withOrigin("l0_moe_w1@GRAD summed over dp")), dropOp)},
	{"sequence-parallel LayerNorm grads not reduced", "l0_ln1_scale@GRAD's sum over mp dropped", "gpt-sp",
		change(isType("c_allreduce_sum", withOrigin("l0_ln1_scale@GRAD"), withOrigin("all-reduce over mp")), dropOp)},
	{"a nonlinear op on a partial value", "the row-parallel sum moved after the relu", "relu",
		change(isType("c_allreduce_sum", withOrigin("row-parallel")), func(r *ir.Module, i int) {
			g := r.Main.Global()
			ar, relu := g.Ops[i], g.Ops[i+1]
			part, h := ar.Input("X")[0], ar.Output("Out")[0]
			relu.Inputs[0].Args, ar.Inputs[0].Args, ar.Outputs[0].Args = []string{part}, []string{h}, relu.Outputs[0].Args
			relu.Outputs[0].Args = []string{h}
			g.Ops[i], g.Ops[i+1] = relu, ar
		})},
	{"wrong slice offset or rank order", "a sequence-parallel all-gather's pieces concatenated in reverse", "gpt-sp",
		change(isType("concat", withOrigin("all-gather over mp")), func(r *ir.Module, i int) {
			xs := r.Main.Global().Ops[i].Inputs[0].Args
			slices.Reverse(xs)
		})},
	{"wrong slice offset or rank order", "a reshard's slice of tok_emb one block off", "gpt-sp",
		change(isType("slice", withOrigin("tok_emb @")), func(r *ir.Module, i int) {
			op := r.Main.Global().Ops[i]
			s, _ := op.Attrs.Get("starts").(ir.Ints)
			e, _ := op.Attrs.Get("ends").(ir.Ints)
			n := e[0] - s[0]
			op.Attrs.Set("starts", ir.Ints{(s[0] + n) % (2 * n)})
			op.Attrs.Set("ends", ir.Ints{(s[0]+n)%(2*n) + n})
		})},
	{"wrong pipeline peer", "stage 0's ranks send their blocks to the other stage-1 rank", "pp",
		func(r *ir.Module) bool {
			// Two new pairs, crossed: rank 0 with 3 and 1 with 2.
			crossed := map[int][2]int{0: {0, 3}, 3: {0, 3}, 1: {1, 2}, 2: {1, 2}}
			pair, ok := crossed[r.Main.Rank]
			i := firstOp(r, func(op *ir.Op) bool { return op.Type == "send_v2" || op.Type == "recv_v2" })
			if !ok || i < 0 {
				return false
			}
			id := 100 + pair[0]
			if !slices.ContainsFunc(r.Groups, func(g ir.Group) bool { return g.ID == id }) {
				r.Groups = append(r.Groups, ir.Group{ID: id, Ranks: []int{pair[0], pair[1]}})
			}
			op := r.Main.Global().Ops[i]
			peer := 0
			if op.Type == "send_v2" {
				peer = 1
			}
			op.Attrs.Set("ring_id", ir.Int(int64(id)))
			op.Attrs.Set("peer", ir.Int(int64(peer)))
			return true
		}},
	{"replicas that diverge", "wpe's start-up broadcasts dropped, and rank 1 draws it from another seed", "gpt",
		func(r *ir.Module) bool {
			if r.Startup == nil {
				return false
			}
			g := r.Startup.Global()
			n := len(g.Ops)
			g.Ops = slices.DeleteFunc(g.Ops, func(op *ir.Op) bool {
				return op.Type == "c_broadcast" && slices.Equal(op.Input("X"), []string{"wpe"})
			})
			if r.Main.Rank == 1 {
				for _, op := range g.Ops {
					if op.Type == "uniform_random" && slices.Equal(op.Output("Out"), []string{"wpe"}) {
						op.Attrs.Set("seed", ir.Int(99))
					}
				}
			}
			return len(g.Ops) < n
		}},
	{"dp/sp/ep scale missing, doubled or wrong", "an expert weight's grad divided by the 4 ranks of the tokens, not the 2 of dp", "moe",
		change(isType("scale", withOrigin("l0_moe_w1@GRAD averaged over dp")), func(r *ir.Module, i int) {
			r.Main.Global().Ops[i].Attrs.Set("scale", ir.Float(0.25))
		})},
	{"partial states that do not add up (issue 38)", "an average over dp owed, a sum made (l0_ln1_scale@GRAD)", "gpt-sp",
		change(isType("c_allreduce_avg", withOrigin("l0_ln1_scale@GRAD"), withOrigin("all-reduce over dp")), func(r *ir.Module, i int) {
			r.Main.Global().Ops[i].Type = "c_allreduce_sum"
		})},
	{"FSDP weight's grad sliced without its sum (issue 38)", "w1 split by rows on dp: its gathered grad's sum over dp dropped", "fsdp",
		change(isType("c_allreduce_sum", withOrigin("w1@GRAD.reshard_0 summed over dp")), dropOp)},
}

// waiting are the bug classes of the issue whose lowering distpass does
// not emit yet: the table names them and the issue that brings it.
var waiting = []struct{ class, issue string }{
	{"gradient-merge normalisation", "42 (gradient merge, micro-batches)"},
	{"sync before the last micro-batch", "42"},
	{"global grad norm over the wrong group", "43 (global-norm clipping, ZeRO)"},
	{"mean of per-shard means", "41 (uneven shards: with even ones the mean of the means is the mean)"},
}

// mutantBases partitions the bases: the example MLP on dp×mp, a tiny GPT
// trained dp,mp on 2×2, the same with sequence parallelism and with MoE
// layers (dp,ep), the two-stage pipeline example, a row-parallel matmul
// a relu reads (testdata/row_parallel_relu.dpir), and the FSDP MLP of
// fsdp_test.go on dp×mp.
func mutantBases(t *testing.T) map[string]mutantBase {
	t.Helper()
	parse := func(path string) *ir.Module {
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		m, err := ir.Parse(path, src)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	dpmp := models.Mesh([]int{2, 2}, []string{"dp", "mp"})
	gpt := func(strategy string, cfg models.GPTConfig, mesh *ir.ProcessMesh) *ir.Module {
		m, err := models.GPTTraining(cfg, strategy, mesh, "sgd")
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	moe := models.TinyGPT()
	moe.MoEEvery, moe.Experts, moe.TopK = 1, 2, 2
	modules := map[string]*ir.Module{
		"mlp":    parse("../examples/mlp_dp_mp.dpir"),
		"gpt":    gpt("dp,mp", models.TinyGPT(), dpmp),
		"gpt-sp": gpt("dp,mp,sp", models.TinyGPT(), dpmp),
		"moe":    gpt("dp,ep", moe, models.Mesh([]int{2, 2}, []string{"dp", "ep"})),
		"pp":     parse("../examples/pp_mlp.dpir"),
		"relu":   parse("testdata/row_parallel_relu.dpir"),
		"fsdp":   dataParallel(t, strings.NewReplacer("MESH", "mesh world shape [2, 2] dims [dp, mp] ranks [0, 1, 2, 3]", "W2", "@world[1, -1]").Replace(fsdpSrc), false),
	}
	prepare := map[string]string{
		"gpt-sp": "complete,insert-reshards",
		"pp":     "complete,insert-reshards",
		"relu":   "append-backward{loss=loss},append-optimizer,complete,insert-reshards",
	}
	bases := map[string]mutantBase{}
	for name, m := range modules {
		if pl := prepare[name]; pl != "" {
			if err := (&passes.Manager{}).Run(context.Background(), passes.DefaultRegistry().MustParse(pl), m); err != nil {
				t.Fatalf("base %s: %v", name, err)
			}
		}
		ranks, err := passes.PartitionAll(context.Background(), m, nil)
		if err != nil {
			t.Fatal(err)
		}
		bases[name] = mutantBase{name, m, ranks}
	}
	return bases
}

const mutantTable = "testdata/mutants.md"

// TestMutantsRefused makes every mutant, checks the unmutated bases pass
// (no false alarm), and that check refuses each mutant; the table says
// how. DISTPASS_UPDATE=1 rewrites it.
func TestMutantsRefused(t *testing.T) {
	bases := mutantBases(t)
	for name, b := range bases {
		if _, err := runParts(b); err != nil {
			t.Fatalf("base %s: %v", name, err)
		}
		// No false alarm: each base is proven statically.
		if v := staticVerdict(t, b); v != "proven" {
			t.Errorf("base %s: the static proof says %s", name, v)
		}
	}
	var sb strings.Builder
	sb.WriteString("| class | mutant | base | the static proof (package proof) | the simulator (check -parts) |\n|---|---|---|---|---|\n")
	// The summary by class: mutants, refused statically, refused only by
	// the simulator, missed by both.
	type tally struct{ mutants, static, simOnly, missed int }
	var classes []string
	tallies := map[string]*tally{}
	for _, mu := range mutants {
		b := bases[mu.base]
		ranks := make([]*ir.Module, len(b.ranks))
		made := 0
		for i, r := range b.ranks {
			ranks[i] = r.Clone()
			if mu.mutate(ranks[i]) {
				made++
			}
		}
		if made == 0 {
			t.Errorf("%s (%s): no rank has what it changes", mu.name, mu.base)
			continue
		}
		verdict, err := runParts(mutantBase{b.name, b.serial, ranks})
		if err == nil {
			t.Errorf("%s (%s): not refused", mu.name, mu.base)
			verdict = "missed"
		}
		static := staticVerdict(t, mutantBase{b.name, b.serial, ranks})
		if !strings.HasPrefix(static, "refuted") {
			t.Errorf("%s (%s): the static proof says %s", mu.name, mu.base, static)
		}
		sb.WriteString("| " + mu.class + " | " + mu.name + " | " + mu.base + " | " + static + " | " + verdict + " |\n")
		if tallies[mu.class] == nil {
			tallies[mu.class] = &tally{}
			classes = append(classes, mu.class)
		}
		c := tallies[mu.class]
		c.mutants++
		switch {
		case strings.HasPrefix(static, "refuted"):
			c.static++
		case err != nil:
			c.simOnly++
		default:
			c.missed++
		}
	}
	for _, w := range waiting {
		sb.WriteString("| " + w.class + " | — | — | not made: distpass emits no such lowering before issue " + w.issue + " | — |\n")
	}
	var sum strings.Builder
	sum.WriteString("| class | mutants | refused statically | refused only by the simulator | missed |\n|---|---|---|---|---|\n")
	for _, c := range classes {
		n := tallies[c]
		fmt.Fprintf(&sum, "| %s | %d | %d | %d | %d |\n", c, n.mutants, n.static, n.simOnly, n.missed)
	}
	for _, w := range waiting {
		fmt.Fprintf(&sum, "| %s | 0 | — | — | — (issue %s) |\n", w.class, strings.Fields(w.issue)[0])
	}
	got := sum.String() + "\n" + sb.String()
	if os.Getenv("DISTPASS_UPDATE") != "" {
		if err := os.WriteFile(mutantTable, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(mutantTable)
	if err != nil {
		t.Fatalf("%v (DISTPASS_UPDATE=1 writes it)", err)
	}
	if d := cmp.Diff(strings.Split(string(want), "\n"), strings.Split(got, "\n")); d != "" {
		t.Errorf("%s differs (-want +got):\n%s", mutantTable, d)
	}
}

// runParts checks b's per-rank programs against its serial module (two
// steps, in f32): nil when they agree; else an error, with the verdict
// cell naming the first var that diverged or the refusal.
func runParts(b mutantBase) (string, error) {
	rep, err := check.RunParts(context.Background(), b.serial, passes.Ranks(b.serial), b.ranks, check.Options{Steps: 2})
	if err != nil {
		return "refused: " + firstLine(err.Error()), err
	}
	if err := rep.Err(); err != nil {
		// What diverged where, not by how much: the figures are the
		// kernels', which may change.
		what, _, _ := strings.Cut(firstLine(err.Error()), ":")
		return "diverged: " + what, err
	}
	return "", nil
}

// staticVerdict is the static proof's cell: the first refutation, or
// unproven with what it could not follow, or proven.
func staticVerdict(t *testing.T, b mutantBase) string {
	t.Helper()
	res, err := proof.Check(b.serial, passes.Ranks(b.serial), b.ranks)
	if err != nil {
		t.Fatal(err)
	}
	if f := res.Refuted(); f != nil {
		return "refuted: " + firstLine(f.String())
	}
	if !res.Proven() {
		return "unproven: " + firstLine(res.Findings[0].String())
	}
	return "proven"
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return strings.ReplaceAll(s, "|", "/")
}

// TestProofZoo: the static proof of what partition emits for the models'
// strategies on a 2×2 mesh: proven, sequence parallelism's reshards and
// MoE layers (with a capacity) included (no false alarm, and nothing
// left unfollowed).
func TestProofZoo(t *testing.T) {
	mesh := models.Mesh([]int{2, 2}, []string{"dp", "mp"})
	unproven := map[string]bool{}
	var cases []string
	build := map[string]func() (*ir.Module, error){}
	for _, s := range models.GPTStrategies {
		mm := mesh
		if strings.Contains(s, "ep") {
			mm = models.Mesh([]int{2, 2}, []string{"dp", "ep"})
		}
		cases = append(cases, "gpt/"+s)
		build["gpt/"+s] = func() (*ir.Module, error) { return models.GPTTraining(models.TinyGPT(), s, mm, "sgd") }
	}
	ep := models.Mesh([]int{2, 2}, []string{"dp", "ep"})
	for _, s := range models.MoEStrategies {
		cases = append(cases, "moe/"+s, "gpt-moe/"+s)
		build["moe/"+s] = func() (*ir.Module, error) { return models.MoETraining(models.MoEConfig{}, s, ep, "sgd") }
		cfg := models.TinyGPT()
		cfg.MoEEvery, cfg.Experts, cfg.TopK = 2, 2, 1
		if s == "ep" {
			cfg.Capacity = 3 // under dp,ep a capacity is refused
		}
		build["gpt-moe/"+s] = func() (*ir.Module, error) { return models.GPTTraining(cfg, s, ep, "sgd") }
	}
	for _, s := range models.Strategies {
		cases = append(cases, "mlp/"+s)
		build["mlp/"+s] = func() (*ir.Module, error) { return models.MLPTraining(models.MLPConfig{}, s, mesh, "sgd") }
	}
	for _, name := range cases {
		t.Run(name, func(t *testing.T) {
			m, err := build[name]()
			if err != nil {
				t.Fatal(err)
			}
			if err := (&passes.Manager{}).Run(context.Background(), passes.DefaultRegistry().MustParse("complete,insert-reshards"), m); err != nil {
				t.Fatal(err)
			}
			ranks, err := passes.PartitionAll(context.Background(), m, nil)
			if err != nil {
				t.Fatal(err)
			}
			v := staticVerdict(t, mutantBase{name, m, ranks})
			switch {
			case strings.HasPrefix(v, "refuted"):
				t.Fatalf("a false alarm: %s", v)
			case unproven[name] != (v != "proven"):
				t.Errorf("%s, want %s", v, map[bool]string{true: "unproven", false: "proven"}[unproven[name]])
			}
		})
	}
}
