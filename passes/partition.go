package passes

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/distpass/distpass/analysis"
	"github.com/distpass/distpass/internal/par"
	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/lower"
	"github.com/distpass/distpass/ops"
)

// The partition passes turn an annotated serial module into the program
// of one rank, in place (the pass manager's caller clones first; Partition
// and PartitionAll do). Names stay the serial names, as Paddle's do.

// partitionStep is a step of the partition pipeline: its pass, and the
// earlier step it must follow, with why. The order rules of the steps are
// made from these, so that the list below is the one place the pipeline is
// written.
type partitionStep struct {
	pass          *Pass
	follows, why  string
	ownsItsErrors bool // its errors name their op or var: never prefixed with the step
}

// partitionSteps returns the partition pipeline's steps, lowering with
// the impls of reg.
func partitionSteps(reg *lower.Registry) []partitionStep {
	lowering := func(phase lower.Phase) func(*Context, *ir.Module) error {
		return func(ctx *Context, m *ir.Module) error { return lowerPhase(ctx, m, reg, phase) }
	}
	return []partitionStep{
		{pass: &Pass{
			Name: "check-annotations",
			Doc: `check that every op and shaped var is soundly annotated
Every op of main has an op dist and every dense-tensor var a tensor dist;
mappings fit the tensor and the mesh; no mesh dim is used twice; every
sharded dim divides evenly; each op's mapping of an arg is the arg's own
dist (mesh, mapping, partial state); a reduction over a split dim has a
partial output. Then each op lower-forward lowers (forward, or
recomputed) is held to its impl as lowering will hold it: the impl
exists, lowers the op's type, and accepts the op's dist (a
column-parallel matmul whose X has the batch on mp does not), so that
the op that does not fit is named, not a later one. Fails listing every
problem.`,
			PreservesAll: true,
			Run: func(ctx *Context, m *ir.Module) error {
				rep, err := analysis.Get[*analysis.AnnotationReport](ctx.Analyses, analysis.Annotations)
				if err != nil {
					return err
				}
				if err := rep.Err(); err != nil {
					return err
				}
				return checkImpls(m, reg)
			},
		}, ownsItsErrors: true},
		{pass: &Pass{
			Name: "partition-vars",
			Doc: `give every var its local shape on a rank
Each mapped dim of every var of main and startup is divided by its mesh
dim's size (startup vars follow main's block-0 var of the same name);
startup initialisers' shape attrs follow; the programs are marked with
the rank, and the module gets its process-group table.`,
			Options: []Option{rankOption()},
			// Only shapes, shape attrs and the rank change: every name and
			// op stays where the index found it.
			Preserves: []*analysis.Analyzer{analysis.Index},
			Transient: "vars have their local shapes, but main's ops keep their serial attrs (reshape2's shape, fill_constant's) until lower-forward's impls rewrite them",
			Run: func(ctx *Context, m *ir.Module) error {
				return partitionVars(ctx.Analyses, m, int(ctx.Int("rank")))
			},
		}, follows: "check-annotations", why: "local shapes need complete, even annotations"},
		{pass: &Pass{
			Name: "lower-forward",
			Doc: `lower forward and recompute ops with their impls
Each op whose role is forward (or forward|loss), or whose dist says
recompute, is checked against its impl and replaced by what the impl's
Forward emits. Needs partition-vars.`,
			Run: lowering(lower.ForwardPhase),
		}, follows: "partition-vars", why: "lowering reads local shapes and the rank that partition-vars sets"},
		{pass: &Pass{
			Name: "lower-backward",
			Doc: `lower backward ops with their forward op's impl
Each backward op is replaced by what the impl of its forward op (found
through fwd) emits; backward-only ops (check_finite_and_unscale,
update_loss_scaling) use their own impl; others the default impl.`,
			Run: lowering(lower.BackwardPhase),
		}, follows: "lower-forward", why: "backward ops find their impl through their lowered forward op"},
		{pass: &Pass{
			Name: "lower-optimizer",
			Doc: `lower optimizer ops, and reject unknown roles
Optimize ops are lowered by their impl's Backward (shards update
elementwise, so no compatibility check); an op whose role is neither
forward, backward nor optimize is an error.`,
			Run: lowering(lower.OptimizerPhase),
		}, follows: "lower-backward", why: "optimizer ops update the grads that backward lowering synchronised"},
		{pass: &Pass{
			Name: "relink-block-attrs",
			Doc: `check that every block ref points at a block of the new program
Lowering works in place, so blocks keep their indices and refs stay
right; this pass checks every ref, single or in a list, and fails on one
that points nowhere, at block 0, at its op's own block or an ancestor of
it, or that closes a cycle of block refs.`,
			PreservesAll: true,
			Run:          func(_ *Context, m *ir.Module) error { return RelinkBlockAttrs(m) },
		}, follows: "lower-optimizer", why: "block refs are checked once every block is lowered"},
		{pass: &Pass{
			Name: "remap-params-grads",
			Doc: `check that the params-grads list names vars of the partitioned program
Partitioned vars keep their serial names, so the list stays as it is;
a pair naming a var the program lacks is an error.`,
			PreservesAll: true,
			Run:          func(_ *Context, m *ir.Module) error { return RemapParamsGrads(m) },
		}, follows: "lower-optimizer", why: "the params-grads list names vars of the lowered program"},
	}
}

