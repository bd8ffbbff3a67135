package sim

import (
	"errors"
	"fmt"
	"maps"
	"runtime/debug"
	"slices"
	"time"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/ops"
)

// Scope maps a var name to its current value.
type Scope map[string]*Tensor

// Hooks let a caller run the ops the interpreter cannot: an SPMD runner
// sets Collective to meet the other ranks.
type Hooks struct {
	// Collective runs a collective op (ops.IsCollective) given its inputs.
	// Nil: collectives are an error.
	Collective func(op *ir.Op, in Args) (Args, error)
}

// DefaultMaxLoopOps is Interp.MaxLoopOps's default: under a second of
// the simulator's smallest ops, and far more than the loops of the
// programs distpass checks run.
const DefaultMaxLoopOps = 1 << 20

// Interp runs programs op by op. The zero value has no kernels; use
// NewInterp or set Kernels.
type Interp struct {
	Kernels Kernels
	Hooks   Hooks
	// MaxLoopOps caps the work of while loops in one run of a program
	// (one RunProgram call, or each program of RunModule): every op run
	// in a loop body, at any depth of nesting, counts one, and so does
	// every iteration. A cap per loop would let nested loops multiply.
	// Past it the run fails, naming the innermost loop running. 0 means
	// DefaultMaxLoopOps.
	MaxLoopOps int
	// OpTime, when set, is called after each op whose kernel (or
	// Collective hook) ran without error, with the time the kernel took:
	// once per run of the op, so an op in a loop body at every iteration.
	// while and conditional_block are not reported themselves, the ops
	// of their bodies are. Nil reads no clock.
	OpTime func(op *ir.Op, d time.Duration)
}

// NewInterp returns an interpreter with the given kernels (nil: the
// default table).
func NewInterp(ks Kernels) *Interp {
	if ks == nil {
		ks = DefaultKernels()
	}
	return &Interp{Kernels: ks}
}

// Run runs m's startup program, then its main program, in a copy of scope
// (the caller's map is not modified; tensors are never mutated in place)
// and returns the resulting scope. kernels nil means DefaultKernels.
func Run(m *ir.Module, scope Scope, kernels Kernels) (Scope, error) {
	return NewInterp(kernels).RunModule(m, scope)
}

// RunModule is Run with the interpreter's kernels and hooks.
func (ip *Interp) RunModule(m *ir.Module, scope Scope) (Scope, error) {
	s := maps.Clone(scope)
	if s == nil {
		s = Scope{}
	}
	if m.Startup != nil {
		if err := ip.RunProgram(m.Startup, s); err != nil {
			return s, fmt.Errorf("startup: %w", err)
		}
	}
	if m.Main != nil {
		if err := ip.RunProgram(m.Main, s); err != nil {
			return s, fmt.Errorf("main: %w", err)
		}
	}
	return s, nil
}

// RunProgram runs block 0 of p in scope, writing its results there.
func (ip *Interp) RunProgram(p *ir.Program, scope Scope) error {
	if len(p.Blocks) == 0 {
		return nil
	}
	w := &work{limit: ip.MaxLoopOps}
	if w.limit <= 0 {
		w.limit = DefaultMaxLoopOps
	}
	return ip.runBlock(p, p.Blocks[0], scope, 0, w, nil)
}

// work counts a run's loop work against its cap.
type work struct{ used, limit int }

// spend counts one unit of loop's work: an error naming loop past the cap.
func (w *work) spend(loop *ir.Op) error {
	if w.used++; w.used > w.limit {
		return &loopCapError{OpID: loop.ID, OpType: loop.Type, Cap: w.limit}
	}
	return nil
}

// loopCapError is the error of a run whose while loops did more work than
// Interp.MaxLoopOps allows, naming the innermost loop running then.
type loopCapError struct {
	OpID   int64
	OpType string
	Cap    int
}

func (e *loopCapError) Error() string {
	return fmt.Sprintf("op %d %s: loop work past the cap of %d op executions per run (nested loops multiply)", e.OpID, e.OpType, e.Cap)
}

