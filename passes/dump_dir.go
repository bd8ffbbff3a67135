package passes

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/distpass/distpass/ir"
)

// DumpDir writes the module into Dir before the pipeline (00-input.dpir)
// and after every execution (NN-pass.dpir, NN counting executions), with
// one Graphviz file per program (NN-pass.main.dot) when Render is set.
// Render lives outside this package (viz), so passes does not import it.
type DumpDir struct {
	NopInstrument
	Dir    string
	Render func(p *ir.Program) []byte
}

func (d *DumpDir) BeforePipeline(_ *RunInfo, m *ir.Module) error {
	if err := os.MkdirAll(d.Dir, 0o755); err != nil {
		return err
	}
	return d.dump("00-input", m)
}

func (d *DumpDir) AfterPass(e *Execution, m *ir.Module, _ error) error {
	return d.dump(fmt.Sprintf("%02d-%s", e.N, e.Step.Pass.Name), m)
}

func (d *DumpDir) dump(base string, m *ir.Module) error {
	if err := os.WriteFile(filepath.Join(d.Dir, base+".dpir"), ir.Print(m), 0o644); err != nil {
		return err
	}
	if d.Render == nil {
		return nil
	}
	for _, p := range m.Programs() {
		if err := os.WriteFile(filepath.Join(d.Dir, base+"."+p.Name+".dot"), d.Render(p), 0o644); err != nil {
			return err
		}
	}
	return nil
}
