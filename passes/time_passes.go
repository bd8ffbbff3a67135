package passes

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/distpass/distpass/ir"
)

// TimePasses measures the wall time of every execution and prints a table
// when the pipeline ends: one row per execution in order, nested ones
// indented under their parent (whose time includes theirs), and the total.
type TimePasses struct {
	NopInstrument
	W io.Writer
	// Now is the clock; nil means time.Now. Tests set a fake one.
	Now func() time.Time

	start time.Time
	rows  []timeRow
	open  map[*Execution]int
}

type timeRow struct {
	e       *Execution
	elapsed time.Duration
}

func (tp *TimePasses) now() time.Time {
	if tp.Now != nil {
		return tp.Now()
	}
	return time.Now()
}

func (tp *TimePasses) BeforePipeline(*RunInfo, *ir.Module) error {
	tp.rows, tp.open = nil, map[*Execution]int{}
	tp.start = tp.now()
	return nil
}

func (tp *TimePasses) BeforePass(e *Execution, _ *ir.Module) error {
	tp.open[e] = len(tp.rows)
	tp.rows = append(tp.rows, timeRow{e: e, elapsed: -time.Duration(tp.now().UnixNano())})
	return nil
}

func (tp *TimePasses) AfterPass(e *Execution, _ *ir.Module, _ error) error {
	i := tp.open[e]
	delete(tp.open, e)
	tp.rows[i].elapsed += time.Duration(tp.now().UnixNano())
	return nil
}

func (tp *TimePasses) AfterPipeline(info *RunInfo, _ *ir.Module, _ error) error {
	total := tp.now().Sub(tp.start)
	var sb strings.Builder
	fmt.Fprintf(&sb, "pass timing (wall) for %s\n", info.Text)
	fmt.Fprintf(&sb, "%12s %6s  %s\n", "time", "%", "pass")
	for _, r := range tp.rows {
		fmt.Fprintf(&sb, "%12s %6.1f  %s%s\n", fmtDuration(r.elapsed), percent(r.elapsed, total),
			strings.Repeat("  ", r.e.Depth()), r.e.Label())
	}
	fmt.Fprintf(&sb, "%12s %6.1f  total\n", fmtDuration(total), 100.0)
	_, err := io.WriteString(tp.W, sb.String())
	return err
}

func percent(d, total time.Duration) float64 {
	if total <= 0 {
		return 0
	}
	return 100 * float64(d) / float64(total)
}

// fmtDuration prints milliseconds with three decimals: a fixed unit keeps
// the column comparable down the table.
func fmtDuration(d time.Duration) string {
	return fmt.Sprintf("%.3fms", float64(d)/float64(time.Millisecond))
}
