package check

import (
	"context"
	"fmt"
	"hash/fnv"
	"io"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/lower"
	"github.com/distpass/distpass/passes"
	"github.com/distpass/distpass/sim"
)

// Options configure a check.
type Options struct {
	// Steps is how many training steps to run (default 1).
	Steps int
	// Tol bounds |partitioned - serial| / max(|serial|, Floor(dtype))
	// elementwise (default DefaultTol(dtype) of each compared var).
	// Startup values and replicas are compared exactly, whatever Tol.
	Tol float64
	// Seed drives the fed data (default 1).
	Seed uint64
	// Registry lowers the ops (default lower.DefaultRegistry()).
	Registry *lower.Registry
	// Kernels run them (default sim.DefaultKernels()).
	Kernels sim.Kernels
	// Deadline bounds every collective wait (default sim.DefaultDeadline).
	Deadline time.Duration
	// MaxLoopOps caps the loop work of every program run, serial and per
	// rank (default sim.DefaultMaxLoopOps; see sim.Interp.MaxLoopOps).
	MaxLoopOps int
	// Progress, when not nil, is called as the check advances (see
	// Event). The calls do not overlap.
	Progress func(Event)
	// OpTime, when not nil, is called after each op the simulator runs
	// (see sim.Interp.OpTime), serial (rank -1) and per rank, startups
	// included, with the time its kernel took. The ranks call it at
	// once, from their goroutines: it must be safe for concurrent use.
	OpTime func(rank int, op *ir.Op, d time.Duration)
}

// Event is where a check is. Stage is, in the order they come:
//   - "partition" (Run only) as each of Total lowerings ends (one per
//     rank class: see passes.PartitionClasses), Done of them so far;
//   - "startup" as the serial startup and the feeding begin;
//   - "spmd" as the ranks' startup begins (Step 0);
//
// then for each step Step of Steps:
//   - "serial" as the serial step begins;
//   - "spmd" as the ranks' step begins, and as each of the Total ranks
//     ends it (Done of them so far, Rank the last; -1 otherwise);
//   - "compare" as the comparison of the step begins.
//
// Each stage lasts until the next one begins.
type Event struct {
	Stage       string
	Step, Steps int
	Done, Total int
	Rank        int
}

// Row is the comparison of one var over every rank that holds it, after
// every step (a startup row: after the startups).
type Row struct {
	// Kind: loss, param, grad, state (another persistable), activation,
	// or startup (a value the startups initialise).
	Var, Kind string
	// MaxAbs is the largest |partitioned - serial|; MaxRel the largest of
	// it over max(|serial|, Floor(dtype)).
	MaxAbs, MaxRel float64
	Tol            float64
	// Ranks is how many ranks' values were compared (over all steps).
	Ranks int
	// Rank is the first rank whose value diverged, or -1; Step the step
	// after which it did (0: the startup).
	Rank, Step int
	// Hint is, for a diverged row, a likely cause, or "".
	Hint string
}

// OK reports whether the var matched on every rank.
func (r Row) OK() bool { return r.Rank < 0 }

// Report is the outcome of a check.
type Report struct {
	Ranks []int
	Steps int
	Rows  []Row
	// Replicas counts the comparisons of a rank's value with another
	// rank's holding the same block (same coordinates along the mesh
	// dims the var is split or partial over): equal bit for bit.
	Replicas int
	// LocalBatchNorm lists the local batch norms ("op 3 batch_norm over
	// dp"): training batch_norms each rank computes on its shard's
	// statistics, Paddle's default. The serial reference then runs them
	// on each rank's shard of the batch (see localBN), and PerRank lists
	// their saved statistics, each rank's own: not compared.
	LocalBatchNorm []string
	PerRank        []string
}

// Err returns nil when every var matched, or an error naming the first
// var and rank that diverged.
func (r *Report) Err() error {
	for _, row := range r.Rows {
		if !row.OK() {
			hint := ""
			if row.Hint != "" {
				hint = "; hint: " + row.Hint
			}
			return fmt.Errorf("%s %s diverged on rank %d after %s: max abs error %.3g, relative %.3g > %.3g%s",
				row.Kind, row.Var, row.Rank, stepName(row.Step), row.MaxAbs, row.MaxRel, row.Tol, hint)
		}
	}
	return nil
}

