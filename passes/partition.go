package passes

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/distpass/distpass/analysis"
	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/registry"
)

// The partition passes turn an annotated serial module into the program
// of one rank, in place (the pass manager's caller clones first; Partition
// and PartitionAll do). Names stay the serial names, as Paddle's do.

// partitionOrder is the order the partition passes must keep, with why.
var partitionOrder = []OrderRule{
	{"check-annotations", "partition-vars", "local shapes need complete, even annotations"},
	{"partition-vars", "lower-forward", "lowering reads local shapes and the rank that partition-vars sets"},
	{"lower-forward", "lower-backward", "backward ops find their impl through their lowered forward op"},
	{"lower-backward", "lower-optimizer", "optimizer ops update the grads that backward lowering synchronised"},
	{"lower-optimizer", "relink-block-attrs", "block refs are checked once every block is lowered"},
	{"lower-optimizer", "remap-params-grads", "the params-grads list names vars of the lowered program"},
}

// PartitionPasses returns the seven partition passes and partition, which
// composes them, lowering with the impls of reg.
func PartitionPasses(reg *registry.Registry) []*Pass {
	rankOpt := Option{Name: "rank", Kind: OptInt, Default: "0", Doc: "the rank whose program to produce",
		Range: &Range{Min: 0, Max: ir.MaxRank}}
	return []*Pass{
		{
			Name: "check-annotations",
			Doc: `check that every op and shaped var is soundly annotated
Every op of main has an op dist and every dense-tensor var a tensor dist;
mappings fit the tensor and the mesh; no mesh dim is used twice; every
sharded dim divides evenly; each op's mapping of an arg is the arg's own
dist (mesh, mapping, partial state: nothing reshards yet); a reduction
over a split dim has a partial output. Fails listing every problem.`,
			PreservesAll: true,
			Run: func(ctx *Context, m *ir.Module) error {
				rep, err := analysis.Get[*analysis.AnnotationReport](ctx.Analyses, analysis.Annotations)
				if err != nil {
					return err
				}
				return rep.Err()
			},
		},
		{
			Name: "partition-vars",
			Doc: `give every var its local shape on a rank
Each mapped dim of every var of main and startup is divided by its mesh
dim's size (startup vars follow main's block-0 var of the same name);
startup initialisers' shape attrs follow; the programs are marked with
the rank, and the module gets its process-group table.`,
			Options: []Option{rankOpt},
			Run: func(ctx *Context, m *ir.Module) error {
				return partitionVars(ctx.Analyses, m, int(ctx.Int("rank")))
			},
		},
		{
			Name: "lower-forward",
			Doc: `lower forward and recompute ops with their impls
Each op whose role is forward (or forward|loss), or whose dist says
recompute, is checked against its impl and replaced by what the impl's
Forward emits. Needs partition-vars.`,
			Run: func(ctx *Context, m *ir.Module) error { return Lower(m, reg, LowerForward) },
		},
		{
			Name: "lower-backward",
			Doc: `lower backward ops with their forward op's impl
Each backward op is replaced by what the impl of its forward op (found
through fwd) emits; backward-only ops (check_finite_and_unscale,
update_loss_scaling) use their own impl; others the default impl.`,
			Run: func(ctx *Context, m *ir.Module) error { return Lower(m, reg, LowerBackward) },
		},
		{
			Name: "lower-optimizer",
			Doc: `lower optimizer ops, and reject unknown roles
Optimize ops are lowered by their impl's Backward (shards update
elementwise, so no compatibility check); an op whose role is neither
forward, backward nor optimize is an error.`,
			Run: func(ctx *Context, m *ir.Module) error { return Lower(m, reg, LowerOptimizer) },
		},
		{
			Name: "relink-block-attrs",
			Doc: `check that every block ref points at a block of the new program
Lowering works in place, so blocks keep their indices and refs stay
right; this pass checks every ref, single or in a list, and fails on one
that points nowhere, at block 0, at its op's own block or an ancestor of
it, or that closes a cycle of block refs.`,
			PreservesAll: true,
			Run:          func(_ *Context, m *ir.Module) error { return RelinkBlockAttrs(m) },
		},
		{
			Name: "remap-params-grads",
			Doc: `check that the params-grads list names vars of the partitioned program
Partitioned vars keep their serial names, so the list stays as it is;
a pair naming a var the program lacks is an error.`,
			PreservesAll: true,
			Run:          func(_ *Context, m *ir.Module) error { return RemapParamsGrads(m) },
		},
		{
			Name: "partition",
			Doc: `produce the program of one rank
The composition check-annotations, partition-vars, lower-forward,
lower-backward, lower-optimizer, relink-block-attrs, remap-params-grads.`,
			Options: []Option{rankOpt},
			Run: func(ctx *Context, m *ir.Module) error {
				return Partition(m, reg, int(ctx.Int("rank")))
			},
		},
	}
}

