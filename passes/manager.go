package passes

import (
	"context"
	"fmt"
	"runtime/debug"
	"sort"
	"strings"

	"github.com/distpass/distpass/analysis"
	"github.com/distpass/distpass/internal/par"
	"github.com/distpass/distpass/ir"
)

// Manager runs pipelines with instruments.
type Manager struct {
	Instruments []Instrument
}

// Execution is one run of one step. N counts executions of the whole run
// from 1 in the order they start, nested ones included; Parent is the
// execution of the nested pass that ran this one, or nil.
type Execution struct {
	N      int
	Step   *Step
	Parent *Execution
	Run    *RunInfo
	// Skipped is set when a gate (bisect-limit) kept the step from running.
	Skipped bool

	counters []Counter
	notes    []note
	// hashBefore is the module's structural hash before a PreservesAll
	// pass ran, when hashed is set (by VerifyEach).
	hashBefore uint64
	hashed     bool
}

// Counter is a named count a pass reported for one execution.
type Counter struct {
	Name  string
	Value int
}

type note struct {
	key   string
	value any
}

// Note returns what the pass noted under key (Context.Note), or nil.
func (e *Execution) Note(key string) any {
	for _, n := range e.notes {
		if n.key == key {
			return n.value
		}
	}
	return nil
}

// Counters returns what the pass counted, sorted by name.
func (e *Execution) Counters() []Counter {
	cs := append([]Counter(nil), e.counters...)
	sort.Slice(cs, func(i, j int) bool { return cs[i].Name < cs[j].Name })
	return cs
}

func (e *Execution) count(name string, delta int) {
	for i := range e.counters {
		if e.counters[i].Name == name {
			e.counters[i].Value += delta
			return
		}
	}
	e.counters = append(e.counters, Counter{name, delta})
}

// Depth is the nesting depth: 0 for a top-level step.
func (e *Execution) Depth() int {
	d := 0
	for p := e.Parent; p != nil; p = p.Parent {
		d++
	}
	return d
}

// fail wraps err as a failure of this execution.
func (e *Execution) fail(err error) *PassError {
	return &PassError{Exec: e, Pipeline: e.Run.Text, Err: err}
}

// Label names the execution in reports: "dce{keep=x} (#3)".
func (e *Execution) Label() string { return fmt.Sprintf("%s (#%d)", e.Step.Label(), e.N) }

// PassError is a pass that failed or panicked.
type PassError struct {
	Exec     *Execution
	Pipeline string // the whole pipeline's text
	Err      error
	// Panic holds the recovered value when the pass panicked, Stack its stack.
	Panic any
	Stack []byte
	// Reproducer is the file the crash reproducer wrote, if any.
	Reproducer string
}

// Error names the pass on every line of a multi-line error (one problem
// a line), so that each line stands alone.
func (e *PassError) Error() string {
	head := fmt.Sprintf("pass %s (execution %d of %q): ", e.Exec.Step.Label(), e.Exec.N, e.Pipeline)
	var msg string
	if e.Panic != nil {
		msg = head + fmt.Sprintf("panic: %v", e.Panic)
	} else {
		msg = head + strings.ReplaceAll(e.Err.Error(), "\n", "\n"+head)
	}
	if e.Reproducer != "" {
		msg += " (reproducer: " + e.Reproducer + ")"
	}
	return msg
}

func (e *PassError) Unwrap() error { return e.Err }

// Run runs pl over m, changing m in place. Clone m first to keep the
// original. The first error stops the run and is returned; a pass's own
// failure or panic is a *PassError.
func (pm *Manager) Run(ctx context.Context, pl *Pipeline, m *ir.Module) error {
	r := &runner{
		ctx:   ctx,
		insts: pm.Instruments,
		cache: analysis.NewCache(m),
		info:  &RunInfo{Pipeline: pl, Text: pl.String()},
	}
	for _, in := range r.insts {
		if err := in.BeforePipeline(r.info, m); err != nil {
			return err
		}
	}
	err := r.pipeline(pl, m, nil)
	for _, in := range r.insts {
		if e2 := in.AfterPipeline(r.info, m, err); e2 != nil && err == nil {
			err = e2
		}
	}
	return err
}

// RunInfo describes a whole run, for instruments.
type RunInfo struct {
	Pipeline *Pipeline
	Text     string // Pipeline.String()
}

type runner struct {
	ctx   context.Context
	insts []Instrument
	cache *analysis.Cache
	info  *RunInfo
	n     int
}

func (r *runner) pipeline(pl *Pipeline, m *ir.Module, parent *Execution) error {
	for _, st := range pl.Steps {
		if err := r.ctx.Err(); err != nil {
			return err
		}
		if err := r.step(st, m, parent); err != nil {
			return err
		}
	}
	return nil
}

// step is the run loop: gates, instruments before, the pass, analysis
// invalidation, instruments after.
func (r *runner) step(st *Step, m *ir.Module, parent *Execution) error {
	r.n++
	e := &Execution{N: r.n, Step: st, Parent: parent, Run: r.info}
	for _, in := range r.insts {
		if g, ok := in.(Gate); ok && !st.Pass.Required && g.Skip(e) {
			e.Skipped = true
		}
	}
	if e.Skipped {
		for _, in := range r.insts {
			in.Skipped(e)
		}
		return nil
	}
	for _, in := range r.insts {
		if err := in.BeforePass(e, m); err != nil {
			return err
		}
	}
	err := r.call(e, m)
	if err == nil && !st.Pass.PreservesAll {
		r.cache.Invalidate(st.Pass.Preserves...)
	} else if err != nil {
		r.cache.InvalidateAll()
	}
	for _, in := range r.insts {
		if e2 := in.AfterPass(e, m, err); e2 != nil && err == nil {
			err = e2
		}
	}
	return err
}

// call runs the pass, turning a failure or a panic into a *PassError.
func (r *runner) call(e *Execution, m *ir.Module) (err error) {
	defer func() {
		if v := recover(); v != nil {
			stack := debug.Stack()
			if wp, ok := v.(*par.Panic); ok {
				v, stack = wp.Value, wp.Stack // where it happened, on a worker
			}
			err = &PassError{Exec: e, Pipeline: e.Run.Text, Panic: v, Stack: stack}
		}
	}()
	ctx := &Context{Context: r.ctx, Step: e.Step, Exec: e, Analyses: r.cache, r: r}
	if err := e.Step.Pass.Run(ctx, m); err != nil {
		if pe, ok := err.(*PassError); ok {
			return pe // a nested step's failure keeps its own position
		}
		return e.fail(err)
	}
	return nil
}