// Write prints the report as a table.
func (r *Report) Write(w io.Writer) error {
	var sb strings.Builder
	fmt.Fprintf(&sb, "check: %d ranks, %d step(s)\n", len(r.Ranks), r.Steps)
	// The errors print at one width (that of %.3g of a positive number
	// with a two-digit exponent), right-aligned: tabwriter aligns left.
	tw := tabwriter.NewWriter(&sb, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "kind\tvar\t%8s\t%8s\n", "max abs", "max rel")
	for _, row := range r.Rows {
		status := "ok"
		if !row.OK() {
			status = fmt.Sprintf("MISMATCH on rank %d", row.Rank)
		}
		fmt.Fprintf(tw, "%s\t%s\t%8.3g\t%8.3g\t%s\n", row.Kind, row.Var, row.MaxAbs, row.MaxRel, status)
	}
	tw.Flush()
	fmt.Fprintf(&sb, "compared: %d loss, %d activations, %d params, %d grads, %d state, %d startup values; %d replica comparisons, bit for bit\n",
		r.Count("loss"), r.Count("activation"), r.Count("param"), r.Count("grad"), r.Count("state"), r.Count("startup"), r.Replicas)
	if len(r.LocalBatchNorm) > 0 {
		fmt.Fprintf(&sb, "local batch norm (each rank's statistics its shard's): %s; compared with the serial program run on each rank's shard\n",
			strings.Join(r.LocalBatchNorm, ", "))
		fmt.Fprintf(&sb, "not compared, each rank's own statistics: %s\n", strings.Join(r.PerRank, ", "))
	}
	if r.Count("param")+r.Count("grad") == 0 {
		// A forward-only module passes without its update being looked
		// at: say so rather than let "ok" suggest the step was checked.
		sb.WriteString("no param or grad was compared: the check covers the forward pass only\n")
	}
	_, err := io.WriteString(w, sb.String())
	return err
}

// stepName names step for a message: "the startup" or "step N".
func stepName(step int) string {
	if step == 0 {
		return "the startup"
	}
	return fmt.Sprintf("step %d", step)
}

// Count returns how many rows of kind (loss, param, grad, state,
// activation, startup) the report has.
func (r *Report) Count(kind string) int {
	n := 0
	for _, row := range r.Rows {
		if row.Kind == kind {
			n++
		}
	}
	return n
}

// MaxRanks is the most ranks a check simulates: each is a goroutine with
// its own program and tensors, so a larger mesh is refused rather than
// left to run out of time or memory (BENCHMARKS.md has what 4096 cost).
const MaxRanks = 4096

// checkRanks refuses a module whose meshes have more than MaxRanks ranks.
func checkRanks(m *ir.Module) error {
	if n := len(passes.Ranks(m)); n > MaxRanks {
		return fmt.Errorf("the module's meshes have %d ranks: check simulates at most check.MaxRanks (%d)", n, MaxRanks)
	}
	return nil
}

// Run checks the partition of m: m is not changed. The per-rank
// programs are the very ones partition -all writes: lowered by rank
// classes (passes.PartitionClasses), each printed and read back.
func Run(ctx context.Context, m *ir.Module, opts Options) (*Report, error) {
	opts = defaults(opts)
	if err := checkRanks(m); err != nil {
		return nil, err
	}
	progress := opts.progress()
	mods, err := Written(ctx, m, opts.Registry, func(done, total int) {
		progress(Event{Stage: "partition", Done: done, Total: total, Rank: -1})
	})
	if err != nil {
		return nil, err
	}
	return run(m, passes.Ranks(m), mods, opts, progress)
}

// Written returns, in rank order, every rank's program as partition -all
// writes it: m lowered by rank classes, each rank's module printed as
// text and parsed back, then verified. progress, when not nil, is told
// of the lowerings.
func Written(ctx context.Context, m *ir.Module, reg *lower.Registry, progress func(done, total int)) ([]*ir.Module, error) {
	cs, err := passes.PartitionClasses(ctx, m, reg, progress)
	if err != nil {
		return nil, err
	}
	ranks := cs.Ranks()
	mods := make([]*ir.Module, len(ranks))
	for i, r := range ranks {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if mods[i], err = WrittenRank(cs, r); err != nil {
			return nil, err
		}
	}
	return mods, nil
}

