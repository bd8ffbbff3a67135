package cli

import (
	"flag"
	"fmt"
	"strconv"
	"strings"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/models"
)

// examples lists the example modules by name, in the order usage shows them.
var examples = []string{"gpt", "mlp", "moe"}

const exampleArgs = "NAME [-strategy S] [-mesh AxB] [-layers N] [-hidden N] [-batch N] [-heads N] [-vocab N] [-seq N] [-experts N] [-topk K] [-capacity N] [-moe-every K] [-optimizer O] [-f64]"

func runExample(env *Env, args []string) int {
	fs := newFlagSet(env, "example", exampleArgs,
		`Example prints an annotated serial training module: the forward program
of model NAME, its backward, the sharding strategy's annotations and an
optimizer, with the startup program. Known models: `+strings.Join(examples, ", ")+`.
Each strategy is a few seed annotations (the data's batch, the params'
splits, a few ops) that completion finishes.
Strategies: dp (data parallel), mp (Megatron tensor parallel; an even
number of layers), dp,mp (both); for moe, ep (expert parallel: experts
split, tokens split on the batch) and dp,ep (experts split along ep and
replicated along dp, tokens split over every rank). -mesh gives the mesh
shape, one size per strategy axis ("2" for dp or mp, "2x4" for dp,mp: dp
2, mp 4); the mesh is named world and its dims are the strategy's. moe
takes -batch tokens of width -hidden (default 4), -experts experts of
hidden width 2×-hidden, top--topk gating (default 2), and -capacity
token slots per expert (0: no limit). gpt with -moe-every K makes every
K-th layer's MLP such an MoE block (-experts, -topk, -capacity), for the
strategies ep and dp,ep. gpt also takes mp,sp and dp,mp,sp: Megatron's
sequence parallelism along mp (no mesh dim of its own: -mesh as for mp
or dp,mp), the activations between the tensor-parallel blocks split on
the sequence; only the forward is annotated, for
'distpass run -pipeline complete,insert-reshards' to complete.`)
	strategy := fs.String("strategy", "dp,mp", "sharding strategy: "+strings.Join(models.GPTStrategies, ", ")+" (mlp: "+strings.Join(models.Strategies, ", ")+"; moe: "+strings.Join(models.MoEStrategies, ", ")+", default ep)")
	experts := rangeInt(fs, "experts", 4, 1, MaxExampleSize, "moe: number of experts")
	topk := rangeInt(fs, "topk", 2, 1, MaxExampleSize, "moe: experts per token (at most -experts)")
	capacity := rangeInt(fs, "capacity", 0, 0, MaxExampleSize, "moe: token slots per expert (0: no limit)")
	moeEvery := rangeInt(fs, "moe-every", 0, 0, MaxExampleLayers, "gpt: every K-th layer's MLP is an MoE block (0: none)")
	meshFlag := fs.String("mesh", "", `mesh shape, sizes joined by x (default "2x2" for dp,mp, "2" otherwise)`)
	layers := rangeInt(fs, "layers", 2, 1, MaxExampleLayers, "number of layers")
	hidden := rangeInt(fs, "hidden", 16, 1, MaxExampleSize, "hidden size (gpt: 64 unless given)")
	batch := rangeInt(fs, "batch", 8, 1, MaxExampleSize, "batch size (gpt: 4 unless given)")
	heads := rangeInt(fs, "heads", 4, 1, MaxExampleSize, "gpt: attention heads")
	vocab := rangeInt(fs, "vocab", 128, 1, MaxExampleSize, "gpt: vocabulary size")
	seq := rangeInt(fs, "seq", 8, 1, MaxExampleSize, "gpt: sequence length")
	optimizer := fs.String("optimizer", "sgd", "optimizer: sgd, momentum or adam")
	f64 := fs.Bool("f64", false, "use f64 instead of f32")

	// NAME may come before or after the flags.
	name := ""
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		name, args = args[0], args[1:]
	}
	if code, ok := parseFlags(env, fs, args); !ok {
		return code
	}
	rest := fs.Args()
	if name == "" && len(rest) > 0 {
		name, rest = rest[0], rest[1:]
	}
	usageErr := func(format string, a ...any) int {
		fmt.Fprintf(env.Stderr, "distpass example: "+format+"\n", a...)
		fmt.Fprintf(env.Stderr, "usage: distpass example %s\n", exampleArgs)
		return ExitUsage
	}
	switch {
	case name == "":
		return usageErr("no example NAME (known: %s)", strings.Join(examples, ", "))
	case len(rest) > 0:
		return usageErr("unexpected arguments %q", rest)
	}
	known := false
	for _, e := range examples {
		known = known || e == name
	}
	if !known {
		return usageErr("unknown example %q (known: %s)", name, strings.Join(examples, ", "))
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	if name == "moe" && !given["strategy"] {
		*strategy = "ep"
	}
	// sp (sequence parallel) splits along mp: no mesh dim of its own.
	dims := strings.Split(strings.TrimSuffix(*strategy, ",sp"), ",")
	if *meshFlag == "" {
		*meshFlag = strings.TrimSuffix(strings.Repeat("2x", len(dims)), "x")
	}
	var shape []int
	for _, f := range strings.Split(*meshFlag, "x") {
		n, err := strconv.Atoi(f)
		if err != nil || n <= 0 {
			return usageErr("-mesh %q: want positive sizes joined by x, such as 2x4", *meshFlag)
		}
		shape = append(shape, n)
	}
	if len(shape) != len(dims) {
		return usageErr("-mesh %q has %d dims; strategy %s needs %d", *meshFlag, len(shape), *strategy, len(dims))
	}
	dt := ir.F32
	if *f64 {
		dt = ir.F64
	}
	var m *ir.Module
	var err error
	mesh := models.Mesh(shape, dims)
	switch name {
	case "gpt":
		cfg := models.TinyGPT()
		cfg.Layers, cfg.Heads, cfg.Vocab, cfg.Seq, cfg.DType = layers.v, heads.v, vocab.v, seq.v, dt
		cfg.MoEEvery, cfg.Experts, cfg.TopK, cfg.Capacity = moeEvery.v, experts.v, topk.v, capacity.v
		if given["hidden"] {
			cfg.Hidden = hidden.v
		}
		if given["batch"] {
			cfg.Batch = batch.v
		}
		switch {
		case cfg.Hidden%cfg.Heads != 0:
			return usageErr("-hidden %d is not a multiple of -heads %d", cfg.Hidden, cfg.Heads)
		case cfg.MoEEvery > cfg.Layers:
			return usageErr("-moe-every %d: the model has %d layers (-layers)", cfg.MoEEvery, cfg.Layers)
		case cfg.MoEEvery > 0 && cfg.TopK > cfg.Experts:
			return usageErr("-topk %d is more than -experts %d", cfg.TopK, cfg.Experts)
		}
		m, err = models.GPTTraining(cfg, *strategy, mesh, *optimizer)
	case "moe":
		cfg := models.MoEConfig{Tokens: batch.v, Model: 4, Experts: experts.v, TopK: topk.v, Capacity: capacity.v, DType: dt}
		if given["hidden"] {
			cfg.Model = hidden.v
		}
		cfg.Hidden = 2 * cfg.Model
		if cfg.TopK > cfg.Experts {
			return usageErr("-topk %d is more than -experts %d", cfg.TopK, cfg.Experts)
		}
		m, err = models.MoETraining(cfg, *strategy, mesh, *optimizer)
	default:
		cfg := models.MLPConfig{Layers: layers.v, Hidden: hidden.v, Batch: batch.v, DType: dt}
		m, err = models.MLPTraining(cfg, *strategy, mesh, *optimizer)
	}
	if err != nil {
		return usageErr("%v", err)
	}
	if err := verifyResult(m); err != nil {
		printErr(env, "distpass example "+name, err)
		return ExitFail
	}
	if err := ir.Fprint(env.Stdout, m); err != nil {
		fmt.Fprintf(env.Stderr, "distpass example: %v\n", err)
		return ExitFail
	}
	return ExitOK
}
