package passes

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/distpass/distpass/ir"
)

// Reproducer keeps a copy of the input module and, when a pass fails or
// panics, writes it to Path with the pipeline: a .dpir file whose header
// comments say what to replay. `distpass run -reproducer FILE` replays it
// (see ReadReproducer). The failing *PassError records the path.
type Reproducer struct {
	NopInstrument
	Path string

	input *ir.Module
}

const reproducerMagic = "# distpass reproducer"

func (r *Reproducer) BeforePipeline(_ *RunInfo, m *ir.Module) error {
	r.input = m.Clone()
	return nil
}

func (r *Reproducer) AfterPass(e *Execution, _ *ir.Module, err error) error {
	var pe *PassError
	if err == nil || !errors.As(err, &pe) || pe.Reproducer != "" {
		return nil
	}
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "%s: replay with `distpass run -reproducer FILE`\n", reproducerMagic)
	fmt.Fprintf(&buf, "%s%s\n", pipelinePrefix, e.Run.Text)
	for _, line := range strings.Split(pe.Error(), "\n") {
		fmt.Fprintf(&buf, "# failed: %s\n", line)
	}
	buf.Write(ir.Print(r.input))
	if werr := os.WriteFile(r.Path, buf.Bytes(), 0o644); werr != nil {
		return fmt.Errorf("writing reproducer: %w", werr)
	}
	pe.Reproducer = r.Path
	return nil
}

// ParseReproducer reads a reproducer file with ReadReproducer and parses
// its pipeline with r. A pipeline that does not parse is an error in the
// file: an *ir.ParseError at the line and column of the "# pipeline:"
// comment where the pipeline text is wrong.
func ParseReproducer(r *Registry, name string, data []byte) (*Pipeline, *ir.Module, error) {
	text, m, err := ReadReproducer(name, data)
	if err != nil {
		return nil, nil, err
	}
	pl, err := r.Parse(text)
	if err != nil {
		var pe *PipelineError
		if !errors.As(err, &pe) {
			return nil, nil, fmt.Errorf("%s: %w", name, err)
		}
		line := 1
		for _, l := range strings.Split(string(data), "\n") {
			if strings.HasPrefix(l, pipelinePrefix) {
				break
			}
			line++
		}
		return nil, nil, &ir.ParseError{File: name, Line: line, Col: len(pipelinePrefix) + pe.Col, Msg: pe.Msg}
	}
	return pl, m, nil
}

// pipelinePrefix starts the comment line of a reproducer that holds its
// pipeline.
const pipelinePrefix = "# pipeline: "

// ReadReproducer splits a reproducer file into its pipeline text and its
// module.
func ReadReproducer(name string, data []byte) (pipeline string, m *ir.Module, err error) {
	if !bytes.HasPrefix(data, []byte(reproducerMagic)) {
		return "", nil, fmt.Errorf("%s: not a distpass reproducer (no %q header)", name, reproducerMagic)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if p, ok := strings.CutPrefix(line, pipelinePrefix); ok {
			pipeline = p
			break
		}
	}
	if pipeline == "" {
		return "", nil, fmt.Errorf("%s: reproducer names no pipeline", name)
	}
	m, err = ir.Parse(name, data)
	return pipeline, m, err
}