// WrittenRank returns rank's program of cs as partition -all writes it:
// printed as text, parsed back and verified. One rank at a time, a
// caller holds no more than the ranks it needs (check -static of
// thousands of ranks).
func WrittenRank(cs *passes.Classes, rank int) (*ir.Module, error) {
	pm, err := cs.Module(rank)
	if err != nil {
		return nil, err
	}
	mod, err := ir.Parse(fmt.Sprintf("rank%d.dpir", rank), ir.Print(pm))
	if err != nil {
		return nil, fmt.Errorf("rank %d: its program does not read back: %w", rank, err)
	}
	if err := passes.Verify(mod); err != nil {
		return nil, fmt.Errorf("rank %d: %w", rank, err)
	}
	return mod, nil
}

// progress is opts.Progress, or a func that does nothing.
func (opts Options) progress() func(Event) {
	if opts.Progress != nil {
		return opts.Progress
	}
	return func(Event) {}
}

// opTime is opts.OpTime for the serial runs: nil, or told rank -1.
func (opts Options) opTime() func(*ir.Op, time.Duration) {
	if opts.OpTime == nil {
		return nil
	}
	return func(op *ir.Op, d time.Duration) { opts.OpTime(-1, op, d) }
}

// RunParts checks per-rank programs made elsewhere (by hand, or by another
// partitioner) against the serial module m, as Run checks m's own
// partition: mods[i] is the module of rank ranks[i], and every rank of
// m's meshes must have one. Each module is verified first. Neither m nor
// mods are changed.
func RunParts(ctx context.Context, m *ir.Module, ranks []int, mods []*ir.Module, opts Options) (*Report, error) {
	opts = defaults(opts)
	if err := checkRanks(m); err != nil {
		return nil, err
	}
	if len(ranks) != len(mods) {
		return nil, fmt.Errorf("%d ranks for %d modules", len(ranks), len(mods))
	}
	want := passes.Ranks(m)
	if !slices.Equal(ranks, want) {
		for _, r := range want {
			if !slices.Contains(ranks, r) {
				return nil, fmt.Errorf("no program for rank %d (the serial module's meshes have ranks %v)", r, want)
			}
		}
		for _, r := range ranks {
			if !slices.Contains(want, r) {
				return nil, fmt.Errorf("a program for rank %d, which no mesh of the serial module has (ranks %v)", r, want)
			}
		}
		return nil, fmt.Errorf("the ranks %v are not in order, or repeat: want %v", ranks, want)
	}
	for i, pm := range mods {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err := passes.Verify(pm); err != nil {
			return nil, fmt.Errorf("rank %d: %w", ranks[i], err)
		}
		if pm.Main == nil {
			return nil, fmt.Errorf("rank %d: no main program", ranks[i])
		}
	}
	return run(m, ranks, mods, opts, opts.progress())
}

func defaults(opts Options) Options {
	if opts.Steps <= 0 {
		opts.Steps = 1
	}
	if opts.Seed == 0 {
		opts.Seed = 1
	}
	if opts.Registry == nil {
		opts.Registry = lower.DefaultRegistry()
	}
	if opts.Kernels == nil {
		opts.Kernels = sim.DefaultKernels()
	}
	return opts
}