// runBlock runs b's ops; loop is the innermost while whose body b is part
// of (nil outside loops), which the ops' work is counted against.
func (ip *Interp) runBlock(p *ir.Program, b *ir.Block, scope Scope, depth int, w *work, loop *ir.Op) error {
	if depth > len(p.Blocks) {
		return fmt.Errorf("block %d: sub-blocks nest deeper than the program has blocks", b.Index)
	}
	for _, op := range b.Ops {
		if loop != nil {
			if err := w.spend(loop); err != nil {
				return err
			}
		}
		if err := ip.runOp(p, b, op, scope, depth, w, loop); err != nil {
			return err
		}
	}
	return nil
}

func subBlock(p *ir.Program, op *ir.Op) (*ir.Block, error) {
	ref, ok := op.Attrs.Get("sub_block").(ir.BlockRef)
	if !ok {
		return nil, fmt.Errorf("%s: no sub_block attr", op)
	}
	sb := p.Block(int(ref))
	if sb == nil || sb.Index == 0 {
		return nil, fmt.Errorf("%s: sub_block ^%d is not a sub-block of the program", op, ref)
	}
	return sb, nil
}

// truth reads the first element of the one-tensor slot name.
func truth(op *ir.Op, scope Scope, slot string) (bool, error) {
	args := op.Input(slot)
	if len(args) != 1 {
		return false, fmt.Errorf("%s: %s has %d args, want 1", op, slot, len(args))
	}
	t, ok := scope[args[0]]
	if !ok {
		return false, fmt.Errorf("%s: input %s (%s) has no value", op, args[0], slot)
	}
	if t.Numel() == 0 {
		return false, fmt.Errorf("%s: %s %s is empty", op, slot, args[0])
	}
	return t.Data[0] != 0, nil
}

func (ip *Interp) runOp(p *ir.Program, b *ir.Block, op *ir.Op, scope Scope, depth int, w *work, loop *ir.Op) error {
	switch op.Type {
	case "while":
		sb, err := subBlock(p, op)
		if err != nil {
			return err
		}
		for it := 0; ; it++ {
			c, err := truth(op, scope, "Condition")
			if err != nil || !c {
				return err
			}
			if err := w.spend(op); err != nil {
				return err
			}
			if err := ip.runBlock(p, sb, scope, depth+1, w, op); err != nil {
				var capped *loopCapError
				if errors.As(err, &capped) {
					return err // it names the loop; the iterations add nothing
				}
				return fmt.Errorf("%s iteration %d: %w", op, it, err)
			}
		}
	case "conditional_block":
		sb, err := subBlock(p, op)
		if err != nil {
			return err
		}
		c, err := truth(op, scope, "Cond")
		if err != nil || !c {
			return err
		}
		if err := ip.runBlock(p, sb, scope, depth+1, w, loop); err != nil {
			var capped *loopCapError
			if errors.As(err, &capped) {
				return err
			}
			return fmt.Errorf("%s: %w", op, err)
		}
		return nil
	}
	in := make(Args, len(op.Inputs))
	for _, s := range op.Inputs {
		ts := make([]*Tensor, len(s.Args))
		for i, a := range s.Args {
			t, ok := scope[a]
			if !ok {
				return fmt.Errorf("%s: input %s (%s) has no value: never written and not fed", op, a, s.Name)
			}
			ts[i] = t
		}
		in[s.Name] = ts
	}
	var k Kernel
	if ops.IsCollective(op.Type) {
		switch {
		case ip.Hooks.Collective != nil:
			k = ip.Hooks.Collective
		case p.Rank < 0:
			// A serial program is a world of one rank.
			k = serialCollective
		default:
			return fmt.Errorf("%s: collective op of rank %d's program outside an SPMD run (no Collective hook)", op, p.Rank)
		}
	} else if k = ip.Kernels[op.Type]; k == nil {
		return fmt.Errorf("%s: no kernel for op type %s", op, op.Type)
	} else if p.Rank >= 0 && ip.Hooks.Collective == nil && (op.Type == "sync_batch_norm" || op.Type == "sync_batch_norm_grad") {
		// Its kernel alone is a world of one: on a rank's shard, that
		// would be a local batch norm, silently.
		return fmt.Errorf("%s: sync_batch_norm of rank %d's program outside an SPMD run: its statistics are the whole group's", op, p.Rank)
	}
	var start time.Time
	if ip.OpTime != nil {
		start = time.Now()
	}
	out, err := callKernel(k, op, in)
	if err != nil {
		return err
	}
	if ip.OpTime != nil {
		ip.OpTime(op, time.Since(start))
	}
	for _, s := range op.Outputs {
		if len(s.Args) == 0 {
			continue
		}
		ts, ok := out[s.Name]
		if !ok && s.Name == "XShape" {
			continue // optional, never read by a kernel of ours but the grads
		}
		if len(ts) != len(s.Args) {
			return fmt.Errorf("%s: kernel gave %d tensors for output %s, op has %d args", op, len(ts), s.Name, len(s.Args))
		}
		for i, a := range s.Args {
			if ts[i] == nil {
				return fmt.Errorf("%s: kernel gave no tensor for output %s (%s)", op, a, s.Name)
			}
			if op.Type == "layer_norm" && (s.Name == "Mean" || s.Name == "Variance") {
				ts[i] = unflattenStats(p, b, op, a, in, ts[i])
			}
			if err := checkDeclared(p, b, op, s.Name, a, ts[i]); err != nil {
				return err
			}
			scope[a] = ts[i]
		}
	}
	return nil
}

