package passes

import (
	"fmt"
	"io"
	"slices"

	"github.com/distpass/distpass/ir"
)

// PrintIR prints the module before and/or after the passes named in
// Before and After ("all" matches every pass), each under a header that
// names the step exactly as the pipeline wrote it:
//
//	# IR after dce{keep=loss} (#3)
type PrintIR struct {
	NopInstrument
	W             io.Writer
	Before, After []string
}

func matches(names []string, p *Pass) bool {
	return slices.Contains(names, "all") || slices.Contains(names, p.Name)
}

func (pi *PrintIR) BeforePass(e *Execution, m *ir.Module) error {
	if !matches(pi.Before, e.Step.Pass) {
		return nil
	}
	return writeIR(pi.W, "before "+e.Label(), m)
}

func (pi *PrintIR) AfterPass(e *Execution, m *ir.Module, err error) error {
	if !matches(pi.After, e.Step.Pass) {
		return nil
	}
	what := "after "
	if err != nil {
		what = "after failed "
	}
	return writeIR(pi.W, what+e.Label(), m)
}

func writeIR(w io.Writer, header string, m *ir.Module) error {
	if _, err := fmt.Fprintf(w, "# IR %s\n", header); err != nil {
		return err
	}
	_, err := w.Write(ir.Print(m))
	return err
}
