package passes

import (
	"fmt"
	"io"
)

// Bisect runs only the first Limit executions (nested ones count);
// passes marked Required run regardless. Each skipped execution is
// reported, so that a bisection shows exactly what did not run.
type Bisect struct {
	NopInstrument
	Limit int
	W     io.Writer
}

// Skip implements Gate.
func (b *Bisect) Skip(e *Execution) bool { return e.N > b.Limit }

func (b *Bisect) Skipped(e *Execution) {
	fmt.Fprintf(b.W, "bisect-limit=%d: skipped %s\n", b.Limit, e.Label())
}
