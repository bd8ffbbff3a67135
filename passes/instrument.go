package passes

import "github.com/distpass/distpass/ir"

// An Instrument observes a run: MLIR's pass instrumentation. Hooks that
// return an error stop the run (verify-each does). Embed NopInstrument to
// implement only the hooks you need.
type Instrument interface {
	BeforePipeline(info *RunInfo, m *ir.Module) error
	BeforePass(e *Execution, m *ir.Module) error
	// AfterPass sees the pass's error, if any; the module may then be
	// half-transformed.
	AfterPass(e *Execution, m *ir.Module, err error) error
	// Skipped is called instead of BeforePass and AfterPass for an
	// execution that a Gate kept from running.
	Skipped(e *Execution)
	AfterPipeline(info *RunInfo, m *ir.Module, err error) error
}

// A Gate is an instrument that can keep a pass from running; passes marked
// Required run regardless.
type Gate interface {
	Skip(e *Execution) bool
}

// NopInstrument implements every hook as doing nothing.
type NopInstrument struct{}

func (NopInstrument) BeforePipeline(*RunInfo, *ir.Module) error       { return nil }
func (NopInstrument) BeforePass(*Execution, *ir.Module) error         { return nil }
func (NopInstrument) AfterPass(*Execution, *ir.Module, error) error   { return nil }
func (NopInstrument) Skipped(*Execution)                              {}
func (NopInstrument) AfterPipeline(*RunInfo, *ir.Module, error) error { return nil }