func rankOption() Option {
	return Option{Name: "rank", Kind: OptInt, Default: "0", Doc: "the rank whose program to produce",
		Range: &Range{Min: 0, Max: ir.MaxRank}}
}

// partitionOrder is the order rules of the partition steps.
func partitionOrder() []OrderRule {
	var rules []OrderRule
	for _, s := range partitionSteps(nil) {
		if s.follows != "" {
			rules = append(rules, OrderRule{Before: s.follows, After: s.pass.Name, Why: s.why})
		}
	}
	return rules
}

// PartitionPasses returns the partition steps, lowering with the impls of
// reg, and partition, the named pipeline that runs them in order.
func PartitionPasses(reg *lower.Registry) []*Pass {
	steps := partitionSteps(reg)
	var ps []*Pass
	doc := `produce the program of one rank
A named pipeline: its steps run in order as nested executions, which
every instrument sees. A step's failure is reported as partition's,
naming the step unless its message names the op or var.`
	for _, s := range steps {
		ps = append(ps, s.pass)
		doc += "\n  " + s.pass.Name + ": " + s.pass.Summary()
	}
	return append(ps, &Pass{
		Name:    "partition",
		Doc:     doc,
		Options: []Option{rankOption()},
		Run: func(ctx *Context, m *ir.Module) error {
			return partitionFailure(ctx, steps, ctx.RunPipeline(partitionPipeline(steps, ctx.Int("rank")), m))
		},
	})
}

// partitionPipeline is the partition steps for rank, as nested steps.
func partitionPipeline(steps []partitionStep, rank int64) *Pipeline {
	pl := &Pipeline{}
	for _, s := range steps {
		st := &Step{Pass: s.pass}
		if s.pass.option("rank") != nil {
			st = withRank(s.pass, rank)
		}
		pl.Steps = append(pl.Steps, st)
	}
	return pl
}

// withRank is a step of p, with its rank option set to rank.
func withRank(p *Pass, rank int64) *Step {
	return &Step{Pass: p, opts: []optValue{{name: "rank", text: strconv.FormatInt(rank, 10), val: rank}}}
}

// partitionFailure reports a nested step's failure as partition's own,
// in the words partition has always used: the step's message, after the
// step's name unless it is a list of problems that each name their op or
// var (a joined error, or check-annotations' report). A panic stays the
// nested step's, where its stack points. The reproducer, if one was
// written, was written when the step failed, and names the step.
func partitionFailure(ctx *Context, steps []partitionStep, err error) error {
	pe, ok := err.(*PassError)
	if !ok || pe.Panic != nil || pe.Exec.Parent != ctx.Exec {
		return err
	}
	inner := pe.Err
	_, joined := inner.(interface{ Unwrap() []error })
	for _, s := range steps {
		if s.pass == pe.Exec.Step.Pass && !s.ownsItsErrors && !joined {
			inner = fmt.Errorf("%s: %w", s.pass.Name, inner)
		}
	}
	return &PassError{Exec: ctx.Exec, Pipeline: pe.Pipeline, Err: inner, Reproducer: pe.Reproducer}
}

// Partition runs the partition pipeline on m in place for rank, with the
// impls of reg (nil: lower.DefaultRegistry()). Its error is the
// partition step's message, without the pass manager's "pass partition"
// prefix.
func Partition(m *ir.Module, reg *lower.Registry, rank int) error {
	return partition(context.Background(), m, reg, rank)
}

// partition is Partition, whose steps see ctx (for its record of rank
// reads: lowerPhase).
func partition(ctx context.Context, m *ir.Module, reg *lower.Registry, rank int) error {
	if reg == nil {
		reg = lower.DefaultRegistry()
	}
	ps := PartitionPasses(reg)
	pl := &Pipeline{Steps: []*Step{withRank(ps[len(ps)-1], int64(rank))}}
	err := (&Manager{}).Run(ctx, pl, m)
	if pe, ok := err.(*PassError); ok && pe.Panic == nil {
		return pe.Err
	}
	return err
}