// KernelPanic is the error of a kernel (or collective hook) that
// panicked: the run stops with an error naming the op, as for any other
// kernel failure, instead of taking the process down.
type KernelPanic struct {
	OpID   int64
	OpType string
	Value  any    // what the kernel panicked with
	Stack  []byte // the kernel's stack at the panic
}

func (e *KernelPanic) Error() string {
	return fmt.Sprintf("op %d %s: kernel panicked: %v", e.OpID, e.OpType, e.Value)
}

// callKernel runs k, turning a panic into an error: a ShapeError (a tensor
// too large to simulate) into a plain one naming the op, anything else
// into a *KernelPanic.
func callKernel(k Kernel, op *ir.Op, in Args) (out Args, err error) {
	defer func() {
		if v := recover(); v != nil {
			if se, ok := v.(ShapeError); ok {
				// A tensor the simulator refuses to allocate: input, not a bug.
				out, err = nil, fmt.Errorf("%s: %v", op, se.Err)
				return
			}
			out, err = nil, &KernelPanic{OpID: op.ID, OpType: op.Type, Value: v, Stack: debug.Stack()}
		}
	}()
	return k(op, in)
}

// checkDeclared compares a tensor op computed for output arg a of slot
// with a's declared type (in a rank's program, its local shape): a
// program whose declarations disagree with what its ops compute would
// otherwise run on, and every size derived from the declarations (memory,
// traffic) would be wrong. A -1 dim matches any size; an undeclared or
// non-tensor var is not compared.
// unflattenStats gives a layer_norm's statistics t, which the kernel
// computes flattened ([prod of X's dims before begin_norm_axis], Paddle
// 2's shape), the shape of those dims when the program declares var a
// so (Paddle 3's, which a split of the sequence dim needs): the same
// values in the same order.
func unflattenStats(p *ir.Program, b *ir.Block, op *ir.Op, a string, in Args, t *Tensor) *Tensor {
	v := p.LookupVar(b, a)
	xs := in["X"]
	axis := int(attrInt(op, "begin_norm_axis", 1))
	if v == nil || !v.Type.IsTensor() || len(xs) != 1 || xs[0] == nil || axis < 2 || axis > xs[0].Rank() ||
		len(t.Shape) != 1 || !slices.Equal(v.Type.Shape, xs[0].Shape[:axis]) {
		return t
	}
	return &Tensor{DType: t.DType, Shape: slices.Clone(v.Type.Shape), Data: t.Data}
}

func checkDeclared(p *ir.Program, b *ir.Block, op *ir.Op, slot, a string, t *Tensor) error {
	v := p.LookupVar(b, a)
	if v == nil || !v.Type.IsTensor() {
		return nil
	}
	ok := v.Type.DType == t.DType && len(v.Type.Shape) == len(t.Shape)
	for i := 0; ok && i < len(t.Shape); i++ {
		ok = v.Type.Shape[i] < 0 || v.Type.Shape[i] == t.Shape[i]
	}
	if ok {
		return nil
	}
	got := ir.Type{Kind: ir.DenseTensor, DType: t.DType, Shape: t.Shape}
	return fmt.Errorf("%s: output %s (%s) is %s, declared %s", op, slot, a, got, v.Type)
}
