package lower

import (
	"errors"
	"fmt"
	"strings"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/ops"
)

// The lowering driver: each op of a phase is replaced by what its impl
// emits.

// Phase selects the ops a lowering replaces.
type Phase int

// The three lowering phases, run in this order.
const (
	ForwardPhase Phase = iota
	BackwardPhase
	OptimizerPhase
)

// String is the name of the pass that runs the phase.
func (p Phase) String() string {
	switch p {
	case ForwardPhase:
		return "lower-forward"
	case BackwardPhase:
		return "lower-backward"
	case OptimizerPhase:
		return "lower-optimizer"
	}
	return fmt.Sprintf("Phase(%d)", int(p))
}

// OpError is an op that failed to lower: "rank R: op N TYPE: phase:
// reason", with "block B: " before the op for a sub-block. Registry.Lower
// returns one per failed op, joined, so that each is one line.
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

// Lower replaces, in every block of m's main program (partitioned for
// its rank), the ops of phase by what their impls emit (in the forward
// phase, the startup program's reshard ops too), and returns what
// the impls read of the rank, each once: two ranks of the same meshes
// for which every read answers alike (RankRead.Of) lower alike but for
// ring ids and start_index attrs (passes.PartitionClasses). A nil
// registry is DefaultRegistry().
func (r *Registry) Lower(m *ir.Module, phase Phase) (reads []RankRead, err error) {
	if r == nil {
		r = DefaultRegistry()
	}
	p := m.Main
	if p == nil || p.Rank < 0 {
		return nil, fmt.Errorf("main program is not partitioned: run partition-vars first")
	}
	var byID *ir.OpIndex[*ir.Op] // only backward ops look their forward op up
	if phase == BackwardPhase {
		byID = ir.IndexOps(m, p, func(op *ir.Op, _, _ int) *ir.Op { return op })
	}
	st := newState()
	var errs []error
	if phase == ForwardPhase {
		// The startup's reshards first: main's impls append their
		// broadcasts to it after.
		errs = r.lowerStartupReshards(m, st)
	}
	for _, b := range p.Blocks {
		ctx := newLowering(m, p.Rank, b, st)
		for _, op := range b.Ops {
			n := len(ctx.out)
			if err := r.lowerOp(ctx, phase, op, byID); err != nil {
				errs = append(errs, &OpError{Rank: p.Rank, Block: b.Index, OpID: op.ID, OpType: op.Type, Phase: phase.String(), Err: err})
			}
			if ctx.readStart && !startsAnEmbedding(ctx.out[n:]) {
				st.read(RankRead{Kind: ReadCoord, Mesh: ctx.startMesh, Axis: ctx.startAxis})
			}
			if phase == ForwardPhase {
				// Random ops are forward (or recomputed, lowered here too).
				if err := shardDraws(m, p, b, ctx.out[n:], int(p.Rank)); err != nil {
					errs = append(errs, err)
				}
			}
		}
		b.Ops = ctx.out
	}
	return st.reads, errors.Join(errs...)
}

// startsAnEmbedding reports whether emitted holds an op of the RankStart
// trait (c_embedding and its grad) with a start_index: where
// Lowering.ShardStart's value goes, and rank classes recompute it.
func startsAnEmbedding(emitted []*ir.Op) bool {
	for _, op := range emitted {
		if ops.Has(op.Type, ops.RankStart) && op.Attrs.Has("start_index") {
			return true
		}
	}
	return false
}