// run runs the serial program m and the SPMD programs mods (rank
// ranks[i]'s module) step by step and compares them: first the ranks'
// startups with the serial startup, then after every step each
// persistable, and the loss, grads and activations. Placement is the
// serial module's: a part that declares a serial var or mesh otherwise is
// refused before anything runs.
func run(m *ir.Module, ranks []int, mods []*ir.Module, opts Options, progress func(Event)) (*Report, error) {
	if err := checkPlacement(m, ranks, mods); err != nil {
		return nil, err
	}
	progress(Event{Stage: "startup", Rank: -1})
	local, order := localBatchNorms(m)
	serialKernels := opts.Kernels
	if len(local) > 0 {
		serialKernels = perShardKernels(opts.Kernels, local)
	}
	// The serial run: startup, then the fed inputs.
	init, started, err := initialValues(m, opts)
	if err != nil {
		return nil, err
	}
	ip := sim.NewInterp(serialKernels)
	ip.MaxLoopOps = opts.MaxLoopOps
	ip.OpTime = opts.opTime()
	serial := sim.Scope{}
	for k, v := range init {
		serial[k] = v
	}

	// The ranks start from their own startups, fed only what the serial
	// program is fed.
	progress(Event{Stage: "spmd", Steps: opts.Steps, Total: len(ranks), Rank: -1})
	spmd := &sim.SPMD{Kernels: opts.Kernels, Deadline: opts.Deadline, MaxLoopOps: opts.MaxLoopOps, OpTime: opts.OpTime}
	fed := maps.Clone(init)
	for _, name := range started {
		delete(fed, name)
	}
	scopes, err := shardScopes(m, mods, ranks, fed)
	if err != nil {
		return nil, err
	}
	if scopes, err = runStartups(spmd, ranks, mods, scopes); err != nil {
		return nil, err
	}
	c := &comparer{m: m, ranks: ranks, mods: mods, tol: opts.Tol, perRank: perRankStats(local, order)}
	for _, name := range started {
		if err := c.compare(comparedVar{name, "startup"}, 0, init, scopes); err != nil {
			return nil, err
		}
	}

	var (
		mu   sync.Mutex // orders the ranks' progress calls
		done int
		step int
	)
	spmd.RankDone = func(rank int) {
		mu.Lock()
		defer mu.Unlock()
		done++
		progress(Event{Stage: "spmd", Step: step, Steps: opts.Steps, Done: done, Total: len(ranks), Rank: rank})
	}
	vars := compared(m)
	for step = 1; step <= opts.Steps; step++ {
		progress(Event{Stage: "serial", Step: step, Steps: opts.Steps, Rank: -1})
		if err := ip.RunProgram(m.Main, serial); err != nil {
			return nil, fmt.Errorf("serial step %d: %w", step, err)
		}
		done = 0
		progress(Event{Stage: "spmd", Step: step, Steps: opts.Steps, Total: len(ranks), Rank: -1})
		if scopes, err = spmd.RunProgram("main", ranks, mods, scopes); err != nil {
			return nil, fmt.Errorf("spmd step %d: %w", step, err)
		}
		progress(Event{Stage: "compare", Step: step, Steps: opts.Steps, Rank: -1})
		for _, v := range vars {
			if err := c.compare(v, step, serial, scopes); err != nil {
				return nil, err
			}
		}
	}
	rep := &Report{Ranks: ranks, Steps: opts.Steps, PerRank: c.perRank, Replicas: c.replicas}
	for _, id := range order {
		rep.LocalBatchNorm = append(rep.LocalBatchNorm, fmt.Sprintf("%s over %s", local[id].op, local[id].dim))
	}
	for _, k := range c.keys {
		row := *c.rows[k]
		if !row.OK() && row.Kind == "loss" && row.Hint == "" {
			row.Hint = lossHint(m, row.Var)
		}
		rep.Rows = append(rep.Rows, row)
	}
	if len(rep.Rows) == 0 {
		return nil, fmt.Errorf("nothing to compare: the serial module computes no loss, param, state or activation any rank holds")
	}
	return rep, nil
}

// shardScopes gives each rank its shard, by the serial module's placement,
// of every value of init its program declares on a mesh the rank is in.
// The values go in name order, so that of several that cannot be sharded
// the error names the same one on every run.
func shardScopes(m *ir.Module, mods []*ir.Module, ranks []int, init sim.Scope) ([]sim.Scope, error) {
	names := slices.Sorted(maps.Keys(init))
	scopes := make([]sim.Scope, len(mods))
	for i, pm := range mods {
		scopes[i] = sim.Scope{}
		for _, name := range names {
			if declared(pm, name) == nil {
				continue
			}
			v := serialVar(m, name)
			if v == nil {
				continue
			}
			if !placedOn(m, v, ranks[i]) {
				continue // another pipeline stage's
			}
			sh, err := shardOf(m, v, init[name], ranks[i])
			if err != nil {
				return nil, fmt.Errorf("rank %d: feeding %s: %w", ranks[i], name, err)
			}
			scopes[i][name] = sh
		}
	}
	return scopes, nil
}