// Ranks returns every rank of the module's meshes, ascending.
func Ranks(m *ir.Module) []int {
	var rs []int
	for _, pm := range m.Meshes {
		rs = append(rs, pm.ProcessIDs...)
	}
	slices.Sort(rs)
	return slices.Compact(rs)
}

// CheckRank returns nil when rank is a process of some mesh of m, and
// otherwise an error naming the rank and every mesh with its ranks, as
// partition-vars (and so partition) fails on such a rank.
func CheckRank(m *ir.Module, rank int) error {
	for _, pm := range m.Meshes {
		if pm != nil && pm.Contains(rank) {
			return nil
		}
	}
	if len(m.Meshes) == 0 {
		return fmt.Errorf("rank %d is in no mesh: the module declares none", rank)
	}
	var sb strings.Builder
	for i, pm := range m.Meshes {
		if i == maxMeshesShown {
			fmt.Fprintf(&sb, "; and %d more", len(m.Meshes)-i)
			break
		}
		if i > 0 {
			sb.WriteString("; ")
		}
		if pm == nil {
			sb.WriteString("a nil mesh")
			continue
		}
		sb.WriteString("mesh " + pm.Name + " has ranks " + shortRanks(pm.ProcessIDs))
	}
	return fmt.Errorf("rank %d is in no mesh of the module (%s)", rank, sb.String())
}

// maxMeshesShown and maxRanksShown keep CheckRank's message one line on
// modules with many meshes or large ones.
const (
	maxMeshesShown = 8
	maxRanksShown  = 16
)

// shortRanks is ir.FormatInts, with only the first maxRanksShown ranks.
func shortRanks(ids []int) string {
	if len(ids) <= maxRanksShown {
		return ir.FormatInts(ids)
	}
	s := ir.FormatInts(ids[:maxRanksShown])
	return fmt.Sprintf("%s, ... %d more]", s[:len(s)-1], len(ids)-maxRanksShown)
}

// PartitionAll partitions a clone of m for every rank of its meshes,
// concurrently (at most GOMAXPROCS at once), and returns the modules in
// rank order; reg nil means lower.DefaultRegistry(). The result does
// not depend on scheduling: each rank's lowering reads only the serial
// module and its own clone. m is not changed.
func PartitionAll(ctx context.Context, m *ir.Module, reg *lower.Registry) ([]*ir.Module, error) {
	return PartitionAllProgress(ctx, m, reg, nil)
}

// PartitionAllProgress is PartitionAll that calls progress, when not nil,
// as each rank finishes, with the number of ranks done and the total.
// The calls do not overlap.
func PartitionAllProgress(ctx context.Context, m *ir.Module, reg *lower.Registry, progress func(done, total int)) ([]*ir.Module, error) {
	if reg == nil {
		reg = lower.DefaultRegistry()
	}
	ranks := Ranks(m)
	if len(ranks) == 0 {
		return nil, fmt.Errorf("partition-all: the module has no mesh")
	}
	// Each rank's lowering reads only m and its own clone.
	mods, _, err := lowerRanks(ctx, m, reg, ranks, func(r int) int { return r }, progress)
	return mods, err
}

// PartitionVars sets every var's local shape for rank, the startup
// initialisers' shape attrs, the programs' rank and the group table.
func PartitionVars(m *ir.Module, rank int) error {
	return partitionVars(analysis.NewCache(m), m, rank)
}