func (r *Registry) lowerOp(ctx *Lowering, phase Phase, op *ir.Op, byID *ir.OpIndex[*ir.Op]) error {
	ctx.readStart = false
	// Every phase visits every op; the role decides most of them without
	// reading the op's dist, a cache miss on a large block.
	recompute := func() bool { return op.Dist != nil && op.Dist.Recompute }
	var mine bool
	switch phase {
	case ForwardPhase:
		mine = op.Role.IsForward() || recompute()
	case BackwardPhase:
		mine = op.Role.IsBackward() && !recompute()
	case OptimizerPhase:
		mine = op.Role.IsOptimize() && !op.Role.IsBackward() && !recompute()
		if !mine && !op.Role.IsForward() && !op.Role.IsBackward() && !recompute() {
			return fmt.Errorf("role %s is neither forward, backward nor optimize", op.Role)
		}
	}
	if phase == BackwardPhase && op.Role.IsLoss() {
		// The loss's dist decides what the grad sync makes of the grads.
		for out := range op.OutputNames {
			v := ctx.Var(out)
			ctx.st.lossWhole = v != nil && v.Dist != nil && len(v.Dist.Partial) == 0
			if v != nil && v.Dist != nil && len(v.Dist.Partial) > 0 {
				ctx.st.lossAvg = v.Dist
			}
			break
		}
	}
	if !mine {
		ctx.Keep(op)
		return nil
	}
	if phase == BackwardPhase && op.Role.IsLossGrad() && ctx.st.lossGrad == "" {
		// The rule-based impl's grads are averaged where this loss is.
		for g := range op.OutputNames {
			ctx.st.lossGrad = g
			break
		}
	}
	if op.Type == ops.ReshardType {
		// Its own impl's Forward in every phase, on the ranks of either
		// end: the mesh of each of its steps is the impl's to choose.
		impl, err := r.Lookup(ops.ReshardType, 0)
		if err != nil {
			return err
		}
		lower := impl.Forward
		if phase != ForwardPhase {
			lower = impl.Backward
		}
		if lower == nil {
			return fmt.Errorf("impl %s:0 (%s) has no %s lowering", ops.ReshardType, impl.Name, phase)
		}
		ctx.begin(op, nil, ops.ReshardType, 0)
		return lower(ctx, op)
	}
	if op.Dist == nil {
		return fmt.Errorf("no dist annotation")
	}
	mesh := ctx.module.Mesh(op.Dist.Mesh)
	if mesh == nil {
		return fmt.Errorf("unknown mesh %s", op.Dist.Mesh)
	}
	if !mesh.Contains(ctx.rank) {
		// Another pipeline stage's op: check-annotations holds every op
		// to its own mesh's vars, so what crosses to this rank's stage
		// goes through a reshard. The stage that holds the loss starts
		// the gradient sync of every stage.
		if op.Role.IsLossGrad() {
			ctx.SeeLossGrad()
		}
		return nil
	}
	// The impl: the op's own, or for a backward op its forward op's.
	implOf := op
	if phase == BackwardPhase && !ops.Has(op.Type, ops.BackwardOnly) && op.Fwd != 0 {
		f, n := byID.Get(op.Fwd)
		switch {
		case n == 0:
			return fmt.Errorf("fwd op %d is missing", op.Fwd)
		case n > 1:
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
	if phase == BackwardPhase && implOf == op && !ops.Has(op.Type, ops.BackwardOnly) {
		implType, implIndex = "default", 0 // a grad op without a forward op: sum, the loss grad
	}
	impl, err := r.Lookup(implType, implIndex)
	if err != nil {
		return err
	}
	// A backward op's forward op was held to this when it was lowered
	// (and has been replaced by what its impl emitted since).
	if implOf == op && !Lowers(implType, op.Type) {
		return fmt.Errorf("impl %s:%d (%s) lowers %s ops, not %s", implType, implIndex, impl.Name, implType, op.Type)
	}
	ctx.begin(op, mesh, implType, implIndex)
	if phase == ForwardPhase {
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

// Fitter asks impls' Compatible of the forward ops of one module before
// any rank is lowered, as completion picks impls; its state is reused
// from op to op.
type Fitter struct {
	r   *Registry
	m   *ir.Module
	ctx Lowering
}

// Fitter returns a Fitter for m's main program.
func (r *Registry) Fitter(m *ir.Module) *Fitter {
	if r == nil {
		r = DefaultRegistry()
	}
	// No op list: Compatible emits nothing.
	return &Fitter{r: r, m: m, ctx: Lowering{rank: -1, module: m, st: newState()}}
}

// Fits returns why impl (implType, index) cannot lower op, a forward op
// of block b, as its dist stands, or nil. It is an error too when the
// impl does not exist or does not lower ops of op's type.
func (f *Fitter) Fits(b *ir.Block, op *ir.Op, implType string, index int) error {
	impl, err := f.r.Lookup(implType, index)
	if err != nil {
		return err
	}
	if !Lowers(implType, op.Type) {
		return fmt.Errorf("impl %s:%d (%s) lowers %s ops, not %s", implType, index, impl.Name, implType, op.Type)
	}
	if op.Dist == nil {
		return fmt.Errorf("no dist annotation")
	}
	mesh := f.m.Mesh(op.Dist.Mesh)
	if mesh == nil {
		return fmt.Errorf("unknown mesh %s", op.Dist.Mesh)
	}
	if impl.Compatible == nil {
		return nil
	}
	f.ctx.block = b
	f.ctx.begin(op, mesh, implType, index)
	return impl.Compatible(&f.ctx, op)
}
