package passes

import (
	"fmt"
	"io"

	"github.com/rogpeppe/go-internal/diff"

	"github.com/distpass/distpass/ir"
)

// PrintChanged prints, for each pass that changed the module, a unified
// diff of the module's text. Whether a pass changed anything is decided
// by ir.Hash, so passes that change nothing cost no printing.
type PrintChanged struct {
	NopInstrument
	W io.Writer

	hash uint64
	text []byte // the module's text when it last changed
}

func (pc *PrintChanged) BeforePipeline(_ *RunInfo, m *ir.Module) error {
	pc.hash, pc.text = ir.Hash(m), ir.Print(m)
	return nil
}

func (pc *PrintChanged) AfterPass(e *Execution, m *ir.Module, err error) error {
	h := ir.Hash(m)
	if h == pc.hash {
		return nil
	}
	text := ir.Print(m)
	d := diff.Diff("before "+e.Label(), pc.text, "after "+e.Label(), text)
	pc.hash, pc.text = h, text
	if _, werr := fmt.Fprintf(pc.W, "# IR changed by %s\n", e.Label()); werr != nil {
		return werr
	}
	_, werr := pc.W.Write(d)
	return werr
}