// declared is the var name of pm's main (or else startup) global block.
func declared(pm *ir.Module, name string) *ir.Var {
	if pm.Main != nil {
		if v := pm.Main.Global().Var(name); v != nil {
			return v
		}
	}
	if pm.Startup != nil {
		return pm.Startup.Global().Var(name)
	}
	return nil
}

// serialVar is var name of the serial module: main's global block's, or
// else its startup's.
func serialVar(m *ir.Module, name string) *ir.Var { return declared(m, name) }

// placedOn reports whether the serial placement of v puts a block of it on
// rank: v's mesh holds rank (a var without a dist is every rank's).
func placedOn(m *ir.Module, v *ir.Var, rank int) bool {
	if v.Dist == nil {
		return true
	}
	mesh := m.Mesh(v.Dist.Mesh)
	return mesh == nil || mesh.Contains(rank) // an unknown mesh: an error where it is read
}

func shardOf(m *ir.Module, v *ir.Var, global *sim.Tensor, rank int) (*sim.Tensor, error) {
	if v.Dist == nil {
		return global.Clone(), nil
	}
	mesh := m.Mesh(v.Dist.Mesh)
	if mesh == nil {
		return nil, fmt.Errorf("unknown mesh %s", v.Dist.Mesh)
	}
	return sim.Shard(global, v.Dist, mesh, rank)
}

// runStartups runs every rank's own startup program from its fed values
// and checks that each var it writes has its declared local shape.
func runStartups(spmd *sim.SPMD, ranks []int, mods []*ir.Module, fed []sim.Scope) ([]sim.Scope, error) {
	has := 0
	for _, pm := range mods {
		if pm.Startup != nil {
			has++
		}
	}
	if has == 0 {
		return fed, nil
	}
	out, err := spmd.RunProgram("startup", ranks, mods, fed)
	if err != nil {
		return nil, fmt.Errorf("per-rank startup: %w", err)
	}
	for i, pm := range mods {
		if pm.Startup == nil {
			continue
		}
		for _, v := range pm.Startup.Global().Vars() {
			t := out[i][v.Name()]
			if t == nil || !v.Type.IsTensor() {
				continue
			}
			if fmt.Sprint(t.Shape) != fmt.Sprint(v.Type.Shape) {
				return nil, fmt.Errorf("rank %d: startup initialises %s with shape %v, its local shape is %v", ranks[i], v.Name(), t.Shape, v.Type.Shape)
			}
		}
	}
	return out, nil
}