// Partition runs the seven partition steps on m in place for rank, with
// the impls of reg (nil: registry.DefaultRegistry()).
func Partition(m *ir.Module, reg *registry.Registry, rank int) error {
	if reg == nil {
		reg = registry.DefaultRegistry()
	}
	cache := analysis.NewCache(m)
	pre := newIndexedArgs(m) // before anything reads or changes m
	// The local shapes (for partition-vars) are computed on another core
	// while this one checks the annotations; both only read m, and both
	// are done before anything changes it.
	shapesDone := make(chan struct{})
	go func() {
		defer close(shapesDone)
		defer func() { _ = recover() }() // partition-vars' Get computes it again, and panics there
		_, _ = analysis.Get[*analysis.LocalShapeInfo](cache, analysis.LocalShapes(rank))
	}()
	rep, err := analysis.Get[*analysis.AnnotationReport](cache, analysis.Annotations)
	<-shapesDone
	if err != nil {
		return err
	}
	if err := rep.Err(); err != nil {
		// One line per problem of the serial module, each naming its op
		// or var: the same on every rank.
		return err
	}
	if pre != nil {
		// The annotation check resolved every arg through this index.
		if pre.index, err = analysis.Get[*analysis.IndexInfo](cache, analysis.Index); err != nil {
			pre = nil
		}
	}
	var remapped func() error
	var remapDone <-chan struct{}
	steps := []struct {
		name string
		run  func() error
	}{
		{"partition-vars", func() error { return partitionVars(cache, m, rank) }},
		{"lower-forward", func() error { return lower(m, reg, LowerForward, pre) }},
		{"lower-backward", func() error { return lower(m, reg, LowerBackward, pre) }},
		{"lower-optimizer", func() error { return lower(m, reg, LowerOptimizer, pre) }},
		{"relink-block-attrs", func() error {
			// The last two steps only read m: the params-grads check
			// runs on another core meanwhile, and reports after.
			remapped, remapDone = goRun(func() error { return RemapParamsGrads(m) })
			return RelinkBlockAttrs(m)
		}},
		{"remap-params-grads", func() error { return remapped() }},
	}
	for _, s := range steps {
		if err := s.run(); err != nil {
			if remapDone != nil {
				<-remapDone // not left reading m past the return
			}
			if _, ok := err.(interface{ Unwrap() []error }); ok {
				return err // OpErrors: each line names rank, op and phase
			}
			return fmt.Errorf("%s: %w", s.name, err)
		}
	}
	return nil
}

// goRun runs f on another goroutine. wait waits for it and returns its
// error, raising a panic of f again in the waiter's goroutine, where the
// pass manager's recovery sees it; done is closed when f has returned.
func goRun(f func() error) (wait func() error, done <-chan struct{}) {
	var err error
	var failed any
	ch := make(chan struct{})
	go func() {
		defer close(ch)
		defer func() { failed = recover() }()
		err = f()
	}()
	return func() error {
		<-ch
		if failed != nil {
			panic(failed)
		}
		return err
	}, ch
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
// rank order; reg nil means registry.DefaultRegistry(). The result does
// not depend on scheduling: each rank's lowering reads only the serial
// module and its own clone. m is not changed.
func PartitionAll(ctx context.Context, m *ir.Module, reg *registry.Registry) ([]*ir.Module, error) {
	return PartitionAllProgress(ctx, m, reg, nil)
}

// PartitionAllProgress is PartitionAll that calls progress, when not nil,
// as each rank finishes, with the number of ranks done and the total.
// The calls do not overlap.
func PartitionAllProgress(ctx context.Context, m *ir.Module, reg *registry.Registry, progress func(done, total int)) ([]*ir.Module, error) {
	if reg == nil {
		reg = registry.DefaultRegistry()
	}
	ranks := Ranks(m)
	if len(ranks) == 0 {
		return nil, fmt.Errorf("partition-all: the module has no mesh")
	}
	// Each rank's lowering reads only m and its own clone.
	return lowerRanks(ctx, m, reg, ranks, func(r int) int { return r }, progress)
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
			forChunks(len(vars), func(lo, hi int) {
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
		// output's local shape. Each op is set on its own, once the
		// block's name index is built (a lookup builds a stale one).
		// The output is the var the analyses' index resolved it to (the
		// local shapes required the index) when that var still has its
		// name: on a large module each probe of startup's table would
		// be a cache miss.
		g := s.Global()
		g.Var("")
		idx, _ := analysis.Get[*analysis.IndexInfo](cache, analysis.Index)
		forChunks(len(g.Ops), func(lo, hi int) {
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
					if cur, ok := op.Attrs.Get("shape").(ir.Ints); ok && slices.Equal(cur, v.Type.Shape) {
						continue
					}
					op.Attrs.Set("shape", ir.Ints(slices.Clone(v.Type.Shape)))
				}
			}
		})
	}
	for _, p := range m.Programs() {
		p.Rank = rank
	}
	if len(m.Groups) == 0 {
		m.Groups = registry.BuildGroups(m.Meshes)
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

// forChunks calls f on consecutive ranges covering [0, n): one range
// below parallelChunk items, else one per core, at once.
func forChunks(n int, f func(lo, hi int)) {
	workers := min(runtime.GOMAXPROCS(0), max(1, n/parallelChunk))
	if workers <= 1 {
		f(0, n)
		return
	}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() { f(n*w/workers, n*(w+1)/workers) })
	}
	wg.Wait()
}