// partitionVars is PartitionVars with the analyses of cache (over m).
func partitionVars(cache *analysis.Cache, m *ir.Module, rank int) error {
	if err := CheckRank(m, rank); err != nil {
		return err
	}
	ls, err := analysis.Get[*analysis.LocalShapeInfo](cache, analysis.LocalShapes(rank))
	if err != nil {
		return err
	}
	for _, p := range m.Programs() {
		if p.Rank >= 0 {
			return fmt.Errorf("program %s is already partitioned for rank %d", p.Name, p.Rank)
		}
	}
	// The analysis is complete before the first var changes, and each
	// shape it returns is its own capped slice, which the var can keep.
	// Each var is set on its own, so a large block's are set on several
	// cores.
	for _, p := range m.Programs() {
		for _, b := range p.Blocks {
			vars := b.Vars()
			par.Chunks(len(vars), parallelChunk, func(lo, hi int) {
				for j := lo; j < hi; j++ {
					v := vars[j]
					if !v.Type.IsTensor() {
						continue
					}
					if l, ok := ls.OfPos(p, b.Index, j); ok && l.Shape != nil {
						v.Type.Shape = l.Shape
					}
				}
			})
		}
	}
	if s := m.Startup; s != nil {
		// Paddle's startup partition: an initialiser's shape attr is its
		// output's local shape. Each op is set on its own. The output is
		// the var the analyses' index resolved it to (the local shapes
		// required the index) when that var still has its name: on a
		// large module each probe of startup's table would be a cache
		// miss.
		g := s.Global()
		idx, _ := analysis.Get[*analysis.IndexInfo](cache, analysis.Index)
		par.Chunks(len(g.Ops), parallelChunk, func(lo, hi int) {
			var buf []*ir.Var
			for j, op := range g.Ops[lo:hi] {
				outs := op.Output("Out")
				if len(outs) != 1 || !op.Attrs.Has("shape") {
					continue
				}
				v := indexedOut(idx, &buf, s, lo+j, op, outs[0])
				if v == nil {
					v = g.Var(outs[0])
				}
				if v != nil && v.Type.IsTensor() {
					// A replicated parameter keeps its shape: no new attr.
					if cur, ok := ir.AsInts(ops.AttrValue(op, "shape")); ok && slices.Equal(cur, v.Type.Shape) {
						continue
					}
					op.Attrs.Set("shape", ir.Ints(slices.Clone(v.Type.Shape)))
				}
			}
		})
	}
	if s := m.Startup; s != nil {
		// A split param's initialiser draws its rank's block of the
		// serial draw (lower.ShardDraw): its halves are not one draw
		// of the local shape twice.
		g := s.Global()
		for _, op := range g.Ops {
			v, mesh, mapping, ok := lower.DrawnBlock(m, s, g, op)
			if !ok || !mesh.Contains(rank) {
				continue
			}
			if err := lower.ShardDraw(op, mesh, mapping, v.Type.Shape, rank); err != nil {
				return fmt.Errorf("startup op %d %s: %v", op.ID, op.Type, err)
			}
		}
	}
	for _, p := range m.Programs() {
		p.Rank = rank
	}
	if len(m.Groups) == 0 {
		m.Groups = lower.BuildGroups(m.Meshes)
	}
	return nil
}

// indexedOut returns the var idx resolved the arg name of op's "Out"
// slot to, op being at position pos of p's global block, when that var
// is still called name; else nil. buf is scratch.
func indexedOut(idx *analysis.IndexInfo, buf *[]*ir.Var, p *ir.Program, pos int, op *ir.Op, name string) *ir.Var {
	if idx == nil {
		return nil
	}
	k := 0
	for _, sl := range op.Inputs {
		k += len(sl.Args)
	}
	for _, sl := range op.Outputs {
		if sl.Name == "Out" {
			break
		}
		k += len(sl.Args)
	}
	vars, ok := idx.AppendArgVars((*buf)[:0], p, 0, pos)
	*buf = vars
	if !ok || k >= len(vars) || vars[k] == nil || vars[k].Name() != name {
		return nil
	}
	return vars[k]
}

// parallelChunk is the least work partitionVars gives a core: below it,
// starting one costs more than it saves.
const parallelChunk = 1 << 14

// RelinkBlockAttrs checks every block ref of every op of main: it points
// at a block of the program other than block 0, the op's own and its
// ancestors, and no block refers back to itself through the blocks its
// ops refer to (ir.Program.RefCycles), as Verify requires.
func RelinkBlockAttrs(m *ir.Module) error {
	var errs []string
	for _, p := range m.Programs() {
		cycles := false
		for _, b := range p.Blocks {
			for _, op := range b.Ops {
				for i := range op.SubBlocks {
					var why string
					switch {
					case p.Block(i) == nil:
						why = "points at no block"
					case i == 0:
						why = "points at the global block"
					case i == b.Index:
						why = "points at the op's own block"
					case p.IsAncestor(i, b.Index):
						why = fmt.Sprintf("points at block %d, an ancestor of the op's block %d", i, b.Index)
					default:
						cycles = true
						continue
					}
					errs = append(errs, fmt.Sprintf("%s block %d: %s: block ref ^%d %s", p.Name, b.Index, op, i, why))
				}
			}
		}
		if cycles {
			for _, c := range p.RefCycles() {
				errs = append(errs, fmt.Sprintf("%s block %d: %s: %s", p.Name, c.Block, c.Op, c.Msg()))
			}
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "\n"))
	}
	return nil
}

// RemapParamsGrads checks that every pair names vars of main.
func RemapParamsGrads(m *ir.Module) error {
	has := func(name string) bool {
		for _, b := range m.Main.Blocks {
			if b.Var(name) != nil {
				return true
			}
		}
		return false
	}
	var errs []string
	for _, pg := range m.ParamGrads {
		if !has(pg.Param) {
			errs = append(errs, fmt.Sprintf("grads: param %s is not in the partitioned program", pg.Param))
		}
		if pg.Grad != "" && !has(pg.Grad) {
			errs = append(errs, fmt.Sprintf("grads: grad %s of %s is not in the partitioned program", pg.Grad, pg.Param))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "\n"))
	}
	return nil
}