// initialValues runs the serial startup and feeds every other input of
// main: the vars main reads before any op writes them. started lists, in
// name order, the tensors the startup wrote.
func initialValues(m *ir.Module, opts Options) (scope sim.Scope, started []string, err error) {
	scope = sim.Scope{}
	if m.Startup != nil {
		ip := sim.NewInterp(opts.Kernels)
		ip.MaxLoopOps = opts.MaxLoopOps
		ip.OpTime = opts.opTime()
		if err := ip.RunProgram(m.Startup, scope); err != nil {
			return nil, nil, fmt.Errorf("serial startup: %w", err)
		}
		started = slices.Sorted(maps.Keys(scope))
	}
	written := map[string]bool{}
	bound := map[string]int64{} // integer inputs index tables of this many rows
	g := m.Main.Global()
	var need []string
	for _, b := range m.Main.Blocks {
		for _, op := range b.Ops {
			if ids := op.Input("Ids"); len(ids) == 1 {
				if w := op.Input("W"); len(w) == 1 {
					if wv := m.Main.LookupVar(b, w[0]); wv != nil && wv.Type.Rank() > 0 {
						bound[ids[0]] = wv.Type.Shape[0]
					}
				}
			}
			for a := range op.InputNames {
				if !written[a] && scope[a] == nil && !contains(need, a) {
					need = append(need, a)
				}
			}
			for a := range op.OutputNames {
				written[a] = true
			}
		}
	}
	for _, name := range need {
		v := g.Var(name)
		if v == nil {
			continue // a sub-block var: written there before it is read
		}
		if !v.Type.IsTensor() {
			continue
		}
		t, err := feed(v, bound[name], opts.Seed)
		if err != nil {
			return nil, nil, fmt.Errorf("feeding %s: %w", name, err)
		}
		scope[name] = t
	}
	return scope, started, nil
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// feed returns a tensor for var v drawn from a generator seeded by the
// check's seed and v's name, so every run feeds the same values.
func feed(v *ir.Var, bound int64, seed uint64) (*sim.Tensor, error) {
	shape := v.Type.Shape
	for _, d := range shape {
		if d < 0 {
			return nil, fmt.Errorf("shape %v has an unknown dim", shape)
		}
	}
	h := fnv.New64a()
	h.Write([]byte(v.Name()))
	r := rand.New(rand.NewPCG(seed, h.Sum64()))
	t, err := sim.NewZeros(v.Type.DType, shape...)
	if err != nil {
		return nil, err
	}
	for i := range t.Data {
		switch {
		case v.Type.DType == ir.Boolean:
			t.Data[i] = float64(r.IntN(2))
		case v.Type.DType.IsInteger():
			n := bound
			if n <= 0 {
				n = 4
			}
			t.Data[i] = float64(r.Int64N(n))
		default:
			t.Data[i] = 2*r.Float64() - 1
		}
	}
	return sim.FromData(v.Type.DType, shape, t.Data)
}

type comparedVar struct {
	name, kind string
}

// compared lists the vars to compare: the loss, the parameters and their
// grads, every other persistable, and the forward activations of main's
// global block.
func compared(m *ir.Module) []comparedVar {
	var out []comparedVar
	seen := map[string]bool{}
	add := func(n, kind string) {
		if n != "" && !seen[n] {
			seen[n] = true
			out = append(out, comparedVar{n, kind})
		}
	}
	g := m.Main.Global()
	for _, op := range g.Ops {
		if op.Role.IsLoss() {
			for a := range op.OutputNames {
				add(a, "loss")
			}
		}
	}
	for _, pg := range m.ParamGrads {
		add(pg.Param, "param")
		add(pg.Grad, "grad")
	}
	// Every other persistable: optimizer state, running statistics,
	// counters, the learning rate.
	for _, v := range g.Vars() {
		if v.Persistable() && v.Type.IsTensor() && !slices.Contains(v.Type.Shape, -1) {
			add(v.Name(), "state")
		}
	}
	for _, op := range g.Ops {
		if !op.Role.IsForward() || exchanges[op.Type] {
			continue
		}
		for a := range op.OutputNames {
			if v := g.Var(a); v != nil && !v.Persistable() && v.Type.IsTensor() && !slices.Contains(v.Type.Shape, -1) {
				add(a, "activation")
			}
		}
	}
	return out
}

// exchanges are the collectives whose output on a rank is not a shard of
// the serial value but what other ranks sent it (the serial program is a
// world of one), and limit_by_capacity, which computes on such counts:
// their values are checked downstream, where the layer's output returns
// to the ranks that own the tokens. Vars with a data-dependent dim (-1)
// are skipped for the same reason.
var exchanges = map[string]bool{"alltoall": true, "all_to_all": true, "c_alltoall": true,
	"global_scatter": true, "global_gather": true, "limit_by_capacity": true}

// lossHint explains a diverged loss that is declared neither partial nor
// reduced while the op computing it reads a batch-sharded input: each
// rank then holds the loss of its own shard, not the serial one.
func lossHint(m *ir.Module, loss string) string {
	g := m.Main.Global()
	if v := g.Var(loss); v == nil || v.Dist != nil && len(v.Dist.Partial) > 0 {
		return ""
	}
	for _, op := range g.Ops {
		if !op.Role.IsLoss() || !slices.Contains(slices.Collect(op.OutputNames), loss) {
			continue
		}
		for a := range op.InputNames {
			x := g.Var(a)
			if x == nil || x.Dist == nil || len(x.Dist.DimsMapping) == 0 || x.Dist.DimsMapping[0] < 0 {
				continue
			}
			k := x.Dist.DimsMapping[0]
			dim := ""
			if mesh := m.Mesh(x.Dist.Mesh); mesh != nil && k < len(mesh.DimNames) {
				dim = " (" + mesh.DimNames[k] + ")"
			}
			return fmt.Sprintf("%s is not declared partial, but %s reads %s with its batch dim sharded over mesh dim %d%s: it probably needs partial [%d:avg]",
				loss, op, a, k, dim, k)
		}
	}
	return ""
}