// parallelChunk is the least work forChunks gives a core: below it,
// starting one costs more than it saves.
const parallelChunk = 1 << 14

// LowerPhase selects the ops a lowering pass replaces.
type LowerPhase int

// The three lowering phases.
const (
	LowerForward LowerPhase = iota
	LowerBackward
	LowerOptimizer
)

// String is the name of the pass that runs the phase.
func (p LowerPhase) String() string {
	switch p {
	case LowerForward:
		return "lower-forward"
	case LowerBackward:
		return "lower-backward"
	case LowerOptimizer:
		return "lower-optimizer"
	}
	return fmt.Sprintf("LowerPhase(%d)", int(p))
}

// OpError is an op that failed to lower: "rank R: op N TYPE: phase:
// reason", with "block B: " before the op for a sub-block. Lower returns
// one per failed op, joined, so that each is one line.
type OpError struct {
	Rank, Block int
	OpID        int64
	OpType      string
	Phase       string
	Err         error
}

func (e *OpError) Error() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "rank %d: ", e.Rank)
	if e.Block != 0 {
		fmt.Fprintf(&sb, "block %d: ", e.Block)
	}
	fmt.Fprintf(&sb, "op %d %s: %s: %v", e.OpID, e.OpType, e.Phase, e.Err)
	return sb.String()
}

func (e *OpError) Unwrap() error { return e.Err }

// backwardOnly lists op types lowered by their own impl's Backward.
var backwardOnly = map[string]bool{"check_finite_and_unscale": true, "update_loss_scaling": true}

// Lower replaces, in every block of main, the ops of one phase by what
// their impls emit.
func Lower(m *ir.Module, reg *registry.Registry, phase LowerPhase) error {
	return lower(m, reg, phase, nil)
}

// indexedArgs carries, from the annotation check to the lowering, what
// the check's index resolved the args of main's block 0 to, so that the
// lowering of an op starts with its vars known (registry.Lowering.Bind) rather
// than looking each name up again in the block's table, a probe or two
// into memory out of cache on a large module. Only block 0: it has no
// ancestor whose vars a new var could shadow.
type indexedArgs struct {
	index *analysis.IndexInfo
	prog  *ir.Program
	binds uint64  // block 0's BindingsVersion when indexed
	pos   []int32 // for each op of block 0 now, its position when indexed, or -1; nil: unmoved
	buf   []*ir.Var
	cur   int32 // where the op being lowered was when indexed
}

// newIndexedArgs returns the record for m, or nil when main has no block.
func newIndexedArgs(m *ir.Module) *indexedArgs {
	if m.Main == nil || len(m.Main.Blocks) == 0 || m.Main.Blocks[0] == nil {
		return nil
	}
	return &indexedArgs{prog: m.Main, binds: m.Main.Blocks[0].BindingsVersion()}
}

// usable reports whether the record still describes block 0 of p.
func (x *indexedArgs) usable(p *ir.Program) bool {
	if x == nil || x.index == nil || p != x.prog || p.Blocks[0] == nil {
		return false
	}
	b := p.Blocks[0]
	return b.BindingsVersion() == x.binds && (x.pos == nil || len(x.pos) == len(b.Ops))
}

