package passes

import (
	"fmt"
	"strings"

	"github.com/distpass/distpass/ir"
)

// VerifyEach runs the verifier (Verify) on the input and after every pass; a
// pass that leaves an invalid module fails, named, with every violation.
//
// It also holds passes to their word: a pass that declares PreservesAll
// (a check, which keeps every analysis valid) must leave the module
// exactly as it found it. VerifyEach takes the module's structural hash
// (ir.Hash) before and after each such pass, and a pass whose run
// changed it fails, named. When the hash is unchanged the module is the
// one verified before the pass, and it is not verified again.
//
// The check lives in this debug instrument rather than always on in the
// manager because hashing is not free next to the checks it guards: two
// hashes a pass would add half to the dear checks and make the cheap
// ones several times slower (BenchmarkPreservesAllPasses and
// BenchmarkChangeDetection; BENCHMARKS.md). XLA likewise checks its
// passes' change reports in debug builds only.
type VerifyEach struct{ NopInstrument }

func (VerifyEach) BeforePipeline(_ *RunInfo, m *ir.Module) error {
	if err := Verify(m); err != nil {
		return fmt.Errorf("input module does not verify: %s", eachLine(err, "input module does not verify: "))
	}
	return nil
}

func (VerifyEach) BeforePass(e *Execution, m *ir.Module) error {
	if e.Step.Pass.PreservesAll {
		e.hashBefore, e.hashed = ir.Hash(m), true
	}
	return nil
}

func (VerifyEach) AfterPass(e *Execution, m *ir.Module, err error) error {
	if err != nil {
		return nil
	}
	if e.hashed {
		if h := ir.Hash(m); h != e.hashBefore {
			return e.fail(fmt.Errorf("declares PreservesAll but changed the module (structural hash %016x before the pass, %016x after)", e.hashBefore, h))
		}
		return nil
	}
	verify := Verify
	if e.Step.Pass.Transient != "" {
		verify = ir.Verify // the op rules hold again after the passes that follow
	}
	if verr := verify(m); verr != nil {
		return e.fail(fmt.Errorf("broke the IR: %s", eachLine(verr, "broke the IR: ")))
	}
	return nil
}

// eachLine spells err with prefix before every line but the first, so
// that each violation is one line that says what it is.
func eachLine(err error, prefix string) string {
	return strings.ReplaceAll(err.Error(), "\n", "\n"+prefix)
}
