package viz

import (
	"errors"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/passes"
)

// Recorder is an instrument that records a run for the pass explorer
// (WriteExplorer): the module before the pipeline and after every pass
// execution, nested ones included. Whether an execution changed the
// module is decided by ir.Hash; a version is kept (as a clone) only for
// the input, for executions that changed the module and for the one that
// failed. Executions that changed nothing are noted on the version before
// them. A Recorder records one run at a time; BeforePipeline starts over.
type Recorder struct {
	passes.NopInstrument
	// Name names the run: its tab on the page ("serial", "rank 0").
	Name string

	trace *Trace
}

// Trace is one recorded run.
type Trace struct {
	Name     string     // the run's name, from Recorder.Name
	Pipeline string     // the pipeline's text
	Versions []*Version // the input first, then one per execution that changed the module or failed
	// Err is the run's error, "" when it succeeded: a pass's failure, or
	// another instrument's (verify-each).
	Err string
}

// Version is the module as one execution left it.
type Version struct {
	// Label is "input" for the module before the pipeline, else the
	// execution's label: "dce (#2)".
	Label string
	// Parent is the label of the nested pass that ran the execution
	// ("repeat{count=2} (#1)"), or "".
	Parent string
	Module *ir.Module // a clone, as the execution left it
	Hash   uint64     // ir.Hash(Module)
	// Failed is set when the execution failed: Err is its error and
	// Stack, when it panicked, the stack. The module may be half
	// transformed.
	Failed bool
	Err    string
	Stack  []byte
	// Also lists, in order, the executions after this one that changed
	// nothing, and those a gate skipped.
	Also []Merged

	// origins is, for the complete pass's version, where each var of the
	// main program got its mapping (originNote), by block and name.
	origins map[originKey]string
}

// originNote is what the explorer asks of a pass's note under
// passes.CompleteReportNote: the complete pass's *complete.Report. The
// explorer takes its answers as text, so viz needs nothing of package
// complete.
type originNote interface {
	// ExplainVar says, a line per dim, where var v's mapping came from;
	// "" for a var it did not complete.
	ExplainVar(v *ir.Var) string
}

type originKey struct {
	block int
	name  string
}

// originsOf asks e's completion report, if it noted one, where each var
// of m's main program got its mapping; nil when there is none. It must
// run right after the pass: the report knows m's vars by identity.
func originsOf(e *passes.Execution, m *ir.Module) map[originKey]string {
	n, ok := e.Note(passes.CompleteReportNote).(originNote)
	if !ok || m.Main == nil {
		return nil
	}
	out := map[originKey]string{}
	for _, b := range m.Main.Blocks {
		if b == nil {
			continue
		}
		for _, v := range b.Vars() {
			if s := n.ExplainVar(v); s != "" {
				out[originKey{b.Index, v.Name()}] = s
			}
		}
	}
	return out
}

// Merged is an execution that changed nothing, noted on the version it
// left as it was.
type Merged struct {
	Label   string // "verify (#3)"
	Skipped bool   // a gate (bisect-limit) kept it from running
}

// Trace returns what the last run recorded: an empty trace named
// r.Name before any run.
func (r *Recorder) Trace() *Trace {
	if r.trace == nil {
		return &Trace{Name: r.Name}
	}
	return r.trace
}

func (r *Recorder) BeforePipeline(info *passes.RunInfo, m *ir.Module) error {
	r.trace = &Trace{Name: r.Name, Pipeline: info.Text}
	r.trace.Versions = []*Version{{Label: "input", Module: m.Clone(), Hash: ir.Hash(m)}}
	return nil
}

func (r *Recorder) AfterPass(e *passes.Execution, m *ir.Module, err error) error {
	if r.trace == nil {
		return nil
	}
	// A nested step's failure comes back through the pass that ran it,
	// as the same *PassError: it is the nested execution's failure only.
	var pe *passes.PassError
	own := err != nil && !(errors.As(err, &pe) && pe.Exec != e)
	last := r.trace.Versions[len(r.trace.Versions)-1]
	h := ir.Hash(m)
	if h == last.Hash && !own {
		last.Also = append(last.Also, Merged{Label: e.Label()})
		return nil
	}
	v := &Version{Label: e.Label(), Module: m.Clone(), Hash: h, origins: originsOf(e, m)}
	if e.Parent != nil {
		v.Parent = e.Parent.Label()
	}
	if own {
		v.Failed = true
		v.Err = err.Error()
		if pe != nil && pe.Exec == e && pe.Panic != nil {
			v.Stack = pe.Stack
		}
	}
	r.trace.Versions = append(r.trace.Versions, v)
	return nil
}

func (r *Recorder) Skipped(e *passes.Execution) {
	if r.trace == nil {
		return
	}
	last := r.trace.Versions[len(r.trace.Versions)-1]
	last.Also = append(last.Also, Merged{Label: e.Label(), Skipped: true})
}

func (r *Recorder) AfterPipeline(_ *passes.RunInfo, _ *ir.Module, err error) error {
	if r.trace != nil && err != nil {
		r.trace.Err = err.Error()
	}
	return nil
}