// at returns where the op now at position j of block 0 was when indexed,
// or -1 for an op emitted since.
func (x *indexedArgs) at(j int) int32 {
	if x.pos == nil {
		return int32(j)
	}
	return x.pos[j]
}

// bindCur binds the vars of the op being lowered (bind of cur): what
// the lowering hands registry.Lowering.BindLater.
func (x *indexedArgs) bindCur(ctx *registry.Lowering) { x.bind(ctx, x.cur) }

// bind tells ctx the vars of the op that was at position pos of block 0
// when indexed, unless an impl has removed or renamed a var of the block
// since the index was built: then never again. Each var is bound under
// its own name, read now, so a var is never bound to a name it does not
// have; an op matched with the wrong position would only be lowered with
// lookups.
func (x *indexedArgs) bind(ctx *registry.Lowering, pos int32) {
	if x.index == nil || x.prog.Blocks[0].BindingsVersion() != x.binds {
		x.index = nil
		return
	}
	if pos < 0 {
		return
	}
	var ok bool
	if x.buf, ok = x.index.AppendArgVars(x.buf[:0], x.prog, 0, int(pos)); ok {
		ctx.Bind(x.buf)
	}
	clear(x.buf)
}

func lower(m *ir.Module, reg *registry.Registry, phase LowerPhase, pre *indexedArgs) error {
	if reg == nil {
		reg = registry.DefaultRegistry()
	}
	p := m.Main
	if p == nil || p.Rank < 0 {
		return fmt.Errorf("main program is not partitioned: run partition-vars first")
	}
	var byID *opIndex // only backward ops look their forward op up
	if phase == LowerBackward {
		byID = indexOps(p, numModuleOps(m))
	}
	st := registry.NewState()
	var errs []error
	for bi, b := range p.Blocks {
		ctx := registry.NewCtx(m, p.Rank, b, st)
		var bound *indexedArgs
		var bind func(*registry.Lowering)
		var next []int32 // where the ops of the new list were indexed
		if bi == 0 && pre.usable(p) {
			bound, bind = pre, pre.bindCur
			next = make([]int32, 0, len(b.Ops)+len(b.Ops)/4)
		}
		for j, op := range b.Ops {
			n, pos := len(ctx.Ops()), int32(-1)
			if bound != nil {
				pos = bound.at(j)
			}
			if bound != nil {
				bound.cur = pos
			}
			if err := lowerOp(ctx, m, reg, phase, op, byID, bind); err != nil {
				errs = append(errs, &OpError{Rank: p.Rank, Block: b.Index, OpID: op.ID, OpType: op.Type, Phase: phase.String(), Err: err})
			}
			if bound != nil {
				for _, o := range ctx.Ops()[n:] {
					if o == op {
						next = append(next, pos) // kept: the index knows it
					} else {
						next = append(next, -1)
					}
				}
			}
		}
		b.Ops = ctx.Ops()
		if bound != nil {
			bound.pos = next
		}
	}
	return errors.Join(errs...)
}

// opIndex finds the ops of a program by id: in a slice when the ids are
// dense, as ir.Module.FreshOpID hands them out, else in a map. An id two
// ops share is found, as nil.
type opIndex struct {
	dense  []*ir.Op
	sparse map[int64]*ir.Op
}

// ambiguous marks, in opIndex.dense, an id more than one op has.
var ambiguous = new(ir.Op)

// indexOps indexes the ops of p, a program of a module of moduleOps ops.
// Ids are handed out across the module's programs, so it is against the
// module's op count that they are dense: main's ids alone leave out
// those of startup, often as many.
func indexOps(p *ir.Program, moduleOps int) *opIndex {
	maxID := int64(0)
	for _, b := range p.Blocks {
		for _, op := range b.Ops {
			maxID = max(maxID, op.ID)
		}
	}
	x := &opIndex{}
	if maxID <= 2*int64(moduleOps)+1024 {
		x.dense = make([]*ir.Op, maxID+1)
	} else {
		x.sparse = make(map[int64]*ir.Op, p.NumOps())
	}
	for _, b := range p.Blocks {
		for _, op := range b.Ops {
			if x.dense != nil {
				if op.ID < 0 {
					continue // verify refuses such ids; no fwd can name one
				}
				if x.dense[op.ID] != nil {
					x.dense[op.ID] = ambiguous
				} else {
					x.dense[op.ID] = op
				}
				continue
			}
			if _, dup := x.sparse[op.ID]; dup {
				x.sparse[op.ID] = nil
			} else {
				x.sparse[op.ID] = op
			}
		}
	}
	return x
}

