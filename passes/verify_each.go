package passes

import (
	"fmt"
	"strings"

	"github.com/distpass/distpass/ir"
)

// VerifyEach runs the IR verifier on the input and after every pass; a
// pass that leaves an invalid module fails, named, with every violation.
type VerifyEach struct{ NopInstrument }

func (VerifyEach) BeforePipeline(_ *RunInfo, m *ir.Module) error {
	if err := ir.Verify(m); err != nil {
		return fmt.Errorf("input module does not verify: %s", eachLine(err, "input module does not verify: "))
	}
	return nil
}

func (VerifyEach) AfterPass(e *Execution, m *ir.Module, err error) error {
	if err != nil {
		return nil
	}
	if verr := ir.Verify(m); verr != nil {
		return e.fail(fmt.Errorf("broke the IR: %s", eachLine(verr, "broke the IR: ")))
	}
	return nil
}

// eachLine spells err with prefix before every line but the first, so
// that each violation is one line that says what it is.
func eachLine(err error, prefix string) string {
	return strings.ReplaceAll(err.Error(), "\n", "\n"+prefix)
}