// numModuleOps counts the ops of every program of m.
func numModuleOps(m *ir.Module) int {
	n := 0
	for _, p := range m.Programs() {
		n += p.NumOps()
	}
	return n
}

// get returns the op with id, nil when more than one has it, and whether
// any has.
func (x *opIndex) get(id int64) (*ir.Op, bool) {
	if x.dense == nil {
		op, ok := x.sparse[id]
		return op, ok
	}
	if id < 0 || id >= int64(len(x.dense)) || x.dense[id] == nil {
		return nil, false
	}
	if op := x.dense[id]; op != ambiguous {
		return op, true
	}
	return nil, true
}

func lowerOp(ctx *registry.Lowering, m *ir.Module, reg *registry.Registry, phase LowerPhase, op *ir.Op, byID *opIndex, bind func(*registry.Lowering)) error {
	// Every phase visits every op; the role decides most of them without
	// reading the op's dist, a cache miss on a large block.
	recompute := func() bool { return op.Dist != nil && op.Dist.Recompute }
	var mine bool
	switch phase {
	case LowerForward:
		mine = op.Role.IsForward() || recompute()
	case LowerBackward:
		mine = op.Role.IsBackward() && !recompute()
	case LowerOptimizer:
		mine = op.Role.IsOptimize() && !op.Role.IsBackward() && !recompute()
		if !mine && !op.Role.IsForward() && !op.Role.IsBackward() && !recompute() {
			return fmt.Errorf("role %s is neither forward, backward nor optimize", op.Role)
		}
	}
	if !mine {
		ctx.Keep(op)
		return nil
	}
	// The impl: the op's own, or for a backward op its forward op's.
	implOf := op
	if phase == LowerBackward && !backwardOnly[op.Type] && op.Fwd != 0 {
		f, found := byID.get(op.Fwd)
		switch {
		case !found:
			return fmt.Errorf("fwd op %d is missing", op.Fwd)
		case f == nil:
			return fmt.Errorf("fwd %d names more than one op (op ids must be unique)", op.Fwd)
		}
		if !f.Role.IsForward() && !(f.Dist != nil && f.Dist.Recompute) {
			return fmt.Errorf("fwd op %d %s is not a forward op (role %s)", f.ID, f.Type, f.Role)
		}
		implOf = f
	}
	implType, implIndex := "default", 0
	if d := implOf.Dist; d != nil && d.ImplType != "" {
		implType, implIndex = d.ImplType, d.ImplIndex
	}
	if phase == LowerBackward && implOf == op && !backwardOnly[op.Type] {
		implType, implIndex = "default", 0 // a grad op without a forward op: sum, the loss grad
	}
	if op.Dist == nil {
		return fmt.Errorf("no dist annotation")
	}
	mesh := m.Mesh(op.Dist.Mesh)
	if mesh == nil {
		return fmt.Errorf("unknown mesh %s", op.Dist.Mesh)
	}
	if !mesh.Contains(ctx.Rank) {
		return fmt.Errorf("rank %d is not in mesh %s", ctx.Rank, mesh.Name)
	}
	impl, err := reg.Lookup(implType, implIndex)
	if err != nil {
		return err
	}
	// A backward op's forward op was held to this when it was lowered
	// (and has been replaced by what its impl emitted since).
	if implOf == op && !registry.Lowers(implType, op.Type) {
		return fmt.Errorf("impl %s:%d (%s) lowers %s ops, not %s", implType, implIndex, impl.Name, implType, op.Type)
	}
	ctx.Begin(op, mesh, implType, implIndex)
	if bind != nil {
		ctx.BindLater(bind)
	}
	if phase == LowerForward {
		if impl.Compatible != nil {
			if err := impl.Compatible(ctx, op); err != nil {
				return fmt.Errorf("impl %s:%d (%s) does not fit: %v", implType, implIndex, impl.Name, err)
			}
		}
		if impl.Forward == nil {
			return fmt.Errorf("impl %s:%d (%s) has no forward lowering", implType, implIndex, impl.Name)
		}
		return impl.Forward(ctx, op)
	}
	if impl.Backward == nil {
		return fmt.Errorf("impl %s:%d (%s) has no backward lowering", implType, implIndex, impl.Name)
	}
	return impl.Backward(ctx, op)
}

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
